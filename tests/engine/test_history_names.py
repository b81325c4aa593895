"""The history's messages name cards the way the table does (``imtheboss.engine.history``):
the side pool of R2.2 as dealt, a family card on the table by its letter, never by its id."""

from __future__ import annotations

from imtheboss.engine.board import default_board
from imtheboss.engine.history import message
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from support.rules_game import SMALL_BOARD, T0, Game

BASE = {
    "investors": {"Ann": ["C"], "Bob": ["S"], "Cat": ["W"], "Dan": ["D", "G", "L"]},
    "side_pool": [],
    "marker": 0,
    "active": "Ann",
}


def test_game_started_names_the_side_pool_it_dealt():
    """R2.2: four players leave two investors in the side pool; the first line says which."""
    events = new_game(["Ann", "Bob", "Cat", "Dan"], Options(), default_board(), 4, T0)
    pool = sorted(x for x, seat in events[0].data["investors"].items() if seat is None)
    assert len(pool) == 2
    for seat in (None, 0, 3):
        assert message(events[0], seat).params["side_pool"] == pool


def test_a_travel_card_on_a_family_card_names_its_letter_not_its_id():
    """R5.2: the seat whose offered family card W is targeted reads "family:W", not its id."""
    g = Game({**BASE, "hands": {"Dan": ["family:W"], "Bob": ["travel:W"]}}, board=SMALL_BOARD)
    g.do("Ann", "open_deal")
    g.do("Dan", "offer", card="family:W", price={"cash": 1})
    (pending,) = [
        e
        for e in g.do("Bob", "travel", card="travel:W", target="family:W@Dan")
        if e.type == "card_pending"
    ]
    assert pending.data["target"] != "family:W"  # the event stores the card's id
    for seat in (None, 0, 1, 2, 3):
        params = message(pending, seat).params
        assert params["card"] == "family:W"
        assert params["owner"] == 3
