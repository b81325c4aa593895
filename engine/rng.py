"""Per-game seeded randomness (A9).

The n-th random act of a game draws from ``Random(sha256(f"{seed}:{n}"))``, so ``decide`` needs
only the seed and a counter kept in state, and every outcome is written into its event: replaying
events never calls these functions.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any


def _rng(seed: Any, counter: int) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{counter}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def die(seed: Any, counter: int) -> int:
    """One six-sided die roll (R1.5): an int 1..6."""
    return _rng(seed, counter).randint(1, 6)


def shuffled(seed: Any, counter: int, items: list[int]) -> list[int]:
    """A shuffled copy of ``items``."""
    out = list(items)
    _rng(seed, counter).shuffle(out)
    return out


def seed_hash(seed: Any) -> str:
    """The hash published at the start (A9): hex sha256 of ``str(seed)``."""
    return hashlib.sha256(str(seed).encode()).hexdigest()
