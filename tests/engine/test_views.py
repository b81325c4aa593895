"""Views (A8): ``view``, ``redact_event``, ``legal_commands`` and ``awaiting`` on a few
hand-built positions."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

import pytest
from imtheboss.engine.errors import RuleError
from imtheboss.engine.game import Command, decide
from imtheboss.engine.views import awaiting, legal_commands, redact_event, view
from support.async_play import FLAT_BOARD, Table, allow_all, at, of_type

FOUR = {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]}


def table(hands=None, *, money=None, open_money=False, **spec) -> Table:
    extra = {"open_money": True} if open_money else {}
    return Table.at_position(
        {
            "investors": FOUR,
            "side_pool": ["S", "W"],
            "hands": hands or {},
            "draw_pile": "rest",
            "marker": 0,
            "active": 0,
            "money": money or {},
            **spec,
        },
        board=FLAT_BOARD,
        dice=[1, 1, 1, 1],
        **extra,
    )


HANDS = {0: ["boss", "stop"], 1: ["travel:*", "family:W"], 2: [], 3: ["recruit"]}


# -- view (A8) ---------------------------------------------------------------------------------


def test_a8_view_shows_own_hand_and_only_counts_of_others():
    """A8: a seat sees its own hand; other hands only as counts; a spectator sees no hand."""
    t = table(HANDS)
    mine = view(t.state, 0)
    assert mine["you"]["hand"] == ["boss", "stop"]
    assert [s["hand_count"] for s in mine["seats"]] == [2, 2, 0, 1]
    assert all("hand" not in s for s in mine["seats"])
    text = json.dumps(mine)
    assert "travel:*" not in text and "family:W" not in text
    assert "travel:*" in json.dumps(view(t.state, 1))
    spectator = view(t.state, None)
    assert spectator["you"] is None
    for name in ("travel:*", "family:W", "recruit"):  # ("stop" also names a window kind)
        assert f'"{name}"' not in json.dumps(spectator)


def test_a8_view_hides_the_draw_pile_order():
    """A8: the draw pile is shown as its size only."""
    t = table(HANDS)
    v = view(t.state, 0)
    assert v["draw_pile_count"] == len(t.state.draw_pile)
    assert "draw_pile" not in v


def test_a8_money_totals_hidden_without_open_money():
    """R7.1, A8: each seat sees its own total; others' only with `open_money` or at the end."""
    t = table(money={0: 5, 1: 7})
    v = view(t.state, 0)
    assert [s["money"] for s in v["seats"]] == [5, None, None, None]
    assert v["you"]["money"] == 5
    assert [s["money"] for s in view(t.state, None)["seats"]] == [None] * 4
    t = table(money={0: 5, 1: 7}, open_money=True)
    assert [s["money"] for s in view(t.state, 2)["seats"]] == [5, 7, 0, 0]


def test_a8_money_totals_public_at_the_end():
    """R7.3: final totals become public."""
    t = Table.at_position(
        {
            "investors": {0: ["C", "D"], 1: ["G", "L"], 2: ["S", "W"]},
            "side_pool": [],
            "covered": list(range(2, 16)),
            "money": {1: 9},
            "marker": 0,
            "active": 0,
        },
        players=3,
        board=FLAT_BOARD,
    )
    t.do(0, "open_deal", h=1)
    t.do(0, "close")
    t.do(1, "pass")
    t.do(2, "pass")
    assert t.phase == "game_over"
    assert [s["money"] for s in view(t.state, 2)["seats"]] == [10, 9, 0]
    assert view(t.state, 2)["winners"] == [0]


def test_a8_view_has_seed_hash_not_seed():
    """A9, A8: the view publishes the seed hash, never the seed, before the end."""
    t = table(HANDS)
    v = view(t.state, 0)
    assert v["seed_hash"] == t.state.seed_hash
    assert "seed" not in v


# -- redact_event (A8) -------------------------------------------------------------------------


def test_a8_redacted_game_started():
    """A8: in `game_started` a seat sees its own hand; other hands and the draw pile are
    counts; the seed and the forced dice are gone."""
    t = table(HANDS)
    started = t.events[0]
    for seat in (0, 1, None):
        r = redact_event(started, seat)
        for s, hand in enumerate(r["hands"]):
            if s == seat:
                assert hand == started.data["hands"][s]
            else:
                assert hand == len(HANDS[s])
        assert r["draw_pile"] == len(started.data["draw_pile"])
        assert "seed" not in r and "forced_dice" not in r
        assert r["seed_hash"] == started.data["seed_hash"]
    assert started.data["seed"] == 7  # the stored event itself is whole


def test_a8_redacted_game_started_hides_other_money():
    """A8, R7.1: a position's starting money totals are hidden from the other seats."""
    t = table(money={0: 5, 1: 7})
    r = redact_event(t.events[0], 0)
    assert r["money"][0] == 5
    assert 7 not in r["money"]
    t = table(money={0: 5, 1: 7}, open_money=True)
    assert redact_event(t.events[0], 0)["money"] == [5, 7, 0, 0]


