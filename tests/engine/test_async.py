"""Asynchronous play A1-A9, the engine side (docs/rules.md, A; docs/rules-decisions.md,
Asynchronous play). Every command carries an explicit time ``at`` (hours after ``T0``)."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import imtheboss.engine.game
import imtheboss.engine.rng
import imtheboss.engine.setup
import imtheboss.engine.turn
import imtheboss.engine.views
import pytest
from imtheboss.engine.board import default_board
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.options import Options, OptionsError
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import apply_in_place, format_time, replay
from imtheboss.engine.views import next_deadline, redact_event, snapshot, view
from support.async_play import (
    FLAT_BOARD,
    PLAYERS,
    T0,
    Table,
    allow_all,
    at,
    close_now,
    names,
    of_type,
    options,
    types,
)

FOUR = {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]}  # FLAT_BOARD deals need C (seat 0) and D (seat 1)


def four(hands=None, **spec):
    return {
        "investors": FOUR,
        "side_pool": ["S", "W"],
        "hands": hands or {},
        "draw_pile": "rest",
        "marker": 0,
        "active": 0,
        **spec,
    }


def table(hands=None, *, variants=(), windows=None, dice=(), **spec) -> Table:
    return Table.at_position(
        four(hands, **spec), variants=variants, windows=windows, dice=dice, board=FLAT_BOARD
    )


def with_agreement(t: Table, h: float = 1) -> None:
    """Seat 0 opens a deal at ``h``; seat 1 puts D forward for 1 M and the boss accepts: the
    requirements are met."""
    t.do(0, "open_deal", h=h)
    t.do(1, "offer", card="investor:D", price={"cash": 1})
    t.do(0, "accept", {"with": 1})


# -- A1 deadlines ------------------------------------------------------------------------------

DEFAULT = {"turn": 24, "stop": 6, "last_call": 12, "negotiation": 48}
CUSTOM = {"turn": 1, "stop": 0.25, "last_call": 0.5, "negotiation": 2}


@pytest.mark.parametrize("hours", [DEFAULT, CUSTOM], ids=["default", "custom"])
def test_a1_deadlines_are_at_plus_window_length(hours):
    """A1: each window's deadline is the `at` of the command that opened it plus the window's
    length: turn 24 h, stop 6 h, last call 12 h, negotiation 48 h, or the game's settings."""
    windows = None if hours is DEFAULT else {k: int(v * 3600) for k, v in hours.items()}
    t = table({1: ["stop"], 2: ["travel:D"]}, windows=windows)
    assert t.until("turn") == {at(hours["turn"])}
    opened = t.do(0, "open_deal", h=0.1)[0]
    assert opened.data["deadline"] == format_time(at(0.1 + hours["negotiation"]))
    assert t.until("negotiation") == {at(0.1 + hours["negotiation"])}
    t.do(2, "travel", card="travel:D", target="investor:D", h=0.2)
    assert t.until("stop") == {at(0.2 + hours["stop"])}
    assert next_deadline(t.state) == at(0.2 + hours["stop"])
    t.do(1, "stop", h=0.3)
    t.do(1, "offer", card="investor:D", price={"cash": 1})
    t.do(0, "accept", {"with": 1})
    t.do(0, "close", h=0.4)
    assert t.until("last_call") == {at(0.4 + hours["last_call"])}
    assert {a["seat"] for a in view(t.state, 0)["awaiting"]} == {1, 2, 3}
    t.do(0, "fail", h=0.5)
    assert t.waiting() == [(1, "turn")]
    assert t.until("turn") == {at(0.5 + hours["turn"])}


def test_a1_discard_window_has_the_turn_length():
    """A1, R6.6 (rules-decisions): the discard step's deadline is the turn window's."""
    t = table({0: ["recruit"] * 12}, dice=[1])
    t.do(0, "roll", h=1)
    t.do(0, "draw", h=2)
    assert t.waiting() == [(0, "discard")]
    assert t.until("discard") == {at(26)}


def test_a1_window_lengths_are_validated():
    """A1: window settings are seconds for the four known windows."""
    with pytest.raises(OptionsError):
        options(windows={"lunch": 60})
    with pytest.raises(OptionsError):
        options(windows={"turn": 0})
    for not_an_object in ([], None, 0, ""):
        with pytest.raises(OptionsError):
            Options.from_json({"windows": not_an_object})
    assert options(windows={"stop": 60}).window("stop").total_seconds() == 60


def test_a1_timeout_not_due_before_the_deadline():
    """A1/A4 (rules-decisions): `timeout` before the earliest deadline is refused `not_due`;
    at the deadline itself it is due. A seat cannot send it."""
    t = table(dice=[1])
    t.refused(None, "timeout", "not_due", h=23.99)
    t.refused(0, "timeout", "bad_command", h=25)
    evs = t.timeout(24)
    assert evs[0].type == "timed_out"


