"""Variants V1-V9 (docs/rules.md, V; docs/rules-decisions.md, Variants). Each test names its
rule."""

from __future__ import annotations

import pytest
from imtheboss.engine.board import default_board
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.setup import new_game
from imtheboss.engine.views import legal_commands
from support.async_play import (
    FLAT_BOARD,
    T0,
    Table,
    allow_all,
    close_now,
    flat_board,
    of_type,
    options,
    types,
)

FOUR = {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]}  # side pool S, W
THREE = {0: ["C", "D"], 1: ["G", "L"], 2: ["S", "W"]}


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


def three(hands=None, **spec):
    return {
        "investors": THREE,
        "side_pool": [],
        "hands": hands or {},
        "draw_pile": "rest",
        "marker": 0,
        "active": 0,
        **spec,
    }


def table3(spec, **kw) -> Table:
    return Table.at_position(spec, players=3, **kw)


def roll_and_draw(t: Table, seat: int) -> None:
    t.do(seat, "roll")
    t.do(seat, "draw")


def can_do(t: Table, seat: int, do: str) -> bool:
    return any(c["do"] == do for c in legal_commands(t.state, seat))


# -- V1 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("variants, next_seat", [((), 3), (("V1",), 1)])
@pytest.mark.parametrize("ending", ["fail", "close"])
def test_v1_turn_passes_left_of_opener_even_after_a_boss_card(variants, next_seat, ending):
    """V1: after the deal the turn passes left of the opener (seat 0 -> 1), not left of the last
    boss (seat 2 -> 3, R3.3/R6.4)."""
    t = Table.at_position(four({2: ["boss"]}), variants=variants, board=FLAT_BOARD)
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    allow_all(t)
    assert t.state.deal.boss == 2
    if ending == "fail":
        t.do(2, "fail", h=3)
    else:
        t.do(0, "offer", card="investor:C", price={"cash": 1}, h=3)
        t.do(2, "accept", {"with": 0})
        t.do(1, "offer", card="investor:D", price={"cash": 1})
        t.do(2, "accept", {"with": 1})
        evs = close_now(t)
        closed = of_type(evs, "deal_closed")[0]
        assert closed.data["boss"] == 2
        assert t.state.money == [1, 1, 2, 0]  # proceeds 4 M to the boss, 1 M to each provider
    assert t.phase == "turn_start"
    assert t.state.active == next_seat


@pytest.mark.parametrize("variants, next_seat", [((), 1), (("V1",), 1)])
def test_v1_without_boss_card_both_readings_agree(variants, next_seat):
    """V1, R3.3: with no boss card played the opener is the last boss; both give seat 1."""
    t = Table.at_position(four(), variants=variants, board=FLAT_BOARD)
    t.do(0, "open_deal", h=1)
    t.do(0, "fail")
    assert t.state.active == next_seat


# -- V2 ----------------------------------------------------------------------------------------


def test_v2_ten_cards_must_deal():
    """V2: a seat holding 10 or more cards must open a deal: draw is refused `must_deal`."""
    t = Table.at_position(four({0: ["recruit"] * 10}, active=3), variants=["V2"], dice=[1, 1])
    roll_and_draw(t, 3)
    assert t.state.active == 0
    assert of_type(t.events, "turn_started")[-1].data["must_deal"] is True
    t.do(0, "roll")
    assert not can_do(t, 0, "draw")
    assert can_do(t, 0, "open_deal")
    t.refused(0, "draw", "must_deal", rule="V2")
    t.do(0, "open_deal")
    assert t.phase == "negotiation"


def test_v2_nine_cards_may_draw():
    """V2: fewer than 10 cards: no obligation."""
    t = Table.at_position(four({0: ["recruit"] * 9}, active=3), variants=["V2"], dice=[1, 1])
    roll_and_draw(t, 3)
    assert t.state.must_deal is False
    roll_and_draw(t, 0)
    assert len(t.state.hands[0]) == 12


def test_v2_off_ten_cards_may_draw():
    """V2 is off by default: 10 cards may still draw."""
    t = Table.at_position(four({0: ["recruit"] * 10}, active=3), dice=[1, 1])
    roll_and_draw(t, 3)
    roll_and_draw(t, 0)
    assert len(t.state.hands[0]) == 13
    assert t.state.discard_owed == {0: 1}  # R6.6 above 12


