"""Database models (docs/architecture.md, web/): games, seats, events, commands, deadlines,
notifications.

All times are timezone-aware UTC. Secrets (seat and admin tokens) are stored only as sha256
hashes. ``games.snapshot`` holds the engine state at ``snapshot_seq`` (hidden information
included: it never leaves the server).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask_sqlalchemy import SQLAlchemy
from imtheboss.web.store.retry import RetryingSession
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    func,
    literal_column,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


db = SQLAlchemy(model_class=Base, session_options={"class_": RetryingSession})

BigId = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER only


class UTCDateTime(TypeDecorator):
    """A timezone-aware UTC datetime on every database (SQLite returns naive values: they are
    stored in UTC and read back as UTC). Refuses naive datetimes on write."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: times are timezone-aware UTC")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Game(db.Model):
    """One game: settings, status (``active``, ``paused``, ``over``), the last event's sequence
    number, and an optional engine-state snapshot."""

    __tablename__ = "games"
    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    title: Mapped[str] = mapped_column(String(120))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(16), default="active")
    settings: Mapped[dict] = mapped_column(JSON)
    engine_version: Mapped[int] = mapped_column(Integer, default=1)
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
    snapshot: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    snapshot_seq: Mapped[int] = mapped_column(Integer, default=0)
    admin_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    creator_email: Mapped[str] = mapped_column(String(254), default="")


class Seat(db.Model):
    """A player's seat: name, email, secret-link token hash, notification preferences."""

    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "seat_index"), Index("ix_seats_email", "email"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat_index: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(40))
    email: Mapped[str] = mapped_column(String(254))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    joined_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    notify: Mapped[str] = mapped_column(String(16), default="every")  # every | must_act | digest
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    locale: Mapped[str] = mapped_column(String(16), default="")
    last_seen_seq: Mapped[int] = mapped_column(Integer, default=0)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # the seat's last look at its game page or live part (imtheboss.web.games.presence)
    present_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


# the seats of an address whatever the case of its local part (``addresses.key``, ``/me``)
Index("ix_seats_email_lower", func.lower(Seat.email))


class EventRecord(db.Model):
    """One engine event, numbered per game from 1 without gaps. ``ix_events_game_type`` finds a
    game's events of one type (the running deal's chat) without reading the others."""

    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("game_id", "seq"),
        Index("ix_events_game_type", "game_id", "type", "seq"),
    )
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(32))
    body: Mapped[dict] = mapped_column(JSON)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    command_id: Mapped[int | None] = mapped_column(ForeignKey("commands.id"), nullable=True)


class Checkpoint(db.Model):
    """The engine's state after the game's first ``seq`` events (the snapshot format), kept as
    the snapshot moves past each ``store.CHECKPOINT_EVERY`` events: the replay of event N
    starts from the last checkpoint at or before N, so its cost does not grow with the game. A
    cache of the event log, never the record: one the engine no longer reads (another format
    or engine) is skipped. Holds hidden information like the snapshot: read by the server only."""

    __tablename__ = "checkpoints"
    game_id: Mapped[str] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    state: Mapped[dict] = mapped_column(JSON)


class NegotiationRecord(db.Model):
    """One negotiation of a game and the events it spans, numbered 1..n in order: from its
    ``deal_opened`` (``first_seq``) to its end (``end_seq``: the ``deal_closed`` or
    ``deal_failed``) and the end roll and game end that follow a closing (``last_seq``). While it
    runs, ``outcome`` is ``running`` and ``last_seq`` and ``end_seq`` are ``None`` (it spans the
    log to its last event); then ``closed`` or ``failed``. Written as events are appended
    (``imtheboss.web.store.negotiations.record``); its facts (space, boss, time) are public (A8)."""

    __tablename__ = "negotiations"
    game_id: Mapped[str] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    first_seq: Mapped[int] = mapped_column(Integer)
    last_seq: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_seq: Mapped[int | None] = mapped_column(Integer, nullable=True)
    space: Mapped[int] = mapped_column(Integer)
    boss: Mapped[int] = mapped_column(Integer)
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime)
    outcome: Mapped[str] = mapped_column(String(8), default="running")


SERVER_SCOPE = -1  # the scope of the server's own keys (timeouts, extends): no seat's index


class CommandRecord(db.Model):
    """An accepted command and the events it appended. Its idempotency key is unique per game
    and ``scope`` (A7: a repeated key returns this result and appends nothing): the scope is the
    seat index for a seat's command, ``SERVER_SCOPE`` for the server's (``seat`` is ``None``),
    so nobody can use up a key of another seat or of the scheduler."""

    __tablename__ = "commands"
    __table_args__ = (
        UniqueConstraint("game_id", "scope", "idempotency_key", name="uq_commands_game_scope_key"),
    )
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    scope: Mapped[int] = mapped_column(Integer)
    idempotency_key: Mapped[str] = mapped_column(String(100))
    body: Mapped[dict] = mapped_column(JSON)
    first_seq: Mapped[int] = mapped_column(Integer)
    last_seq: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