# -- A2 stop window ----------------------------------------------------------------------------


def stop_table(**kw) -> Table:
    """Seat 0 opens at h1; seat 2 plays travel:D on seat 1's investor D at h2."""
    t = table(
        {
            0: ["boss", "family:D"],
            1: ["stop", "boss"],
            2: ["travel:D", "stop"],
            3: ["stop", "travel:*", "boss", "recruit", "recruit", "recruit", "family:C"],
        },
        **kw,
    )
    t.do(0, "open_deal", h=1)
    t.do(1, "offer", card="investor:D", price={"cash": 1})
    t.do(2, "travel", card="travel:D", target="investor:D", h=2)
    return t


def test_a2_card_waits_for_its_window():
    """A2: a travel card does not take effect at once; everyone but its player is asked."""
    t = stop_table()
    assert t.phase == "stop_window"
    assert t.state.deal.travel_on == {}
    assert sorted(s for s, f in t.waiting() if f == "stop") == [0, 1, 3]


def test_a2_first_stop_wins_a_later_stop_is_refused():
    """A2, R5.6: the first stop cancels the travel (both to the discard pile); a later stop is
    refused and its card stays in hand."""
    t = stop_table()
    w = t.window_id()
    evs = t.do(1, "stop", window=w, h=3)
    assert types(evs) == ["card_stopped"]
    assert t.state.deal.travel_on == {}
    assert sorted(names(t.state.discard_pile)) == ["stop", "travel:D"]
    assert t.phase == "negotiation"
    t.refused(3, "stop", "nothing_to_stop", rule="R5.6")
    t.refused(3, "stop", "window_closed", window=w, rule="A7")
    assert "stop" in t.hand(3)
    assert (1, "D") in t.state.deal.terms  # the offer for D still stands


def test_a2_all_allow_then_the_effect_applies_early():
    """A2, A1: when every eligible seat let it happen the travel applies before the deadline;
    R4.7: seat 1's offer for D lapses."""
    t = stop_table()
    t.do(0, "allow", h=3)
    t.do(1, "allow")
    assert t.phase == "stop_window"
    evs = t.do(3, "allow")
    assert types(evs)[:2] == ["window_answered", "card_took_effect"]
    assert "D" in t.state.deal.travel_on
    assert (1, "D") not in t.state.deal.terms
    assert t.state.pending is None and t.phase == "negotiation"


def test_a2_timeout_applies_the_effect():
    """A2: when the deadline passes the effect applies; the seats that did not answer missed."""
    t = stop_table()
    t.do(0, "allow", h=3)
    t.refused(None, "timeout", "not_due", h=7.9)
    evs = t.timeout(8)
    assert types(evs)[:2] == ["timed_out", "card_took_effect"]
    assert evs[0].data == {"window": "w2", "kind": "stop", "missed": [1, 3]}
    assert "D" in t.state.deal.travel_on


def test_a2_the_player_of_the_card_does_not_answer():
    """A2: every player except the one who played it is eligible."""
    t = stop_table()
    t.refused(2, "allow", "nothing_to_stop")
    t.refused(2, "stop", "nothing_to_stop")


def test_a2_allow_then_stop_is_refused():
    """A2 (rules-decisions): a seat that let it happen may not then stop it."""
    t = stop_table()
    t.do(3, "allow", h=3)
    t.refused(3, "stop", "already_answered")
    t.refused(3, "allow", "already_answered")


def test_a2_stop_needs_a_stop_card():
    """R5.6: a stop needs a stop card in hand."""
    t = stop_table()
    t.refused(0, "stop", "card_not_in_hand")


def test_a2_no_other_card_close_or_fail_while_pending():
    """A2: while a stop window is open no other travel, recruit or boss card, no close or
    fail (`card_pending`)."""
    t = stop_table()
    t.refused(3, "travel", "card_pending", card="travel:*", target="investor:C", rule="A2")
    t.refused(3, "recruit", "card_pending", target="S", rule="A2")
    t.refused(3, "boss", "card_pending", rule="A2")
    t.refused(0, "close", "card_pending", rule="A2")
    t.refused(0, "fail", "card_pending", rule="A2")


