"""The rows of a submit, read and written in as few statements as the database allows.

- ``lock_game``: the game row locked ``FOR UPDATE`` and, on PostgreSQL, in the same statement the
  events after its snapshot (a ``json_agg`` subquery), or after the state this process holds
  (``STATES``: then the snapshot is not sent at all). That subquery reads in the statement's
  view: when the lock was waited for, events committed meanwhile are missing, so the caller
  counts them (``load.load_state``, ``load.locked_state``) and reads them again if short.
- ``write_command``: the command's row (its idempotency key checked by the unique constraint,
  ``ON CONFLICT DO NOTHING``), its events and the game row's changes. On PostgreSQL that is one
  statement (data-modifying ``WITH``: the events and the update happen only if the command row
  was inserted); elsewhere three.

Every statement is built once: building and keying a SQLAlchemy statement costs more than running
it. None adds an ORM object.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from imtheboss.engine.events import Event
from imtheboss.engine.state import ENGINE_FINGERPRINT, SNAPSHOT_FORMAT, GameState
from imtheboss.web.models import EventRecord, Game, UTCDateTime, db
from sqlalchemy import (
    JSON,
    Insert,
    Integer,
    Select,
    TextClause,
    Update,
    and_,
    bindparam,
    case,
    func,
    insert,
    null,
    select,
)
from sqlalchemy import text as sql_text
from sqlalchemy import update as sql_update
from sqlalchemy.dialects import postgresql, sqlite


@dataclass
class LockedGame:
    """What a submit reads of the game row it locked, and changes: the columns
    ``load.load_state`` and ``submit.advance_game`` use, no ORM object. ``base_seq``: the
    events read with the lock are those after it: the snapshot's, or the held state's (then
    ``snapshot`` is ``None``, not read)."""

    id: str
    status: str
    last_seq: int
    snapshot: dict[str, Any] | None
    snapshot_seq: int
    base_seq: int


@dataclass(frozen=True)
class Held:
    """A game's state after its event ``seq``, which was written at ``at`` (its
    ``created_at``: a database restored from a backup may have another event ``seq`` now)."""

    seq: int
    at: datetime
    state: GameState


class States:
    """The state of each game this process wrote last (``Held``), for the next submit to the
    game here: it then reads only the events after it, and no snapshot. The events up to its
    ``seq`` never change, so such a state stays right; it is put only once its commit returned.
    The ``size`` latest games are kept. Threads share it; a state in it is never changed (a
    caller clones it to fold more)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._states: OrderedDict[str, Held] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str) -> Held | None:
        with self._lock:
            found = self._states.get(game_id)
            if found is not None:
                self._states.move_to_end(game_id)
            return found

    def put(self, game_id: str, held: Held) -> None:
        with self._lock:
            self._states[game_id] = held
            self._states.move_to_end(game_id)
            while len(self._states) > self.size:
                self._states.popitem(last=False)

    def drop(self, game_id: str) -> None:
        """Forget the game's state (its next submit here reads the snapshot)."""
        with self._lock:
            self._states.pop(game_id, None)


STATES = States(256)
CHECKPOINT_EVERY = 256  # events: a replay folds at most about this many past a checkpoint


def postgres() -> bool:
    """Whether the session's database is PostgreSQL (one-statement reads and writes)."""
    return db.session.get_bind().dialect.name == "postgresql"


def lock_game(game_id: str, held: Held | None) -> tuple[LockedGame | None, list[Any] | None]:
    """The game row locked ``FOR UPDATE`` (``None`` when there is none) and, on PostgreSQL, the
    ``(type, body, seat)`` rows of its events after ``base_seq`` (see the module; ``None``
    elsewhere). ``held``: the state this process holds of the game (``STATES``), if any: when
    it is not older than the snapshot, its event is still the game's, the events read are those
    after it and the snapshot is not (unless it is stale: the write replaces it). The first
    statement of its transaction: through the session, which retries it on a dead connection
    (``web/store/retry.py``)."""
    with_tail = postgres()
    params = {"game_id": game_id, "have": -1, "at": None}
    if held is not None:
        params.update(have=held.seq, at=held.at)
    found = db.session.execute(_lock_statement(with_tail), params).one_or_none()
    if found is None:
        return None, None
    return LockedGame(*found[:6]), (found[6] or []) if with_tail else None


