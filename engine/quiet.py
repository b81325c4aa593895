"""Quiet hours (A12): a game option under which a window never runs out in the night of a seat
it waits for.

Each seat may name its night (``night`` command: ``{"start": "23:00", "end": "07:00", "zone":
"Europe/Berlin"}``, or ``null`` for none; the ``night_set`` event is public, since deadlines
follow it). With the game's ``quiet_hours`` on, the deadline of a turn, discard, stop or last-call
window that falls inside the night of a seat the window waits for moves to the end of that night
(and again, should that land in another waiting seat's night). The negotiation window (A1, A4)
waits for nobody in particular and does not move. Deadlines are written into the events, so a
replay never reads a time zone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from imtheboss.engine.errors import RuleError

CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
MAX_MOVES = 12  # a deadline moves at most this often (one night per waiting seat, and some)
MAX_NIGHT = timedelta(hours=12)  # a night is at most this long
MAX_DELAY = timedelta(hours=24)  # nights together never move a deadline further than this
NOT_ZONES = frozenset({"localtime", "Factory", "posixrules"})  # names that are not places


def parse_night(value: Any) -> dict[str, str] | None:
    """A night from a command: ``{"start": "HH:MM", "end": "HH:MM", "zone": IANA name}`` (start
    and end differ) or ``None``. Raises ``RuleError`` ``bad_command`` (A12)."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"start", "end", "zone"}:
        raise RuleError(
            "bad_command", 'a night is {"start": "23:00", "end": "07:00", "zone"}', "A12"
        )
    start, end, zone = value["start"], value["end"], value["zone"]
    if not all(isinstance(x, str) and CLOCK.match(x) for x in (start, end)) or start == end:
        raise RuleError("bad_command", "a night starts and ends at two times HH:MM", "A12")
    if night_hours(start, end) > MAX_NIGHT / timedelta(hours=1):
        raise RuleError("bad_command", "a night lasts at most 12 hours", "A12")
    if not _place(zone):
        raise RuleError("bad_command", "zone is a time zone name such as Europe/Berlin", "A12")
    return {"start": start, "end": end, "zone": zone}


def night_hours(start: str, end: str) -> float:
    """How long a night from ``start`` to ``end`` (``HH:MM``, across midnight when end comes
    first) lasts, in hours."""
    day = datetime(2000, 1, 1)
    begin, finish = datetime.combine(day, _clock(start)), datetime.combine(day, _clock(end))
    return ((finish - begin) % timedelta(days=1)) / timedelta(hours=1)


def _place(zone: Any) -> bool:
    """An IANA zone of a place (``Europe/Berlin``, ``UTC``), not a file of the host's
    (``localtime``, ``posix/...``, ``right/...``)."""
    if not isinstance(zone, str) or len(zone) > 64 or zone in NOT_ZONES:
        return False
    if zone.startswith(("posix/", "right/", "/")) or ".." in zone:
        return False
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _clock(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def night_end(night: dict[str, str], at: datetime) -> datetime | None:
    """When the night that ``at`` (aware) falls in ends, as aware UTC; ``None`` when ``at`` is
    not in that night."""
    zone = ZoneInfo(night["zone"])
    local = at.astimezone(zone)
    start, end, now = _clock(night["start"]), _clock(night["end"]), local.time()
    crosses_midnight = start > end
    inside = (now >= start or now < end) if crosses_midnight else start <= now < end
    if not inside:
        return None
    day = local.date() if now < end else local.date() + timedelta(days=1)
    return datetime.combine(day, end, tzinfo=zone).astimezone(at.tzinfo)


def adjust(
    deadline: datetime, nights: list[dict[str, str] | None], seats: Iterable[int]
) -> datetime:
    """``deadline`` moved past the nights of ``seats`` it falls in (A12), by at most
    ``MAX_DELAY``: nights that together cover the day cannot hold a window longer."""
    waiting = [nights[s] for s in seats if nights[s] is not None]
    latest = deadline + MAX_DELAY
    for _ in range(MAX_MOVES):
        ends = [e for e in (night_end(n, deadline) for n in waiting) if e is not None]
        if not ends:
            break
        deadline = max(ends)
    return min(deadline, latest)


def _night(ctx: Any) -> None:
    """A12: a seat names its night (or clears it with ``null``)."""
    night = parse_night(ctx.cmd.args["night"])
    ctx.emit("night_set", {"seat": ctx.by, "night": night}, ctx.by)


HANDLERS = {"night": _night}
