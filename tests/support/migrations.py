"""Running the migrations on a database of the test's own, PostgreSQL or SQLite (the embedded
default), holding rows of an older schema (``tests/web/conftest.py``'s ``migration_database``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from flask import Flask
from imtheboss.web import create_app
from imtheboss.web.models import db
from sqlalchemy import text

MIGRATIONS = str(Path(__file__).resolve().parents[2] / "web" / "migrations")
AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def migration_app(database: str) -> Flask:
    """An app on ``database`` that leaves the schema to the test (``flask_migrate.upgrade``)."""
    return create_app(
        {
            "SQLALCHEMY_DATABASE_URI": database,
            "SECRET_KEY": "s",
            "BASE_URL": "http://t",
            "AUTO_MIGRATE": False,
            "TASKS": False,
        }
    )


def insert_game(game_id: str = "g1") -> None:
    """A game row as every schema so far holds it (no commit)."""
    db.session.execute(
        text(
            "INSERT INTO games (id, title, created_at, status, settings, engine_version,"
            " last_seq, snapshot_seq, admin_token_hash, creator_email) VALUES (:id, 't',"
            " :at, 'active', '{}', 1, 0, 0, :id, '')"
        ),
        {"id": game_id, "at": AT},
    )
