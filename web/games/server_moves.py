"""What the server did for a seat: its turn or its answer when a window ran out (A5, A6), the
deal it had to open (V2/V3), the start of playing for an away seat (A11), and the seat marked
away after two missed deadlines in a row (A6). The outbox mails these
(``imtheboss.web.mail.notify``: kinds ``played_for`` and ``marked_away``; the start of the away
proxy at once, the rest as news); the game page lists them until the seat acts again
(``templates/partials/served.html``).

Moves the server makes *while* it plays for an away seat (events with ``proxy``) are not listed
one by one: the seat was told when it started.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from imtheboss.engine.events import Event
from imtheboss.engine.history import message
from imtheboss.web.say import messages
from imtheboss.web.store import negotiations

SEAT_ACTS = frozenset({"marker_placed", "cards_drawn", "cards_discarded"})
ANSWERED_FOR = frozenset({"stop", "last_call"})  # the seat counts as "let it happen" / "pass"
LOOK_BACK = 20  # the game page reads at most this many newest events (a timeout makes a few)


def served_seats(event: Event) -> list[int]:
    """The seats the server acted for in ``event``, in seat order (none for a seat's own act,
    its standing orders' or a move made while the server plays for it)."""
    d = event.data
    if event.by is not None or d.get("proxy"):
        return []
    t = event.type
    if t in SEAT_ACTS or (t == "die_rolled" and d.get("purpose") == "move"):
        return [d["seat"]]
    if t == "deal_opened":
        return [d["boss"]]
    if t == "proxy_started":
        return [d["seat"]]
    if t == "timed_out" and d.get("kind") in ANSWERED_FOR:
        return sorted(d["missed"])
    return []


def newly_away(before: list[bool], after: list[bool]) -> list[int]:
    """The seats away in ``after`` but not in ``before`` (each a list of one flag per seat)."""
    return [s for s, (was, now) in enumerate(zip(before, after, strict=True)) if now and not was]


def since_own_move(records: list[negotiations.Record], seat: int) -> list[negotiations.Record]:
    """Of ``records`` (in order), those after the seat's last own act (a command it sent
    itself, not one its standing orders sent) in which the server acted for it."""
    out: list[negotiations.Record] = []
    for record in reversed(records):
        event = record[2]
        if event.by == seat and not event.data.get("order"):
            break
        if seat in served_seats(event):
            out.append(record)
    out.reverse()
    return out


def lines(gid: str, seat: int | None, players: list[str], tz: str) -> list[dict[str, Any]]:
    """The game page's list for ``seat``: ``[{"seq", "at", "text"}]``, oldest first, each
    line as the seat reads it (A8), in the current locale and zone ``tz``."""
    if seat is None:
        return []
    found = since_own_move(negotiations.records(gid, newest=LOOK_BACK), seat)
    return [
        {"seq": seq, "at": at, "text": messages.render(message(ev, seat), players, tz)}
        for seq, at, ev in found
    ]


def register(app: Flask) -> None:
    """Let the game page's template read ``served_lines(gid, seat, players, tz)`` (called by
    ``web.create_app``)."""
    app.jinja_env.globals["served_lines"] = lines