def test_a2_offers_accept_and_chat_go_on():
    """A2: offers (family cards put forward included), counters, acceptances and chat go on
    during a stop window."""
    t = stop_table()
    t.do(3, "offer", card="family:C", price={"cash": 2}, h=3)
    assert t.hand(3).count("family:C") == 0
    t.do(0, "propose", to=3, price={"cash": 1}, card="family:C")
    t.do(3, "accept", {"with": 0})
    t.do(0, "play_family", card="family:D")
    t.do(1, "offer", card="investor:D", price={"cash": 2})
    t.do(0, "accept", {"with": 1})
    t.do(2, "chat", text="Bon voyage, D!")
    assert t.phase == "stop_window"
    assert set(t.state.deal.agreements) == {(3, "C"), (1, "D")}
    allow_all(t)  # D travels: the agreement for D lapses (R4.7); the family D still fills it
    assert set(t.state.deal.agreements) == {(3, "C")}
    close_now(t)
    assert t.state.deals_closed == 1


def test_a2_stopped_boss_card_changes_nothing():
    """A2, R5.6: a stopped boss card leaves the boss in place; both cards are discarded."""
    t = table({1: ["stop"], 3: ["boss"]})
    t.do(0, "open_deal", h=1)
    t.do(3, "boss", h=2)
    t.do(1, "stop")
    assert t.state.deal.boss == 0
    assert sorted(names(t.state.discard_pile)) == ["boss", "stop"]


def test_a2_stopped_recruit_changes_nothing():
    """A2, R5.4, R5.6: a stopped triple recruit recruits nobody; 3 recruits and the stop go to
    the discard pile."""
    t = table({1: ["stop"], 3: ["recruit"] * 3})
    t.do(0, "open_deal", h=1)
    t.do(3, "recruit", target="S", h=2)
    t.do(1, "stop")
    assert t.state.side_pool == ["S", "W"]
    assert sorted(names(t.state.discard_pile)) == ["recruit"] * 3 + ["stop"]


def test_a2_allowed_recruit_takes_effect():
    """A2, R5.4: an allowed triple recruit moves the investor."""
    t = table({3: ["recruit"] * 3})
    t.do(0, "open_deal", h=1)
    t.do(3, "recruit", target="S", h=2)
    allow_all(t)
    assert t.state.seat_investors(3) == ["L", "S"]


# -- A3 last call ------------------------------------------------------------------------------


def test_a3_last_call_closes_when_all_pass():
    """A3: closing opens a last call; every other seat passes, then the deal closes. During
    the last call agreements cannot change; the boss does not answer."""
    t = table()
    with_agreement(t)
    evs = t.do(0, "close", h=2)
    assert types(evs) == ["close_called"]
    assert t.phase == "last_call"
    assert sorted(s for s, f in t.waiting()) == [1, 2, 3]
    t.refused(0, "pass", "not_your_turn", rule="A3")
    t.refused(0, "propose", "wrong_phase", to=2, price={"cash": 1}, rule="A3")
    t.refused(1, "offer", "wrong_phase", card="investor:D", price={"cash": 2}, rule="A3")
    t.do(1, "pass", h=3)
    t.refused(1, "pass", "already_answered")
    t.do(2, "pass")
    t.do(3, "chat", text="hmm")
    assert t.phase == "last_call"
    evs = t.do(3, "pass", window=t.window_id())
    assert types(evs) == ["window_answered", "deal_closed", "turn_started"]
    assert t.state.money == [3, 1, 0, 0]


def test_a3_a_card_cancels_the_closing():
    """A3: a boss card during the last call cancels the closing attempt, even when the card is
    then stopped; the boss may close again later (a new last call)."""
    t = table({1: ["stop"], 3: ["boss"]})
    with_agreement(t)
    t.do(0, "close", h=2)
    old = t.window_id()
    t.do(2, "pass")
    evs = t.do(3, "boss", h=3)
    assert evs[0].data["cancels_close"] is True
    assert t.state.last_call is None
    t.do(1, "stop")
    assert t.phase == "negotiation"
    assert t.state.deal.boss == 0
    t.refused(2, "pass", "window_closed", window=old, rule="A7")
    t.do(0, "close", h=4)
    assert t.window_id() != old
    assert sorted(s for s, f in t.waiting()) == [1, 2, 3]


def test_a3_travel_during_last_call_by_a_non_boss():
    """A3: a travel card during the last call cancels the closing; when it takes effect the
    requirements may no longer be met."""
    t = table({2: ["travel:D"]})
    with_agreement(t)
    t.do(0, "close", h=2)
    t.do(2, "travel", card="travel:D", target="investor:D")
    allow_all(t)
    assert t.phase == "negotiation"
    t.refused(0, "close", "requirements_not_met")


def test_a3_the_boss_plays_no_card_in_the_last_call():
    """A3: only the other seats answer the last call with cards."""
    t = table({0: ["recruit"] * 3})
    with_agreement(t)
    t.do(0, "close", h=2)
    t.refused(0, "recruit", "wrong_phase", target="S", rule="A3")


