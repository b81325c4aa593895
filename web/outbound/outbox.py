"""The outbox of posts to other servers: a game's webhooks (``imtheboss.web.outbound.webhooks``) and
its seats' phones (Web Push, ``imtheboss.web.outbound.push``).

Tables: ``webhooks`` (a game's URLs, added by its organiser), ``push_subscriptions`` (a seat's
phones) and ``outbound_posts``: one row per (webhook, event) and per (subscription, question
asked), written by ``writer.write`` in the same transaction as the events (``games.submit`` calls
it beside the mail's rows), unique by ``dedupe_key``, so each is posted once. After the commit the
mail queue is told (``imtheboss.worker.outbound.post_game``); the worker posts the rows at most
once (``sending`` is committed before the post), retries a temporary failure with a backoff, and
the sweep picks up what the queue lost. A row's body holds only public information for a webhook
(what a spectator sees) and only the seat's own question for a push.

``state``: ``pending`` (to post, or to retry after ``tried_at`` plus the backoff), ``sending``,
``sent``, ``failed`` (for good: ``error`` says why), ``skipped`` (its webhook or subscription
was removed), ``unknown`` (left ``sending`` by a worker that died mid-post).
"""

from __future__ import annotations

from datetime import datetime

from imtheboss.web.models import BigId, UTCDateTime, db
from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
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