def test_v2_applies_to_the_first_turn_of_a_position():
    """V2: the obligation holds on the position's first turn too (the starting seat holds 10)."""
    t = Table.at_position(four({0: ["recruit"] * 10}), variants=["V2"], dice=[1])
    assert t.state.must_deal is True
    t.do(0, "roll")
    t.refused(0, "draw", "must_deal", rule="V2")


def test_v2_may_open_in_place_or_roll_first():
    """V2: the forced deal may be opened on the marker or after a roll (R3.1)."""
    t = Table.at_position(four({0: ["recruit"] * 10}, active=3), variants=["V2"], dice=[1, 1])
    roll_and_draw(t, 3)
    assert can_do(t, 0, "open_deal") and can_do(t, 0, "roll")
    t.do(0, "open_deal")
    assert t.state.deal.space == t.state.marker


# -- V3 ----------------------------------------------------------------------------------------


def test_v3_idle_seat_must_deal_on_its_next_turn():
    """V3: seat 0 neither was boss nor played a card since its last turn: must open a deal."""
    t = table3(three(), variants=["V3"], board=FLAT_BOARD, dice=[1, 1, 1, 1])
    assert t.state.must_deal is False  # V3: the first turn carries no obligation
    roll_and_draw(t, 0)
    assert t.state.must_deal is False  # seat 1's first turn
    roll_and_draw(t, 1)
    roll_and_draw(t, 2)
    assert t.state.active == 0
    assert t.state.must_deal is True
    t.do(0, "roll")
    t.refused(0, "draw", "must_deal", rule="V3")
    t.do(0, "open_deal")


def test_v3_off_no_obligation():
    """V3 off: the same idle seat may draw."""
    t = table3(three(), board=FLAT_BOARD, dice=[1, 1, 1, 1])
    for seat in (0, 1, 2, 0):
        roll_and_draw(t, seat)
    assert t.state.active == 1


def test_v3_boss_or_influence_card_clears_the_obligation():
    """V3: seat 1 was boss; seat 0 played a family card into seat 1's deal; seat 2 did neither."""
    t = table3(three({0: ["family:C"]}), variants=["V3"], board=FLAT_BOARD, dice=[1, 1, 1, 1])
    roll_and_draw(t, 0)
    t.do(1, "open_deal")
    t.do(0, "offer", card="family:C", price={"cash": 1})
    t.do(1, "fail")
    assert t.state.active == 2
    roll_and_draw(t, 2)
    assert (t.state.active, t.state.must_deal) == (0, False)
    roll_and_draw(t, 0)
    assert (t.state.active, t.state.must_deal) == (1, False)
    roll_and_draw(t, 1)
    assert (t.state.active, t.state.must_deal) == (2, True)


def test_v3_offering_an_investor_card_is_not_an_influence_card():
    """V3: putting one's investor card forward plays no influence card."""
    t = table3(three(), variants=["V3"], board=FLAT_BOARD, dice=[1, 1, 1])
    roll_and_draw(t, 0)
    t.do(1, "open_deal")
    t.do(0, "offer", card="investor:C", price={"cash": 1})
    t.do(1, "fail")
    roll_and_draw(t, 2)
    assert (t.state.active, t.state.must_deal) == (0, True)


def test_v3_with_v5_a_seat_that_may_not_deal_is_not_forced():
    """V3 + V5 (rules-decisions): under 4 cards the seat is not made to open a deal."""
    t = table3(three(), variants=["V3", "V5"], board=FLAT_BOARD, dice=[1, 1, 1, 1])
    for seat in (0, 1, 2):
        roll_and_draw(t, seat)
    assert len(t.state.hands[0]) == 3
    assert (t.state.active, t.state.must_deal) == (0, False)
    roll_and_draw(t, 0)


# -- V4 ----------------------------------------------------------------------------------------

V4_CASES = [
    ({1: ["C"], 2: ["D"], 3: ["G"]}, ["L", "S", "W"], 4),
    ({0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]}, ["S", "W"], 3),
    ({0: ["C", "D"], 1: ["G"], 2: ["L"], 3: ["S"]}, ["W"], 2),
    ({0: ["C", "D", "G"], 1: ["L"], 2: ["S"], 3: ["W"]}, [], 1),
    ({0: ["C", "D", "G", "L"], 1: ["S"], 2: ["W"]}, [], 1),
]