def test_a3_timeout_closes():
    """A3: when the last call's deadline passes the deal closes."""
    t = table()
    with_agreement(t)
    t.do(0, "close", h=2)
    t.do(1, "pass")
    evs = t.timeout(14)
    assert evs[0].data == {"window": "w2", "kind": "last_call", "missed": [2, 3]}
    assert "deal_closed" in types(evs)


def test_a3_boss_may_fail_during_last_call():
    """R6.5, A3 (rules-decisions): the boss may declare the deal failed during a last call."""
    t = table()
    with_agreement(t)
    t.do(0, "close", h=2)
    assert types(t.do(0, "fail"))[0] == "deal_failed"


def test_a3_pass_without_last_call():
    """A3: there is nothing to pass outside a last call."""
    t = table()
    with_agreement(t)
    t.refused(1, "pass", "wrong_phase")


# -- A4 negotiation deadline -------------------------------------------------------------------


def test_a4_deadline_closes_when_requirements_met():
    """A4: at the negotiation deadline a deal whose requirements are met closes (no last
    call); the deadline is nobody's missed answer (A6)."""
    t = table()
    with_agreement(t, h=1)
    t.refused(None, "timeout", "not_due", h=48.9)
    evs = t.timeout(49)
    assert types(evs)[:3] == ["timed_out", "negotiation_expired", "deal_closed"]
    assert evs[0].data["missed"] == []
    assert "close_called" not in types(evs)
    assert t.state.money == [3, 1, 0, 0]
    assert t.state.missed[0] == 0


def test_a4_deadline_fails_when_requirements_not_met():
    """A4: else the deal fails; the turn passes left of the boss (R6.5)."""
    t = table()
    t.do(0, "open_deal", h=1)
    evs = t.timeout(49)
    failed = of_type(evs, "deal_failed")[0]
    assert failed.data["reason"] == "deadline"
    assert t.state.active == 1 and t.phase == "turn_start"


def test_a4_no_new_influence_cards_after_the_deadline():
    """A4: once the deadline has passed (even before the scheduler's timeout), no new influence
    card may be played: `deadline_passed`."""
    t = table({0: ["family:C"], 2: ["travel:D", "boss"], 3: ["family:D"]})
    t.do(0, "open_deal", h=1)
    t.now = 49
    t.refused(2, "travel", "deadline_passed", card="travel:D", target="investor:D", rule="A4")
    t.refused(2, "boss", "deadline_passed", rule="A4")
    t.refused(0, "play_family", "deadline_passed", card="family:C", rule="A4")
    t.refused(3, "offer", "deadline_passed", card="family:D", price={"cash": 1}, rule="A4")
    t.do(3, "chat", text="too late")


@pytest.mark.parametrize("answer, ending", [("stop", "deal_closed"), ("allow", "deal_failed")])
def test_a4_open_stop_window_runs_to_its_end(answer, ending):
    """A4: a stop window open at the negotiation deadline runs to its end; then the deal closes
    if its requirements are met (stopped travel), else fails (the travel took effect)."""
    t = table({1: ["stop"], 2: ["travel:D"]})
    with_agreement(t, h=1)
    t.do(2, "travel", card="travel:D", target="investor:D", h=46)  # stop deadline h52
    evs = t.timeout(49)
    assert types(evs) == ["timed_out", "negotiation_expired"]
    assert t.phase == "stop_window" and t.state.deal.expired
    assert t.waiting() == [(0, "stop"), (1, "stop"), (3, "stop")]
    evs = t.do(1, "stop", h=50) if answer == "stop" else allow_all(t)
    assert ending in types(evs)
    assert t.state.deal is None and "close_called" not in types(evs)


def test_a4_one_timeout_resolves_everything_due_in_order():
    """A4 (rules-decisions): one timeout resolves every due window, earliest first."""
    t = table({2: ["travel:D"]})
    with_agreement(t, h=1)
    t.do(2, "travel", card="travel:D", target="investor:D", h=46)
    evs = t.timeout(53)
    assert types(evs)[:5] == [
        "timed_out",
        "negotiation_expired",
        "timed_out",
        "card_took_effect",
        "terms_removed",
    ]
    assert [e.data["kind"] for e in of_type(evs, "timed_out")] == ["negotiation", "stop"]
    assert of_type(evs, "deal_failed")[0].data["reason"] == "deadline"


def test_a4_open_last_call_runs_to_its_end():
    """A4: a last call open at the deadline runs on; when all passed the deal closes."""
    t = table()
    with_agreement(t, h=1)
    t.do(0, "close", h=40)  # last call until h52
    evs = t.timeout(49)
    assert types(evs) == ["timed_out", "negotiation_expired"]
    assert t.phase == "last_call"
    for seat in (1, 2):
        t.do(seat, "pass", h=50)
    evs = t.do(3, "pass")
    assert "deal_closed" in types(evs)


