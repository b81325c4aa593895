"""Worker tasks: deadlines (A4-A6) and notification delivery.

- ``game_changed(game_id)``: after each commit; schedules deadlines coming due soon and sends
  what needs an answer at once; news waits ``BATCH_DELAY`` and goes out as one email.
- ``fire_deadline(game_id, window_id)``: re-checks that the window is still open and due, then
  submits ``timeout`` through the service (which locks the game row). Its idempotency key
  derives from the window id and lives in the server's scope, where no seat can write: a task
  delivered twice appends one event, and no seat can use the key up.
- ``sweep()`` (beat, every few seconds): the database is the source of truth. It schedules
  deadlines due within ``HORIZON`` (long ones are never parked in Redis), re-fires due ones the
  queue lost, writes reminders at 80% of a window, re-queues mail that was never sent, and
  sends daily digests.
- ``deliver(notification_id)`` / ``send_batch(game_id, seat)``: one email per row, even when a
  task runs twice (the row is locked and marked); failures retry with backoff.
"""

from __future__ import annotations

import smtplib
from datetime import timedelta

from celery import shared_task
from flask import current_app
from imtheboss.engine.views import awaiting
from imtheboss.web.models import Deadline, Game, Notification, Seat, db
from imtheboss.web.service import ServiceError, get_game, load_state, now_utc, submit
from imtheboss.worker.mail import compose, send
from sqlalchemy import select

HORIZON = timedelta(seconds=60)  # deadlines due within this are handed to the queue
MAIL_ERRORS = (OSError, smtplib.SMTPException)


def _seconds(name: str) -> timedelta:
    """A duration setting of the app (``DEADLINE_STALE_SECONDS``: a scheduled deadline still
    open this long after it was due is fired again; ``BATCH_DELAY_SECONDS``: news waits this
    long before it is mailed)."""
    return timedelta(seconds=float(current_app.config[name]))


def _eta(due):
    now = now_utc()
    return due if due > now else now


@shared_task(name="imtheboss.worker.tasks.game_changed")
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


@shared_task(name="imtheboss.worker.tasks.fire_deadline")
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
    counts = {"scheduled": 0, "reminders": 0, "mail": 0}
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


def backoff(attempts: int) -> timedelta:
    """Wait before retrying mail after ``attempts`` failures: 2, 4, 8 ... s, capped at
    ``MAIL_RETRY_MAX_SECONDS``."""
    return timedelta(seconds=min(2**attempts, int(current_app.config["MAIL_RETRY_MAX_SECONDS"])))


def _requeue_mail(now) -> int:
    """Mail that is due and not on its way: urgent rows pending for a minute (the queue lost
    them) or whose backoff after a failure has run; news past its batch delay (a day for
    digests). The database drives retries, so an SMTP outage never piles up tasks."""
    rows = db.session.execute(
        select(Notification, Seat.notify)
        .join(
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
                if notify == "digest"
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
    """Preferences: ``every``; ``must_act`` (only what needs an answer, and invitations and the
    end); ``digest`` (answers at once, news once a day); ``off`` (web inbox only)."""
    if seat.notify == "off":
        return False
    if row.kind in ("invited", "game_over") or row.urgent:
        return True
    return seat.notify in ("every", "digest")


@shared_task(name="imtheboss.worker.tasks.deliver")
def deliver(notification_id: int) -> str:
    """Mail one notification row, once. The row is locked while sending, so a second run of the
    same task waits and then finds it sent. A failure is recorded on the row (``attempts``,
    ``emailed_at`` = last try) and the sweep retries it after ``backoff``."""
    row = db.session.execute(
        select(Notification).where(Notification.id == notification_id).with_for_update()
    ).scalar_one_or_none()
    if row is None or row.email_state != "pending":
        db.session.rollback()
        return "done"
    if row.attempts and row.emailed_at and row.emailed_at + backoff(row.attempts) > now_utc():
        db.session.rollback()  # failed lately: the sweep retries once the backoff has run
        return "backoff"
    seat = _seat(row.game_id, row.seat_index)
    game = get_game(row.game_id)
    if seat is None or not _wants(seat, row):
        row.email_state = "skipped"
        db.session.commit()
        return "skipped"
    row.attempts += 1
    row.emailed_at = now_utc()
    try:
        message = compose(game, seat, [row])
    except (ValueError, TypeError) as exc:  # cannot be mailed at all: never retry
        row.email_state = "failed"
        db.session.commit()
        current_app.logger.error(
            "mail for seat %s of %s cannot be composed: %s", row.seat_index, row.game_id, exc
        )
        return "failed"
    try:
        send(message)
    except MAIL_ERRORS as exc:
        db.session.commit()  # keep the attempt: the sweep retries after the backoff
        current_app.logger.warning(
            "mail to seat %s of %s failed: %s", row.seat_index, row.game_id, exc
        )
        return "failed"
    row.email_state = "sent"
    row.emailed_at = now_utc()
    if row.kind == "invited":
        row.body = {k: v for k, v in row.body.items() if k != "link"}  # the secret leaves the DB
    db.session.commit()
    return "sent"


@shared_task(name="imtheboss.worker.tasks.send_batch")
def send_batch(game_id: str, seat_index: int) -> str:
    """One email with the news since the seat last looked; none if it has looked since."""
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index).with_for_update()
    ).scalar_one_or_none()
    if seat is None:
        db.session.rollback()
        return "no seat"
    rows = (
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
        )
        .scalars()
        .all()
    )
    if not rows:
        db.session.rollback()
        return "nothing"
    now = now_utc()
    if seat.notify == "digest" and rows[0].created_at > now - timedelta(days=1):
        db.session.rollback()
        return "digest later"
    keep = [r for r in rows if _wants(seat, r) and r.seq > seat.last_seen_seq]
    for r in rows:
        if r not in keep:
            r.email_state = "skipped"
    if keep:
        for r in keep:
            r.attempts += 1
            r.emailed_at = now
        try:
            send(compose(get_game(game_id), seat, keep))
        except MAIL_ERRORS as exc:
            db.session.commit()  # keep the attempts: the sweep retries after the backoff
            current_app.logger.warning("mail to seat %s of %s failed: %s", seat_index, game_id, exc)
            return "failed"
        for r in keep:
            r.email_state = "sent"
            r.emailed_at = now
    db.session.commit()
    return f"sent {len(keep)}" if keep else "seen"
