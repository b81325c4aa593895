"""Each negotiation's range of events (the ``negotiations`` table): written as events are
appended, read by the deals list, a negotiation's page and the game page's chat panel, so none of
them reads the whole log.

A negotiation runs from its ``deal_opened`` to its ``deal_closed`` or ``deal_failed``, plus the end
roll and the game's end that follow a closing (R7.2); events about a seat rather than the deal
(``events.SEAT_EVENTS``) are never part of it (``timeline.negotiations`` says the same of a run of
events). A page shows those events through ``display`` (A8), exactly as it showed them when it
split the whole log.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from imtheboss.engine.events import Event
from imtheboss.engine.state import GameState
from imtheboss.web.models import EventRecord, Game, NegotiationRecord, db
from imtheboss.web.say import display, timeline
from imtheboss.web.say.events import SEAT_EVENTS
from sqlalchemy import func, insert, select, update

END = {"deal_closed": "closed", "deal_failed": "failed"}

Record = tuple[int, datetime, Event]  # (seq, created_at, event)


# -- writing ---------------------------------------------------------------------------------


def record(game_id: str, first_seq: int, events: Sequence[Event], at: datetime) -> None:
    """Keep the game's ranges right after ``events`` were appended as ``first_seq``,
    ``first_seq + 1``, ... at ``at``: one insert per deal opened, one update when the running
    negotiation ends, no statement for other events (a running negotiation spans the log up to
    its last event). The engine emits a closing's end roll and game end in the same command as
    the closing, so the events of one command say where an ended negotiation stops."""
    ended, opened = ranges(first_seq, events, at)
    if ended:
        db.session.execute(
            update(NegotiationRecord)
            .where(NegotiationRecord.game_id == game_id, NegotiationRecord.outcome == "running")
            .values(**ended)
        )
    for row in opened:
        number = (
            select(func.coalesce(func.max(NegotiationRecord.number), 0) + 1)
            .where(NegotiationRecord.game_id == game_id)
            .scalar_subquery()
        )
        db.session.execute(insert(NegotiationRecord).values(game_id=game_id, number=number, **row))


def ranges(
    first_seq: int, events: Sequence[Event], at: datetime
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """What one command's ``events`` (numbered from ``first_seq``) change: the columns that end
    the negotiation running before them (or ``None``), and a row for each deal they open."""
    ended: dict[str, Any] | None = None
    opened: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None  # the columns of the negotiation the events are in
    stage = "open"  # open, ended (an end roll or the game's end may follow), past
    for seq, event in enumerate(events, first_seq):
        if event.type == "deal_opened":
            current = {
                "first_seq": seq,
                "space": event.data["space"],
                "boss": event.data["boss"],
                "opened_at": at,
                "outcome": "running",
            }
            opened.append(current)
            stage = "open"
        elif event.type in SEAT_EVENTS or stage == "past":
            continue
        elif stage == "ended":
            if timeline.is_tail(event) and current is not None:
                current["last_seq"] = seq
            else:
                stage = "past"
        elif event.type in END:
            if current is None:
                current = ended = {}
            current.update(outcome=END[event.type], end_seq=seq, last_seq=seq)
            stage = "ended"
    return ended, opened


# -- reading ---------------------------------------------------------------------------------


def records(
    game_id: str,
    after: int = 0,
    upto: int | None = None,
    *,
    newest: int | None = None,
    types: Sequence[str] = (),
    without: Sequence[str] = (),
    seqs: Sequence[int] | None = None,
) -> list[Record]:
    """The game's events with ``after < seq <= upto`` in order (``newest``: only the last so
    many; ``types``: only those types; ``without``: not those; ``seqs``: only those sequence
    numbers)."""
    query = select(
        EventRecord.seq,
        EventRecord.created_at,
        EventRecord.type,
        EventRecord.body,
        EventRecord.seat,
    ).where(EventRecord.game_id == game_id, EventRecord.seq > after)
    if upto is not None:
        query = query.where(EventRecord.seq <= upto)
    if types:
        query = query.where(EventRecord.type.in_(types))
    if without:
        query = query.where(EventRecord.type.not_in(without))
    if seqs is not None:
        query = query.where(EventRecord.seq.in_(seqs))
    if newest is not None:
        rows = db.session.execute(query.order_by(EventRecord.seq.desc()).limit(newest)).all()
        rows.reverse()
    else:
        rows = db.session.execute(query.order_by(EventRecord.seq)).all()
    return [
        (seq, at, Event.from_json({**body, "type": type_, "by": by}))
        for seq, at, type_, body, by in rows
    ]


def rows_of(game_id: str) -> list[NegotiationRecord]:
    """The game's negotiations, numbered 1..n (a few dozen rows in a whole game)."""
    return list(
        db.session.execute(
            select(NegotiationRecord)
            .where(NegotiationRecord.game_id == game_id)
            .order_by(NegotiationRecord.number)
        ).scalars()
    )