def test_a4_close_after_the_deadline_closes_at_once():
    """A4: after the deadline no new card may be played, so a last call opened then could only
    be passed; the deal should close at once when its requirements are met."""
    t = table(investors={0: ["C", "D"], 1: ["G"], 2: ["L"], 3: ["S"]}, side_pool=["W"])
    t.do(0, "open_deal", h=1)
    evs = t.do(0, "close", h=50)
    assert "deal_closed" in types(evs)


# -- A5 turn deadline --------------------------------------------------------------------------


def test_a5_turn_timeout_rolls_and_draws():
    """A5: the server rolls and draws for the absent active seat; the turn passes left."""
    t = table(dice=[2])
    evs = t.timeout(24)
    assert types(evs) == ["timed_out", "die_rolled", "cards_drawn", "turn_started"]
    assert evs[0].data == {"window": "w0", "kind": "turn", "missed": [0]}
    assert evs[1].data["value"] == 2 and t.state.marker == 2
    assert len(t.state.hands[0]) == 3
    assert t.waiting() == [(1, "turn")]
    assert t.until("turn") == {at(48)}


def test_a5_after_a_roll_only_draws():
    """A5: a seat that rolled and then went quiet is not rolled for again."""
    t = table(dice=[2, 5])
    t.do(0, "roll", h=1)
    evs = t.timeout(24)
    assert "die_rolled" not in types(evs)
    assert t.state.marker == 2 and t.state.forced_dice == [5]


def test_a5_place_marker_first():
    """A5 (rules-decisions): at the very first turn the marker goes on the first uncovered
    space, then the server rolls and draws."""
    t = Table.fresh(dice=[3])
    assert t.phase == "place_marker"
    first = t.state.active
    assert t.waiting() == [(first, "place_marker")]
    evs = t.timeout(24)
    assert types(evs)[:4] == ["timed_out", "marker_placed", "die_rolled", "cards_drawn"]
    assert evs[1].data["space"] == 0
    assert t.state.marker == 3 and len(t.state.hands[first]) == 8


def test_a5_discards_the_newest_cards_above_the_limit():
    """A5: the draw for an absent seat discards the newest cards above the hand limit at once."""
    t = table({0: ["recruit"] * 11}, dice=[1], draw_pile_top=["boss", "stop", "travel:C"])
    t.timeout(24)
    assert t.hand(0) == ["recruit"] * 11 + ["boss"]
    assert names(t.state.discard_pile) == ["stop", "travel:C"]
    assert t.phase == "turn_start" and t.state.active == 1


def test_a5_timed_out_discard_step_discards_newest():
    """A5 (rules-decisions): a timed-out discard step discards the owing seat's newest cards."""
    t = table({0: ["recruit"] * 11}, dice=[1], draw_pile_top=["boss", "stop", "travel:C"])
    t.do(0, "roll", h=1)
    t.do(0, "draw", h=2)
    assert t.state.discard_owed == {0: 2}
    evs = t.timeout(26)
    assert types(evs)[:2] == ["timed_out", "cards_discarded"]
    assert t.hand(0) == ["recruit"] * 11 + ["boss"]
    assert t.state.active == 1


def test_a5_v4_draw_count_applies():
    """A5, V4: the server's draw follows V4 (no investors: 4 cards)."""
    spec = {"investors": {1: ["C"], 2: ["D"], 3: ["G"]}, "side_pool": ["L", "S", "W"]}
    t = table(variants=["V4"], dice=[1], **spec)
    t.timeout(24)
    assert len(t.state.hands[0]) == 4


def test_a5_under_v2_the_server_rolls_then_the_deal_fails():
    """A5, V2: a seat obliged to deal, silent on its turn: the server rolls first, then opens
    the deal on the new space, which fails at once (dealing in place allowed or not)."""
    for may in (True, False):
        t = table({0: ["recruit"] * 10}, variants=["V2"], dice=[4], may_deal_in_place=may)
        assert t.state.must_deal
        evs = t.timeout(24)
        assert types(evs) == [
            "timed_out",
            "die_rolled",
            "deal_opened",
            "deal_failed",
            "turn_started",
        ]
        assert of_type(evs, "deal_failed")[0].data["space"] == 4
        assert of_type(evs, "deal_failed")[0].data["reason"] == "turn_deadline"
        assert len(t.state.hands[0]) == 10 and t.state.active == 1


def test_a5_under_v3_a_deal_is_opened_and_fails():
    """A5, V3: the idle seat's forced deal is opened and fails at once."""
    t = table(variants=["V3"], dice=[1, 1, 1, 1, 1])
    for seat, h in zip((0, 1, 2, 3), (1, 2, 3, 4), strict=True):
        t.do(seat, "roll", h=h)
        t.do(seat, "draw")
    assert t.state.active == 0 and t.state.must_deal
    evs = t.timeout(28)
    assert types(evs)[1:4] == ["die_rolled", "deal_opened", "deal_failed"]


