"""Posting the outbox rows of webhooks and push (``imtheboss.web.outbound.outbox``), on the
``outbound`` queue and its own worker, so a slow endpoint never holds up mail or a deadline; each
post has one deadline, ``WEBHOOK_TIMEOUT`` seconds, for the whole of it
(``imtheboss.web.outbound.ssrf.post``). At most once, as mail:

    pending -> sending -> sent
                       -> pending   (a temporary failure: retried after ``backoff``)
                       -> failed    (a permanent failure, or the last of WEBHOOK_MAX_ATTEMPTS)
    pending -> skipped              (its webhook or subscription was removed)
    sending -> unknown              (the sweep: the worker died mid-post)

``post_game(game_id)`` (after a commit that wrote rows) posts the game's pending rows in order;
``post_one(row_id)`` posts one (a retry is queued with the backoff as its countdown);
``sweep_outbound`` (beat) queues again what the queue lost and what is due for a retry, and
marks lost posts ``unknown``. How a row becomes a request and what its answer means:
``imtheboss.worker.webhooks``, ``imtheboss.worker.push`` (their requests made by web/,
``imtheboss.web.outbound.requests``); posting one and what its answer means:
``imtheboss.worker.posting``.
"""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from flask import current_app
from imtheboss.web.games.driven import now_utc
from imtheboss.web.models import Game, db
from imtheboss.web.outbound.requests import OutboundPost
from imtheboss.worker import push, webhooks
from imtheboss.worker.posting import Outcome
from imtheboss.worker.tasks import RETRY_DB
from sqlalchemy import select, update

LOST = timedelta(seconds=60)  # a pending row never tried this long: the queue lost its task
QUEUED_AGAIN = timedelta(seconds=60)  # the sweep queues a row again at most this often


def backoff(attempts: int) -> timedelta:
    """The wait after ``attempts`` failed tries: 2, 4, 8 ... s, at most
    ``WEBHOOK_RETRY_MAX_SECONDS``."""
    cap = int(current_app.config["WEBHOOK_RETRY_MAX_SECONDS"])
    return timedelta(seconds=min(2 ** min(attempts, 30), cap))


def stale() -> timedelta:
    """A row ``sending`` this long after its try began is lost: ten minutes at least."""
    return max(timedelta(minutes=10), timedelta(seconds=10 * current_app.config["WEBHOOK_TIMEOUT"]))


def deliver(row: OutboundPost, game: Game) -> Outcome:
    """Compose and post ``row`` (claimed ``sending``) by its channel."""
    channel = webhooks if row.webhook_id is not None else push
    return channel.deliver(row, game)


@shared_task(name="imtheboss.worker.outbound.post_game", **RETRY_DB)
def post_game(game_id: str) -> dict[str, int]:
    """Post the game's pending rows, oldest first. Returns how many came to each outcome."""
    ids = (
        db.session.execute(
            select(OutboundPost.id)
            .where(OutboundPost.game_id == game_id, OutboundPost.state == "pending")
            .order_by(OutboundPost.id)
        )
        .scalars()
        .all()
    )
    db.session.rollback()
    outcomes: dict[str, int] = {}
    for row_id in ids:
        outcome = post_one.run(row_id)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


@shared_task(name="imtheboss.worker.outbound.post_one", **RETRY_DB)
def post_one(row_id: int) -> str:
    """Post one row at most once: ``done`` (not pending), ``backoff`` (failed lately),
    ``skipped`` (no target), ``sent``, ``retry``, ``failed``."""
    row = db.session.execute(
        select(OutboundPost).where(OutboundPost.id == row_id).with_for_update(skip_locked=True)
    ).scalar_one_or_none()
    now = now_utc()
    if row is None or row.state != "pending":
        db.session.rollback()
        return "done"
    if row.attempts and row.tried_at and row.tried_at + backoff(row.attempts) > now:
        db.session.rollback()
        return "backoff"
    if row.webhook_id is None and row.subscription_id is None:
        row.state = "skipped"
        db.session.commit()
        return "skipped"
    row.state, row.attempts, row.tried_at = "sending", row.attempts + 1, now
    db.session.commit()
    game = db.session.get(Game, row.game_id)
    try:
        outcome = deliver(row, game)
    except Exception as exc:  # a post that cannot be composed is failed, never retried
        current_app.logger.exception("post %s of %s cannot be made", row_id, row.game_id)
        outcome = Outcome("failed", "cannot_compose", str(exc))
    return _record(row_id, outcome)


def _record(row_id: int, outcome: Outcome) -> str:
    """Write ``outcome`` on the (``sending``) row; queue the retry of a temporary failure."""
    db.session.rollback()
    row = db.session.execute(
        select(OutboundPost).where(OutboundPost.id == row_id).with_for_update()
    ).scalar_one_or_none()
    if row is None or row.state != "sending":
        db.session.rollback()
        return outcome.state
    row.tried_at = now_utc()
    row.error, row.error_detail = (outcome.code or None), (outcome.detail[:200] or None)
    state = outcome.state
    if state == "retry" and row.attempts >= int(current_app.config["WEBHOOK_MAX_ATTEMPTS"]):
        state = "failed"
    row.state = {"retry": "pending"}.get(state, state)
    wait = backoff(row.attempts)
    db.session.commit()
    if state == "retry":
        current_app.logger.info("post %s: %s; trying again in %s", row_id, outcome.code, wait)
        post_one.apply_async((row_id,), countdown=wait.total_seconds())
    elif state == "failed":
        current_app.logger.warning("post %s failed for good: %s", row_id, outcome.code)
    return state


@shared_task(name="imtheboss.worker.outbound.sweep_outbound")
def sweep_outbound() -> dict[str, int]:
    """Queue the pending rows that are due and not on their way (never tried a minute after
    they were made; a retry whose backoff has run), each at most once a minute; mark rows left
    ``sending`` ``unknown``. Returns counts."""
    now = now_utc()
    pending = db.session.execute(
        select(OutboundPost.id, OutboundPost.attempts, OutboundPost.tried_at)
        .where(OutboundPost.state == "pending")
        .where((OutboundPost.attempts > 0) | (OutboundPost.created_at < now - LOST))
        .where(OutboundPost.queued_at.is_(None) | (OutboundPost.queued_at < now - QUEUED_AGAIN))
        .order_by(OutboundPost.id)
        .limit(1000)
    ).all()
    due = [i for i, attempts, tried in pending if not tried or tried + backoff(attempts) <= now]
    if due:
        db.session.execute(
            update(OutboundPost).where(OutboundPost.id.in_(due)).values(queued_at=now)
        )
    lost = db.session.execute(
        update(OutboundPost)
        .where(OutboundPost.state == "sending", OutboundPost.tried_at < now - stale())
        .values(state="unknown")
    ).rowcount
    db.session.commit()
    for row_id in due:
        post_one.delay(row_id)
    return {"queued": len(due), "lost": lost}
