"""The migration that finds deadlines and mail by partial indexes, on PostgreSQL and on SQLite
(the embedded default): run on a database holding rows of the schema before it, it keeps them,
adds ``remind_at`` and the indexes (only open deadlines, only unsettled mail), and the queries
of the deadlines workers and the sweep read them (PostgreSQL's plan names the index); the
downgrade gives the schema before back."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime

import sqlalchemy
from flask_migrate import downgrade, upgrade
from imtheboss.web.models import db
from sqlalchemy import text
from support.migrations import AT, MIGRATIONS, insert_game, migration_app

BEFORE = "8d4b2a6c1e3f"  # the revision before the partial indexes
NEW = {"ix_deadlines_open_due", "ix_deadlines_open_remind"}


def _old_rows() -> None:
    """A game with an open and a done deadline and a pending notification, as the schema
    before the migration holds them."""
    insert_game()
    for window, state in (("w0", "done"), ("w1", "open")):
        db.session.execute(
            text(
                "INSERT INTO deadlines (game_id, window_id, kind, due_at, state, opened_at,"
                " reminded) VALUES ('g1', :w, 'turn', :at, :state, :at, false)"
            ),
            {"w": window, "state": state, "at": AT},
        )
    db.session.execute(
        text(
            "INSERT INTO notifications (game_id, seat_index, kind, body, text, dedupe_key,"
            " urgent, seq, created_at, email_state, attempts) VALUES ('g1', 0, 'your_turn',"
            " '{}', 't', 'k', true, 0, :at, 'pending', 0)"
        ),
        {"at": AT},
    )
    db.session.commit()


def _indexes(table: str) -> dict[str, dict]:
    return {i["name"]: i for i in sqlalchemy.inspect(db.engine).get_indexes(table)}


def _plan(statement) -> str:
    """The database's plan for ``statement`` (PostgreSQL's with sequential scans off: a tiny
    table would be scanned anyway): which index it can read."""
    compiled = statement.compile(dialect=db.engine.dialect)
    params = compiled.construct_params()
    with db.engine.connect() as conn:
        if db.engine.dialect.name == "postgresql":
            conn.exec_driver_sql("SET enable_seqscan = off")
            rows = conn.exec_driver_sql("EXPLAIN " + str(compiled), params).all()
        else:
            ordered = tuple(params[name] for name in compiled.positiontup)
            rows = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + str(compiled), ordered).all()
        conn.rollback()
    return "\n".join(str(row[-1]) for row in rows)


def test_the_migration_keeps_the_rows_and_adds_the_partial_indexes(
    migration_database: str,
) -> None:
    importlib.import_module("imtheboss.worker.celery_app")
    from imtheboss.web.mail import reminders
    from imtheboss.worker import delivery, firing, tasks

    app = migration_app(migration_database)
    with app.app_context():
        upgrade(directory=MIGRATIONS, revision=BEFORE)
        _old_rows()
        upgrade(directory=MIGRATIONS)
        rows = db.session.execute(
            text("SELECT window_id, state, remind_at FROM deadlines ORDER BY window_id")
        ).all()
        assert [tuple(r) for r in rows] == [("w0", "done", None), ("w1", "open", None)]
        db.session.rollback()
        deadlines, notifications = _indexes("deadlines"), _indexes("notifications")
        assert deadlines.keys() >= NEW and "ix_deadlines_due" not in deadlines
        assert {"ix_notifications_pending", "ix_notifications_sending"} <= notifications.keys()
        now = datetime.now(UTC)
        assert "ix_deadlines_open_due" in _plan(firing.claim_statement(now, 10))
        assert any(name in _plan(reminders.plan_statement()) for name in NEW)
        assert "ix_deadlines_open_remind" in _plan(reminders.claim_statement(now, 10))
        assert "ix_notifications_pending" in _plan(tasks.requeue_statement(now))
        assert "ix_notifications_sending" in _plan(delivery.lost_statement(now))
        assert reminders.plan_reminders() == 1  # the open row, found by its index
        downgrade(directory=MIGRATIONS, revision=BEFORE)
        deadlines = _indexes("deadlines")
        assert "ix_deadlines_due" in deadlines and not NEW & deadlines.keys()
        inspector = sqlalchemy.inspect(db.engine)
        assert "remind_at" not in {c["name"] for c in inspector.get_columns("deadlines")}
        assert "queued_at" not in {c["name"] for c in inspector.get_columns("notifications")}
        count = db.session.execute(text("SELECT count(*) FROM deadlines")).scalar_one()
        assert count == 2
        db.session.remove()
        db.engine.dispose()