# -- A6 away seats -----------------------------------------------------------------------------


def boss_table() -> Table:
    return table({0: ["boss"] * 2, 1: ["boss"] * 2, 2: ["boss"] * 2, 3: ["stop"]})


def test_a6_two_missed_windows_make_a_seat_away():
    """A6: seat 3 misses two stop windows in a row: it is away; windows stop waiting for it;
    acting clears it."""
    t = boss_table()
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    t.do(0, "allow")
    t.do(1, "allow")
    t.timeout(8)
    assert t.state.missed[3] == 1 and not t.state.away[3]
    t.do(1, "boss", h=9)
    t.do(0, "allow")
    t.do(2, "allow")
    t.timeout(15)
    assert t.state.away[3]
    assert view(t.state, 0)["seats"][3]["away"] is True
    assert snapshot(t.state)["away"] == ["Dee"]
    t.do(0, "boss", h=16)
    assert sorted(s for s, f in t.waiting()) == [1, 2]
    t.do(1, "allow")
    evs = t.do(2, "allow")
    assert "card_took_effect" in types(evs)  # not waiting for the away seat
    t.do(3, "chat", text="back", h=17)
    assert not t.state.away[3] and t.state.missed[3] == 0
    t.do(2, "boss")
    assert sorted(s for s, f in t.waiting()) == [0, 1, 3]


def test_a6_misses_must_be_consecutive():
    """A6: a miss, an answer, a miss: not away."""
    t = boss_table()
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    t.timeout(8)  # seats 0, 1, 3 miss
    t.do(1, "boss", h=9)
    t.do(3, "allow")
    t.timeout(15)  # seats 0 and 2 miss; 3 answered
    assert t.state.missed == [2, 0, 1, 0]
    assert t.state.away == [True, False, False, False]


def test_a6_last_call_does_not_wait_for_away_seats():
    """A6: an away seat counts as having passed the last call."""
    t = boss_table()
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    t.do(0, "allow")
    t.do(1, "allow")
    t.timeout(8)
    t.do(1, "boss", h=9)
    t.do(0, "allow")
    t.do(2, "allow")
    t.timeout(15)
    assert t.state.away == [False, False, False, True]
    assert t.state.deal.boss == 1
    t.do(1, "propose", to=0, card="investor:C", price={"cash": 1}, h=16)
    t.do(0, "accept", {"with": 1})
    t.do(1, "close")
    assert sorted(s for s, f in t.waiting()) == [0, 2]
    t.do(0, "pass")
    evs = t.do(2, "pass")
    assert "deal_closed" in types(evs)


def test_a6_turn_windows_still_run_to_their_deadline():
    """A6 (rules-decisions): two turn timeouts in a row make a seat away, but its turn window
    is still waited for until its deadline."""
    t = table()
    for k in range(1, 9):
        t.timeout(24 * k)
    assert t.state.away == [True, True, True, True]
    assert t.waiting() == [(0, "turn")]
    t.refused(None, "timeout", "not_due", h=24 * 9 - 1)
    t.timeout(24 * 9)
    assert t.state.active == 1
    t.do(1, "roll", h=24 * 9 + 1)
    assert t.state.away == [True, False, True, True]


def test_a6_windows_wait_only_for_present_seats():
    """A6: with seats 2 and 3 away, a boss card waits for seat 0 alone and the last call too;
    with every other seat away the last call ends at once."""
    t = table({1: ["boss"]})
    for k in range(1, 9):
        t.timeout(24 * k)
    assert t.state.away == [True] * 4
    t.do(0, "open_deal", h=24 * 8 + 1)
    t.do(1, "boss")
    assert t.waiting() == [(0, "stop")]
    t.do(0, "allow")
    assert t.state.deal.boss == 1 and t.state.away == [False, False, True, True]
    t.do(1, "propose", to=0, card="investor:C", price={"cash": 0})
    t.do(0, "accept", {"with": 1})
    t.do(1, "close")
    assert t.waiting() == [(0, "last_call")]
    t.do(0, "pass")
    assert t.state.deals_closed == 1
    t2 = table(investors={0: ["C", "D"], 1: ["G"], 2: ["L"], 3: ["S"]}, side_pool=["W"])
    for k in range(1, 9):
        t2.timeout(24 * k)
    t2.do(0, "open_deal", h=24 * 8 + 1)
    evs = t2.do(0, "close")
    assert types(evs)[:2] == ["close_called", "deal_closed"]


