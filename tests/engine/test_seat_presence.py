"""Presence decides who is away (A6, A11): the engine's ``present`` command, through ``decide``
on chosen positions, and its replay."""

from __future__ import annotations

import json

from imtheboss.engine.events import Event
from imtheboss.engine.record import game_record, read_record
from imtheboss.engine.scenario import FORMAT, run_scenario
from imtheboss.engine.state import replay
from imtheboss.engine.views import redact_event
from support.async_play import FLAT_BOARD, Table, types

FOUR = {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]}


def table(**extra) -> Table:
    return Table.at_position(
        {
            "investors": FOUR,
            "side_pool": ["S", "W"],
            "hands": {2: ["travel:*"]},
            "draw_pile": "rest",
            "marker": 0,
            "active": 0,
            "orders": {},
        },
        board=FLAT_BOARD,
        dice=[1] * 8,
        **extra,
    )


def away_bob(t: Table) -> None:
    """Bob (seat 1) never acts: his turn runs out, then a stop window: away (A6)."""
    t.do(0, "roll", h=1)
    t.do(0, "draw")
    t.timeout(25)
    for seat in (2, 3):
        t.do(seat, "roll", h=26)
        t.do(seat, "draw")
    t.do(0, "open_deal")
    t.do(2, "travel", card="travel:*", target="investor:C")
    t.timeout(32)
    assert t.state.away[1] and 1 in t.state.proxy_windows


def test_a11_presence_hands_a_proxied_seat_back():
    """A11: the server plays for Bob; his look (``present``) hands the seat back at once, and
    the proxy may start again only the proxy hours after that look."""
    t = table(proxy_hours=48)
    away_bob(t)
    t.timeout(80)  # 48 h after he became away (A11)
    assert t.state.proxied[1]
    evs = t.do(1, "present", h=82)
    assert types(evs) == ["seat_present"]
    assert not t.state.proxied[1] and not t.state.away[1] and t.state.missed[1] == 0
    assert t.state.last_act[1] is not None and t.state.last_act[1].startswith("20")
    assert replay(t.events) == t.state


def test_a11_a_seat_that_looks_is_never_proxied():
    """A11: Bob misses two deadlines (away, A6) but looks at his game in between: the proxy's
    window goes and is set again from his look, not from his last act."""
    t = table(proxy_hours=48)
    away_bob(t)
    t.do(1, "present", h=40)  # his daily look
    assert not t.state.away[1] and 1 not in t.state.proxy_windows
    t.refused(1, "present", "bad_command", h=41)  # nothing new to record: no event
    assert not any(e.type == "proxy_started" for e in t.events)
    assert replay(t.events) == t.state


def test_a11_presence_is_private_to_its_seat():
    """A11: another seat sees no presence of Bob's, not even when (only a private mark)."""
    t = table(proxy_hours=48)
    away_bob(t)
    (event,) = t.do(1, "present", h=33)
    assert redact_event(event, 0) == {"type": "private", "by": None}
    assert redact_event(event, 1)["type"] == "seat_present"
    assert Event.from_json(event.to_json()) == event


def test_a11_presence_without_the_proxy_ends_away():
    """A6: in a game without the proxy a look ends away; a look while not away is refused."""
    t = table()
    t.refused(1, "present", "bad_command", h=0.5)


def test_a13_the_scenario_runner_takes_the_new_players_name():
    """A13: after a hand-over later commands name the new player; the old name is unknown, and
    each event names the player who held the seat then."""
    out = run_scenario(
        {
            "format": FORMAT,
            "players": ["Ann", "Bob", "Cy"],
            "options": {"proxy_hours": 48},
            "commands": [
                {"do": "away", "by": "Bob", "away": True},
                {"do": "replace_player", "seat": "Bob", "name": "Zoe"},
                {"do": "away", "by": "Zoe", "away": True},
                {"do": "away", "by": "Bob", "away": False},
            ],
        }
    )
    assert [e["code"] for e in out["errors"]] == ["bad_command"]
    assert out["errors"][0]["command"] == 3
    aways = [e["by"] for e in out["events"] if e["type"] == "seat_away"]
    assert aways == ["Bob", "Zoe"]


def test_a11_presence_is_in_the_record_and_replays():
    """A11: the record (export) holds ``seat_present`` and reads back to the same game."""
    t = table(proxy_hours=48)
    away_bob(t)
    t.timeout(80)
    t.do(1, "present", h=82)
    doc = json.loads(json.dumps(game_record(t.events)))
    assert any(e["event"]["type"] == "seat_present" for e in doc["events"])
    assert replay(read_record(doc).events) == t.state
