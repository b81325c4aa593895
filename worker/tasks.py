"""Worker tasks: deadlines (A4-A6) and notification delivery.

Two queues (``imtheboss.web.queue.TASK_ROUTES``), each with a worker of its own in the
Procfile, so mail can never hold up a deadline: ``deadlines`` (``fire_deadline``,
``game_changed``, ``sweep``) and ``mail`` (``deliver``, ``send_batch``).

- ``game_changed(game_id)``: after each commit; schedules deadlines coming due soon and queues
  what needs an answer at once; news (and new terms) waits ``BATCH_DELAY`` and goes out as one
  email.
- ``fire_deadline(game_id, window_id)``: re-checks that the window is still open and due, then
  submits ``timeout`` through the service (which locks the game row). Its idempotency key
  derives from the window id and lives in the server's scope, where no seat can write: a task
  delivered twice appends one event, and no seat can use the key up.
- ``sweep()`` (beat, every few seconds): the database is the source of truth. It schedules
  deadlines due within ``HORIZON`` (long ones are never parked in Redis), re-fires due ones the
  queue lost, writes reminders at 80% of a window, re-queues mail that was never sent or whose
  backoff has run, marks mail left half-sent ``unknown``, and sends daily digests.
- ``deliver(notification_id)`` / ``send_batch(game_id, seat)``: at most one email per row
  (``imtheboss.worker.delivery``: ``sending`` is committed before the SMTP server is spoken
  to); a temporary failure is retried after a backoff up to ``MAIL_MAX_ATTEMPTS`` tries, a
  permanent one is ``failed`` at once. A reminder whose window has ended, or whose seat has
  answered, is dropped.

Tasks that touch the database are retried (by Celery, with a backoff) when its connection
drops.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from email.message import EmailMessage

from celery import shared_task
from flask import current_app
from imtheboss.engine.views import awaiting
from imtheboss.web.models import Deadline, Game, Notification, Seat, db
from imtheboss.web.notify import BATCHED_ANSWERS
from imtheboss.web.service import ServiceError, get_game, load_state, now_utc, submit
from imtheboss.worker.delivery import (
    DB_ERRORS,
    backoff,
    claim,
    fail_now,
    in_backoff,
    mark_lost,
    record,
)
from imtheboss.worker.mail import compose
from imtheboss.worker.smtp import MailFailure, send
from sqlalchemy import select

HORIZON = timedelta(seconds=60)  # deadlines due within this are handed to the queue
BATCH_MAX_WAIT = 5  # news keeps coming: mail it once the oldest is this many BATCH_DELAYs old
# A dropped database connection: Celery runs the task again after 1, 2, 4 ... s (jittered).
RETRY_DB = {
    "autoretry_for": DB_ERRORS,
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "retry_jitter": True,
    "max_retries": 8,
}


def _seconds(name: str) -> timedelta:
    """A duration setting of the app (``DEADLINE_STALE_SECONDS``: a scheduled deadline still
    open this long after it was due is fired again; ``BATCH_DELAY_SECONDS``: news waits this
    long before it is mailed)."""
    return timedelta(seconds=float(current_app.config[name]))


def _eta(due):
    now = now_utc()
    return due if due > now else now


@shared_task(name="imtheboss.worker.tasks.game_changed", **RETRY_DB)
def game_changed(game_id: str) -> None:
    """Schedule the game's deadlines due soon; mail what needs an answer; batch the news."""
    _schedule(game_id)
    _queue_mail(game_id)


def _schedule(game_id: str) -> None:
    """Hand the game's open deadlines due within ``HORIZON`` to the queue (ETA tasks)."""
    now = now_utc()
    rows = db.session.execute(
        select(Deadline).where(
            Deadline.game_id == game_id, Deadline.state == "open", Deadline.due_at <= now + HORIZON
        )
    ).scalars()
    for row in rows:
        fire_deadline.apply_async((game_id, row.window_id), eta=_eta(row.due_at))
        row.scheduled_at = now
    db.session.commit()


def _queue_mail(game_id: str, since=None) -> None:
    """Queue the game's pending mail (only rows made at or after ``since``, when given: the
    worker knows which rows it just made, and re-queuing the others would only add tasks that
    find them sent, a pile that grows with any backlog)."""
    query = select(Notification.id, Notification.urgent, Notification.seat_index).where(
        Notification.game_id == game_id, Notification.email_state == "pending"
    )
    if since is not None:
        query = query.where(Notification.created_at >= since)
    rows = db.session.execute(query).all()
    batched = set()
    for row_id, urgent, seat in rows:
        if urgent:
            deliver.delay(row_id)
        elif seat not in batched:
            batched.add(seat)
            send_batch.apply_async(
                (game_id, seat), countdown=_seconds("BATCH_DELAY_SECONDS").total_seconds()
            )