# -- A7 (engine parts) -------------------------------------------------------------------------


def test_a7_answer_names_the_window():
    """A7: an answer naming a window that has ended is refused `window_closed`; naming the open
    window works; a stop naming an old window keeps its card."""
    t = table({1: ["stop"], 2: ["boss", "boss"], 3: ["stop"]})
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    first = t.window_id()
    t.do(3, "stop")
    t.do(2, "boss", h=3)
    second = t.window_id()
    assert first != second
    t.refused(1, "stop", "window_closed", window=first, rule="A7")
    t.refused(1, "allow", "window_closed", window=first, rule="A7")
    assert "stop" in t.hand(1)
    t.do(1, "allow", window=second)
    assert 1 in t.state.pending.window.answered


def test_a7_accept_names_the_price():
    """A7: an accept naming a price the other side has since changed is refused
    `terms_changed`; naming the current price works."""
    t = table()
    t.do(0, "open_deal", h=1)
    t.do(1, "offer", card="investor:D", price={"cash": 3})
    t.do(1, "offer", card="investor:D", price={"cash": 4}, h=2)
    t.refused(0, "accept", "terms_changed", {"with": 1, "price": {"cash": 3}}, rule="A7")
    t.do(0, "accept", {"with": 1, "price": {"cash": 4}})
    assert t.state.deal.agreements[(1, "D")].price == ("cash", 4)


def test_a7_provider_accept_names_the_price():
    """A7: the same for a provider accepting the boss's proposal (no bait and switch)."""
    t = table()
    t.do(0, "open_deal", h=1)
    t.do(0, "propose", to=1, card="investor:D", price={"cash": 2})
    t.do(0, "propose", to=1, card="investor:D", price={"shares": 0})
    t.refused(1, "accept", "terms_changed", {"with": 0, "price": {"cash": 2}}, rule="A7")
    t.do(1, "accept", {"with": 0, "price": {"shares": 0}})
    assert (1, "D") in t.state.deal.agreements


# -- A9 randomness -----------------------------------------------------------------------------


def _script(seed) -> Table:
    """A fresh game run by the scheduler alone: timeouts roll dice and draw cards."""
    t = Table.fresh(seed=seed)
    for k in range(1, 7):
        t.timeout(24 * k)
    return t


def _dump(t: Table) -> str:
    return json.dumps([e.to_json() for e in t.events], sort_keys=True)


def test_a9_same_seed_same_game():
    """A9: the same seed and commands give the same events; another seed another deal."""
    assert _dump(_script("alpha")) == _dump(_script("alpha"))
    assert _dump(_script("alpha")) != _dump(_script("beta"))


def test_a9_outcomes_are_in_the_events():
    """A9: every die roll is recorded in its event (value and source) and advances the counter;
    the n-th random act draws from the seed and n."""
    t = _script(99)
    rolls = of_type(t.events, "die_rolled")
    assert len(rolls) == 6
    assert all(e.data["source"] == "rng" and 1 <= e.data["value"] <= 6 for e in rolls)
    assert t.state.rng_count == 2 + 6
    assert [e.data["value"] for e in rolls] == [
        imtheboss.engine.rng.die(99, 2 + i) for i in range(6)
    ]


def test_a9_forced_dice_first():
    """A9, docs/scenarios.md `dice`: forced results are used first, then the seeded generator."""
    t = table(dice=[6])
    t.timeout(24)
    t.timeout(48)
    rolls = of_type(t.events, "die_rolled")
    assert [e.data["source"] for e in rolls] == ["forced", "rng"]
    assert rolls[0].data["value"] == 6


def reshuffle_table() -> Table:
    """The draw pile holds one stop; every other card lies in the discard pile."""
    rest = list(CARD_NAMES)
    rest.remove("stop")
    return Table.at_position(
        {
            "investors": FOUR,
            "side_pool": ["S", "W"],
            "hands": {},
            "draw_pile": ["stop"],
            "discard_pile": rest,
            "marker": 0,
            "active": 0,
        },
        board=FLAT_BOARD,
        dice=[1],
    )


def test_a9_reshuffle_is_recorded():
    """A9, R6.7: the reshuffled draw pile is in the event."""
    t = reshuffle_table()
    before = list(t.state.discard_pile)
    evs = t.timeout(24)
    assert types(evs)[1:5] == ["die_rolled", "cards_drawn", "pile_reshuffled", "cards_drawn"]
    new_pile = of_type(evs, "pile_reshuffled")[0].data["draw_pile"]
    assert sorted(new_pile) == sorted(before) and new_pile != before
    assert len(t.state.hands[0]) == 3 and len(t.state.draw_pile) == 95
    assert t.state.discard_pile == []


