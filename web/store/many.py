"""The rows of several games' commands, read and written together (``timeouts.submit_timeouts``):
one statement to lock the games, one for the commands, their events and the game rows, one for
the deadline rows, whatever the number of games. PostgreSQL only (``store.postgres``).

- ``lock_games``: the game rows locked ``FOR UPDATE`` in the order of their ids, each with the
  events after its snapshot or after the state this process holds (as ``store.lock_game``), and
  whether the command's idempotency key is used in the game already. Every batch locks in that
  order and a submit locks one game, so two transactions never wait on each other in a circle.
- ``write_commands``: the commands' rows (the key checked by the unique constraint, ``ON
  CONFLICT DO NOTHING``), their events and the game rows' changes, for the commands inserted
  only; returns the games whose command was inserted.
- ``write_deadlines``: the deadline rows that ended, moved and opened
  (``deadlines.deadline_changes``) of every game.

Each statement is built once; its rows go as one JSON parameter (``json_to_recordset``).
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any

from imtheboss.web.models import SERVER_SCOPE, CommandRecord, Game, UTCDateTime, db
from imtheboss.web.store.rows import Held, LockedGame, lock_columns
from sqlalchemy import (
    JSON,
    Integer,
    Select,
    String,
    TextClause,
    bindparam,
    column,
    exists,
    func,
    select,
)
from sqlalchemy import text as sql_text

TIMES = ("due_at", "opened_at", "remind_at")  # the times of an opened deadline row
Locked = tuple[LockedGame, list[Any], bool]  # the row, its tail, whether the key is used


def lock_games(wanted: list[tuple[str, str, Held | None]]) -> dict[str, Locked]:
    """Lock the games of ``wanted`` (``(game_id, idempotency key in the server's scope, the
    held state or None)``, each game once) ``FOR UPDATE``, in the order of their ids. Returns
    for each game found its row, the ``(type, body, seat)`` rows of its events after
    ``base_seq`` and whether the key was used in it. The tails and the key are read in the
    statement's view: when a lock was waited for, what was committed meanwhile is missing (the
    caller counts the tail; a key used meanwhile makes ``write_commands`` insert fewer)."""
    rows = [
        {
            "game_id": game_id,
            "key": key,
            "have": held.seq if held else -1,
            "at": held.at.isoformat() if held else None,
        }
        for game_id, key, held in wanted
    ]
    found = db.session.execute(_lock_many_statement(), {"wanted": rows}).all()
    return {row[0]: (LockedGame(*row[:6]), row[6] or [], bool(row[7])) for row in found}


@cache
def _lock_many_statement() -> Select:
    wanted = (
        func.json_to_recordset(bindparam("wanted", type_=JSON))
        .table_valued(
            column("game_id", String),
            column("key", String),
            column("have", Integer),
            column("at", UTCDateTime),
        )
        .render_derived(name="wanted", with_types=True)
    )
    game = Game.__table__.c
    command = CommandRecord.__table__.c
    used = exists().where(
        command.game_id == game.id,
        command.scope == SERVER_SCOPE,
        command.idempotency_key == wanted.c.key,
    )
    columns = lock_columns(wanted.c.have, wanted.c.at, True, (wanted,))
    return (
        select(*columns, used)
        .join_from(Game.__table__, wanted, wanted.c.game_id == game.id)
        .order_by(game.id)
        .with_for_update(of=Game.__table__)
    )


def write_commands(commands: list[dict[str, Any]]) -> set[str]:
    """Insert each command's row and its events and write its game row, in one statement.
    ``commands``: the ``commands`` columns (``submit.command_row``) and ``events`` (the
    ``store.event_rows`` of the command), ``status``, ``moved`` (whether the snapshot moved),
    ``snapshot`` and ``snapshot_seq`` (the game row after it), ``checkpoint`` (whether the
    snapshot is also kept as a checkpoint: ``store.checkpoint_due``). A command whose key was
    used in its scope before writes nothing. Returns the games whose command was inserted."""
    rows = [
        {
            **command,
            "created_at": command["created_at"].isoformat(),
            "events": [[e["seq"], e["type"], e["body"], e["seat"]] for e in command["events"]],
        }
        for command in commands
    ]
    statement = _write_many_statement()
    return set(db.session.connection().execute(statement, {"rows": json.dumps(rows)}).scalars())


@cache
def _write_many_statement() -> TextClause:
    return sql_text(
        """
        WITH input AS (
            SELECT * FROM json_to_recordset(CAST(:rows AS json)) AS c(
                game_id text, seat integer, scope integer, idempotency_key text, body json,
                first_seq integer, last_seq integer, created_at timestamptz, status text,
                moved boolean, snapshot json, snapshot_seq integer, checkpoint boolean,
                events json)
        ), command AS (
            INSERT INTO commands (game_id, seat, scope, idempotency_key, body, first_seq,
                                  last_seq, created_at)
            SELECT game_id, seat, scope, idempotency_key, body, first_seq, last_seq, created_at
            FROM input
            ON CONFLICT (game_id, scope, idempotency_key) DO NOTHING
            RETURNING id, game_id
        ), appended AS (
            INSERT INTO events (game_id, seq, type, body, seat, created_at, command_id)
            SELECT input.game_id, CAST(e ->> 0 AS integer), e ->> 1, e -> 2,
                   CAST(e ->> 3 AS integer), input.created_at, command.id
            FROM command JOIN input ON input.game_id = command.game_id,
                 json_array_elements(input.events) AS e
        ), advanced AS (
            UPDATE games SET
                last_seq = input.last_seq,
                status = input.status,
                snapshot = CASE WHEN input.moved THEN input.snapshot ELSE games.snapshot END,
                snapshot_seq = input.snapshot_seq
            FROM input JOIN command ON command.game_id = input.game_id
            WHERE games.id = input.game_id
        ), checkpointed AS (
            INSERT INTO checkpoints (game_id, seq, state)
            SELECT input.game_id, input.snapshot_seq, input.snapshot
            FROM input JOIN command ON command.game_id = input.game_id
            WHERE input.checkpoint
            ON CONFLICT DO NOTHING
        )
        SELECT game_id FROM command
        """
    )


def write_deadlines(
    ended: list[tuple[str, str]],
    moved: list[tuple[str, str, datetime]],
    opened: list[dict[str, Any]],
) -> None:
    """In one statement: the open rows of ``ended`` (``(game_id, window_id)``) made ``done``,
    those of ``moved`` (``(game_id, window_id, due_at)``) given their new time (unclaimed), and
    the rows ``opened`` (``game_id``, ``window_id``, ``kind``, ``due_at``, ``opened_at``,
    ``remind_at``) inserted, a row already there left alone."""
    if not (ended or moved or opened):
        return
    params = {
        "ended": json.dumps([{"game_id": g, "window_id": w} for g, w in ended]),
        "moved": json.dumps(
            [{"game_id": g, "window_id": w, "due_at": at.isoformat()} for g, w, at in moved]
        ),
        "opened": json.dumps([{**row, **{k: row[k].isoformat() for k in TIMES}} for row in opened]),
    }
    db.session.connection().execute(_deadlines_statement(), params)


@cache
def _deadlines_statement() -> TextClause:
    return sql_text(
        """
        WITH ended AS (
            UPDATE deadlines SET state = 'done'
            FROM json_to_recordset(CAST(:ended AS json)) AS x(game_id text, window_id text)
            WHERE deadlines.game_id = x.game_id AND deadlines.window_id = x.window_id
              AND deadlines.state = 'open'
        ), moved AS (
            UPDATE deadlines SET due_at = x.due_at, scheduled_at = NULL
            FROM json_to_recordset(CAST(:moved AS json))
                 AS x(game_id text, window_id text, due_at timestamptz)
            WHERE deadlines.game_id = x.game_id AND deadlines.window_id = x.window_id
              AND deadlines.state = 'open'
        )
        INSERT INTO deadlines (game_id, window_id, kind, due_at, opened_at, remind_at, state,
                               reminded)
        SELECT game_id, window_id, kind, due_at, opened_at, remind_at, 'open', false
        FROM json_to_recordset(CAST(:opened AS json))
             AS x(game_id text, window_id text, kind text, due_at timestamptz,
                  opened_at timestamptz, remind_at timestamptz)
        ON CONFLICT (game_id, window_id) DO NOTHING
        """
    )
