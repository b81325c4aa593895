"""Writing the outbox (the tables of ``imtheboss.web.outbound.outbox``): ``write`` makes the
rows of a webhook's posts (``webhooks.posts_for``) and of a phone's questions (``push.asks``) in
the transaction of every append (registered by ``init_outbound`` with ``on_outbox``), and after
the commit the outbound queue is told (``run_after_commit``; ``queue_written`` for a commit
outside the service's).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Flask, current_app, g
from imtheboss.engine.events import Event
from imtheboss.web.app.tasks_out import send
from imtheboss.web.games.commit_hooks import on_commit, on_outbox
from imtheboss.web.models import db
from imtheboss.web.outbound import push, webhooks
from imtheboss.web.outbound.outbox import PushSubscription, Webhook
from imtheboss.web.store.rows import insert_new
from sqlalchemy import literal as sql_literal
from sqlalchemy import select

WRITTEN = "imtheboss_outbound"  # on ``g``: the games whose transaction wrote posts


def _targets(game_id: str, seats: set[int]) -> tuple[list[int], dict[int, list[int]]]:
    """The game's webhook ids, and the subscription ids of ``seats``: one statement."""
    webhooks_of = select(sql_literal(-1), Webhook.id).where(Webhook.game_id == game_id)
    phones = select(PushSubscription.seat_index, PushSubscription.id).where(
        PushSubscription.game_id == game_id, PushSubscription.seat_index.in_(sorted(seats))
    )
    webhook_ids: list[int] = []
    subscriptions: dict[int, list[int]] = {}
    for seat, target in db.session.execute(webhooks_of.union_all(phones)).all():
        if seat == -1:
            webhook_ids.append(target)
        else:
            subscriptions.setdefault(seat, []).append(target)
    return webhook_ids, subscriptions


def write(
    game_id: str, first: int, events: list[Event], notes: list[dict[str, Any]], at: datetime
) -> None:
    """The outbox rows of ``events`` appended at ``first`` (``notes``: the mail's rows they
    made): one per webhook of the game and event it posts (``webhooks.posts_for``), one per phone
    of a seat asked for an answer (``push.asks``). Reads the targets only when there is
    something to post (one statement), inserts in one more."""
    posts = webhooks.posts_for(first, events)
    asks = push.asks(notes)
    if not posts and not asks:
        return
    webhook_ids, subscriptions = _targets(game_id, {ask["seat"] for ask in asks})
    rows = [
        _row(game_id, post["kind"], post["seq"], post, f"w:{hook}:{post['seq']}:{post['kind']}", at)
        | {"webhook_id": hook}
        for hook in webhook_ids
        for post in posts
    ]
    rows += [
        _row(game_id, ask["kind"], ask["seq"], ask, f"p:{sub}:{ask['key']}", at)
        | {"subscription_id": sub}
        for ask in asks
        for sub in subscriptions.get(ask["seat"], [])
    ]
    if rows:
        db.session.connection().execute(insert_new("outbound_posts", ("dedupe_key",)), rows)
        g.setdefault(WRITTEN, set()).add(game_id)


def _row(game_id: str, kind: str, seq: int, body: dict, key: str, at: datetime) -> dict[str, Any]:
    return {
        "game_id": game_id,
        "webhook_id": None,
        "subscription_id": None,
        "kind": kind,
        "seq": seq,
        "body": body,
        "dedupe_key": key[:200],
        "state": "pending",
        "attempts": 0,
        "created_at": at,
    }


def queue_written(game_id: str) -> None:
    """After a commit outside the service's (the worker's reminders): tell the outbound queue when
    it wrote posts for ``game_id`` (``OUTBOUND_TASKS``, as ``init_outbound``)."""
    if current_app.config.get("OUTBOUND_TASKS", True):
        run_after_commit(game_id)


def run_after_commit(game_id: str) -> None:
    """Tell the outbound queue when the commit wrote posts for ``game_id``."""
    written = g.get(WRITTEN)
    if not written or game_id not in written:
        return
    written.discard(game_id)
    send("imtheboss.worker.outbound.post_game", game_id)


def init_outbound(app: Flask) -> None:
    """Write the posts with the events of every commit, and (``OUTBOUND_TASKS``, default on;
    the worker's own app too, so deadlines it fires post at once) queue them after it."""
    on_outbox(app, write)
    if app.config.get("OUTBOUND_TASKS", True):
        on_commit(app, run_after_commit)