def test_a8_redacted_drawn_cards():
    """A8: drawn cards are seen by the drawer only; others see how many."""
    t = table(HANDS)
    t.do(0, "roll", h=1)
    drawn = t.do(0, "draw")[0]
    assert drawn.type == "cards_drawn"
    assert redact_event(drawn, 0)["cards"] == drawn.data["cards"]
    assert redact_event(drawn, 1)["cards"] == 3
    assert redact_event(drawn, None)["cards"] == 3


def test_a8_redacted_reshuffle():
    """A8: a reshuffled draw pile's order is shown as its size only."""
    from imtheboss.engine.cards import CARD_NAMES

    rest = list(CARD_NAMES)
    rest.remove("stop")
    t = Table.at_position(
        {
            "investors": FOUR,
            "side_pool": ["S", "W"],
            "draw_pile": ["stop"],
            "discard_pile": rest,
            "marker": 0,
            "active": 0,
        },
        dice=[1],
    )
    t.do(0, "roll", h=1)
    reshuffled = of_type(t.do(0, "draw"), "pile_reshuffled")[0]
    for seat in (0, 1, None):
        assert redact_event(reshuffled, seat)["draw_pile"] == 97


def test_a8_public_events_pass_unchanged():
    """A8: public facts (deals, offers, cards played face up) are not redacted."""
    t = table({1: ["family:D"], 2: ["travel:*"]})
    t.do(0, "open_deal", h=1)
    t.do(1, "offer", card="family:D", price={"cash": 1})
    t.do(2, "travel", card="travel:*", target="investor:C")
    for e in t.events[1:]:
        assert redact_event(e, 3) == e.to_json()


# -- awaiting ----------------------------------------------------------------------------------


def test_awaiting_basics():
    """A1-A6: who the game waits for, and until when."""
    t = table({0: ["recruit"] * 12, 3: ["stop"]})
    assert awaiting(t.state) == [{"seat": 0, "for": "turn", "window": "w0", "until": at(24)}]
    t.do(0, "roll", h=1)
    t.do(0, "draw", h=2)
    assert awaiting(t.state) == [{"seat": 0, "for": "discard", "window": "w1", "until": at(26)}]
    t.do(0, "discard", cards=["recruit"] * 3)
    assert [(a["seat"], a["for"]) for a in awaiting(t.state)] == [(1, "turn")]
    fresh = Table.fresh()
    assert [a["for"] for a in awaiting(fresh.state)] == ["place_marker"]


def test_awaiting_nothing_after_the_end():
    """R7.2: nobody is waited for once the game is over."""
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
    )
    t.do(0, "open_deal", h=1)
    t.do(0, "close")
    t.do(1, "pass")
    t.do(2, "pass")
    assert awaiting(t.state) == []
    assert legal_commands(t.state, 0) == []
    t.refused(0, "chat", "game_over", text="gg")


# -- legal_commands ----------------------------------------------------------------------------


def dos(t: Table, seat: int) -> list[str]:
    return [c["do"] for c in legal_commands(t.state, seat)]


def test_legal_commands_turn_basics():
    """R3.1: the active seat rolls or opens; after a roll opens or draws; others chat."""
    t = table(HANDS)
    assert sorted(dos(t, 0)) == ["chat", "open_deal", "roll"]
    assert dos(t, 1) == ["chat"]
    t.do(0, "roll", h=1)
    assert sorted(dos(t, 0)) == ["chat", "draw", "open_deal"]
    t = table(HANDS, may_deal_in_place=False)
    assert sorted(dos(t, 0)) == ["chat", "roll"]
    t.refused(0, "open_deal", "must_roll", rule="R3.5")


def test_legal_commands_stop_window():
    """A2: during a stop window eligible seats may allow (and stop with a stop card); the
    player of the card may not."""
    t = table({0: ["stop"], 1: ["travel:*"], 3: ["stop"]})
    t.do(0, "open_deal", h=1)
    t.do(1, "travel", card="travel:*", target="investor:C")
    w = t.window_id()
    assert {"do": "allow", "window": w} in legal_commands(t.state, 2)
    assert {"do": "stop", "window": w} not in legal_commands(t.state, 2)
    assert {"do": "stop", "window": w} in legal_commands(t.state, 3)
    assert not {"allow", "stop"} & set(dos(t, 1))
    assert "close" not in dos(t, 0) and "fail" not in dos(t, 0)


def fill(cmd: dict[str, Any], t: Table, seat: int) -> dict[str, Any]:
    args = {k: v for k, v in cmd.items() if k not in ("do", "needs", "count")}
    for need in cmd.get("needs", []):
        if need == "price":
            args["price"] = {"cash": 0}
        elif need == "text":
            args["text"] = "hello"
        elif need == "cards":
            args["cards"] = t.hand(seat)[-cmd["count"] :]
    return args


