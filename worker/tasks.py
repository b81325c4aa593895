"""Worker tasks: deadlines (A4-A6), reminders and notification delivery.

Deadlines are not tasks: the firing threads of the deadlines workers claim due ones from the
database in batches and fire them (``imtheboss.worker.firing``). Two queues
(``imtheboss.web.app.tasks_out.TASK_ROUTES``), each with a worker of its own in the Procfile, so
mail can never hold up a deadline: ``deadlines`` (``sweep``, and ``fire_deadline`` for one
window) and ``mail`` (``sweep_mail``, ``game_changed``, ``remind``, ``deliver``, ``deliver_many``,
``send_batch``).

- ``game_changed(game_id)``: after a commit that made mail (the web's after-commit hook; a
  commit that made none sends nothing): what needs an answer goes out at once, news waits
  ``BATCH_DELAY`` and goes out as one email, new terms ``ASK_DELAY`` (with the news pending).
- ``fire(game_id, window_id)``: submits ``timeout`` through the service (which locks the game
  row). Its idempotency key derives from the window id and lives in the server's scope, where no
  seat can write: a deadline fired twice appends one event, and no seat can use the key up.
- ``sweep()`` and ``sweep_mail()`` (beat, every few seconds): the database is the source of
  truth, and the sweeps look only at what is due, through partial indexes. ``sweep`` plans
  reminders (``remind_at``) and hands the due ones to the mail queue in batches (``remind``);
  ``sweep_mail`` re-queues mail that was never sent or whose backoff has run (not again
  within a minute), marks mail left half-sent ``unknown``, and sends daily digests. Due and
  lost deadlines need no sweep: the firing threads' claim finds both.
- ``deliver(notification_id)`` / ``deliver_many(ids)`` / ``send_batch(game_id, seat)``: at most
  one email per row (``imtheboss.worker.delivery``: ``sending`` is committed before the SMTP
  server is spoken to); a temporary failure is retried after a backoff up to
  ``MAIL_MAX_ATTEMPTS`` tries, a permanent one is ``failed`` at once. A reminder whose window
  has ended, or whose seat has answered, is dropped.

Tasks that touch the database are retried (by Celery, with a backoff) when its connection
drops.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from email.message import EmailMessage

from celery import shared_task
from flask import current_app
from imtheboss.engine.views import awaiting
from imtheboss.web.app.process import mark_sweep
from imtheboss.web.games.driven import ServiceError, get_game, load_state, now_utc, submit
from imtheboss.web.mail.outgoing import (
    BATCHED_ANSWERS,
    ESSENTIAL,
    IN_WINDOW,
    MailFailure,
    claim_reminders,
    compose,
    plan_reminders,
    present,
    write_reminders,
)
from imtheboss.web.models import PENDING, Deadline, Game, Notification, Seat, db
from imtheboss.worker.delivery import (
    DB_ERRORS,
    backoff,
    claim,
    fail_now,
    in_backoff,
    mark_lost,
    record,
)
from imtheboss.worker.smtp import send
from sqlalchemy import Select, select, update

BATCH_MAX_WAIT = 5  # news keeps coming: mail it once the oldest is this many BATCH_DELAYs old
# A batch holding a question (``BATCHED_ANSWERS``: new terms) waits at most this long after the
# last row of a burst, and its oldest question this long in all: a question never waits
# behind news (mailed within 30 s of the event).
ASK_DELAY = timedelta(seconds=5)
ASK_MAX_WAIT = timedelta(seconds=15)
REMIND_BATCH = 50  # deadlines per ``remind`` task
REMIND_MAX = 5000  # reminders one sweep hands over (the rest wait for the next)
# Rows that ask their seat for an answer in a window (their body names it).
ANSWERS = IN_WINDOW
QUIET_REFUSALS = ("not_due", "game_over", "paused")  # a timeout with nothing to do
# A dropped database connection: Celery runs the task again after 1, 2, 4 ... s (jittered).
RETRY_DB = {
    "autoretry_for": DB_ERRORS,
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "retry_jitter": True,
    "max_retries": 8,
}


def _seconds(name: str) -> timedelta:
    """A duration setting of the app (``BATCH_DELAY_SECONDS``: news waits this long before it
    is mailed)."""
    return timedelta(seconds=float(current_app.config[name]))


@shared_task(name="imtheboss.worker.tasks.game_changed", **RETRY_DB)
def game_changed(game_id: str) -> None:
    """Mail what needs an answer; batch the news (the game's pending rows)."""
    queue_mail([game_id])


def queue_mail(game_ids: list[str], since: datetime | None = None, *, together: bool = False):
    """Queue the games' pending mail (only rows made at or after ``since``, when given: the
    worker knows which rows it just made, and re-queuing the others would only add tasks that
    find them sent, a pile that grows with any backlog). Urgent rows go out at once: one
    ``deliver`` each (an invitation per seat, sent side by side), or all in one
    ``deliver_many`` when ``together`` (the rows a batch of timeouts made); news waits
    ``BATCH_DELAY``, one ``send_batch`` per seat."""
    query = select(
        Notification.id, Notification.game_id, Notification.urgent, Notification.seat_index
    ).where(Notification.game_id.in_(sorted(set(game_ids))), Notification.email_state == "pending")
    if since is not None:
        query = query.where(Notification.created_at >= since)
    rows = db.session.execute(query.order_by(Notification.id)).all()
    db.session.rollback()  # ends the read: a firing thread keeps its session between rounds
    queue_rows(rows, together=together)


def queue_rows(rows: list[tuple[int, str, bool, int]], *, together: bool = False) -> None:
    """Queue the mail of the pending outbox rows ``(id, game_id, urgent, seat_index)``, as
    ``queue_mail`` does."""
    urgent = [row_id for row_id, _game, is_urgent, _seat in rows if is_urgent]
    if together and urgent:
        deliver_many.delay(urgent)
    else:
        for row_id in urgent:
            deliver.delay(row_id)
    delay = _seconds("BATCH_DELAY_SECONDS").total_seconds()
    countdowns = sorted({min(delay, ASK_DELAY.total_seconds()), delay})  # a question, news
    for game_id, seat in sorted({(g, s) for _id, g, is_urgent, s in rows if not is_urgent}):
        for countdown in countdowns:
            send_batch.apply_async((game_id, seat), countdown=countdown)


def fire(game_id: str, window_id: str) -> tuple[str, bool]:
    """Submit ``timeout`` for ``window_id`` now. Returns what came of it (``fired``,
    ``duplicate``, or the service's ``not_due``, ``game_over``, ``paused``) and whether it made
    mail. Raises other ``ServiceError``s and the database's errors."""
    try:
        result = submit(game_id, None, {"do": "timeout"}, f"timeout:{window_id}", now_utc())
    except ServiceError as exc:
        if exc.code in QUIET_REFUSALS:
            return exc.code, False
        raise
    if result.duplicate:
        return "duplicate", False
    return "fired", bool(result.notified)


@shared_task(name="imtheboss.worker.tasks.fire_deadline", **RETRY_DB)
def fire_deadline(game_id: str, window_id: str) -> str:
    """Fire one window's deadline if it is still open and due (a task sent by name; the
    firing threads need none). Returns what it did: ``ended``, ``early`` (sent again for when
    it is due), or what ``fire`` says."""
    row = db.session.execute(
        select(Deadline.state, Deadline.due_at).where(
            Deadline.game_id == game_id, Deadline.window_id == window_id
        )
    ).one_or_none()
    db.session.rollback()
    if row is None or row.state != "open":
        return "ended"
    now = now_utc()
    if now < row.due_at:  # delivered early (clock skew): try again when due
        fire_deadline.apply_async((game_id, window_id), eta=row.due_at)
        return "early"
    outcome, mail = fire(game_id, window_id)
    if mail:
        queue_mail([game_id], since=now, together=True)
    return outcome


@shared_task(name="imtheboss.worker.tasks.sweep")
def sweep() -> dict[str, int]:
    """The periodic reminders (on the deadlines queue: a mail server that hangs never holds
    them up); see the module docstring. Records when it ran (``imtheboss_sweep_age_seconds``).
    Returns counts (for logs/tests)."""
    now = now_utc()
    mark_sweep(now)
    return {"planned": plan_reminders(), "reminders": _hand_over_reminders(now)}


@shared_task(name="imtheboss.worker.tasks.sweep_mail")
def sweep_mail() -> dict[str, int]:
    """The periodic safety net of mail (on the mail queue): mail to queue again, sends left
    half-way. Returns counts (for logs/tests)."""
    now = now_utc()
    return {"mail": _requeue_mail(now), "lost": mark_lost(now)}


def _hand_over_reminders(now: datetime) -> int:
    """Claim the due reminders and hand them to the mail queue, ``REMIND_BATCH`` deadlines a
    task. Returns how many deadlines."""
    count = 0
    while count < REMIND_MAX:
        claims = claim_reminders(now, REMIND_BATCH)
        if claims:
            remind.delay(claims)
        count += len(claims)
        if len(claims) < REMIND_BATCH:
            break
    return count


@shared_task(name="imtheboss.worker.tasks.remind", **RETRY_DB)
def remind(claims: list[list]) -> str:
    """Write the reminders of the claimed deadlines ``[[deadline_id, game_id]]`` (all in one
    transaction) and mail them. Returns how many rows it wrote."""
    ids = write_reminders([(int(d), str(g)) for d, g in claims], now_utc())
    _deliver_rows(ids)
    return f"{len(ids)} reminders"


QUEUED_AGAIN = timedelta(seconds=60)  # the sweep queues a row again at most this often
LOST_URGENT = timedelta(seconds=60)  # an urgent row still pending this long: the queue lost it


def requeue_statement(now: datetime) -> Select:
    """The oldest 2,000 pending rows that may be due again at ``now`` (tried before, or made
    a minute ago or more; not queued again within ``QUEUED_AGAIN`` unless tried since), with
    what the sweep needs of them and their seat's ``notify``, through the partial index of
    pending mail."""
    return (
        select(
            Notification.id,
            Notification.game_id,
            Notification.seat_index,
            Notification.kind,
            Notification.urgent,
            Notification.attempts,
            Notification.emailed_at,
            Notification.created_at,
            Seat.notify,
        )
        .outerjoin(  # rows to an explicit address (to_email) have no seat
            Seat,
            (Seat.game_id == Notification.game_id) & (Seat.seat_index == Notification.seat_index),
        )
        .where(Notification.email_state == PENDING)
        .where((Notification.attempts > 0) | (Notification.created_at < now - LOST_URGENT))
        .where(
            Notification.queued_at.is_(None)
            | (Notification.queued_at < now - QUEUED_AGAIN)
            | (Notification.emailed_at > Notification.queued_at)  # tried since: its task ran
        )
        .order_by(Notification.id)
        .limit(2000)
    )


def _requeue_mail(now: datetime) -> int:
    """Mail that is due and not on its way: urgent rows pending for a minute (the queue lost
    them) or whose backoff after a failure has run; news past its batch delay (a day for
    digests). The database drives retries, so an SMTP outage never piles up tasks; rows
    ``sending`` are never re-queued, and a row queued again is not queued again within
    ``QUEUED_AGAIN`` (a backlog is not piled onto at every sweep). Returns the tasks sent."""
    due = [row.id for row in db.session.execute(requeue_statement(now)).all() if _due(row, now)]
    rows = _mark_queued(due, now) if due else []
    db.session.commit()
    batches = sorted({(g, seat) for _id, urgent, g, seat in rows if not urgent})
    for row_id, urgent, _game, _seat in sorted(rows):
        if urgent:
            deliver.delay(row_id)
    for game_id, seat in batches:
        send_batch.delay(game_id, seat)
    return sum(1 for row in rows if row.urgent) + len(batches)


def _mark_queued(ids: list[int], now: datetime) -> list:
    """Mark the rows ``ids`` still pending queued again at ``now``, but for those locked by a
    sender this moment (left to it). Returns ``(id, urgent, game_id, seat_index)`` of those
    marked."""
    free = (
        select(Notification.id)
        .where(Notification.id.in_(ids), Notification.email_state == PENDING)
        .with_for_update(skip_locked=True)
    )
    row = Notification
    return db.session.execute(
        update(Notification)
        .where(Notification.id.in_(free))
        .values(queued_at=now)
        .returning(row.id, row.urgent, row.game_id, row.seat_index)
        .execution_options(synchronize_session=False)
    ).all()


def _due(row, now: datetime) -> bool:
    """Whether the pending ``row`` (of ``requeue_statement``) is to be queued again now."""
    if row.attempts:
        return row.emailed_at is None or row.emailed_at + backoff(row.attempts) <= now
    if row.urgent:
        return row.created_at < now - LOST_URGENT
    wait = (
        timedelta(days=1)
        if row.notify == "digest" and row.kind not in BATCHED_ANSWERS
        else _seconds("BATCH_DELAY_SECONDS") + timedelta(seconds=60)
    )
    return row.created_at < now - wait


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
    if row.kind in ESSENTIAL or row.urgent or row.kind in BATCHED_ANSWERS:
        return True
    return seat.notify in ("every", "digest")


def _still_true(game: Game, row: Notification, now: datetime, seat: Seat | None = None) -> bool:
    """A reminder is still true while its window is open and its seat still owes the answer
    there; so is a question (``ANSWERS``) its seat was looking at the game for (present when
    the row was made, or since: ``imtheboss.web.games.presence``). The start of the away proxy (an
    urgent ``played_for``, A11) is true while the server still plays for the seat: a seat back
    already is not told to come back. Every other row stays true."""
    if row.kind == "played_for" and row.urgent:
        return load_state(game).proxied[row.seat_index]
    if row.kind not in ANSWERS:
        return True
    if row.kind != "reminder":
        looked = seat is not None and present(seat, row.created_at)
        if not looked or not row.body.get("window"):
            return True
        owing = awaiting(load_state(game))
        window = row.body["window"]
        return any(a["seat"] == row.seat_index and a["window"] == window for a in owing)
    window = row.body.get("window")
    deadline = db.session.execute(
        select(Deadline).where(Deadline.game_id == game.id, Deadline.window_id == window)
    ).scalar_one_or_none()
    if deadline is None or deadline.state != "open" or deadline.due_at <= now:
        return False
    owing = awaiting(load_state(game))
    return any(a["seat"] == row.seat_index and a["window"] == window for a in owing)


def _wait_while_present(row: Notification, seat: Seat, now: datetime) -> str:
    """The question ``row`` waits while its seat looks at the game (the page shows it the
    question): it stays ``pending``, and the sweep queues it again (``_requeue_mail``: an
    urgent row pending a minute, then at most once a minute), which mails it once the seat has
    left, unless the seat has answered meanwhile (``_still_true``)."""
    db.session.rollback()
    return "present"


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
    ``retry`` (a temporary failure), ``failed`` (for good, or the last try),
    ``after_invitation`` (the seat's invitation is not out yet: the sweep sends it later)."""
    claimed = _claim_one(notification_id)
    if isinstance(claimed, str):
        return claimed
    ids, message, game_id, seat_index = claimed
    outcome = _send(ids, message, game_id, seat_index)
    _after_invitation(ids, game_id, seat_index)  # sent or tried: what waited for it goes
    return outcome


def _after_invitation(ids: list[int], game_id: str, seat_index: int) -> None:
    """When the rows just mailed (or tried) held the seat's invitation, queue the seat's urgent
    rows that waited for it (``_invitation_first``) at once, not at the sweep's next round.
    Only when ``deliver`` ran as a queued task: run in-process (``deliver.run``: tests,
    ``deliver_many``) it queues nothing, and the sweep or the caller sends them."""
    if deliver.request.id is None:
        return
    invited = db.session.execute(
        select(Notification.id).where(Notification.id.in_(ids), Notification.kind == "invited")
    ).first()
    if invited is None:
        db.session.rollback()
        return
    waiting = (
        db.session.execute(
            select(Notification.id).where(
                Notification.game_id == game_id,
                Notification.seat_index == seat_index,
                Notification.email_state == PENDING,
                Notification.urgent.is_(True),
                Notification.id > invited.id,
            )
        )
        .scalars()
        .all()
    )
    db.session.rollback()
    for row_id in waiting:
        deliver.delay(row_id)


@shared_task(name="imtheboss.worker.tasks.deliver_many", **RETRY_DB)
def deliver_many(notification_ids: list[int]) -> dict[str, int]:
    """Mail several notification rows, one after another, each as ``deliver`` does (a row
    already on its way or settled is left alone, so a task delivered twice sends nothing
    twice). Returns how many rows came to each outcome."""
    return dict(_deliver_rows(notification_ids))


def _deliver_rows(notification_ids: list[int]) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    for notification_id in notification_ids:
        outcomes[deliver.run(notification_id)] += 1
    return outcomes


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
    if not addressed and (
        seat is None or not _wants(seat, row) or not _still_true(game, row, now, seat)
    ):
        row.email_state = "skipped"
        db.session.commit()
        return "skipped"
    if not addressed and row.kind in ANSWERS and present(seat, now):
        return _wait_while_present(row, seat, now)
    if not addressed and _invitation_first(row):
        db.session.rollback()  # left pending: the sweep sends it once the invitation is out
        return "after_invitation"
    message = _compose_or_fail(game, seat, [row], now)
    if message is None:
        return "failed"
    game_id, seat_index = row.game_id, row.seat_index
    return claim([row], now), message, game_id, seat_index


def _invitation_first(row: Notification) -> bool:
    """Whether the seat's invitation, written before ``row``, is on its way (``sending``) or
    not yet tried (``pending``, no attempt): a seat's first turn mail never arrives before its
    invitation, whichever of the two tasks runs first. An invitation that failed a try does not
    hold the seat's other mail back (the server may be down: each row is tried on its own)."""
    if row.kind == "invited":
        return False
    earlier = db.session.execute(
        select(Notification.id)
        .where(
            Notification.game_id == row.game_id,
            Notification.seat_index == row.seat_index,
            Notification.kind == "invited",
            Notification.id < row.id,
            (Notification.email_state == "sending")
            | ((Notification.email_state == "pending") & (Notification.attempts == 0)),
        )
        .limit(1)
    ).first()
    return earlier is not None


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
    keep = [
        r
        for r in rows
        if _wants(seat, r)
        and r.seq > seat.last_seen_seq
        and (r.kind in BATCHED_ANSWERS or not present(seat, r.created_at))
    ]
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
    burst (40 re-offers) gives one email, and a steady stream still one every few delays. A
    batch holding a question (new terms) waits ``ASK_DELAY`` at most after its newest row and
    ``ASK_MAX_WAIT`` after its oldest question, news or not."""
    delay = _seconds("BATCH_DELAY_SECONDS")
    newest = max(r.created_at for r in rows)
    asked = [r.created_at for r in rows if r.kind in BATCHED_ANSWERS]
    if asked:
        return now < newest + min(delay, ASK_DELAY) and now < min(asked) + ASK_MAX_WAIT
    oldest = min(r.created_at for r in rows)
    return now < newest + delay and now < oldest + delay * BATCH_MAX_WAIT