OPEN = "state = 'open'"
# The same values as SQL literals, for the queries that read the partial indexes: a bound
# parameter would not do (SQLite matches a partial index's terms only to the same constants,
# and a plan PostgreSQL prepares once for any value cannot use it).
OPEN_STATE = literal_column("'open'")
PENDING = literal_column("'pending'")
SENDING = literal_column("'sending'")


class Deadline(db.Model):
    """An open window's deadline (A1): a deadlines worker sends ``timeout`` when ``due_at``
    passes. ``state``: ``open``, ``done`` (the window ended or the timeout was submitted).

    ``scheduled_at``: when a worker claimed the row to fire it (``None``: unclaimed, also once
    the deadline moves); a claim older than ``DEADLINE_STALE_SECONDS`` is a lost worker's and
    is taken again. ``remind_at``: when the reminder is due (80% of the window; written by the
    sweep, pushed on while a mail worker writes it); ``reminded`` once it is written. Partial
    indexes hold only the open rows, so finding what is due does not grow with the rows of
    every game that ever ran."""

    __tablename__ = "deadlines"
    __table_args__ = (
        UniqueConstraint("game_id", "window_id"),
        Index(
            "ix_deadlines_open_due",
            "due_at",
            postgresql_where=text(OPEN),
            sqlite_where=text(OPEN),
        ),
        Index(
            "ix_deadlines_open_remind",
            "remind_at",
            postgresql_where=text(f"{OPEN} AND NOT reminded"),
            sqlite_where=text(f"{OPEN} AND reminded = 0"),
        ),
    )
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    window_id: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(16))
    due_at: Mapped[datetime] = mapped_column(UTCDateTime)
    state: Mapped[str] = mapped_column(String(8), default="open")
    scheduled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    reminded: Mapped[bool] = mapped_column(Boolean, default=False)
    remind_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Notification(db.Model):
    """An outbox row: something a seat should hear about (web inbox and email). ``urgent`` rows
    need an answer and are mailed at once; the others may be batched.

    A row with ``to_email`` is mail to that address rather than to a seat (``seat_index`` -1):
    the organiser's confirmation mail, the notice to a seat's old address. No inbox shows it.

    ``email_state``: ``pending`` (to send, or to retry after a failure), ``sending`` (handed to
    the SMTP server; never sent again automatically), ``sent``, ``skipped`` (not wanted, or no
    longer true), ``failed`` (for good: ``email_error`` says why), ``unknown`` (left
    ``sending`` by a worker that died mid-send: it may or may not have gone out).
    ``attempts`` counts the tries, ``emailed_at`` is when the last one began or ended,
    ``queued_at`` when the sweep last queued the row again (the queue had lost it, or a retry
    was due): it is not queued again within a minute of that.
    ``email_error`` is the last failure's code (``refused``, ``deferred``, ``timeout``...: see
    ``imtheboss.web.mail.undelivered.REASONS``), ``email_error_detail`` the server's own words."""

    __tablename__ = "notifications"
    __table_args__ = (
        Index("ix_notifications_seat", "game_id", "seat_index", "id"),
        # the sweep's re-queue looks only at pending rows, its lost sends at sending ones
        *(
            Index(
                f"ix_notifications_{state}",
                "id",
                postgresql_where=text(f"email_state = '{state}'"),
                sqlite_where=text(f"email_state = '{state}'"),
            )
            for state in ("pending", "sending")
        ),
    )
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat_index: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    body: Mapped[dict] = mapped_column(JSON)
    text: Mapped[str] = mapped_column(Text)
    dedupe_key: Mapped[str] = mapped_column(String(160), unique=True)
    urgent: Mapped[bool] = mapped_column(Boolean, default=False)
    seq: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    email_state: Mapped[str] = mapped_column(String(12), default="pending")
    emailed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    queued_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    to_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    email_error: Mapped[str | None] = mapped_column(String(32), nullable=True)
    email_error_detail: Mapped[str | None] = mapped_column(String(200), nullable=True)


class OutboxMail(db.Model):
    """Mail kept locally instead of sent (no ``SMTP_HOST``: the embedded default); the operator
    reads it at ``/operator/mail``. Holds seat links: shown only to the operator."""

    __tablename__ = "mail_outbox"
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    to: Mapped[str] = mapped_column(String(254))
    subject: Mapped[str] = mapped_column(String(300))
    message: Mapped[str] = mapped_column(Text)  # the whole RFC 5322 message
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ReplyClaim(db.Model):
    """A reply by mail taken in for a seat: one row per (game, seat, idempotency key: the
    mail's ``Message-ID``, ``imtheboss.web.replies.screen.idempotency_key``), written and
    committed before the reply is read as a move. Its unique constraint decides which of two
    deliveries of one mail at the same moment acts and is answered: the other one's insert
    fails (``imtheboss.web.replies.apply``)."""

    __tablename__ = "reply_claims"
    __table_args__ = (
        UniqueConstraint("game_id", "seat_index", "idempotency_key", name="uq_reply_claims_key"),
    )
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat_index: Mapped[int] = mapped_column(Integer)
    idempotency_key: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
