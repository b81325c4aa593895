"""Quiet hours (A12): windows do not run out in the night of a seat they wait for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from imtheboss.engine.quiet import adjust, night_end
from support.async_play import FLAT_BOARD, T0, Table

NIGHT_UTC = {"start": "23:00", "end": "07:00", "zone": "UTC"}
SHANGHAI = {"start": "22:30", "end": "06:30", "zone": "Asia/Shanghai"}  # 14:30-22:30 UTC
HOURS = {"turn": 6 * 3600, "stop": 3 * 3600, "last_call": 3 * 3600, "negotiation": 48 * 3600}


def table(quiet: bool = True, **hands) -> Table:
    return Table.at_position(
        {
            "investors": {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]},
            "side_pool": ["S", "W"],
            "hands": {int(k[1:]): v for k, v in hands.items()},
            "draw_pile": "rest",
            "marker": 0,
            "active": 0,
        },
        board=FLAT_BOARD,
        dice=[1] * 8,
        windows=HOURS,
        quiet_hours=quiet,
    )


def test_a12_night_end():
    """A12: the end of the night a time falls in, across midnight and in another zone."""
    assert night_end(NIGHT_UTC, datetime(2026, 1, 1, 23, 30, tzinfo=UTC)) == datetime(
        2026, 1, 2, 7, 0, tzinfo=UTC
    )
    assert night_end(NIGHT_UTC, datetime(2026, 1, 2, 3, 0, tzinfo=UTC)) == datetime(
        2026, 1, 2, 7, 0, tzinfo=UTC
    )
    assert night_end(NIGHT_UTC, datetime(2026, 1, 2, 7, 0, tzinfo=UTC)) is None
    assert night_end(SHANGHAI, datetime(2026, 1, 1, 15, 0, tzinfo=UTC)) == datetime(
        2026, 1, 1, 22, 30, tzinfo=UTC
    )


def test_a12_a_deadline_crosses_several_nights():
    """A12: moved past one seat's night into another's, it moves again."""
    late = {"start": "22:00", "end": "07:00", "zone": "UTC"}
    due = datetime(2026, 1, 1, 20, 0, tzinfo=UTC)  # in Shanghai's night, which ends at 22:30
    assert adjust(due, [None, SHANGHAI, late], [1, 2]) == datetime(2026, 1, 2, 7, 0, tzinfo=UTC)
    assert adjust(due, [None, SHANGHAI, late], [1]) == datetime(2026, 1, 1, 22, 30, tzinfo=UTC)
    assert adjust(due, [None, SHANGHAI, late], [2]) == due


def test_a12_a_turn_does_not_run_out_in_its_seats_night():
    """A12: Bob names his night (23:00-07:00 UTC); his 6-hour turn starting at 20:00 would end
    at 02:00: it ends at 07:00, and the scheduler's deadline follows. Without the game option
    nothing moves."""
    for quiet, end in ((True, T0 + timedelta(hours=31)), (False, T0 + timedelta(hours=26))):
        t = table(quiet)
        t.do(1, "night", night=NIGHT_UTC, h=1)
        t.do(0, "roll", h=20)
        t.do(0, "draw")
        assert t.state.active == 1 and t.state.turn.deadline == end
        assert t.until("turn") == {end}


def test_a12_stop_windows_and_last_calls_wait_for_the_nights_of_those_they_wait_for():
    """A12: a stop window opened at 21:00 (3 hours: 00:00) waits for Bob and Cid: Bob's night
    moves it to 07:00; the negotiation window does not move."""
    t = table(h2=["travel:*"])
    t.do(1, "night", night=NIGHT_UTC, h=1)
    t.do(0, "open_deal", h=21)
    assert t.state.deal.window.deadline == T0 + timedelta(hours=21 + 48)
    t.do(2, "travel", card="travel:*", target="investor:C")
    assert t.state.pending.window.deadline == T0 + timedelta(hours=31)


HOST_FILES = ("localtime", "Factory", "posixrules", "posix/UTC", "right/UTC", "/etc/localtime")


def test_a12_nights_that_cover_the_day_hold_a_deadline_a_day_at_most():
    """A12: two seats whose nights (12 h each) cover the whole day cannot hold a window for
    days: the deadline moves by at most 24 hours."""
    day = {"start": "07:00", "end": "19:00", "zone": "UTC"}
    night = {"start": "19:00", "end": "07:00", "zone": "UTC"}
    due = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
    assert adjust(due, [day, night], [0, 1]) == due + timedelta(hours=24)
    assert adjust(due, [day, night], [0]) == datetime(2026, 1, 1, 19, 0, tzinfo=UTC)


def test_a12_bad_nights_are_refused():
    """A12: a night is two different times at most 12 hours apart and the zone of a place
    (not one of the host's files); ``null`` clears it."""
    t = table()
    for bad in (
        {"start": "23:00", "end": "23:00", "zone": "UTC"},
        {"start": "25:00", "end": "07:00", "zone": "UTC"},
        {"start": "23:00", "end": "07:00", "zone": "Mars/Olympus"},
        {"start": "00:01", "end": "00:00", "zone": "UTC"},  # 23 h 59 min: longer than 12 h
        {"start": "18:59", "end": "07:00", "zone": "UTC"},
        *({"start": "23:00", "end": "07:00", "zone": z} for z in HOST_FILES),
        {"start": "23:00", "end": "07:00"},
        "23-07",
    ):
        error = t.refused(1, "night", "bad_command", {"night": bad})
        assert error.rule == "A12"
    t.do(1, "night", night=NIGHT_UTC)
    t.do(1, "night", night=None)
    assert t.state.nights[1] is None


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York"])
def test_a12_nights_follow_daylight_saving(zone):
    """A12: a night in a zone with daylight saving ends at its local time on both sides of the
    change."""
    night = {"start": "23:00", "end": "07:00", "zone": zone}
    for month in (1, 7):
        three_am = datetime(2026, month, 15, 3, 0, tzinfo=ZoneInfo(zone)).astimezone(UTC)
        local = night_end(night, three_am).astimezone(ZoneInfo(zone))
        assert (local.hour, local.minute) == (7, 0)