def positions() -> list[Table]:
    out = []
    t = table(HANDS)
    out.append(t)
    t = table(HANDS)
    t.do(0, "roll", h=1)
    out.append(t)
    t = table({0: ["family:C", "boss"], 1: ["family:D", "stop"], 2: ["travel:D"], 3: ["boss"]})
    t.do(0, "open_deal", h=1)
    t.do(1, "offer", card="investor:D", price={"cash": 1})
    out.append(t)
    t = table({0: ["family:C"], 1: ["family:D", "stop"], 2: ["travel:D"], 3: ["recruit"] * 3})
    t.do(0, "open_deal", h=1)
    t.do(0, "propose", to=1, card="family:D", price={"cash": 1})
    t.do(2, "travel", card="travel:D", target="investor:D")
    out.append(t)
    t = table({1: ["stop"], 2: ["boss"], 3: ["travel:C"]})
    t.do(0, "open_deal", h=1)
    t.do(1, "offer", card="investor:D", price={"cash": 1})
    t.do(0, "accept", {"with": 1})
    t.do(0, "close")
    out.append(t)
    t = table({0: ["recruit"] * 12})
    t.do(0, "roll", h=1)
    t.do(0, "draw")
    out.append(t)
    return out


@pytest.mark.parametrize("index", range(6))
def test_legal_commands_are_accepted(index):
    """R3-R6, A2, A3: every command legal_commands lists, completed, is accepted by decide."""
    t = positions()[index]
    listed = 0
    for seat in range(4):
        for cmd in legal_commands(t.state, seat):
            listed += 1
            command = Command(cmd["do"], seat, fill(cmd, t, seat), at(t.now))
            try:
                decide(t.state, command)
            except RuleError as exc:
                pytest.fail(f"seat {seat}: listed {cmd} was refused: {exc!r}")
    assert listed > 4


def test_legal_commands_the_boss_may_ask_anyone_for_a_family_card():
    """R4.3: asking a player for a family card is public talk and says nothing about hands:
    the boss's proposals include a family card of every letter the space uses, to every other
    player, whatever the hands hold; each is accepted by decide."""
    for hands in ({}, {1: ["family:C", "family:D"], 2: ["family:D"]}):
        t = table(hands)
        t.do(0, "open_deal", h=1)
        letters = t.state.board.spaces[t.state.deal.space].letters
        asks = {
            (c["to"], c.get("card")) for c in legal_commands(t.state, 0) if c["do"] == "propose"
        }
        assert {(o, f"family:{x}") for o in (1, 2, 3) for x in letters} <= asks
        for other, card in sorted(asks, key=str):
            args = {"to": other, "price": {"cash": 1}, **({"card": card} if card else {})}
            decide(t.state, Command("propose", 0, args, at(t.now)))


def test_legal_commands_a_counter_to_terms_for_no_card():
    """R4.5 with R4.3: terms the boss named for no card can be countered by an offer without a
    card, listed for that player only; the counter is accepted by decide."""
    t = table()
    t.do(0, "open_deal", h=1)
    assert {"do": "offer", "needs": ["price"]} not in legal_commands(t.state, 1)
    t.do(0, "propose", to=1, price={"cash": 1})
    assert {"do": "offer", "needs": ["price"]} in legal_commands(t.state, 1)
    assert {"do": "offer", "needs": ["price"]} not in legal_commands(t.state, 2)
    t.do(1, "offer", price={"cash": 2})
    assert t.state.deal.terms[(1, None)].by == "provider"
    t.do(0, "accept", {"with": 1, "price": {"cash": 2}})
    assert (1, None) in t.state.deal.agreements


def test_legal_commands_after_effect_match_a2_a3():
    """A3: in the last call non-boss seats may pass; the boss may fail but not close again."""
    t = positions()[4]
    assert t.phase == "last_call"
    assert "pass" in dos(t, 1) and "pass" not in dos(t, 0)
    assert "fail" in dos(t, 0) and "close" not in dos(t, 0)
    assert "boss" in dos(t, 2)
    t.do(2, "boss")
    allow_all(t)
    assert t.state.deal.boss == 2


def test_a2_pending_recruit_in_the_discard_step_is_in_the_view():
    """R6.6, A2: a triple recruit played in the discard step shows in every seat's view."""
    from datetime import datetime

    from imtheboss.engine.board import default_board
    from imtheboss.engine.game import Command, decide
    from imtheboss.engine.options import Options
    from imtheboss.engine.setup import position
    from imtheboss.engine.state import apply_in_place, replay
    from imtheboss.engine.views import view

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    hand = ["recruit"] * 3 + ["family:C"] * 4 + ["family:D"] * 4 + ["boss"]
    spec = {
        "investors": {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]},
        "side_pool": ["S", "W"],
        "hands": {0: hand},
        "draw_pile": "rest",
        "marker": 0,
        "active": 0,
    }
    state = replay(position(["A", "B", "C", "D"], Options(), default_board(), 1, t0, spec, [1]))
    for command in (Command("roll", 0, {}, t0), Command("draw", 0, {}, t0)):
        for event in decide(state, command):
            apply_in_place(state, event)
    assert state.phase == "discard" and state.discard_owed == {0: 3}
    for event in decide(state, Command("recruit", 0, {"target": "S"}, t0)):
        apply_in_place(state, event)
    for seat in range(4):
        pending = view(state, seat)["pending"]
        assert pending["kind"] == "recruit" and pending["seat"] == 0 and pending["target"] == "S"
        assert view(state, seat)["deal"] is None