def test_a9_replay_never_calls_the_generator(monkeypatch):
    """A9: replaying a log (read back from JSON) never rolls or shuffles."""
    t = _script(5)
    t2 = reshuffle_table()
    t2.timeout(24)

    def boom(*args, **kwargs):
        raise AssertionError("replay used the random generator")

    for module in (imtheboss.engine.rng, imtheboss.engine.turn, imtheboss.engine.setup):
        for fn in ("die", "shuffled", "_rng"):
            if hasattr(module, fn):
                monkeypatch.setattr(module, fn, boom)
    for tab in (t, t2):
        again = tab.replayed()
        assert again.rng_count == tab.state.rng_count


def test_a9_event_json_round_trip():
    """A9, events: every event survives a JSON round trip unchanged."""
    t = stop_table()
    allow_all(t)
    t.do(0, "fail", h=3)
    t.timeout(28)
    for e in t.events:
        assert Event.from_json(json.loads(json.dumps(e.to_json()))) == e
    t.replayed()


def test_a9_seed_hash_published_seed_revealed_at_the_end():
    """A9: `game_started` carries sha256 of the seed; the seed stays out of every seat's
    redacted events and views until `game_ended` reveals it."""
    seed = "s3cr3t-seed-4711"
    events = new_game(PLAYERS[:3], options(), default_board(), seed, T0)
    started = events[0]
    assert started.data["seed_hash"] == hashlib.sha256(seed.encode()).hexdigest()
    assert Table(events).state.seed_hash == started.data["seed_hash"]

    t = Table.at_position(
        {
            "investors": {0: ["C", "D"], 1: ["G", "L"], 2: ["S", "W"]},
            "side_pool": [],
            "covered": list(range(2, 16)),
            "marker": 0,
            "active": 0,
        },
        players=3,
        board=FLAT_BOARD,
        seed=seed,
    )
    t.do(0, "open_deal", h=1)
    t.do(0, "close")
    t.do(1, "pass")
    for seat in (None, 0, 1, 2):
        shown = json.dumps([redact_event(e, seat) for e in t.events]) + json.dumps(
            view(t.state, seat)
        )
        assert seed not in shown
        assert t.state.seed_hash in shown
    evs = t.do(2, "pass")
    assert t.phase == "game_over"
    ended = of_type(evs, "game_ended")[0]
    assert ended.data["seed"] == seed
    assert hashlib.sha256(str(ended.data["seed"]).encode()).hexdigest() == t.state.seed_hash
    for seat in (None, 0, 1, 2):
        assert redact_event(ended, seat)["seed"] == seed
        assert view(t.state, seat)["seed"] == seed
    assert replay(t.events).phase == "game_over"


def test_a6_a_seat_may_declare_itself_away():
    """A6 (rules-decisions): a seat says it is away; the stop window it was the last to owe
    ends at once, last calls do not wait for it, and its next command clears it."""
    t = boss_table()
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    t.do(0, "allow")
    t.do(1, "allow")
    assert sorted(s for s, _ in t.waiting()) == [3]
    evs = t.do(3, "away", away=True, h=3)
    assert types(evs) == ["seat_away", "card_took_effect"] + types(evs)[2:]
    assert t.state.away[3] and t.state.deal.boss == 2
    assert 3 not in [s for s, _ in t.waiting()]
    t.do(3, "chat", text="back from holiday", h=4)
    assert not t.state.away[3]
    t.do(3, "away", away=True, h=5)
    t.refused(3, "away", "bad_command", rule="A6", away=True)  # already away: no new line
    t.do(3, "away", away=False, h=6)
    assert not t.state.away[3]
    t.refused(3, "away", "bad_command", rule="A6", away=False)
    t.refused(3, "away", "bad_command", rule="A6", away="yes")


def test_a1_extend_moves_every_open_deadline():
    """A1 (rules-decisions): the server's ``extend`` (a game resumed after a pause) moves every
    open window's deadline by the same time; a seat cannot send it."""
    t = boss_table()
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    due_windows, legal_commands = (
        imtheboss.engine.game.due_windows,
        imtheboss.engine.views.legal_commands,
    )
    before = {w.id: w.deadline for w in due_windows(t.state)}
    assert len(before) == 2  # the stop window and the negotiation
    t.refused(0, "extend", "bad_command", seconds=3600)
    command = Command("extend", None, {"seconds": 3600}, T0 + timedelta(hours=3))
    evs = decide(t.state, command)
    assert types(evs) == ["deadlines_extended"]
    for e in evs:
        apply_in_place(t.state, e)
    after = {w.id: w.deadline for w in due_windows(t.state)}
    assert after == {k: v + timedelta(hours=1) for k, v in before.items()}
    assert not any(c["do"] == "extend" for s in range(4) for c in legal_commands(t.state, s))