@cache
def _lock_statement(with_tail: bool) -> Select:
    have, at = bindparam("have", type_=Integer), bindparam("at", type_=UTCDateTime)
    columns = lock_columns(have, at, with_tail)
    game = Game.__table__.c
    return select(*columns).where(game.id == bindparam("game_id")).with_for_update()


def lock_columns(have: Any, at: Any, with_tail: bool, outer: tuple[Any, ...] = ()) -> list[Any]:
    """The columns ``lock_game`` reads (``LockedGame``'s, then the tail when ``with_tail``),
    for a held state of event ``have`` written at ``at`` (SQL expressions, of the games table
    or of the ``outer`` FROMs beside it)."""
    game = Game.__table__.c
    event = EventRecord.__table__.alias("held").c
    written = (
        select(event.created_at)
        .where(event.game_id == game.id, event.seq == have)
        .correlate(Game.__table__, *outer)  # also from inside the events' subquery
    )
    held = and_(have >= game.snapshot_seq, written.scalar_subquery() == at)
    base = case((held, have), else_=game.snapshot_seq)
    current = and_(  # as ``snapshot_is_current``: a stale one is read, for the write to replace
        game.snapshot["format"].as_integer() == SNAPSHOT_FORMAT,
        game.snapshot["engine"].as_string() == ENGINE_FINGERPRINT,
    )
    snapshot = case((and_(held, current), null()), else_=game.snapshot)
    columns = [game.id, game.status, game.last_seq, snapshot, game.snapshot_seq, base]
    if with_tail:
        row = EventRecord.__table__.c
        each = func.json_build_array(row.type, row.body, row.seat)
        columns.append(
            select(func.json_agg(postgresql.aggregate_order_by(each, row.seq), type_=JSON))
            .where(row.game_id == game.id, row.seq > base, row.seq <= game.last_seq)
            .scalar_subquery()
        )
    return columns


def event_rows(
    game_id: str, first: int, events: list[Event], at: datetime, command_id: int | None
) -> list[dict[str, Any]]:
    """The ``events`` table's rows of ``events`` numbered from ``first``."""
    return [
        {
            "game_id": game_id,
            "seq": first + i,
            "type": event.type,
            "body": {"v": event.v, **event.data},
            "seat": event.by,
            "created_at": at,
            "command_id": command_id,
        }
        for i, event in enumerate(events)
    ]


def write_command(
    game: LockedGame, read: LockedGame, command: dict[str, Any], events: list[dict[str, Any]]
) -> int | None:
    """Insert the command's row (``commands`` columns), its ``events`` rows (``event_rows``,
    ``command_id`` left out) and what changed of the locked ``game`` since it was ``read``.
    Returns the command's id, or ``None`` when its key was used in its scope before: then
    nothing was written."""
    if postgres():
        params = {
            **command,
            "body": json.dumps(command["body"]),
            "events": json.dumps([[e["seq"], e["type"], e["body"], e["seat"]] for e in events]),
            "status": game.status,
            "moved": game.snapshot is not read.snapshot,
            "snapshot": json.dumps(game.snapshot) if game.snapshot is not read.snapshot else None,
            "snapshot_seq": game.snapshot_seq,
            "checkpoint": checkpoint_due(game, read),
        }
        return db.session.connection().execute(_write_statement(), params).scalar_one_or_none()
    unique = ("game_id", "scope", "idempotency_key")
    statement = insert_new("commands", unique, "id")
    command_id = db.session.connection().execute(statement, command).scalar_one_or_none()
    if command_id is not None:
        insert_rows("events", [{**e, "command_id": command_id} for e in events])
        save_game(game, read)
        if checkpoint_due(game, read):
            insert_rows("checkpoints", [checkpoint_row(game)])
    return command_id


