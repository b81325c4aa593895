"""A13, the organiser's acts: more time for one open window or for every window that waits for
a seat (with a reason), and a seat passed to a new player. Server commands only; their events
carry what they decided, so a replay gives the same deadlines."""

from __future__ import annotations

from datetime import timedelta

from imtheboss.engine.history import message
from imtheboss.engine.orders import RECOMMENDED, Orders
from imtheboss.engine.organiser import MAX_MINUTES, MAX_REASON, seat_windows
from imtheboss.engine.state import replay, state_from_json, state_to_json
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.engine.windows import due_windows
from support.async_play import FLAT_BOARD, PLAYERS, T0, Table, types

HOUR = timedelta(hours=1)


def table() -> Table:
    spec = {
        "investors": {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]},
        "side_pool": ["S", "W"],
        "hands": {0: ["boss"] * 2, 1: ["boss"] * 2, 2: ["boss"] * 2, 3: ["stop"]},
        "draw_pile": "rest",
        "marker": 0,
        "active": 0,
    }
    return Table.at_position(spec, board=FLAT_BOARD)


def deadlines(t: Table) -> dict[str, object]:
    return {w.id: w.deadline for w in due_windows(t.state)}


def test_one_window_gets_more_time_and_a_replay_agrees():
    t = table()
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)  # a stop window and the negotiation are open
    before = deadlines(t)
    stop = t.state.pending.window.id
    (event,) = t.do(None, "extend_window", window=stop, minutes=90, reason="Dee is on a train")
    assert event.type == "window_extended" and event.by is None
    after = deadlines(t)
    assert after[stop] == before[stop] + timedelta(minutes=90)
    assert {k: v for k, v in after.items() if k != stop} == {
        k: v for k, v in before.items() if k != stop
    }
    assert event.data["reason"] == "Dee is on a train"
    assert event.data["windows"] == [
        {"window": stop, "kind": "stop", "deadline": after[stop].isoformat()}
    ]
    again = t.replayed()
    assert {w.id: w.deadline for w in due_windows(again)} == after
    assert due_windows(state_from_json(state_to_json(t.state)))[0].deadline == min(after.values())
    msg = message(event, 1)
    assert msg.id == "organiser_extended"
    assert msg.params["window_kind"] == "stop" and msg.params["duration"] == 90


def test_every_window_of_a_seat_gets_more_time():
    """Seat 0 is boss: the negotiation waits for it (also while a card waits out its stop
    window), and the stop window for its answer; seat 1's, seat 2's windows do not move."""
    t = table()
    t.do(0, "open_deal", h=1)
    t.do(2, "boss", h=2)
    owed = {w.id for w in seat_windows(t.state, 0)}
    assert owed == {t.state.pending.window.id, t.state.deal.window.id}
    before = deadlines(t)
    (event,) = t.do(None, "extend_window", {"seat": 0}, minutes=24 * 60, reason="  holiday  ")
    after = deadlines(t)
    assert {k for k in after if after[k] != before[k]} == owed
    assert all(after[k] == before[k] + 24 * HOUR for k in owed)
    assert event.data["reason"] == "holiday"  # the spaces around it dropped
    msg = message(event, None)
    assert msg.id == "organiser_extended_seat" and msg.params["player"] == 0
    assert msg.params["time"] == max(after[k] for k in owed).isoformat()
    assert next_deadline(t.state) == min(after.values())
    # the timeout comes at the new deadline, not the old one
    t.refused(None, "timeout", "not_due", h=(before[t.state.pending.window.id] - T0) / HOUR)


def test_only_the_server_sends_them_and_no_seat_is_offered_them():
    t = table()
    t.refused(0, "extend_window", "bad_command", window="w0", minutes=60, reason="x")
    t.refused(1, "extend_window", "bad_command", {"seat": 1}, minutes=60, reason="x")
    t.refused(0, "replace_player", "bad_command", {"seat": 1}, name="Zoe")
    offered = {c["do"] for s in range(4) for c in legal_commands(t.state, s)}
    assert not offered & {"extend_window", "replace_player"}


