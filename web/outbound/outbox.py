"""The outbox of posts to other servers: a game's webhooks (``imtheboss.web.outbound.hooks``) and
its seats' phones (Web Push, ``imtheboss.web.outbound.push``).

Tables: ``webhooks`` (a game's URLs, added by its organiser), ``push_subscriptions`` (a seat's
phones) and ``outbound_posts``: one row per (webhook, event) and per (subscription, question
asked), written by ``write`` in the same transaction as the events (the service calls it beside
the mail's rows), unique by ``dedupe_key``, so each is posted once. After the commit the mail
queue is told (``imtheboss.worker.outbound.post_game``); the worker posts the rows at most once
(``sending`` is committed before the post), retries a temporary failure with a backoff, and the
sweep picks up what the queue lost. A row's body holds only public information for a webhook
(what a spectator sees) and only the seat's own question for a push.

``state``: ``pending`` (to post, or to retry after ``tried_at`` plus the backoff), ``sending``,
``sent``, ``failed`` (for good: ``error`` says why), ``skipped`` (its webhook or subscription
was removed), ``unknown`` (left ``sending`` by a worker that died mid-post).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Flask, current_app, g
from imtheboss.engine.events import Event
from imtheboss.web.app.queue import send
from imtheboss.web.games.commit_hooks import on_commit, on_outbox
from imtheboss.web.models import BigId, UTCDateTime, db
from imtheboss.web.store.rows import insert_new
from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    select,
    text,
)
from sqlalchemy import literal as sql_literal
from sqlalchemy.orm import Mapped, mapped_column


class Webhook(db.Model):
    """A URL a game's events are posted to: ``kind`` ``discord``, ``slack`` or ``json`` (the
    body's shape); every post is signed with ``secret`` (HMAC-SHA256, shown to the organiser
    once); texts in ``locale``, times in ``timezone``."""

    __tablename__ = "webhooks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(8))
    url: Mapped[str] = mapped_column(Text)
    secret: Mapped[str] = mapped_column(String(64))
    locale: Mapped[str] = mapped_column(String(16), default="en")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PushSubscription(db.Model):
    """A phone (a browser's push subscription) of a seat: the push service's ``endpoint`` and
    the browser's keys (``p256dh``: its ECDH public key, ``auth``: its secret; base64url)."""

    __tablename__ = "push_subscriptions"
    __table_args__ = (UniqueConstraint("game_id", "seat_index", "endpoint"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat_index: Mapped[int] = mapped_column(Integer)
    endpoint: Mapped[str] = mapped_column(Text)
    p256dh: Mapped[str] = mapped_column(String(120))
    auth: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class OutboundPost(db.Model):
    """One post to make: to ``webhook_id`` (an event, ``kind`` one of ``hooks.KINDS``) or to
    ``subscription_id`` (a question for the seat, ``kind`` the mail's kind: ``your_turn``...).
    ``body``: what the post says, as data (rendered when it is sent). See the module for
    ``state``."""

    __tablename__ = "outbound_posts"
    __table_args__ = (
        Index(
            "ix_outbound_posts_pending",
            "id",
            postgresql_where=text("state = 'pending'"),
            sqlite_where=text("state = 'pending'"),
        ),
        Index("ix_outbound_posts_game", "game_id", "id"),
    )
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    webhook_id: Mapped[int | None] = mapped_column(
        ForeignKey("webhooks.id", ondelete="SET NULL"), nullable=True
    )
    subscription_id: Mapped[int | None] = mapped_column(
        ForeignKey("push_subscriptions.id", ondelete="SET NULL"), nullable=True
    )
    kind: Mapped[str] = mapped_column(String(32))
    seq: Mapped[int] = mapped_column(Integer, default=0)
    body: Mapped[dict] = mapped_column(JSON)
    dedupe_key: Mapped[str] = mapped_column(String(200), unique=True)
    state: Mapped[str] = mapped_column(String(12), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    tried_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    queued_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    error: Mapped[str | None] = mapped_column(String(32), nullable=True)
    error_detail: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


WRITTEN = "imtheboss_outbound"  # on ``g``: the games whose transaction wrote posts


def _targets(game_id: str, seats: set[int]) -> tuple[list[int], dict[int, list[int]]]:
    """The game's webhook ids, and the subscription ids of ``seats``: one statement."""
    hooks = select(sql_literal(-1), Webhook.id).where(Webhook.game_id == game_id)
    phones = select(PushSubscription.seat_index, PushSubscription.id).where(
        PushSubscription.game_id == game_id, PushSubscription.seat_index.in_(sorted(seats))
    )
    webhooks: list[int] = []
    subscriptions: dict[int, list[int]] = {}
    for seat, target in db.session.execute(hooks.union_all(phones)).all():
        if seat == -1:
            webhooks.append(target)
        else:
            subscriptions.setdefault(seat, []).append(target)
    return webhooks, subscriptions


def write(
    game_id: str, first: int, events: list[Event], notes: list[dict[str, Any]], at: datetime
) -> None:
    """The outbox rows of ``events`` appended at ``first`` (``notes``: the mail's rows they
    made): one per webhook of the game and event it posts (``hooks.posts_for``), one per phone
    of a seat asked for an answer (``push.asks``). Reads the targets only when there is
    something to post (one statement), inserts in one more."""
    from imtheboss.web.outbound import hooks, push  # cycle: both import OutboundPost

    posts = hooks.posts_for(first, events)
    asks = push.asks(notes)
    if not posts and not asks:
        return
    webhooks, subscriptions = _targets(game_id, {ask["seat"] for ask in asks})
    rows = [
        _row(game_id, post["kind"], post["seq"], post, f"w:{hook}:{post['seq']}:{post['kind']}", at)
        | {"webhook_id": hook}
        for hook in webhooks
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
