"""The schema is made by the release step (the Procfile's ``release`` line), not by every web
process as it starts; only the embedded default (``serve``) migrates on start. SQLite files of
the test's own, in its temporary folder."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy
from imtheboss.web import create_app
from imtheboss.web.models import db


def tables_after_start(tmp_path: Path) -> set[str]:
    """The tables of a fresh database after ``create_app`` started on it."""
    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "SECRET_KEY": "s", "BASE_URL": "http://t"})
    with app.app_context():
        db.engine.dispose()
    engine = sqlalchemy.create_engine(url)
    try:
        return set(sqlalchemy.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_a_web_start_leaves_the_schema_to_the_release_step(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("IMTHEBOSS_INSTANCE", str(tmp_path))
    monkeypatch.delenv("IMTHEBOSS_EMBEDDED", raising=False)
    assert tables_after_start(tmp_path) == set()


def test_the_embedded_default_migrates_on_start(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("IMTHEBOSS_INSTANCE", str(tmp_path))
    monkeypatch.setenv("IMTHEBOSS_EMBEDDED", "1")
    assert {"games", "seats", "events", "alembic_version"} <= tables_after_start(tmp_path)