def listed(game_id: str, players: timeline.Names, seat: int | None) -> list[timeline.Negotiation]:
    """Every negotiation with how it ended, for ``seat`` (the deals list): its row, and of its
    events only the end (``deal_closed`` or ``deal_failed``), redacted for ``seat``."""
    rows = rows_of(game_id)
    wanted = [row.end_seq for row in rows if row.end_seq is not None]
    ends = {seq: (at, event) for seq, at, event in records(game_id, seqs=wanted)} if wanted else {}
    out = []
    closed = 0
    for row in rows:
        neg = _negotiation(row, closed)
        if row.end_seq is not None:
            at, event = ends[row.end_seq]
            neg.end = timeline.event_row(row.end_seq, at, event, players, seat)
        closed += row.outcome == "closed"
        out.append(neg)
    return out


def _negotiation(row: NegotiationRecord, closed_before: int) -> timeline.Negotiation:
    return timeline.Negotiation(
        number=row.number,
        space=row.space,
        opener=row.boss,
        opened_at=row.opened_at,
        deals_closed_before=closed_before,
    )


def one(
    game: Game, number: int, players: timeline.Names, seat: int | None
) -> tuple[timeline.Negotiation, int] | None:
    """Negotiation ``number`` with its whole timeline for ``seat``, and how many the game has
    (``None``: there is no such negotiation). Reads only the events in its range (a running one:
    up to ``game.last_seq``)."""
    rows = rows_of(game.id)
    if not 1 <= number <= len(rows):
        return None
    row = rows[number - 1]
    closed = sum(r.outcome == "closed" for r in rows[: number - 1])
    upto = game.last_seq if row.last_seq is None else row.last_seq
    found = timeline.negotiations(
        records(game.id, row.first_seq - 1, upto), players, seat, number, closed
    )
    return found[0], len(rows)


def names_by_seq(game_id: str, state: GameState) -> timeline.NamesBySeq:
    """The game's names as each event met them (``timeline.NamesBySeq``), as shown
    (``display.seat_names``: a bot seat's marked, A13): ``state``'s seats now, and before each
    seat hand-over to a new player or to a bot, found by the events' type index."""
    kinds = ("game_started", "seat_replaced", "seat_to_bot")
    found = records(game_id, types=kinds)
    bots = set(found[0][2].data.get("bots", ())) if found else set()
    steps = []  # (seq, seat, bot before, plain name before or None: unchanged)
    for seq, _at, ev in found[1:]:
        seat = ev.data["seat"]
        steps.append((seq, seat, seat in bots, ev.data.get("was")))
        (bots.add if ev.type == "seat_to_bot" else bots.discard)(seat)
    plain, before = list(state.players), []
    for seq, seat, was_bot, was in reversed(steps):
        plain[seat] = plain[seat] if was is None else was
        before.append((seq, seat, display.bot_name(plain[seat]) if was_bot else plain[seat]))
    return timeline.NamesBySeq(display.shown_names(state), tuple(reversed(before)))


def handed_over(game_id: str, seat: int | None) -> int:
    """A13: the event number of the last hand-over of ``seat`` to a new player (0: never, or no
    seat). Events up to it were its old player's: the new player sees them as a spectator does
    (no standing orders, "by order" marks, presence or hand of the old player's)."""
    if seat is None:
        return 0
    found = records(game_id, types=("seat_replaced",))
    return max((seq for seq, _at, ev in found if ev.data["seat"] == seat), default=0)


def running_chat(game_id: str, newest: int, upto: int | None = None) -> list[Record]:
    """The last ``newest`` chat messages of the running negotiation (none when no deal runs),
    found by the events' type index; with ``upto``: of the negotiation that ran at event
    ``upto`` (the caller knows that a deal ran then), its messages up to that event."""
    return running_records(game_id, ("chat",), upto, newest)


def running_records(
    game_id: str, types: Sequence[str], upto: int | None = None, newest: int | None = None
) -> list[Record]:
    """The events of ``types`` of the running negotiation (none when no deal runs; with
    ``upto``: of the one that ran at event ``upto``, up to it), the last ``newest`` of them
    (``None``: all), found by the events' type index."""
    query = select(NegotiationRecord.first_seq).where(NegotiationRecord.game_id == game_id)
    if upto is None:
        query = query.where(NegotiationRecord.outcome == "running")
    else:
        query = query.where(NegotiationRecord.first_seq <= upto)
    start = db.session.execute(
        query.order_by(NegotiationRecord.number.desc()).limit(1)
    ).scalar_one_or_none()
    if start is None:
        return []
    return records(game_id, after=start, upto=upto, newest=newest, types=types)