@pytest.mark.parametrize("investors, side, count", V4_CASES)
def test_v4_draw_by_investors_controlled(investors, side, count):
    """V4: 0 investors -> 4 cards, 1 -> 3, 2 -> 2, 3 or more -> 1."""
    spec = four(investors=investors, side_pool=side)
    t = Table.at_position(spec, variants=["V4"], dice=[1])
    roll_and_draw(t, 0)
    assert len(t.state.hands[0]) == count
    assert len(of_type(t.events, "cards_drawn")[0].data["cards"]) == count


@pytest.mark.parametrize("investors, side, _count", V4_CASES)
def test_v4_off_always_three(investors, side, _count):
    """R3.1: without V4 a draw is 3 cards."""
    t = Table.at_position(four(investors=investors, side_pool=side), dice=[1])
    roll_and_draw(t, 0)
    assert len(t.state.hands[0]) == 3


# -- V5 ----------------------------------------------------------------------------------------


def test_v5_fewer_than_four_cards_cannot_deal():
    """V5: with 3 cards open_deal is refused `cannot_deal`, on the marker and after a roll."""
    t = Table.at_position(four({0: ["recruit"] * 3}), variants=["V5"], dice=[1])
    assert not can_do(t, 0, "open_deal")
    t.refused(0, "open_deal", "cannot_deal", rule="V5")
    t.do(0, "roll")
    assert not can_do(t, 0, "open_deal")
    t.refused(0, "open_deal", "cannot_deal", rule="V5")
    t.do(0, "draw")
    assert t.state.active == 1


def test_v5_four_cards_may_deal():
    """V5: 4 cards are enough."""
    t = Table.at_position(four({0: ["recruit"] * 4}), variants=["V5"])
    assert can_do(t, 0, "open_deal")
    t.do(0, "open_deal")
    assert t.phase == "negotiation"


def test_v5_off_empty_hand_may_deal():
    """V5 is off by default: an empty hand may open a deal."""
    t = Table.at_position(four())
    t.do(0, "open_deal")
    assert t.phase == "negotiation"


# -- V6 ----------------------------------------------------------------------------------------

COVERED_8 = [8, 9, 10, 11, 12, 13, 14, 15]


@pytest.mark.parametrize(
    "variants, deals, limit",
    [(("V6",), 9, 10), (("V6",), 8, 12), ((), 9, 12), ((), 12, 12), (("V6",), 12, 10)],
)
def test_v6_hand_limit_ten_from_the_tenth_deal(variants, deals, limit):
    """V6: the hand limit is 10 once nine deals have closed (R6.6: 12 otherwise)."""
    spec = four({0: ["recruit"] * 8}, covered=list(range(16 - deals, 16)), deals_closed=deals)
    t = Table.at_position(spec, variants=variants, dice=[1])
    assert t.state.hand_limit() == limit
    roll_and_draw(t, 0)  # 8 + 3 = 11 cards
    if limit == 10:
        assert t.phase == "discard"
        assert t.state.discard_owed == {0: 1}
        t.refused(0, "roll", "hand_over_limit", rule="R6.6")
        t.do(0, "discard", cards=["recruit"])
        assert t.phase == "turn_start" and t.state.active == 1
    else:
        assert t.phase == "turn_start" and t.state.active == 1
    assert len(t.state.hands[0]) == min(11, limit)


@pytest.mark.parametrize("variants, owed", [(("V6",), {2: 1}), ((), None)])
def test_v6_limit_drops_when_the_ninth_deal_closes(variants, owed):
    """V6: closing the 9th deal makes the limit 10 at once: a seat holding 11 discards one."""
    spec = four(
        {2: ["recruit"] * 11},
        investors={0: ["C", "D"], 1: ["G"], 2: ["L"], 3: ["S"]},
        side_pool=["W"],
        covered=COVERED_8,
    )
    t = Table.at_position(spec, variants=variants, board=FLAT_BOARD)
    t.do(0, "open_deal")
    close_now(t)
    assert t.state.deals_closed == 9
    if owed:
        assert t.phase == "discard" and t.state.discard_owed == owed
        t.do(2, "discard", cards=["recruit"])
    assert t.phase == "turn_start" and t.state.active == 1