@shared_task(name="imtheboss.worker.tasks.fire_deadline", **RETRY_DB)
def fire_deadline(game_id: str, window_id: str) -> str:
    """Submit ``timeout`` for ``window_id`` if it is still open and due. Returns what it did."""
    row = db.session.execute(
        select(Deadline).where(Deadline.game_id == game_id, Deadline.window_id == window_id)
    ).scalar_one_or_none()
    if row is None or row.state != "open":
        db.session.rollback()
        return "ended"
    now = now_utc()
    if now < row.due_at:  # delivered early (clock skew): try again when due
        db.session.rollback()
        fire_deadline.apply_async((game_id, window_id), eta=row.due_at)
        return "early"
    db.session.rollback()
    try:
        result = submit(game_id, None, {"do": "timeout"}, f"timeout:{window_id}", now)
    except ServiceError as exc:
        if exc.code in ("not_due", "game_over"):
            return exc.code
        if exc.code == "paused":
            return "paused"
        raise
    if result.duplicate:
        return "duplicate"
    # The worker's app has no after-commit hook (TASKS off): schedule the windows this timeout
    # opened and send the mail it made (its rows are dated ``now``) at once, not at a sweep.
    _schedule(game_id)
    _queue_mail(game_id, since=now)
    return "fired"


@shared_task(name="imtheboss.worker.tasks.sweep")
def sweep() -> dict[str, int]:
    """The periodic safety net; see the module docstring. Returns counts (for logs/tests)."""
    now = now_utc()
    stale = _seconds("DEADLINE_STALE_SECONDS")
    counts = {"scheduled": 0, "reminders": 0, "mail": 0, "lost": 0}
    due = db.session.execute(
        select(Deadline)
        .where(Deadline.state == "open", Deadline.due_at <= now + HORIZON)
        .where((Deadline.scheduled_at.is_(None)) | (Deadline.scheduled_at < now - stale))
        .order_by(Deadline.due_at)
        .limit(500)
        .with_for_update(skip_locked=True)
    ).scalars()
    for row in due:
        if row.scheduled_at is not None and row.due_at > now - stale:
            continue  # scheduled, not yet overdue by STALE
        fire_deadline.apply_async((row.game_id, row.window_id), eta=_eta(row.due_at))
        row.scheduled_at = now
        counts["scheduled"] += 1
    db.session.commit()
    counts["reminders"] = _reminders(now)
    counts["mail"] = _requeue_mail(now)
    counts["lost"] = mark_lost(now)
    return counts


def _reminders(now) -> int:
    """A reminder to every seat still owing an answer when 80% of a window has run.

    Each game is handled in its own transaction under its row lock, taken before its deadline
    rows as ``submit`` takes them: marking deadline rows first and then writing notifications
    (whose foreign key share-locks the game row) deadlocks against a timeout being submitted."""
    rows = db.session.execute(
        select(Deadline.id, Deadline.game_id, Deadline.opened_at, Deadline.due_at).where(
            Deadline.state == "open",
            Deadline.reminded.is_(False),
            Deadline.opened_at.is_not(None),
        )
    ).all()
    db.session.rollback()
    games: dict[str, list[int]] = {}
    for row_id, game_id, opened, due in rows:
        if now >= opened + (due - opened) * 0.8:
            games.setdefault(game_id, []).append(row_id)
    made = 0
    for game_id, ids in games.items():
        game = db.session.execute(
            select(Game).where(Game.id == game_id).with_for_update()
        ).scalar_one_or_none()
        if game is None:
            db.session.rollback()
            continue
        deadlines = (
            db.session.execute(
                select(Deadline).where(
                    Deadline.id.in_(ids), Deadline.state == "open", Deadline.reminded.is_(False)
                )
            )
            .scalars()
            .all()
        )
        state = load_state(game) if deadlines and game.status == "active" else None
        count = 0
        for row in deadlines:
            row.reminded = True
            for entry in awaiting(state) if state is not None else []:
                if entry["window"] != row.window_id:
                    continue
                key = f"{row.game_id}:{entry['seat']}:reminder:{row.window_id}"
                if db.session.execute(
                    select(Notification.id).where(Notification.dedupe_key == key)
                ).first():
                    continue
                db.session.add(
                    Notification(
                        game_id=row.game_id,
                        seat_index=entry["seat"],
                        kind="reminder",
                        body={"window": row.window_id, "until": row.due_at.isoformat()},
                        text="Reminder: your answer is due soon",
                        dedupe_key=key,
                        urgent=True,
                        seq=game.last_seq,
                        created_at=now,
                    )
                )
                count += 1
        db.session.commit()
        if count:
            made += count
            _queue_mail(game_id, since=now)
    return made


