"""The moves of a notification's mail (``Notification.email_state``), at most once:

    pending -> sending -> sent
                       -> pending   (a temporary failure: retried after ``backoff``)
                       -> failed    (a permanent failure, or the last of MAIL_MAX_ATTEMPTS tries)
    sending -> unknown              (the sweep, ``sending_stale()`` after the try began)

``claim`` commits ``sending`` before the SMTP server is spoken to, and ``record`` writes the
outcome after, in a transaction of its own (tried again if the database connection drops). A
row that stays ``sending`` (the worker or its database connection died around the send) is
never sent again automatically: the mail may have gone out. Once it is far older than any send
can take, the sweep marks it ``unknown`` and the organiser sees it on the admin page.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from flask import current_app
from imtheboss.web.games.driven import now_utc
from imtheboss.web.models import SENDING, Notification, db
from imtheboss.worker.smtp import MailFailure
from sqlalchemy import Select, select
from sqlalchemy.exc import InterfaceError, OperationalError

DB_ERRORS = (OperationalError, InterfaceError)  # a dropped or refused database connection


def backoff(attempts: int) -> timedelta:
    """How long after a failed try (its end) mail waits for the next, after ``attempts`` tries:
    2, 4, 8 ... s capped at ``MAIL_RETRY_MAX_SECONDS``, and never shorter than
    ``SMTP_TIMEOUT``, the longest one step of a send may wait: a retry never starts while the
    last try could still be waiting on a slow server (and while a row is ``sending`` nothing
    retries it at all)."""
    config = current_app.config
    seconds = min(2 ** min(attempts, 30), int(config["MAIL_RETRY_MAX_SECONDS"]))
    return timedelta(seconds=max(seconds, float(config["SMTP_TIMEOUT"])))


def sending_stale() -> timedelta:
    """How long after a try began a row still ``sending`` is taken as lost: ten minutes, or ten
    times ``SMTP_TIMEOUT`` if that is longer (a send is a handful of steps, each bounded by
    ``SMTP_TIMEOUT``)."""
    timeout = float(current_app.config["SMTP_TIMEOUT"])
    return max(timedelta(minutes=10), timedelta(seconds=10 * timeout))


def in_backoff(row: Notification, now: datetime) -> bool:
    """Whether ``row`` failed lately and must wait before its next try."""
    return bool(row.attempts and row.emailed_at and row.emailed_at + backoff(row.attempts) > now)


def claim(rows: list[Notification], now: datetime) -> list[int]:
    """Mark the (locked, ``pending``) rows ``sending`` and commit: from here on nothing else
    sends them. Returns their ids."""
    for row in rows:
        row.email_state = "sending"
        row.attempts += 1
        row.emailed_at = now
    ids = [row.id for row in rows]
    db.session.commit()
    return ids


def fail_now(rows: list[Notification], failure: MailFailure, now: datetime) -> None:
    """Mark the (locked, ``pending``) rows ``failed`` with ``failure``'s reason, as one try that
    never reached the server (the message could not be composed), and commit."""
    for row in rows:
        row.attempts += 1
        row.emailed_at = now
        _set_failed(row, failure)
    db.session.commit()


RECORD_PAUSES = (0.2, 0.5, 1.0, 2.0)  # seconds between tries at recording an outcome


def record(ids: list[int], failure: MailFailure | None) -> str:
    """Write how the try of the ``sending`` rows ``ids`` ended (``failure`` ``None``: sent).
    Returns ``"sent"``, ``"retry"`` (a temporary failure, tries left) or ``"failed"``; tried
    again when the database connection drops, and ``"unrecorded"`` if it does not come back
    (the rows stay ``sending``: never sent twice)."""
    tries = 0
    while True:
        try:
            outcome = _record(ids, failure)
            db.session.commit()
            return outcome
        except DB_ERRORS as exc:
            db.session.rollback()
            if tries == len(RECORD_PAUSES):
                current_app.logger.warning("mail %s: the outcome was not recorded: %s", ids, exc)
                return "unrecorded"
            time.sleep(RECORD_PAUSES[tries])
            tries += 1


def _record(ids: list[int], failure: MailFailure | None) -> str:
    rows = db.session.execute(
        select(Notification)
        .where(Notification.id.in_(ids), Notification.email_state == "sending")
        .with_for_update()
    ).scalars()
    cap = int(current_app.config["MAIL_MAX_ATTEMPTS"])
    outcomes = set()
    now = now_utc()
    for row in rows:
        row.emailed_at = now  # the backoff counts from the end of the try
        if failure is None:
            row.email_state = "sent"
            row.email_error = row.email_error_detail = None
            _forget_link(row)
        elif failure.permanent or row.attempts >= cap:
            _set_failed(row, failure)
        else:
            row.email_state = "pending"
            row.email_error, row.email_error_detail = failure.code, failure.detail
        outcomes.add({"sent": "sent", "pending": "retry"}.get(row.email_state, "failed"))
    for outcome in ("failed", "retry", "sent"):
        if outcome in outcomes:
            return outcome
    return "done"


def _set_failed(row: Notification, failure: MailFailure) -> None:
    row.email_state = "failed"
    row.email_error, row.email_error_detail = failure.code, failure.detail
    _forget_link(row)


def _forget_link(row: Notification) -> None:
    """A secret link (an invitation's, the organiser's admin link) leaves the database once
    its mail is settled."""
    if "link" in row.body:
        row.body = {k: v for k, v in row.body.items() if k != "link"}


def lost_statement(now: datetime) -> Select:
    """The (up to 500) rows ``sending`` for longer than ``sending_stale()``, locked, through
    the partial index of sending rows."""
    return (
        select(Notification)
        .where(Notification.email_state == SENDING, Notification.emailed_at < now - sending_stale())
        .order_by(Notification.id)
        .limit(500)
        .with_for_update(skip_locked=True)
    )


def mark_lost(now: datetime) -> int:
    """Rows ``sending`` for longer than ``sending_stale()``: the try died half-way and may or
    may not have reached the server. They become ``unknown`` (never sent again). Returns how
    many."""
    rows = db.session.execute(lost_statement(now)).scalars().all()
    for row in rows:
        row.email_state = "unknown"
        _forget_link(row)
        current_app.logger.warning(
            "mail %s to seat %s of %s was left half-sent; it may not have gone out",
            row.id,
            row.seat_index,
            row.game_id,
        )
    db.session.commit()
    return len(rows)