# -- V7 ----------------------------------------------------------------------------------------


def test_v7_removes_tiles_3_6_9():
    """V7: tiles #3, #6, #9 are removed: two deals at each of 2, 3 and 4 M."""
    events = new_game(["A", "B", "C"], options(["V7"]), default_board(), 1, T0)
    assert events[0].data["tiles"] == [1, 2, 4, 5, 7, 8, 10, 11, 12, 13, 14, 15]
    events = new_game(["A", "B", "C"], options(), default_board(), 1, T0)
    assert events[0].data["tiles"] == list(range(1, 16))


@pytest.mark.parametrize("deals, value_v7, value", [(2, 3, 2), (4, 4, 3), (6, 5, 4)])
def test_v7_share_values(deals, value_v7, value):
    """V7 with R1.2: the third deal already pays 3 M a share (tile #4)."""
    spec = three(covered=list(range(16 - deals, 16)))
    assert table3(spec, variants=["V7"]).state.share_value == value_v7
    assert table3(spec).state.share_value == value


def _deal_by_seat0(t: Table):
    t.do(0, "open_deal")
    return close_now(t)


def test_v7_running_sum_ends_the_game_at_six():
    """V7: from tile #10 on each closed deal adds a roll; the game ends when the sum is >= 6
    (a roll of 1 after tile #10 does not end it, unlike R7.2)."""
    spec = three(covered=list(range(10, 16)))
    t = table3(spec, variants=["V7"], board=FLAT_BOARD, dice=[1, 1, 1, 5])
    evs = _deal_by_seat0(t)
    assert of_type(evs, "deal_closed")[0].data["tile"] == 10
    end_rolls = [e for e in of_type(evs, "die_rolled") if e.data["purpose"] == "end"]
    assert [e.data["value"] for e in end_rolls] == [1]
    assert t.state.end_sum == 1 and t.phase == "turn_start"
    roll_and_draw(t, 1)
    roll_and_draw(t, 2)
    evs = _deal_by_seat0(t)
    assert of_type(evs, "deal_closed")[0].data["tile"] == 11
    assert t.state.end_sum == 6
    assert t.phase == "game_over"
    assert of_type(evs, "game_ended")[0].data["reason"] == "end_sum"


def test_r7_2_tile_ten_roll_of_one_ends_without_v7():
    """R7.2 (contrast to V7): after tile #10 a roll of 1 ends the game."""
    spec = three(covered=list(range(7, 16)))
    t = table3(spec, board=FLAT_BOARD, dice=[1])
    evs = _deal_by_seat0(t)
    assert of_type(evs, "deal_closed")[0].data["tile"] == 10
    assert of_type(evs, "game_ended")[0].data["reason"] == "end_roll"


def test_v7_no_roll_before_tile_ten():
    """V7: tiles below #10 add nothing and roll nothing."""
    spec = three(covered=list(range(11, 16)))
    t = table3(spec, variants=["V7"], board=FLAT_BOARD, dice=[6])
    evs = _deal_by_seat0(t)
    assert of_type(evs, "deal_closed")[0].data["tile"] == 8
    assert of_type(evs, "die_rolled") == []
    assert t.state.end_sum == 0 and t.state.forced_dice == [6]


def test_v7_last_tile_ends_the_game():
    """V7: the game also ends after the last tile, without a roll."""
    spec = three(covered=list(range(5, 16)))
    t = table3(spec, variants=["V7"], board=FLAT_BOARD)
    assert t.state.tiles == [15]
    evs = _deal_by_seat0(t)
    assert of_type(evs, "die_rolled") == []
    assert of_type(evs, "game_ended")[0].data["reason"] == "last_tile"


# -- V8 / V9 -----------------------------------------------------------------------------------


def test_v9_two_players_get_three_investors_each():
    """R2.1, V9: a 2-player game plays by V9; each player gets 3 investors (R2.2)."""
    for seed in range(5):
        events = new_game(["A", "B"], options(["V9"]), default_board(), seed, T0)
        t = Table(events)
        assert [len(t.state.seat_investors(s)) for s in (0, 1)] == [3, 3]
        assert t.state.side_pool == []


def _two(hands=None, **spec):
    return {
        "investors": {0: ["C", "G", "L"], 1: ["D", "S", "W"]},
        "side_pool": [],
        "hands": hands or {},
        "draw_pile": "rest",
        "marker": 0,
        "active": 0,
        **spec,
    }


