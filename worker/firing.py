"""Deadlines fire from the deadlines workers' own threads, claimed in batches (A4-A6).

Every process of a worker that consumes the ``deadlines`` queue runs ``DEADLINE_THREADS``
firing threads (``Firing``, a Celery worker bootstep). The database is the schedule: there is no
task per deadline, and nothing in Redis to lose. A thread's round (``fire_round``):

1. ``claim_due`` takes up to ``DEADLINE_BATCH`` due deadlines in one statement
   (``UPDATE ... WHERE id IN (SELECT ... ORDER BY due_at LIMIT n FOR UPDATE SKIP LOCKED)
   RETURNING``, through the partial index of the open rows) and commits: threads and processes
   share the due ones and none is claimed twice. The claim is committed before any game is
   locked, since a claim holding deadline rows while it waits for a game row would deadlock
   against a submit (which locks the game row, then its deadline rows);
2. ``fire_claims`` submits ``timeout`` for each, with a key made from the window id in the
   server's scope (a deadline fired twice appends one event): on PostgreSQL the batch's games
   in one transaction (``imtheboss.web.games.timeouts``), else one by one through the service;
3. the mail the batch made is queued in one go (``tasks.queue_rows``).

An idle thread looks again after ``DEADLINE_POLL_SECONDS``. A worker that dies between claim
and fire leaves its claims open: any thread claims them again ``DEADLINE_STALE_SECONDS`` later.
Deadlines of paused games are not claimed (a resume moves them, and they fire when due).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from celery import bootsteps
from flask import current_app
from imtheboss.web.games.driven import now_utc
from imtheboss.web.games.timeouts import batched, bots_after_timeouts, submit_timeouts
from imtheboss.web.models import OPEN_STATE as OPEN
from imtheboss.web.models import Deadline, Game, UTCDateTime, db
from imtheboss.worker.delivery import DB_ERRORS
from imtheboss.worker.tasks import fire, queue_mail, queue_rows
from sqlalchemy import Integer, Update, bindparam, select, update

logger = logging.getLogger(__name__)
BACKOFF_MAX = 5.0  # seconds: the longest wait of a thread whose database is away


def claim_statement(now: datetime, limit: int) -> Update:
    """The claim: up to ``limit`` open deadlines of active games due at ``now``, unclaimed or
    claimed more than ``DEADLINE_STALE_SECONDS`` ago, earliest first, marked claimed at
    ``now``; returns ``(due_at, game_id, window_id)``. It reads the partial index of open rows.
    (``claim_due`` runs the same statement, built once, with these values as parameters.)"""
    return _claim(**_claim_params(now, limit))


def _claim_params(now: datetime, limit: int) -> dict[str, Any]:
    stale = now - timedelta(seconds=float(current_app.config["DEADLINE_STALE_SECONDS"]))
    return {"now": now, "stale": stale, "limit": limit}


@cache
def _claim_statement() -> Update:
    """``claim_statement`` with the parameters ``now``, ``stale`` and ``limit``."""
    return _claim(
        bindparam("now", type_=UTCDateTime),
        bindparam("stale", type_=UTCDateTime),
        bindparam("limit", type_=Integer),
    )


def _claim(now: Any, stale: Any, limit: Any) -> Update:
    deadline, game = Deadline.__table__, Game.__table__
    active = select(game.c.id).where(game.c.id == deadline.c.game_id, game.c.status == "active")
    due = (
        select(deadline.c.id)
        .where(deadline.c.state == OPEN, deadline.c.due_at <= now)
        .where(deadline.c.scheduled_at.is_(None) | (deadline.c.scheduled_at < stale))
        .where(active.exists())
        .order_by(deadline.c.due_at)
        .limit(limit)
        .with_for_update(skip_locked=True, of=deadline)
    )
    return (
        update(deadline)
        .where(deadline.c.id.in_(due))
        .values(scheduled_at=now)
        .returning(deadline.c.due_at, deadline.c.game_id, deadline.c.window_id)
    )


def claim_due(now: datetime, limit: int) -> list[tuple[str, str]]:
    """Claim (``claim_statement``) and commit. Returns ``[(game_id, window_id)]``, earliest
    first: these are the caller's alone."""
    rows = db.session.execute(_claim_statement(), _claim_params(now, limit)).all()
    db.session.commit()
    return [(game_id, window_id) for _due, game_id, window_id in sorted(rows)]


