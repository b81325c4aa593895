"""``imtheboss doctor`` (``imtheboss.web.app.doctor``): stuck mail, overdue deadlines and failing
webhooks across games, on real PostgreSQL; the command's output and exit codes."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from imtheboss.web.app.doctor import findings
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import set_status
from imtheboss.web.models import Deadline, Notification, db
from imtheboss.web.outbound import webhooks
from imtheboss.web.outbound.outbox import OutboundPost
from imtheboss.worker.cli import main
from sqlalchemy import update
from support.wait import free_port

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {"WEBHOOK_ALLOW_LOOPBACK": True}


def _troubles(app: Any, clock: Any) -> tuple[str, str]:
    """A game with old pending mail and an overdue deadline; another with a failing webhook."""
    with app.app_context():
        stuck = create_game("Stuck", PLAYERS, creator_email="org@example.org").game_id
        fine = create_game("Hooked", PLAYERS).game_id
        paused = create_game("Paused", PLAYERS).game_id  # its deadline waits for its resume
        for gid in (stuck, paused):
            db.session.add(Deadline(game_id=gid, window_id="w1", kind="x", due_at=clock()))
        hook, _secret = webhooks.add_hook(fine, "json", "https://localhost/h", "en", "UTC")
        db.session.add(
            OutboundPost(
                game_id=fine, webhook_id=hook, kind="deal", body={}, dedupe_key="d1",
                state="failed", attempts=8, tried_at=clock(), error="timeout", created_at=clock(),
            )
        )  # fmt: skip
        db.session.execute(
            update(Notification)
            .where(Notification.game_id.in_((fine, paused)))
            .values(email_state="sent")
        )
        db.session.commit()
        set_status(paused, "paused")
    return stuck, fine


def test_doctor_lists_what_is_stuck_and_not_what_is_fine(app, clock) -> None:
    stuck, fine = _troubles(app, clock)
    with app.app_context():
        assert findings(clock(), timedelta(minutes=15), timedelta(seconds=60)) == [
            f for f in findings(clock(), timedelta(minutes=15), timedelta(seconds=60))
            if f.what == "webhook"
        ]  # fmt: skip
        found = findings(clock.advance(hours=1), timedelta(minutes=15), timedelta(seconds=60))
    rows = {(f.what, f.game_id): f for f in found}
    assert set(rows) == {("mail", stuck), ("deadline", stuck), ("webhook", fine)}
    assert rows["mail", stuck].detail == "pending" and rows["mail", stuck].title == "Stuck"
    assert rows["deadline", stuck].count == 1
    assert rows["webhook", fine].detail.endswith(": timeout")


def test_the_doctor_command_prints_and_exits_1_when_something_is_stuck(
    app, clock, pg_url, monkeypatch, capsys
) -> None:
    stuck, fine = _troubles(app, clock)  # the command runs at the real time: months later
    monkeypatch.setenv("DATABASE_URL", pg_url.replace("postgresql+psycopg://", "postgresql://"))
    monkeypatch.setenv("SECRET_KEY", "test-secret")
    monkeypatch.setenv("BASE_URL", "http://testserver")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "stuck mail: 1 game(s)" in out and f"{stuck} 'Stuck'" in out
    assert "overdue deadlines: " in out and "failing webhooks: 1 game(s)" in out
    assert "example.org" not in out
    assert main(["doctor", "--json"]) == 1
    assert {row["what"] for row in json.loads(capsys.readouterr().out)} == {
        "mail", "deadline", "webhook"
    }  # fmt: skip
    with app.app_context():
        db.session.execute(update(Deadline).values(state="done"))
        db.session.execute(update(Notification).values(email_state="sent"))
        db.session.execute(update(OutboundPost).values(state="sent", error=None))
        db.session.commit()
    assert main(["doctor"]) == 0
    assert "nothing stuck" in capsys.readouterr().out


def test_the_doctor_command_exits_2_when_the_database_is_not_there(monkeypatch, capsys) -> None:
    monkeypatch.setenv("DATABASE_URL", f"postgresql://postgres@127.0.0.1:{free_port()}/x")
    monkeypatch.setenv("SECRET_KEY", "test-secret")
    monkeypatch.setenv("BASE_URL", "http://testserver")
    assert main(["doctor"]) == 2
    assert capsys.readouterr().err.startswith("imtheboss doctor: ")
    monkeypatch.delenv("DATABASE_URL")  # no database named: it does not look at one of its own
    assert main(["doctor"]) == 2
    assert "DATABASE_URL is not set" in capsys.readouterr().err