def checkpoint_due(game: LockedGame, read: LockedGame) -> bool:
    """Whether the locked ``game``'s snapshot moved, since it was ``read``, past a multiple of
    ``CHECKPOINT_EVERY`` events: then it is also kept as a checkpoint (``models.Checkpoint``)."""
    return (
        game.snapshot is not read.snapshot
        and game.snapshot is not None
        and game.snapshot_seq // CHECKPOINT_EVERY > read.snapshot_seq // CHECKPOINT_EVERY
    )


def checkpoint_row(game: LockedGame) -> dict[str, Any]:
    """The ``checkpoints`` row of ``game``'s snapshot."""
    return {"game_id": game.id, "seq": game.snapshot_seq, "state": game.snapshot}


@cache
def _write_statement() -> TextClause:
    """``write_command`` on PostgreSQL: one statement."""
    return sql_text(
        """
        WITH command AS (
            INSERT INTO commands (game_id, seat, scope, idempotency_key, body, first_seq,
                                  last_seq, created_at)
            VALUES (:game_id, :seat, :scope, :idempotency_key, CAST(:body AS json), :first_seq,
                    :last_seq, :created_at)
            ON CONFLICT (game_id, scope, idempotency_key) DO NOTHING
            RETURNING id
        ), appended AS (
            INSERT INTO events (game_id, seq, type, body, seat, created_at, command_id)
            SELECT :game_id, CAST(e ->> 0 AS integer), e ->> 1, e -> 2,
                   CAST(e ->> 3 AS integer), :created_at, command.id
            FROM command, json_array_elements(CAST(:events AS json)) AS e
        ), advanced AS (
            UPDATE games SET
                last_seq = :last_seq,
                status = :status,
                snapshot = CASE WHEN :moved THEN CAST(:snapshot AS json) ELSE snapshot END,
                snapshot_seq = :snapshot_seq
            WHERE id = :game_id AND EXISTS (SELECT FROM command)
        ), checkpointed AS (
            INSERT INTO checkpoints (game_id, seq, state)
            SELECT :game_id, :snapshot_seq, CAST(:snapshot AS json)
            FROM command WHERE :checkpoint
            ON CONFLICT DO NOTHING
        )
        SELECT id FROM command
        """
    )


def save_game(game: LockedGame, read: LockedGame) -> None:
    """Write what changed of the locked row ``game`` since it was ``read`` (one ``UPDATE``)."""
    changed = {  # ``is``: a changed column holds a new object, an unchanged one the same
        name: getattr(game, name)
        for name in ("status", "last_seq", "snapshot", "snapshot_seq")
        if getattr(game, name) is not getattr(read, name)
    }
    if changed:
        db.session.connection().execute(_update_game_statement(), {"game": game.id, **changed})


@cache
def _update_game_statement() -> Update:
    table = Game.__table__
    return sql_update(table).where(table.c.id == bindparam("game"))


def insert_rows(table: str, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` (column values, the same keys each) into ``table``: one statement."""
    if rows:
        db.session.connection().execute(_insert_statement(table), rows)


@cache
def _insert_statement(table: str) -> Insert:
    return insert(db.Model.metadata.tables[table])


def insert_returning(table: str, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> list:
    """``insert_rows``, returning the ``columns`` of each row inserted, in the order of
    ``rows``: one statement."""
    if not rows:
        return []
    return db.session.connection().execute(_returning_statement(table, columns), rows).all()


@cache
def _returning_statement(table: str, columns: tuple[str, ...]) -> Insert:
    of = db.Model.metadata.tables[table]
    return insert(of).returning(*(of.c[name] for name in columns), sort_by_parameter_order=True)


def insert_new(table: str, unique: tuple[str, ...], returning: str = "") -> Insert:
    """``INSERT ... ON CONFLICT (unique) DO NOTHING`` into ``table``: a row that would break the
    constraint on the columns ``unique`` is left out, silently; ``RETURNING returning`` when
    given."""
    return _insert_new_on(db.session.get_bind().dialect.name, table, unique, returning)


@cache
def _insert_new_on(dialect: str, table: str, unique: tuple[str, ...], returning: str) -> Insert:
    of = db.Model.metadata.tables[table]
    make = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = make(of).on_conflict_do_nothing(index_elements=list(unique))
    return statement.returning(of.c[returning]) if returning else statement
