"""Games stored by the PREVIOUS RELEASE (commit 8d7c024) load, replay and go on under this code
once the migrations ran: the upgrade a server makes when it takes this release over the old one's
database.

``tests/fixtures/old_release/games.sql`` is a SQLite database the old app and service wrote
(``make.py`` there says how, and runs only against the old code): four games (``finished``,
played to its end; ``rematch``, its rematch, paused and resumed by its organiser, with chat;
``negotiation``, stopped inside a negotiation with terms and an agreement and its window open;
``orders``, on standing orders, one seat away). ``expected.json`` is what the old code said of
each: ``{name: {"game_id", "title", "status", "last_seq", "events", "state", "seat", "seat_link",
"export"?}}``.

The test (on SQLite, the embedded default, and on PostgreSQL) loads the dump into a database of
its own (SQLite: the file the dump makes; PostgreSQL: this code's migrations up to the dump's
revision, then the dump's rows copied through the models' column types), runs
``flask_migrate.upgrade`` to head, then for each game checks: ``status``, ``last_seq`` and the
number of stored events; the state of ``load.load_state`` and of ``load.state_after(game,
last_seq)`` against the old code's ``state_to_json``; the finished game's export (equal); that
the old seat link signs in and the game page answers 200 with the game's title; and that an
unfinished game takes a legal next command (the game goes on, the state read back being the one
``submit`` made).

The state's format moved from 3 to 4 between the releases: the old snapshots in the rows of
``finished`` and ``orders`` are refused and the logs replayed; format 4 adds ``bots`` (one flag a
seat), which must be all false for a game made before bot seats existed, and ``format`` and
``engine`` (the stamp of the code that wrote the state) differ by design; every other field must
be equal. No migration was added between 8d7c024 and this code (the upgrade finds the database at
head): the test guards the next ones."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from alembic.script import ScriptDirectory
from flask import Flask
from flask.testing import FlaskClient
from flask_migrate import upgrade
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.state import GameState, state_to_json
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.web.games.load import get_game, load_events, load_state, state_after
from imtheboss.web.games.submit import submit
from imtheboss.web.models import EventRecord, db
from imtheboss.web.store.records import game_export
from sqlalchemy import func, select, text
from support.app import make_app
from support.migrations import MIGRATIONS, migration_app
from support.postgres import own_database

OLD_RELEASE = Path(__file__).resolve().parents[1] / "fixtures" / "old_release"
EXPECTED: dict[str, dict[str, Any]] = json.loads((OLD_RELEASE / "expected.json").read_text())
STAMPS = ("format", "engine")  # the snapshot format and the engine code that wrote it


@pytest.fixture(params=["sqlite", "postgresql"])
def upgraded(request, tmp_path: Path, clock, worker_id: str) -> Iterator[Flask]:
    """The app (test clock) on a database of the test's own holding the old release's games,
    migrated to head by ``flask_migrate.upgrade`` as the release step does: the SQLite file the
    dump makes, or a PostgreSQL database migrated to the dump's revision with the dump's rows
    copied into it."""
    path = tmp_path / "old.sqlite3"
    connection = sqlite3.connect(path)
    connection.executescript((OLD_RELEASE / "games.sql").read_text())
    connection.close()
    if request.param == "sqlite":
        yield from _served(f"sqlite:///{path}", clock)
        return
    with own_database(f"imtheboss_upgrade_{worker_id}_{os.getpid()}") as url:
        yield from _served(url, clock, copied_from=f"sqlite:///{path}")


def _served(url: str, clock, copied_from: str = "") -> Iterator[Flask]:
    """Migrate ``url`` to head (first to the old revision, with the rows of the SQLite file
    ``copied_from``, when given) and yield the app on it."""
    migrating = migration_app(url)
    with migrating.app_context():
        if copied_from:
            upgrade(directory=MIGRATIONS, revision=_revision_of(copied_from))
            copy_rows(copied_from)
        upgrade(directory=MIGRATIONS)
        db.session.remove()
        db.engine.dispose()
    app = make_app(url, clock)
    yield app
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def _revision_of(url: str) -> str:
    """The migration revision the database at ``url`` is at."""
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    finally:
        engine.dispose()


def copy_rows(source_url: str) -> None:
    """Every row of the database at ``source_url`` into the app's (PostgreSQL), table by table
    in the models' order, read and written through the models' column types (they hold on both
    databases); then each table's id sequence is moved past the copied ids."""
    source = sqlalchemy.create_engine(source_url)
    with source.connect() as read:  # one connection: SQLite's writers lock each other out
        found = sqlalchemy.inspect(read)
        held = set(found.get_table_names()) - {"alembic_version"}
        tables = [t for t in db.metadata.sorted_tables if t.name in held]
        assert {t.name for t in tables} == held, "a table of the old release is not in the models"
        for table in tables:
            names = {c["name"] for c in found.get_columns(table.name)}
            columns = [c for c in table.columns if c.name in names]
            rows = [dict(r._mapping) for r in read.execute(select(*columns))]
            if rows:
                db.session.execute(table.insert(), rows)
    source.dispose()
    for table in tables:
        for column in table.primary_key.columns:
            sequence = db.session.execute(
                text("SELECT pg_get_serial_sequence(:t, :c)"),
                {"t": table.name, "c": column.name},
            ).scalar_one()
            if sequence:
                top = db.session.execute(select(func.max(column))).scalar_one() or 0
                db.session.execute(text("SELECT setval(:s, :n)"), {"s": sequence, "n": top + 1})
    db.session.commit()