def _requeue_mail(now: datetime) -> int:
    """Mail that is due and not on its way: urgent rows pending for a minute (the queue lost
    them) or whose backoff after a failure has run; news past its batch delay (a day for
    digests). The database drives retries, so an SMTP outage never piles up tasks; rows
    ``sending`` are never re-queued."""
    rows = db.session.execute(
        select(Notification, Seat.notify)
        .outerjoin(  # rows to an explicit address (to_email) have no seat
            Seat,
            (Seat.game_id == Notification.game_id) & (Seat.seat_index == Notification.seat_index),
        )
        .where(Notification.email_state == "pending")
        .order_by(Notification.id)
        .limit(2000)
    ).all()
    batches = set()
    count = 0
    for row, notify in rows:
        if row.attempts:
            due = row.emailed_at is None or row.emailed_at + backoff(row.attempts) <= now
        elif row.urgent:
            due = row.created_at < now - timedelta(seconds=60)
        else:
            wait = (
                timedelta(days=1)
                if notify == "digest" and row.kind not in BATCHED_ANSWERS
                else _seconds("BATCH_DELAY_SECONDS") + timedelta(seconds=60)
            )
            due = row.created_at < now - wait
        if not due:
            continue
        if row.urgent:
            deliver.delay(row.id)
            count += 1
        elif (row.game_id, row.seat_index) not in batches:
            batches.add((row.game_id, row.seat_index))
            send_batch.delay(row.game_id, row.seat_index)
            count += 1
    db.session.rollback()
    return count


def _seat(game_id: str, seat_index: int) -> Seat | None:
    return db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index)
    ).scalar_one_or_none()


def _wants(seat: Seat, row: Notification) -> bool:
    """Preferences: ``every``; ``must_act`` (only what needs an answer, new terms included, and
    invitations and the end); ``digest`` (answers at once, news once a day); ``off`` (web inbox
    only)."""
    if seat.notify == "off":
        return False
    if row.kind in ("invited", "game_over") or row.urgent or row.kind in BATCHED_ANSWERS:
        return True
    return seat.notify in ("every", "digest")


def _still_true(game: Game, row: Notification, now: datetime) -> bool:
    """A reminder is still true while its window is open and its seat still owes the answer
    there; every other row stays true."""
    if row.kind != "reminder":
        return True
    window = row.body.get("window")
    deadline = db.session.execute(
        select(Deadline).where(Deadline.game_id == game.id, Deadline.window_id == window)
    ).scalar_one_or_none()
    if deadline is None or deadline.state != "open" or deadline.due_at <= now:
        return False
    owing = awaiting(load_state(game))
    return any(a["seat"] == row.seat_index and a["window"] == window for a in owing)


def _compose_or_fail(
    game: Game, seat: Seat | None, rows: list[Notification], now: datetime
) -> EmailMessage | None:
    """The email for the (locked) ``rows``; ``None`` when it cannot be written (an address no
    server could take, a template that fails): the rows are then ``failed`` for good."""
    try:
        return compose(game, seat, rows)
    except MailFailure as failure:
        problem = failure
    except (ValueError, TypeError) as exc:
        problem = MailFailure("cannot_compose", str(exc), permanent=True)
    fail_now(rows, problem, now)
    current_app.logger.warning(
        "mail for seat %s of %s cannot be sent: %s", rows[0].seat_index, game.id, problem
    )
    return None


def _send(ids: list[int], message: EmailMessage, game_id: str, seat_index: int) -> str:
    """Send the claimed rows' ``message`` and record how it went (see ``delivery.record``)."""
    try:
        send(message)
    except MailFailure as failure:
        current_app.logger.warning(
            "mail to seat %s of %s failed%s: %s",
            seat_index,
            game_id,
            " for good" if failure.permanent else "",
            failure,
        )
        return record(ids, failure)
    return record(ids, None)


