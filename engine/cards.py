"""The influence deck and the deal tiles (R1.1-R1.3).

Every influence card has a stable integer id for the whole game (R1.1); its *name* says what it is:
``family:W``, ``travel:S``, ``travel:*`` (wild), ``recruit``, ``boss``, ``stop``. Investor cards
(``investor:C``) are not part of the deck: they never sit in a hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from imtheboss.engine.board import LETTERS

FAMILY_PER_LETTER = 4
TRAVEL_PER_LETTER = 3
WILD_TRAVEL = 3
RECRUITS = 33
BOSSES = 10
STOPS = 10


def _build_deck() -> tuple[str, ...]:
    names: list[str] = []
    for letter in LETTERS:
        names += [f"family:{letter}"] * FAMILY_PER_LETTER
    for letter in LETTERS:
        names += [f"travel:{letter}"] * TRAVEL_PER_LETTER
    names += ["travel:*"] * WILD_TRAVEL
    names += ["recruit"] * RECRUITS
    names += ["boss"] * BOSSES
    names += ["stop"] * STOPS
    return tuple(names)


CARD_NAMES: tuple[str, ...] = _build_deck()
"""``CARD_NAMES[card_id]`` is the name of influence card ``card_id`` (0..97). R1.1."""

DECK_SIZE = len(CARD_NAMES)
assert DECK_SIZE == 98

CARD_KINDS = ("family", "travel", "recruit", "boss", "stop")

# R1.2: value of one share (M) for deal tiles #1..#15.
TILE_VALUES: dict[int, int] = {
    n: 2 if n <= 3 else 3 if n <= 6 else 4 if n <= 9 else 5 for n in range(1, 16)
}
# R1.3: numbers on the tile backs that end the game when rolled after the deal is closed.
TILE_END_NUMBERS: dict[int, frozenset[int]] = {
    10: frozenset({1}),
    11: frozenset({1, 2}),
    12: frozenset({1, 2, 3}),
    13: frozenset({1, 2, 3, 4}),
    14: frozenset({1, 2, 3, 4, 5}),
}
LAST_TILE = 15
SHORT_GAME_REMOVED_TILES = (3, 6, 9)  # V7


def card_kind(name: str) -> str:
    """The kind of a card name: ``family``, ``travel``, ``recruit``, ``boss``, ``stop`` or
    ``investor``. Raises ``ValueError`` for a name that is none of these."""
    kind = name.split(":", 1)[0]
    if kind in CARD_KINDS or kind == "investor":
        return kind
    raise ValueError(f"unknown card {name!r}")


def card_letter(name: str) -> str | None:
    """The investor letter of ``family:W``/``travel:W``/``investor:W`` (``W``); ``None`` for a wild
    travel card and for cards without a letter."""
    if ":" not in name:
        return None
    letter = name.split(":", 1)[1]
    return letter if letter in LETTERS else None


def is_card_name(name: object) -> bool:
    """True when ``name`` names an influence card of the deck (R1.1)."""
    return isinstance(name, str) and name in _NAME_SET


_NAME_SET = frozenset(CARD_NAMES)


def multiset(card_ids: Iterable[int]) -> dict[str, int]:
    """Card ids as a multiset of names, ``{"family:W": 2, ...}``, keys sorted."""
    counts = Counter(CARD_NAMES[c] for c in card_ids)
    return {name: counts[name] for name in sorted(counts)}
