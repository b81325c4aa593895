"""Rules R1 (components), R2 (setup), R3 (a turn) and R7 (money and the end), with the turn
flow around them. Every test names the rule it checks; refusals must change nothing."""

from __future__ import annotations

from collections import Counter

import pytest
from imtheboss.engine.board import LETTERS, default_board
from imtheboss.engine.cards import (
    CARD_NAMES,
    DECK_SIZE,
    LAST_TILE,
    TILE_END_NUMBERS,
    TILE_VALUES,
    card_kind,
    card_letter,
)
from imtheboss.engine.options import Options
from imtheboss.engine.rng import die
from imtheboss.engine.setup import SetupError, first_player, new_game, position
from imtheboss.engine.state import every_card, replay
from imtheboss.engine.views import redact_event, snapshot, view
from support.rules_game import PLAYERS, SMALL_BOARD, T0, Game, board_json

# Ann controls C, S and W: she can close a deal on SMALL_BOARD's space 0 alone.
SOLO = {
    "investors": {"Ann": ["C", "S", "W"], "Bob": ["D"], "Cat": ["G"], "Dan": ["L"]},
    "side_pool": [],
    "marker": 0,
    "active": "Ann",
}


def solo_game(**changes) -> Game:
    state = {**SOLO, **changes.pop("state", {})}
    return Game(state, board=changes.pop("board", SMALL_BOARD), **changes)


def close_solo_deal(g: Game) -> None:
    """The active seat (who controls C, S, W) opens on space 0 and closes (R3.1a, R6.1, A3)."""
    g.do(g.active, "open_deal")
    g.do(g.boss, "close")
    g.pass_all()


# -- R1 components ----------------------------------------------------------------------------


def test_r1_1_deck_is_98_cards_of_the_right_kinds():
    """R1.1: per letter 4 family + 3 travel; 3 wild travel, 33 recruit, 10 boss, 10 stop."""
    counts = Counter(CARD_NAMES)
    assert DECK_SIZE == len(CARD_NAMES) == 98
    for letter in LETTERS:
        assert counts[f"family:{letter}"] == 4
        assert counts[f"travel:{letter}"] == 3
    assert counts["travel:*"] == 3
    assert counts["recruit"] == 33
    assert counts["boss"] == 10
    assert counts["stop"] == 10
    assert Counter(card_kind(n) for n in CARD_NAMES) == {
        "family": 24,
        "travel": 21,
        "recruit": 33,
        "boss": 10,
        "stop": 10,
    }
    assert card_letter("travel:*") is None
    assert card_letter("family:W") == "W"


def test_r1_1_every_card_has_a_stable_id_for_the_whole_game():
    """R1.1: a new game places each of the 98 ids exactly once; replay keeps the same ids."""
    events = new_game(PLAYERS, Options(), default_board(), 5, T0)
    data = events[0].data
    placed = [c for hand in data["hands"] for c in hand] + data["draw_pile"]
    assert sorted(placed) == list(range(98))
    state = replay(events)
    assert state.hands == data["hands"]
    assert state.draw_pile == data["draw_pile"]
    again = new_game(PLAYERS, Options(), default_board(), 5, T0)
    assert again[0].data["hands"] == data["hands"]  # same seed, same deal (A9)


@pytest.mark.parametrize(
    ("deals_closed", "value"), [(0, 2), (2, 2), (3, 3), (5, 3), (6, 4), (8, 4), (9, 5), (14, 5)]
)
def test_r1_2_share_value_is_the_top_tiles(deals_closed, value):
    """R1.2: tiles #1-#3 pay 2 M a share, #4-#6 3, #7-#9 4, #10-#15 5."""
    assert TILE_VALUES[deals_closed + 1] == value
    g = solo_game(state={"deals_closed": deals_closed})
    assert g.snap()["share_value"] == value


def test_r1_3_end_numbers_on_the_tile_backs():
    """R1.3: #10 {1}, #11 {1,2}, ... #14 {1..5}; #15 ends the game; #1-#9 carry none."""
    expected = {10: {1}, 11: {1, 2}, 12: {1, 2, 3}, 13: {1, 2, 3, 4}, 14: {1, 2, 3, 4, 5}}
    assert expected == TILE_END_NUMBERS
    assert all(n not in TILE_END_NUMBERS for n in range(1, 10))
    assert LAST_TILE == 15