def fire_round(limit: int) -> Counter[str]:
    """One round: claim up to ``limit`` due deadlines, fire them and queue the mail they made
    (``fire_claims``). Returns how each went (``fired``, ``duplicate``, ``not_due``,
    ``paused``, ``game_over``, ``failed``); empty when nothing was due. Raises the database's
    errors (the claims left are taken again once stale)."""
    now = now_utc()
    claims = claim_due(now, limit)
    return fire_claims(claims, now) if claims else Counter()


def fire_claims(claims: list[tuple[str, str]], since: datetime) -> Counter[str]:
    """Fire the claimed ``(game_id, window_id)`` and queue the mail they made (rows made at or
    after ``since``): on PostgreSQL the first claim of each game together, in one transaction
    (``timeouts.submit_timeouts``; its mail queued from the rows it wrote), the rest (a second
    window of a game) one by one after it; elsewhere, or when the database refused the batch,
    each one by one through the service (``fire_one``). Returns the outcomes. Raises the
    database's errors."""
    together: dict[str, str] = {}
    alone: list[tuple[str, str]] = []
    for game_id, window_id in claims:
        if game_id in together or not batched():
            alone.append((game_id, window_id))
        else:
            together[game_id] = window_id
    outcomes: Counter[str] = Counter()
    if together:
        try:
            results, mail = submit_timeouts(list(together.items()), now_utc())
        except DB_ERRORS:
            raise
        except Exception as exc:  # the database refused the batch: each on its own
            db.session.rollback()
            logger.warning("deadlines: a batch was refused (%s); firing one by one", exc)
            results, mail = {}, []
            alone = list(together.items()) + alone
        outcomes.update(results.values())
        if mail:
            queue_rows(mail, together=True)
    made: list[str] = []
    for game_id, window_id in alone:
        outcome, mail_made = fire_one(game_id, window_id)
        outcomes[outcome] += 1
        if mail_made:
            made.append(game_id)
    if made:
        queue_mail(made, since=since, together=True)
    bots_after_timeouts(claims)
    return outcomes


def fire_one(game_id: str, window_id: str) -> tuple[str, bool]:
    """``tasks.fire`` of one claim; a fault of its game (not of the database) is logged and
    ``failed``: it is fired again when its claim is stale."""
    try:
        return fire(game_id, window_id)
    except DB_ERRORS:
        raise
    except Exception:  # one game's fault must not stop the others
        db.session.rollback()
        logger.exception("deadline %s of game %s failed to fire", window_id, game_id)
        return "failed", False


class Firing(bootsteps.StartStopStep):
    """The firing threads of a worker process that consumes the ``deadlines`` queue (a worker
    started with ``-Q mail`` has none): ``DEADLINE_THREADS`` of them, each running rounds of
    ``DEADLINE_BATCH`` and waiting ``DEADLINE_POLL_SECONDS`` when nothing is due. A warm
    shutdown lets each finish its round."""

    requires = {"celery.worker.components:Pool"}

    def __init__(self, parent, **kwargs) -> None:
        super().__init__(parent, **kwargs)
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def include_if(self, parent) -> bool:
        return "deadlines" in parent.app.amqp.queues.consume_from

    def start(self, parent) -> None:
        from imtheboss.worker.celery_app import flask_app  # cycle: celery_app imports Firing

        app = flask_app()
        count = int(app.config["DEADLINE_THREADS"])
        for index in range(count):
            thread = threading.Thread(
                target=self._run, args=(app, index, count), name=f"firing-{index}", daemon=True
            )
            thread.start()
            self.threads.append(thread)
        if count:
            logger.info("deadlines: %d firing thread(s) started", count)

    def stop(self, parent) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)
        self.threads = []

    def _run(self, app, index: int, count: int) -> None:
        poll = float(app.config["DEADLINE_POLL_SECONDS"])
        limit = int(app.config["DEADLINE_BATCH"])
        self.stopping.wait(poll * index / count)  # the threads look in turn, not all at once
        failures = 0
        with app.app_context():
            while not self.stopping.is_set():
                try:
                    outcomes = fire_round(limit)
                    failures = 0
                except Exception as exc:
                    db.session.rollback()
                    failures += 1
                    log = logger.warning if isinstance(exc, DB_ERRORS) else logger.exception
                    log("deadlines: a round failed (%s); trying again", exc)
                    self.stopping.wait(min(poll * 2**failures, BACKOFF_MAX))
                    continue
                if outcomes:
                    logger.info("deadlines: %s", dict(outcomes))
                else:
                    self.stopping.wait(poll)
            db.session.remove()
