"""Reminders at 80% of a window, found by a stored time through an index.

- ``plan_reminders``: an open deadline with no ``remind_at`` gets one (its opening time plus
  80% of the window, ``notify.remind_time``), so the rows are found by time, not by loading
  every open deadline. The service writes it with the row (``deadlines.deadline_changes``):
  only rows written by code before that need planning.
- ``claim_reminders`` (the sweep): due ones are taken in batches (``FOR UPDATE SKIP LOCKED``)
  and their ``remind_at`` pushed on by ``DEADLINE_STALE_SECONDS``, a lease: if the mail worker
  that got them dies, the sweep claims them again then.
- ``write_reminders`` (a mail worker): one transaction for a batch. The games are share-locked
  first, in the order of their ids (as a batch of timeouts locks them), then their deadline
  rows (the lock order of ``submit``, which locks the game row, then its deadline rows: the
  other order deadlocks against a timeout being submitted); each game's state is loaded once;
  every seat still owing an answer in the window and having a choice there (a stop window
  reminds only seats holding a stop card) gets a reminder row, all written together, naming
  what the window asks;
  the deadlines are marked ``reminded``. A deadline moved later since it was
  planned (A1) gets its new time instead. Each reminder is pushed too, to the seat's phones
  (``imtheboss.web.outbound.push``: posts written in the same transaction, queued after it).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flask import current_app
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting
from imtheboss.web.games.load import load_state
from imtheboss.web.mail.notify import remind_time, reminder
from imtheboss.web.models import OPEN_STATE, Deadline, Game, Notification, db
from imtheboss.web.outbound.writer import queue_written
from imtheboss.web.replies.choices import has_stop_card
from sqlalchemy import Select, Update, select, update

PLAN_MAX = 5000  # rows planned by one sweep (the rest by the next)


def _waiting():
    """Open deadlines whose reminder is not written yet (the rows of the partial index)."""
    return (Deadline.state == OPEN_STATE, ~Deadline.reminded)


def plan_statement() -> Select:
    """Open deadlines without a reminder time: ``(id, opened_at, due_at)``, at most
    ``PLAN_MAX``, through the partial index."""
    return (
        select(Deadline.id, Deadline.opened_at, Deadline.due_at)
        .where(*_waiting(), Deadline.remind_at.is_(None), Deadline.opened_at.is_not(None))
        .limit(PLAN_MAX)
    )


def plan_reminders() -> int:
    """Give open deadlines without a reminder time one; commit. Returns how many."""
    rows = db.session.execute(plan_statement()).all()
    if rows:
        values = [{"id": i, "remind_at": remind_time(opened, due)} for i, opened, due in rows]
        db.session.execute(update(Deadline), values)
    db.session.commit()
    return len(rows)


def claim_statement(now: datetime, limit: int) -> Update:
    """The claim of up to ``limit`` deadlines whose reminder is due at ``now`` (earliest
    first), their ``remind_at`` pushed on by ``DEADLINE_STALE_SECONDS``; returns ``(id,
    game_id)``. It reads the partial index."""
    lease = now + timedelta(seconds=float(current_app.config["DEADLINE_STALE_SECONDS"]))
    due = (
        select(Deadline.id)
        .where(*_waiting(), Deadline.remind_at <= now)
        .order_by(Deadline.remind_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return (
        update(Deadline)
        .where(Deadline.id.in_(due))
        .values(remind_at=lease)
        .returning(Deadline.id, Deadline.game_id)
        .execution_options(synchronize_session=False)
    )


def claim_reminders(now: datetime, limit: int) -> list[tuple[int, str]]:
    """Claim (``claim_statement``) and commit. Returns ``[(deadline_id, game_id)]``."""
    rows = db.session.execute(claim_statement(now, limit)).all()
    db.session.commit()
    return sorted((deadline_id, game_id) for deadline_id, game_id in rows)


def write_reminders(claims: list[tuple[int, str]], now: datetime) -> list[int]:
    """Write the reminders of the claimed deadlines (see the module docstring) and commit.
    Returns the new notification rows' ids."""
    game_ids = sorted({game_id for _, game_id in claims})
    games = {
        game.id: game
        for game in db.session.execute(
            select(Game)
            .where(Game.id.in_(game_ids))
            .order_by(Game.id)  # as a batch of timeouts locks them: no deadlock
            .with_for_update(read=True)
        ).scalars()
    }
    deadlines = db.session.execute(
        select(Deadline)
        .where(Deadline.id.in_([deadline_id for deadline_id, _ in claims]), *_waiting())
        .order_by(Deadline.game_id, Deadline.id)
        .with_for_update()
    ).scalars()
    owing: dict[str, tuple] = {}  # per game: its state, loaded once, and ``awaiting`` of it
    rows: list[Notification] = []
    for row in deadlines:
        at = remind_time(row.opened_at, row.due_at) if row.opened_at else now
        if now < at:  # moved later since it was planned
            row.remind_at = at
            continue
        row.reminded = True
        game = games.get(row.game_id)
        if game is not None and game.status == "active":
            if game.id not in owing:
                state = load_state(game)
                owing[game.id] = (state, awaiting(state))
            rows += _reminders(game, row, *owing[game.id], now)
    rows = _new(rows)
    db.session.add_all(rows)
    db.session.flush()
    pushed = _push(rows, now)
    ids = [row.id for row in rows]
    db.session.commit()
    for game_id in pushed:
        queue_written(game_id)
    return ids


def _push(rows: list[Notification], now: datetime) -> list[str]:
    """Write the pushes of the reminder ``rows`` (flushed) in their transaction, as the
    service writes those of its rows (the registered outbox writers: ``outbound.write``, one
    post per phone of the seat). Returns the games that have rows."""
    by_game: dict[str, list[dict]] = {}
    for row in rows:
        by_game.setdefault(row.game_id, []).append(
            {
                "seat_index": row.seat_index,
                "kind": row.kind,
                "seq": row.seq,
                "dedupe_key": row.dedupe_key,
                "body": row.body,
                "to_email": row.to_email,
            }
        )
    for game_id, notes in sorted(by_game.items()):
        for writer in current_app.extensions.get("imtheboss.outbox_writers", ()):
            writer(game_id, notes[0]["seq"], [], notes, now)
    return sorted(by_game)


def _reminders(
    game: Game, row: Deadline, state: GameState, owing: list, now: datetime
) -> list[Notification]:
    """A reminder for every seat that still owes an answer in the deadline's window and has a
    choice there: a seat without a stop card can only let a card happen (A2), so nothing
    reminds it."""
    return [
        Notification(
            **reminder(
                game.id, entry["seat"], row.window_id, row.due_at, now, game.last_seq, entry["for"]
            )
        )
        for entry in owing
        if entry["window"] == row.window_id
        and (entry["for"] != "stop" or has_stop_card(state, entry["seat"]))
    ]


def _new(rows: list[Notification]) -> list[Notification]:
    """The rows whose dedupe key is not taken yet (a reminder written before, by a worker of
    the schema before ``remind_at``)."""
    if not rows:
        return rows
    taken = set(
        db.session.execute(
            select(Notification.dedupe_key).where(
                Notification.dedupe_key.in_([r.dedupe_key for r in rows])
            )
        ).scalars()
    )
    return [r for r in rows if r.dedupe_key not in taken]