def test_r1_4_investor_only_letter_refuses_family_cards():
    """R1.4: a letter marked investor_only may be filled only by the investor card."""
    board = board_json({"shares": 3, "required": ["C", "S", "W"], "investor_only": ["S"]})
    g = Game(
        {
            "investors": {"Ann": ["C", "W"], "Bob": ["S"], "Cat": ["G"], "Dan": ["L", "D"]},
            "side_pool": [],
            "hands": {"Ann": ["family:S"], "Cat": ["family:S"]},
            "marker": 0,
            "active": "Ann",
        },
        board=board,
    )
    g.do("Ann", "open_deal")
    g.refused("Cat", "offer", "invalid_target", "R1.4", card="family:S", price={"cash": 1})
    g.refused("Ann", "play_family", "invalid_target", "R1.4", card="family:S")
    g.refused("Ann", "close", "requirements_not_met", "R6.1")
    g.do("Bob", "offer", card="investor:S", price={"cash": 1})
    g.do("Ann", "accept", **{"with": "Bob"})
    g.do("Ann", "close")


def test_r1_5_die_is_six_sided():
    """R1.5: every roll is 1-6 and every face comes up."""
    rolls = {die(7, n) for n in range(200)}
    assert rolls == {1, 2, 3, 4, 5, 6}
    g = solo_game()
    (event,) = g.do("Ann", "roll")
    assert event.data["source"] == "rng"
    assert 1 <= event.data["value"] <= 6


# -- R2 setup ----------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [["A"], list("ABCDEFG"), ["A", "A", "B"]])
def test_r2_1_player_counts_refused(players):
    """R2.1: 2-6 players (2 by the two-player rules, V9); names distinct."""
    with pytest.raises(SetupError):
        new_game(players, Options(), default_board(), 1, T0)


def test_r2_1_two_players_with_v9():
    """R2.1, V9: two players are allowed with the two-player rules."""
    events = new_game(["A", "B"], Options.from_json({"variants": ["V9"]}), default_board(), 1, T0)
    assert replay(events).n == 2


def test_r2_1_two_players_imply_v9():
    """R2.1, V9: two players without V9 get the two-player rules, and the game says so (its
    options, as every seat sees them, name V9)."""
    for chosen in ([], ["V4"]):
        events = new_game(
            ["A", "B"], Options.from_json({"variants": chosen}), default_board(), 1, T0
        )
        state = replay(events)
        assert state.options.variants == tuple(sorted({*chosen, "V9"}))
        assert "V9" in view(state, 0)["options"]["variants"]
    three = replay(new_game(["A", "B", "C"], Options(), default_board(), 1, T0))
    assert three.options.variants == ()


