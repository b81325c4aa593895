"""What a card's stop window mail tells a seat it loses if the card happens
(``imtheboss.web.mail.notify.lapses_if_it_happens``): worked out on a copy, the game untouched."""

from __future__ import annotations

from types import SimpleNamespace

from imtheboss.engine.views import snapshot
from imtheboss.web.mail.notify import lapses_if_it_happens
from imtheboss.web.say import messages
from support.rules_game import SMALL_BOARD, Game

BASE = {
    "investors": {"Ann": ["C"], "Bob": ["S"], "Cat": ["W"], "Dan": ["D", "G", "L"]},
    "side_pool": [],
    "marker": 0,
    "active": "Ann",
}


def test_a_travel_on_the_agreed_investor_makes_the_agreement_lapse():
    """R4.7, R5.1: Bob agreed with investor S; Dan sends S on travel: Bob reads that his
    agreement for S lapses if the card happens; Cat, with no agreement, reads nothing."""
    g = Game({**BASE, "hands": {"Dan": ["travel:S"], "Bob": ["family:W"]}}, board=SMALL_BOARD)
    g.do("Ann", "open_deal")
    g.do("Bob", "offer", card="investor:S", price={"cash": 2})
    g.do("Ann", "accept", **{"with": "Bob"})
    g.do("Cat", "offer", card="investor:W", price={"cash": 1})
    g.do("Dan", "travel", card="travel:S", target="investor:S")
    before = snapshot(g.state)
    assert lapses_if_it_happens(g.state, g.seat("Bob")) == ["S"]
    assert lapses_if_it_happens(g.state, g.seat("Cat")) == []
    assert snapshot(g.state) == before


def test_a_boss_card_makes_the_agreements_with_the_old_boss_lapse():
    """R5.7: Bob agreed with Ann; Cat plays a boss card: Bob's agreement lapses if it happens."""
    g = Game({**BASE, "hands": {"Cat": ["boss"]}}, board=SMALL_BOARD)
    g.do("Ann", "open_deal")
    g.do("Bob", "offer", card="investor:S", price={"cash": 2})
    g.do("Ann", "accept", **{"with": "Bob"})
    g.do("Cat", "boss")
    assert lapses_if_it_happens(g.state, g.seat("Bob")) == ["S"]


def test_the_stop_mail_says_it_in_each_language():
    row = SimpleNamespace(kind="stop", body={"window": "w3", "lapses": ["S"]}, seat_index=1)
    said = {}
    for lang in ("en", "zh_Hans", "zh_Hant"):
        with messages.speaking(lang):
            said[lang] = messages.row_text(row, ["Ann", "Bob", "Cat"])
    assert "your agreement for Sacks (S) lapses" in said["en"]
    assert "协议会失效" in said["zh_Hans"] and "協議會失效" in said["zh_Hant"]