def test_only_open_windows_and_bounded_time_with_a_reason():
    t = table()
    turn = t.state.turn.id
    code = "bad_command"
    t.refused(
        None, "extend_window", "window_closed", rule="A13", window="w99", minutes=60, reason="r"
    )
    t.refused(
        None, "extend_window", "window_closed", {"seat": 2}, minutes=60, reason="r"
    )  # owes none
    for minutes in (0, -5, MAX_MINUTES + 1, 1.5, True, "60"):
        t.refused(None, "extend_window", code, window=turn, minutes=minutes, reason="r")
    for reason in ("", "   ", "x" * (MAX_REASON + 1), "line\nbreak", "nul\x00", 7, None):
        t.refused(None, "extend_window", code, window=turn, minutes=60, reason=reason)
    t.refused(None, "extend_window", code, minutes=60, reason="r")  # neither window nor seat
    t.refused(None, "extend_window", code, {"seat": 0}, window=turn, minutes=60, reason="r")
    t.refused(None, "extend_window", code, {"seat": 9}, minutes=60, reason="r")
    t.do(None, "extend_window", window=turn, minutes=MAX_MINUTES, reason="x" * MAX_REASON)
    assert t.state.turn.deadline == T0 + 24 * HOUR + timedelta(minutes=MAX_MINUTES)


def test_the_proxys_window_is_not_an_answer_and_is_not_extended():
    events = Table.at_position(
        {
            "investors": {0: ["C", "D"], 1: ["G", "L"], 2: ["S", "W"]},
            "side_pool": [],
            "hands": {},
            "draw_pile": "rest",
            "marker": 0,
            "active": 0,
        },
        players=3,
        proxy_hours=4,
    ).events
    t = Table(events)
    t.do(1, "away", away=True, h=1)
    (proxy,) = t.state.proxy_windows.values()
    t.refused(None, "extend_window", "window_closed", window=proxy.id, minutes=60, reason="r")


def test_a_seat_passes_to_a_new_player_who_starts_afresh():
    t = table()
    t.do(3, "orders", orders=Orders(stop="allow").to_json(), h=1)
    t.do(3, "away", away=True)
    t.do(3, "night", night={"start": "23:00", "end": "07:00", "zone": "Europe/Berlin"})
    hand, money = list(t.state.hands[3]), t.state.money[3]
    (event,) = t.do(None, "replace_player", {"seat": 3}, name="  Zoe ", h=2)
    assert types([event]) == ["seat_replaced"]
    assert event.data == {"seat": 3, "name": "Zoe", "was": "Dee", "at": (T0 + 2 * HOUR).isoformat()}
    s = t.state
    assert s.players == [*PLAYERS[:3], "Zoe"]
    assert (s.hands[3], s.money[3]) == (hand, money)
    assert not s.away[3] and s.missed[3] == 0 and s.nights[3] is None
    assert s.orders[3] == RECOMMENDED
    assert t.replayed().players[3] == "Zoe"
    msg = message(event, 0)
    assert (msg.id, msg.params) == ("seat_replaced", {"was": "Dee", "name": "Zoe"})
    assert replay(t.events).players == s.players


def test_a_new_player_needs_a_name_of_their_own():
    t = table()
    t.refused(None, "replace_player", "bad_command", {"seat": 3}, name="Ann")  # seat 0's
    for name in ("", " ", "x" * 41, "a\tb", 3):
        t.refused(None, "replace_player", "bad_command", {"seat": 3}, name=name)
    t.refused(None, "replace_player", "bad_command", {"seat": 4}, name="Zoe")
    t.do(None, "replace_player", {"seat": 3}, name="Dee")  # the same name, another person: fine


def test_nothing_after_the_end():
    t = table()
    t.state.phase = "game_over"
    t.refused(None, "extend_window", "game_over", {"seat": 0}, minutes=60, reason="r")
    t.refused(None, "replace_player", "game_over", {"seat": 0}, name="Zoe")