@pytest.mark.parametrize(
    ("n", "each", "side"), [(2, 3, 0), (3, 2, 0), (4, 1, 2), (5, 1, 1), (6, 1, 0)]
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_r2_2_investors_dealt_by_player_count(n, each, side, seed):
    """R2.2: 3 players 2 each; 4: 1 each + 2 side pool; 5: 1 each + 1; 6: 1 each; 2: 3 each."""
    options = Options.from_json({"variants": ["V9"] if n == 2 else []})
    players = [f"P{i}" for i in range(n)]
    state = replay(new_game(players, options, default_board(), seed, T0))
    for seat in range(n):
        assert len(state.seat_investors(seat)) == each
    assert len(state.side_pool) == side
    assert sorted(state.investors) == sorted(LETTERS)


def test_r2_2_investor_deal_is_random():
    """R2.2: dealt at random: different seeds give different deals."""
    deals = {
        tuple(
            sorted(replay(new_game(PLAYERS, Options(), default_board(), s, T0)).investors.items())
        )
        for s in range(8)
    }
    assert len(deals) > 1


def test_r2_3_five_hidden_cards_each():
    """R2.3: each player gets 5 cards from the shuffled deck, hidden from the others (A8)."""
    events = new_game(PLAYERS, Options(), default_board(), 3, T0)
    state = replay(events)
    assert [len(h) for h in state.hands] == [5, 5, 5, 5]
    assert len(state.draw_pile) == 98 - 20
    seen = view(state, 1)
    assert seen["you"]["hand"] == [CARD_NAMES[c] for c in state.hands[1]]
    assert [s["hand_count"] for s in seen["seats"]] == [5, 5, 5, 5]
    assert "hand" not in seen["seats"][0]
    redacted = redact_event(events[0], 1)
    assert redacted["hands"][1] == state.hands[1]
    assert redacted["hands"][0] == 5
    assert redacted["draw_pile"] == 78
    assert "seed" not in redacted
    other = replay(new_game(PLAYERS, Options(), default_board(), 4, T0))
    assert other.hands != state.hands  # shuffled by the seed


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_r2_4_first_player_controls_first_letter_and_places_marker(seed):
    """R2.4: the holder of the alphabetically first investor places the marker and starts."""
    state = replay(new_game(PLAYERS, Options(), default_board(), seed, T0))
    first_letter = min(x for x, s in state.investors.items() if s is not None)
    assert state.active == state.investors[first_letter] == first_player(state.investors)
    assert state.phase == "place_marker"
    assert state.marker is None


def test_r2_4_marker_placement_refusals():
    """R2.4: only the first player places the marker, on an uncovered space, before rolling."""
    g = Game(
        {
            "investors": {"Ann": ["D"], "Bob": ["C"], "Cat": ["G"], "Dan": ["L"]},
            "side_pool": ["S", "W"],
            "covered": [3],
        }
    )
    assert g.active == "Bob"  # Bob controls C
    assert g.phase == "place_marker"
    g.refused("Ann", "place_marker", "not_your_turn", "R2.4", space=5)
    g.refused("Bob", "place_marker", "invalid_target", "R2.4", space=3)
    g.refused("Bob", "place_marker", "invalid_target", "R2.4", space=16)
    g.refused("Bob", "roll", "wrong_phase", "R3.1")
    g.refused("Bob", "open_deal", "wrong_phase", "R3.1")
    g.do("Bob", "place_marker", space=5)
    assert (g.phase, g.active, g.state.marker) == ("turn_start", "Bob", 5)
    g.refused("Bob", "place_marker", "wrong_phase", "R2.4", space=6)


# -- R3 a turn ---------------------------------------------------------------------------------


def test_r3_1a_open_deal_on_the_marker_without_rolling():
    """R3.1(a): the active player opens a deal on the marker's space and becomes boss (R4.1)."""
    g = solo_game(state={"marker": 1})
    (event,) = g.do("Ann", "open_deal")
    assert event.type == "deal_opened"
    snap = g.snap()
    assert (snap["phase"], snap["boss"], snap["table"]["space"], snap["marker"]) == (
        "negotiation",
        "Ann",
        1,
        1,
    )
    assert not any(e.type == "die_rolled" for e in g.events)


@pytest.mark.parametrize(
    ("marker", "covered", "roll", "lands"),
    [(1, [], 3, 4), (1, [2, 3], 3, 6), (14, [0], 4, 3), (15, [0, 1, 2, 3, 4, 5], 1, 6)],
)
def test_r3_1b_roll_moves_clockwise_counting_uncovered_spaces(marker, covered, roll, lands):
    """R3.1(b): the marker moves exactly the rolled number of uncovered spaces, clockwise."""
    g = solo_game(state={"marker": marker, "covered": covered}, dice=[roll])
    (event,) = g.do("Ann", "roll")
    assert event.data == {
        "seat": 0,
        "value": roll,
        "source": "forced",
        "purpose": "move",
        "space": lands,
    }
    assert (g.phase, g.state.marker) == ("after_roll", lands)


def test_r3_1b_after_rolling_open_a_deal_on_the_new_space():
    """R3.1(b): after the roll the player may open a deal where the marker landed."""
    g = solo_game(state={"marker": 15}, dice=[1])
    g.do("Ann", "roll")
    g.do("Ann", "open_deal")
    assert g.snap()["table"]["space"] == 0
    assert g.boss == "Ann"


def test_r3_1_exactly_one_action_per_turn():
    """R3.1: no second roll, no draw without rolling, no deal on top of a deal."""
    g = solo_game(dice=[2])
    g.refused("Ann", "draw", "wrong_phase", "R3.1")
    g.do("Ann", "roll")
    g.refused("Ann", "roll", "wrong_phase", "R3.1")
    g.do("Ann", "open_deal")
    g.refused("Ann", "open_deal", "wrong_phase", "R3.1")
    g.refused("Ann", "draw", "wrong_phase", "R3.1")
    g.refused("Ann", "roll", "wrong_phase", "R3.1")


@pytest.mark.parametrize("do", ["roll", "open_deal"])
def test_r3_1_not_your_turn(do):
    """R3.1: only the active player takes turn actions (not_your_turn)."""
    g = solo_game()
    for who in ("Bob", "Cat", "Dan"):
        g.refused(who, do, "not_your_turn", "R3.1")


def test_r3_1_not_your_turn_after_roll():
    """R3.1: after Ann's roll, another seat may neither draw nor open a deal."""
    g = solo_game(dice=[1])
    g.do("Ann", "roll")
    g.refused("Bob", "draw", "not_your_turn", "R3.1")
    g.refused("Bob", "open_deal", "not_your_turn", "R3.1")


def test_r3_2_draw_three_then_the_turn_passes_left():
    """R3.1(b), R3.2: draw 3 cards from the top of the pile; the next seat to the left plays."""
    g = solo_game(state={"active": "Dan", "draw_pile_top": ["boss", "stop", "recruit"]}, dice=[2])
    pile = list(g.state.draw_pile)
    g.do("Dan", "roll")
    events = g.do("Dan", "draw")
    assert g.types(events) == ["cards_drawn", "turn_started"]
    assert events[0].data["cards"] == pile[:3]
    assert g.hand("Dan") == {"boss": 1, "recruit": 1, "stop": 1}
    assert g.state.draw_pile == pile[3:]
    assert (g.active, g.phase) == ("Ann", "turn_start")  # Dan is last: wraps to Ann


def test_r3_3_turn_passes_left_of_the_last_boss_after_closing():
    """R3.3, R6.4: Ann opens, Cat takes over with a boss card and closes: Dan plays next."""
    g = Game(
        {
            "investors": {"Ann": ["D"], "Bob": ["G"], "Cat": ["C", "S", "W"], "Dan": ["L"]},
            "side_pool": [],
            "hands": {"Cat": ["boss"]},
            "marker": 0,
            "active": "Ann",
        },
        board=SMALL_BOARD,
    )
    g.do("Ann", "open_deal")
    g.do("Cat", "boss")
    g.allow_all()
    assert g.boss == "Cat"
    g.do("Cat", "close")
    g.pass_all()
    assert (g.phase, g.active, g.state.deals_closed) == ("turn_start", "Dan", 1)


def test_r3_3_r3_4_failed_deal_turn_passes_left_of_boss_who_may_not_roll():
    """R3.3, R3.4: after Ann's failed deal Bob plays; Ann may neither roll nor draw: every turn
    command of hers is refused as not her turn, whatever the phase."""
    g = solo_game(
        state={
            "investors": {"Ann": ["D"], "Bob": ["C"], "Cat": ["G"], "Dan": ["L"]},
            "side_pool": ["S", "W"],
        }
    )
    g.do("Ann", "open_deal")
    g.do("Ann", "fail")
    assert (g.phase, g.active, g.state.marker) == ("turn_start", "Bob", 0)
    g.refused("Ann", "roll", "not_your_turn", "R3.1")
    g.refused("Ann", "draw", "not_your_turn", "R3.1")
    g.refused("Ann", "open_deal", "not_your_turn", "R3.1")


def test_r3_3_failed_deal_after_boss_card_passes_left_of_last_boss():
    """R3.3: Ann opens, Dan takes over with a boss card and fails: Ann (left of Dan) plays."""
    g = solo_game(
        state={
            "investors": {"Ann": ["D"], "Bob": ["C"], "Cat": ["G"], "Dan": ["L"]},
            "side_pool": ["S", "W"],
            "hands": {"Dan": ["boss"]},
        }
    )
    g.do("Ann", "open_deal")
    g.do("Dan", "boss")
    g.allow_all()
    g.do("Dan", "fail")
    assert g.active == "Ann"


def test_r3_5_default_next_player_may_deal_in_place_after_a_close():
    """R3.5 (the default reading): right after a closed deal the next player may open a deal on
    the marker's new space without rolling."""
    g = solo_game(state={"hands": {"Bob": ["family:G"]}})
    close_solo_deal(g)
    assert (g.active, g.state.marker, g.state.may_deal_in_place) == ("Bob", 1, True)
    g.do("Bob", "open_deal")
    assert g.snap()["table"]["space"] == 1


def test_r3_5_must_roll_after_close_option():
    """R3.5 with must_roll_after_close (the stricter reading): the next player must roll first."""
    g = solo_game(options={"must_roll_after_close": True}, dice=[1])
    close_solo_deal(g)
    assert g.active == "Bob"
    err = g.refused("Bob", "open_deal", "must_roll", "R3.5")
    assert "roll" in err.message
    g.do("Bob", "roll")
    g.do("Bob", "open_deal")
    assert g.snap()["table"]["space"] == 2


def test_r3_5_option_does_not_apply_after_a_failed_deal():
    """R3.5 (docs/rules-decisions.md): after a failed deal the next player may deal in place
    even under must_roll_after_close."""
    g = solo_game(options={"must_roll_after_close": True})
    g.do("Ann", "open_deal")
    g.do("Ann", "fail")
    assert g.active == "Bob"
    g.do("Bob", "open_deal")
    assert g.phase == "negotiation"


def test_r3_5_option_lasts_one_turn_only():
    """R3.5: the forced roll applies to the turn right after the close, not to later turns."""
    g = solo_game(options={"must_roll_after_close": True}, dice=[1, 1])
    close_solo_deal(g)
    g.do("Bob", "roll")
    g.do("Bob", "draw")
    assert g.active == "Cat"
    g.do("Cat", "open_deal")
    assert g.boss == "Cat"


# -- R7 money and the end ------------------------------------------------------------------------


def test_r7_1_money_is_hidden_from_other_seats():
    """R7.1, A8: each seat sees its own total; without open_money, not the others'."""
    g = solo_game(state={"money": {"Ann": 7, "Bob": 3, "Cat": 0, "Dan": 11}})
    seen = view(g.state, 1)
    assert [s["money"] for s in seen["seats"]] == [None, 3, None, None]
    assert seen["you"]["money"] == 3
    spectator = view(g.state, None)
    assert [s["money"] for s in spectator["seats"]] == [None] * 4


def test_r7_1_open_money_shows_every_total():
    """R7.1: game option open_money shows all totals."""
    g = solo_game(
        state={"money": {"Ann": 7, "Bob": 3, "Cat": 0, "Dan": 11}}, options={"open_money": True}
    )
    assert [s["money"] for s in view(g.state, 2)["seats"]] == [7, 3, 0, 11]


def test_r7_1_money_changes_only_at_closing():
    """R7.1, R6.2, R4.3: agreements move no money; closing pays proceeds and agreements."""
    g = Game(
        {
            "investors": {"Ann": ["C", "W"], "Bob": ["S"], "Cat": ["G"], "Dan": ["L", "D"]},
            "side_pool": [],
            "marker": 0,
            "active": "Ann",
            "money": {"Ann": 1, "Bob": 1, "Cat": 1, "Dan": 1},
        },
        board=SMALL_BOARD,
    )
    g.do("Ann", "open_deal")
    g.do("Bob", "offer", card="investor:S", price={"cash": 4})
    g.do("Ann", "accept", **{"with": "Bob"})
    assert g.snap()["money"] == {"Ann": 1, "Bob": 1, "Cat": 1, "Dan": 1}
    g.do("Ann", "close")
    g.pass_all()
    assert g.snap()["money"] == {"Ann": 1 + 6 - 4, "Bob": 5, "Cat": 1, "Dan": 1}


@pytest.mark.parametrize(
    ("tile", "roll", "ends"),
    [
        (10, 1, True),
        (10, 2, False),
        (11, 2, True),
        (11, 3, False),
        (12, 3, True),
        (12, 4, False),
        (13, 4, True),
        (13, 5, False),
        (14, 5, True),
        (14, 6, False),
    ],
)
def test_r7_2_end_roll_after_a_tile_with_end_numbers(tile, roll, ends):
    """R7.2, R1.3: after a closed deal on tile #10-#14 the last boss rolls (the server rolls
    for them); a number on the tile ends the game."""
    g = solo_game(state={"deals_closed": tile - 1}, dice=[roll])
    close_solo_deal(g)
    rolls = [e for e in g.events if e.type == "die_rolled"]
    assert [(e.data["purpose"], e.data["value"], e.data["seat"], e.by) for e in rolls] == [
        ("end", roll, 0, None)
    ]
    assert g.state.covered[0] == tile
    if ends:
        assert g.phase == "game_over"
        assert g.events[-1].type == "game_ended"
        assert g.events[-1].data["reason"] == "end_roll"
    else:
        assert (g.phase, g.active) == ("turn_start", "Bob")


@pytest.mark.parametrize("tile", [1, 5, 9])
def test_r7_2_no_end_roll_before_tile_10(tile):
    """R7.2: tiles #1-#9 carry no end numbers: no roll, the game goes on."""
    g = solo_game(state={"deals_closed": tile - 1})
    close_solo_deal(g)
    assert not any(e.type == "die_rolled" for e in g.events)
    assert g.phase == "turn_start"


def test_r7_2_the_15th_deal_ends_the_game_without_a_roll():
    """R7.2, R1.3: after the 15th closed deal the game ends; no end roll is made."""
    g = solo_game(state={"deals_closed": 14, "money": {"Bob": 30}})
    close_solo_deal(g)
    assert g.phase == "game_over"
    assert not any(e.type == "die_rolled" for e in g.events)
    ended = g.events[-1]
    assert (ended.type, ended.data["reason"]) == ("game_ended", "last_tile")
    assert g.state.deals_closed == 15


def test_r7_2_nothing_is_taken_after_the_end():
    """R7.2: once the game is over every command is refused (game_over)."""
    g = solo_game(state={"deals_closed": 14})
    close_solo_deal(g)
    for who, do, args in [
        ("Bob", "roll", {}),
        ("Bob", "open_deal", {}),
        ("Ann", "chat", {"text": "gg"}),
        (None, "timeout", {}),
    ]:
        g.refused(who, do, "game_over", "R7.2", **args)


def test_r7_3_most_money_wins():
    """R7.3: the richest player wins; the seed is revealed at the end (A9)."""
    g = solo_game(state={"deals_closed": 14, "money": {"Bob": 20, "Cat": 40, "Dan": 10}})
    close_solo_deal(g)  # Ann earns 3 shares x 5 M = 15
    assert g.snap()["winners"] == ["Cat"]
    assert g.events[-1].data["money"] == [15, 20, 40, 10]
    assert g.events[-1].data["seed"] == 1


def test_r7_3_ties_share_the_win_and_totals_become_public():
    """R7.3: tied players share the win; final totals are public to everyone."""
    g = solo_game(state={"deals_closed": 14, "money": {"Bob": 15, "Cat": 3, "Dan": 15}})
    close_solo_deal(g)
    assert g.snap()["winners"] == ["Ann", "Bob", "Dan"]
    assert [s["money"] for s in view(g.state, 2)["seats"]] == [15, 15, 3, 15]
    assert view(g.state, None)["seed"] == 1


# -- turn flow -----------------------------------------------------------------------------------


def test_turn_flow_refused_command_changes_nothing_and_game_goes_on():
    """R3.1, A7: refusals leave the state exactly as it was; the right command still works."""
    g = solo_game(dice=[3])
    before = snapshot(g.state)
    g.refused("Bob", "roll", "not_your_turn")
    g.refused("Ann", "fly", "bad_command")
    g.refused("Ann", "roll", "bad_command", extra=1)
    assert snapshot(g.state) == before
    g.do("Ann", "roll")
    assert g.state.marker == 3


def test_turn_flow_wrong_phase_for_negotiation_commands_outside_a_deal():
    """R4, R5, R6: negotiation commands need a running negotiation (wrong_phase)."""
    g = solo_game(state={"hands": {"Ann": ["family:C", "boss"], "Bob": ["travel:*", "stop"]}})
    g.refused("Ann", "play_family", "wrong_phase", card="family:C")
    g.refused("Bob", "offer", "wrong_phase", card="investor:D", price={"cash": 1})
    g.refused("Ann", "close", "wrong_phase")
    g.refused("Ann", "fail", "wrong_phase")
    g.refused("Bob", "boss", "wrong_phase")
    g.refused("Bob", "travel", "wrong_phase", card="travel:*", target="investor:C")
    g.refused("Bob", "stop", "nothing_to_stop")
    g.refused("Bob", "pass", "wrong_phase")


def test_turn_flow_deal_then_draws_go_round_the_table():
    """R3.2, R3.3: a closed deal and three draws bring the turn round to the boss's left."""
    g = solo_game(dice=[1, 1, 1])
    close_solo_deal(g)
    order = []
    for _ in range(3):
        order.append(g.active)
        g.do(g.active, "roll")
        g.do(g.active, "draw")
    assert order == ["Bob", "Cat", "Dan"]
    assert g.active == "Ann"


def test_turn_flow_turn_timeout_rolls_and_draws():
    """A5 (turn flow): when the turn deadline passes the server rolls and draws for the seat."""
    g = solo_game(dice=[2])
    events = g.timeout()
    assert g.types(events) == ["timed_out", "die_rolled", "cards_drawn", "turn_started"]
    assert sum(g.hand("Ann").values()) == 3
    assert g.active == "Bob"


def test_turn_flow_position_must_account_for_all_98_cards():
    """R1.1: a chosen position whose cards do not add up to the 98-card deck is refused."""
    with pytest.raises(SetupError, match="98"):
        position(
            PLAYERS,
            Options(),
            default_board(),
            1,
            T0,
            {"hands": {0: ["boss"]}, "draw_pile": [], "discard_pile": []},
        )


def _card_ids(state) -> list[int]:
    return sorted(every_card(state))


WEIGHTS = {"close": 30, "pass": 20, "allow": 20, "accept": 10, "play_family": 5, "stop": 3}


@pytest.mark.parametrize("seed", range(6))
def test_r1_1_every_card_id_is_kept_through_random_play(seed):
    """R1.1, R6.6, A9: in random play from a fresh deal (commands the views list as legal),
    every one of the 98 card ids stays somewhere exactly once, no turn starts with a hand above
    the limit, every listed command is accepted, and replaying the log gives the same state."""
    import random

    from imtheboss.engine.views import legal_commands

    rnd = random.Random(seed)
    g = Game(fresh=True, seed=seed)
    for _ in range(250):
        s = g.state
        if s.phase == "game_over":
            break
        options = [
            (seat, cmd)
            for seat in range(s.n)
            for cmd in legal_commands(s, seat)
            if cmd["do"] != "chat"
        ]
        if rnd.random() < 0.02:
            g.timeout()
            continue
        seat, cmd = rnd.choices(options, [WEIGHTS.get(c["do"], 2) for _, c in options])[0]
        args = {k: v for k, v in cmd.items() if k not in ("do", "needs", "count")}
        if "price" in cmd.get("needs", []):
            args["price"] = {"cash": rnd.randint(0, 3)}
        if "cards" in cmd.get("needs", []):
            hand = [CARD_NAMES[c] for c in s.hands[seat]]
            args["cards"] = rnd.sample(hand, cmd["count"])
        g.do(seat, cmd["do"], **args)
        assert _card_ids(g.state) == list(range(98))
        if g.state.phase in ("turn_start", "after_roll"):
            assert max(len(h) for h in g.state.hands) <= g.state.hand_limit()
    assert snapshot(replay(g.events)) == snapshot(g.state)


def test_r3_5_forced_roll_survives_a_discard_step():
    """R3.5, R6.6: Dan's family card comes back after Ann's close and puts him above 12; after
    he discards, Bob's turn still starts with a forced roll (must_roll_after_close)."""
    g = solo_game(
        state={"hands": {"Dan": ["family:S"] + ["recruit"] * 12}},
        options={"must_roll_after_close": True},
    )
    g.do("Ann", "open_deal")
    g.do("Dan", "offer", card="family:S", price={"cash": 1})
    g.do("Ann", "close")
    g.pass_all()
    assert (g.phase, dict(g.state.discard_owed)) == ("discard", {3: 1})
    g.refused("Bob", "roll", "wrong_phase", "R3.1")
    g.do("Dan", "discard", cards=["recruit"])
    assert (g.phase, g.active) == ("turn_start", "Bob")
    g.refused("Bob", "open_deal", "must_roll", "R3.5")


def test_r6_6_discard_deadline_discards_the_newest_cards():
    """R6.6, A5: when the discard step times out, the owing seat's newest cards go."""
    g = solo_game(
        state={"active": "Bob", "hands": {"Bob": ["recruit"] * 12}, "draw_pile_top": ["boss"]},
        dice=[1],
    )
    g.do("Bob", "roll")
    g.do("Bob", "draw")
    drawn = g.events[-2].data["cards"]
    assert g.phase == "discard"
    g.timeout()
    assert (g.phase, g.active) == ("turn_start", "Cat")
    assert g.hand("Bob") == {"recruit": 12}
    assert sorted(g.state.discard_pile) == sorted(drawn)
