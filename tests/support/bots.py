"""Bots of the tests that play whole games through the game service (tests/web/test_hidden_pages.py,
tests/e2e/test_phone.py, the replay's tests) beside the engine's own."""

from __future__ import annotations

import random
from typing import Any

from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.state import GameState


class Hoarder(SensibleBot):
    """A SensibleBot that always rolls and draws on its turn, so its hand grows past the limit
    (the discard phase, R6.6) and the draw pile runs out (the reshuffle, R6.7)."""

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random):
        if state.active == seat and state.phase in ("turn_start", "after_roll"):
            for do in ("roll", "draw"):
                found = [c for c in legal if c["do"] == do]
                if found:
                    return found[0]
        return super().choose(state, seat, legal, rng)