@shared_task(name="imtheboss.worker.tasks.deliver", **RETRY_DB)
def deliver(notification_id: int) -> str:
    """Mail one notification row, at most once: ``done`` (not pending: sent, on its way or
    settled), ``backoff`` (failed lately: the sweep retries it), ``skipped``, ``sent``,
    ``retry`` (a temporary failure), ``failed`` (for good, or the last try)."""
    claimed = _claim_one(notification_id)
    if isinstance(claimed, str):
        return claimed
    ids, message, game_id, seat_index = claimed
    return _send(ids, message, game_id, seat_index)


def _claim_one(notification_id: int) -> str | tuple[list[int], EmailMessage, str, int]:
    """Lock the row; if it is to be mailed now, compose it and commit it ``sending``."""
    row = db.session.execute(
        select(Notification).where(Notification.id == notification_id).with_for_update()
    ).scalar_one_or_none()
    now = now_utc()
    if row is None or row.email_state != "pending":
        db.session.rollback()
        return "done"
    if in_backoff(row, now):
        db.session.rollback()  # failed lately: the sweep retries once the backoff has run
        return "backoff"
    seat = None if row.to_email else _seat(row.game_id, row.seat_index)
    game = get_game(row.game_id)
    addressed = bool(row.to_email)  # mail to an address, not a seat: the organiser's, a notice
    if not addressed and (seat is None or not _wants(seat, row) or not _still_true(game, row, now)):
        row.email_state = "skipped"
        db.session.commit()
        return "skipped"
    message = _compose_or_fail(game, seat, [row], now)
    if message is None:
        return "failed"
    game_id, seat_index = row.game_id, row.seat_index
    return claim([row], now), message, game_id, seat_index


@shared_task(name="imtheboss.worker.tasks.send_batch", **RETRY_DB)
def send_batch(game_id: str, seat_index: int) -> str:
    """One email with the news (and new terms) since the seat last looked, at most once; none
    if it has looked since. News still coming in waits (see ``_still_coming``)."""
    claimed = _claim_batch(game_id, seat_index)
    if isinstance(claimed, str):
        return claimed
    ids, message = claimed
    outcome = _send(ids, message, game_id, seat_index)
    return f"sent {len(ids)}" if outcome == "sent" else outcome


def _claim_batch(game_id: str, seat_index: int) -> str | tuple[list[int], EmailMessage]:
    """Lock the seat and its pending news; if they are to be mailed now, compose one email and
    commit them ``sending`` (rows the seat has seen since, or does not want, are skipped)."""
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index).with_for_update()
    ).scalar_one_or_none()
    rows = _pending_news(game_id, seat_index) if seat is not None else []
    now = now_utc()
    wait = _batch_waits(seat, rows, now) if rows else "nothing"
    if seat is None or wait:
        db.session.rollback()
        return "no seat" if seat is None else wait
    keep = [r for r in rows if _wants(seat, r) and r.seq > seat.last_seen_seq]
    for r in rows:
        if r not in keep:
            r.email_state = "skipped"
    if not keep:
        db.session.commit()
        return "seen"
    message = _compose_or_fail(get_game(game_id), seat, keep, now)
    if message is None:
        return "failed"
    return claim(keep, now), message


def _pending_news(game_id: str, seat_index: int) -> list[Notification]:
    return list(
        db.session.execute(
            select(Notification)
            .where(
                Notification.game_id == game_id,
                Notification.seat_index == seat_index,
                Notification.email_state == "pending",
                Notification.urgent.is_(False),
            )
            .order_by(Notification.id)
            .with_for_update()
        ).scalars()
    )


def _batch_waits(seat: Seat, rows: list[Notification], now: datetime) -> str:
    """Why the seat's pending news is not mailed now (``""``: it is): ``digest later`` (a
    digest seat, no new terms, the oldest less than a day old), ``backoff`` (a try failed
    lately: the sweep retries), ``later`` (see ``_still_coming``)."""
    answers = any(r.kind in BATCHED_ANSWERS for r in rows)
    if seat.notify == "digest" and not answers and rows[0].created_at > now - timedelta(days=1):
        return "digest later"
    if any(in_backoff(r, now) for r in rows):
        return "backoff"
    return "later" if _still_coming(rows, now) else ""


def _still_coming(rows: list[Notification], now: datetime) -> bool:
    """News is still coming in: the newest row is younger than ``BATCH_DELAY`` (the task queued
    with it will mail them all) and the oldest younger than ``BATCH_MAX_WAIT`` delays. So a
    burst (40 re-offers) gives one email, and a steady stream still one every few delays."""
    delay = _seconds("BATCH_DELAY_SECONDS")
    newest = max(r.created_at for r in rows)
    oldest = min(r.created_at for r in rows)
    return now < newest + delay and now < oldest + delay * BATCH_MAX_WAIT