def comparable(state: dict[str, Any]) -> dict[str, Any]:
    """``state_to_json``'s dict without the stamps of the code that wrote it, and without
    ``bots`` (new in format 4) once it is checked to be all false."""
    out = {k: v for k, v in state.items() if k not in STAMPS}
    if "bots" in out:
        assert out.pop("bots") == [False] * len(out["players"])
    return out


def test_the_previous_releases_games_load_replay_and_go_on(upgraded, clock) -> None:
    """Every game of ``expected.json`` on the upgraded database: loaded as the old code had it,
    its old seat link opens its page, and an unfinished one takes its next command."""
    with upgraded.app_context():
        version = db.session.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        assert version == ScriptDirectory(MIGRATIONS).get_current_head()
        for expected in EXPECTED.values():
            check_loaded(expected)
    for expected in EXPECTED.values():
        check_seat_link(upgraded.test_client(), expected)
    with upgraded.app_context():
        for expected in EXPECTED.values():
            if expected["state"]["phase"] != "game_over":
                check_goes_on(clock, expected)


def check_loaded(expected: dict[str, Any]) -> None:
    """The game's row, events, state (``load_state`` and ``state_after`` its last event) and
    export (when recorded) are what the old code said (``expected``, one game's entry)."""
    gid = expected["game_id"]
    game = get_game(gid)
    assert (game.status, game.last_seq) == (expected["status"], expected["last_seq"]), gid
    count = db.session.execute(
        select(func.count()).select_from(EventRecord).where(EventRecord.game_id == gid)
    ).scalar_one()
    assert count == len(load_events(gid)) == expected["events"], gid
    old = comparable(expected["state"])
    assert comparable(state_to_json(load_state(game))) == old, gid
    assert comparable(state_to_json(state_after(game, game.last_seq))) == old, gid
    if "export" in expected:
        assert game_export(game) == expected["export"], gid


def check_seat_link(client: FlaskClient, expected: dict[str, Any]) -> None:
    """The old seat link signs ``client`` in and sends it to the game page, which shows the
    game (its title)."""
    gid = expected["game_id"]
    response = client.get(expected["seat_link"])
    assert response.status_code == 303, gid
    assert response.headers["Location"].endswith(f"/g/{gid}"), gid
    page = client.get(f"/g/{gid}")
    assert page.status_code == 200, gid
    assert expected["title"] in page.get_data(as_text=True), gid


def check_goes_on(clock, expected: dict[str, Any]) -> None:
    """A legal next command (a bot's move, or the server's timeout) is taken after the game's
    last event: events are appended and the state read back is the one ``submit`` made."""
    gid = expected["game_id"]
    before = load_state(get_game(gid))
    clock.now = _last_event_at(gid) + timedelta(minutes=1)
    seat, command = _next_command(before, clock.now)
    result = submit(gid, seat, command, "after-the-upgrade", clock.now)
    assert result.events and not result.duplicate, gid
    assert get_game(gid).last_seq == expected["last_seq"] + len(result.events), gid
    db.session.expire_all()
    after = state_to_json(load_state(get_game(gid)))
    assert after == state_to_json(result.state), gid
    assert after != state_to_json(before), gid


def _last_event_at(gid: str) -> datetime:
    """When the game's last event was stored (SQLite hands the time back without its zone)."""
    at = db.session.execute(
        select(func.max(EventRecord.created_at)).where(EventRecord.game_id == gid)
    ).scalar_one()
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _next_command(state: GameState, now: datetime) -> tuple[int | None, dict[str, Any]]:
    """``(seat, command)``: a ``SensibleBot``'s legal move of the first seat that has one, else
    the server's ``timeout`` (the game waits for a deadline: ``now`` is moved past it by the
    caller's clock, so it must be due)."""
    rng = random.Random(0)
    for seat in range(state.n):
        legal = legal_commands(state, seat)
        choice = SensibleBot().choose(state, seat, legal, rng) if legal else None
        if choice is not None:
            return seat, choice
    due = next_deadline(state)
    assert due is not None and due <= now, "nobody can act and no deadline is due"
    return None, {"do": "timeout"}
