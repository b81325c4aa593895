"""The known deal the page tests play (tests/web/test_pages.py through the forms, and
tests/e2e/test_browser.py in a real browser): a seed and seats for marker, deal, offer,
counter, accept, a travel card answered by a stop, and a last call everyone passes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from imtheboss.engine.board import default_board
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import replay

NAMES = ["Amy", "Bill", "Carla"]
PLAYERS = [(n, f"{n.lower()}@example.org") for n in NAMES]


@dataclass
class Setup:
    seed: int
    boss: int  # the first player: places the marker, opens the deal
    provider: int  # controls investor ``letter``, which the deal needs
    traveller: int  # holds a travel card for ``letter``
    stopper: int  # holds a stop card (not the traveller)
    space: int
    letter: str
    travel_card: str


def _fits(space, letters: set[str]) -> bool:
    if not set(space.required) <= letters:
        return False
    return all(len(letters & set(c.of)) >= c.k for c in space.choices)


def find_setup() -> Setup:
    """A seed whose deal the test can play: the first player's investors plus one of another
    player's close a space, the third player can send that investor on travel, and one of the
    other two can stop it."""
    board = default_board()
    for seed in range(1000):
        state = replay(new_game(NAMES, Options(), board, seed, datetime(2026, 3, 1, tzinfo=UTC)))
        boss = state.active
        hands = [[CARD_NAMES[c] for c in h] for h in state.hands]
        mine = set(state.seat_investors(boss))
        for index, space in enumerate(board.spaces):
            if _fits(space, mine):
                continue
            for provider in range(3):
                if provider == boss:
                    continue
                traveller = 3 - boss - provider
                for letter in state.seat_investors(provider):
                    if letter not in space.letters or not _fits(space, mine | {letter}):
                        continue
                    card = next(
                        (c for c in (f"travel:{letter}", "travel:*") if c in hands[traveller]),
                        None,
                    )
                    stopper = next((s for s in (boss, provider) if "stop" in hands[s]), None)
                    if card and stopper is not None and space.shares * 2 >= 3:
                        return Setup(seed, boss, provider, traveller, stopper, index, letter, card)
    raise AssertionError("no seed found")