def test_v9_boss_uses_opponent_investor_and_splits():
    """V9: the boss uses the opponent's D without negotiation and splits the proceeds equally;
    9 M (3 shares x 3 M) -> the boss keeps the odd million: 5 and 4."""
    t = Table.at_position(
        _two(covered=[13, 14, 15]), players=2, variants=["V9"], board=flat_board(3)
    )
    t.do(0, "open_deal")
    evs = close_now(t)
    closed = of_type(evs, "deal_closed")[0].data
    assert closed["proceeds"] == 9
    auto = [x for x in closed["lineup"] if x["auto"]]
    assert auto == [{"letter": "D", "seat": 1, "kind": "investor", "card": None, "auto": True}]
    assert t.state.money == [5, 4]


def test_v9_investor_cards_come_before_the_boss_family_card():
    """V9, R6.3 (rules-decisions): the opponent's investor card fills D before the boss's own
    family card (the boss must use what helps); the proceeds are split, the odd M to the boss,
    and the boss's family card goes back to hand."""
    t = Table.at_position(
        _two({0: ["family:D"]}, covered=[13, 14, 15]),
        players=2,
        variants=["V9"],
        board=flat_board(3),
    )
    t.do(0, "open_deal")
    t.do(0, "play_family", card="family:D")
    close_now(t)
    assert t.state.money == [5, 4]
    assert "family:D" in [CARD_NAMES[c] for c in t.state.hands[0]]


def test_v9_own_investor_travel_blocks():
    """V9: a player may send their own investor on travel to block the boss."""
    t = Table.at_position(_two({1: ["travel:D"]}), players=2, variants=["V9"], board=FLAT_BOARD)
    t.do(0, "open_deal")
    t.do(1, "travel", card="travel:D", target="investor:D")
    t.do(0, "allow")
    assert t.state.deal.travel_on == {"D": t.state.deal.travel_on["D"]}
    t.refused(0, "close", "requirements_not_met", rule="R6.1")


def test_without_v9_own_investor_travel_refused():
    """R5.1: outside V9 one's own investor may not be sent on travel."""
    t = Table.at_position(four({1: ["travel:D"]}), board=FLAT_BOARD)
    t.do(0, "open_deal")
    t.refused(1, "travel", "own_investor", card="travel:D", target="investor:D", rule="R5.1")


def test_without_v9_no_automatic_use():
    """R6.1: outside V9 an opponent's investor takes part only under agreement."""
    t = Table.at_position(four(), board=FLAT_BOARD)
    t.do(0, "open_deal")
    t.refused(0, "close", "requirements_not_met")


def test_v8_three_players_use_the_two_player_rules():
    """V8: with 3 players the boss uses both opponents' investors; 4 M split three ways: the
    boss keeps the odd million (2, 1, 1)."""
    t = table3(
        three(investors={0: ["C", "L"], 1: ["D", "S"], 2: ["G", "W"]}),
        variants=["V8"],
        board=flat_board(2, ("C", "D", "G")),
    )
    t.do(0, "open_deal")
    close_now(t)
    assert t.state.money == [2, 1, 1]


def test_v8_agreements_are_paid_first_then_the_rest_is_split():
    """V8/V9 (rules-decisions): agreements first, then what is left is split: 9 - 1 = 8 ->
    4 and 4; the paid-off seat gets its 1 M."""
    t = table3(
        three(investors={0: ["C", "G"], 1: ["D", "L"], 2: ["S", "W"]}, covered=[13, 14, 15]),
        variants=["V8"],
        board=flat_board(3),
    )
    t.do(0, "open_deal")
    t.do(0, "propose", to=2, price={"cash": 1})
    t.do(2, "accept", {"with": 0})
    close_now(t)
    assert t.state.money == [4, 4, 1]


def test_v8_own_investor_travel_allowed():
    """V8: own-investor travel (V9) is allowed with 3-6 players too."""
    t = Table.at_position(four({1: ["travel:D"]}), variants=["V8"], board=FLAT_BOARD)
    t.do(0, "open_deal")
    evs = t.do(1, "travel", card="travel:D", target="investor:D")
    assert types(evs) == ["card_pending"]
