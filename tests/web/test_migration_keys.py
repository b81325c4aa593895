"""The migration that scopes idempotency keys, run on a database holding commands of the
schema before it, on PostgreSQL and on SQLite (the embedded default): existing keys land in the
scope of their seat (the server's in ``SERVER_SCOPE``), and after it one key may be used once
per scope."""

from __future__ import annotations

import pytest
from flask_migrate import upgrade
from imtheboss.web.models import SERVER_SCOPE, db
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from support.migrations import AT, MIGRATIONS, insert_game, migration_app

BEFORE = "5c1d8e2f7a90"  # the revision before keys had scopes


def _command(seat: int | None, key: str, scope: int | None = None) -> dict:
    row = {"g": "g1", "seat": seat, "key": key, "body": '{"do": "chat"}', "at": AT}
    return row if scope is None else {**row, "scope": scope}


def test_keys_of_the_old_schema_move_into_their_seats_scope(migration_database: str) -> None:
    app = migration_app(migration_database)
    insert = (
        "INSERT INTO commands (game_id, seat, idempotency_key, body, first_seq, last_seq,"
        " created_at) VALUES (:g, :seat, :key, :body, 1, 1, :at)"
    )
    with app.app_context():
        upgrade(directory=MIGRATIONS, revision=BEFORE)
        insert_game()
        for row in (_command(0, "a"), _command(None, "timeout:w0")):
            db.session.execute(text(insert), row)
        db.session.commit()
        upgrade(directory=MIGRATIONS)
        rows = db.session.execute(
            text("SELECT seat, scope, idempotency_key FROM commands ORDER BY id")
        ).all()
        assert [tuple(r) for r in rows] == [(0, 0, "a"), (None, SERVER_SCOPE, "timeout:w0")]
        with_scope = insert.replace("created_at)", "created_at, scope)").replace(
            ":at)", ":at, :scope)"
        )
        db.session.execute(text(with_scope), _command(1, "a", 1))  # another seat, same key
        db.session.execute(text(with_scope), _command(2, "timeout:w0", 2))
        db.session.commit()
        with pytest.raises(IntegrityError):  # the same key twice in one scope
            db.session.execute(text(with_scope), _command(1, "a", 1))
            db.session.commit()
        db.session.rollback()
        db.session.remove()
        db.engine.dispose()
