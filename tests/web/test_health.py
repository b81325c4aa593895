"""``/healthz``, ``/readyz``, ``/metrics`` and the schema guard (docs/operations.md, "Health and
metrics"): real PostgreSQL (a database of the test's own for the schema), the embedded broker
in a temporary folder, a port where nothing listens for a server that is down."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask_migrate import upgrade
from imtheboss.web import create_app
from imtheboss.web.app.metrics import mark_sweep
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import set_status
from imtheboss.web.models import Deadline, db
from imtheboss.web.replies.apply import apply_reply
from prometheus_client.parser import text_string_to_metric_families
from support.api_client import Api
from support.logs import written
from support.postgres import own_database
from support.wait import free_port

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]
CONFIG = {"SECRET_KEY": "test-secret", "BASE_URL": "http://testserver", "TASKS": False}
ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS = str(Path(create_app.__code__.co_filename).parent / "migrations")


@pytest.fixture
def app_config(tmp_path: Path) -> dict[str, Any]:
    return {"INSTANCE_DIR": str(tmp_path), "BROKER_DIR": str(tmp_path / "broker")}


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def _scrape(client: Any, **kw: Any) -> dict[tuple[str, tuple], float]:
    answer = client.get("/metrics", **kw)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.mimetype == "text/plain"
    return _samples(answer.text)


def test_healthz_and_readyz_answer_200_when_all_is_up(client) -> None:
    assert client.get("/healthz").get_json() == {"status": "alive"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json() == {
        "status": "ready",
        "checks": {"database": "ok", "schema": "ok", "broker": "ok"},
    }


def test_readyz_answers_503_naming_the_database_when_it_is_down(tmp_path: Path) -> None:
    app = create_app(
        {
            **CONFIG,
            "SQLALCHEMY_DATABASE_URI": f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/x",
            "AUTO_MIGRATE": False,
            "INSTANCE_DIR": str(tmp_path),
        }
    )
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.get_json()["checks"] == {
        "database": "unreachable",
        "schema": "unknown",
        "broker": "ok",
    }
    seen = _scrape(client)  # the scrape still answers, and says so
    assert seen[("imtheboss_database_up", ())] == 0
    assert ("imtheboss_mail_pending", ()) not in seen


def test_readyz_answers_503_naming_the_broker_when_it_is_down(app) -> None:
    app.config["REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"
    ready = app.test_client().get("/readyz")
    assert ready.status_code == 503
    assert ready.get_json()["checks"] == {"database": "ok", "schema": "ok", "broker": "unreachable"}


def test_a_fresh_database_without_the_release_step_answers_503_not_500(
    worker_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"imtheboss_fresh_{worker_id}_{os.getpid()}".replace("-", "_")
    with own_database(name) as url, written() as log:
        settings = {
            **CONFIG,
            "SQLALCHEMY_DATABASE_URI": url,
            "AUTO_MIGRATE": False,
            "INSTANCE_DIR": str(tmp_path),
        }
        with monkeypatch.context() as release:  # the release step itself: no false alarm
            release.setattr(sys, "argv", ["/srv/venv/bin/flask", "--app", "x", "db", "upgrade"])
            create_app(settings)
        assert "not current" not in log.getvalue()
        app = create_app(settings)
        assert "database schema is not current: run the release step" in log.getvalue()
        client = app.test_client()
        api = client.post("/api/games", json={"title": "T", "players": []})
        assert api.status_code == 503 and api.headers["Retry-After"] == "60"
        assert api.get_json()["error"]["code"] == "schema_not_current"
        assert "not ready yet" in api.get_json()["error"]["message"]
        page = client.get("/new?lang=zh_Hans")
        assert page.status_code == 503 and "数据库" in page.text
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.get_json()["checks"]["schema"] == "behind"
        seen = _scrape(client)  # not a 500: the gauges say the release step is to run
        assert seen[("imtheboss_database_up", ())] == 1
        assert seen[("imtheboss_schema_current", ())] == 0
        assert client.get("/healthz").status_code == 200

        with app.app_context():  # the release step
            upgrade(directory=MIGRATIONS)
            db.engine.dispose()
        assert client.get("/readyz").status_code == 200
        assert client.get("/new").status_code == 200
        with app.app_context():
            db.engine.dispose()


def test_metrics_has_the_named_series_from_the_database(app, client, clock) -> None:
    with app.app_context():
        game = create_game("Watched", PLAYERS, creator_email="org@example.org")
        paused = create_game("Paused", PLAYERS).game_id  # its deadline waits for its resume
        for gid in (game.game_id, paused):
            db.session.add(
                Deadline(
                    game_id=gid, window_id="w1", kind="x", due_at=clock() - timedelta(minutes=2)
                )
            )
        db.session.commit()
        set_status(paused, "paused")
        mark_sweep(clock() - timedelta(seconds=30))
    clock.advance(seconds=90)
    seen = _scrape(client)
    assert seen[("imtheboss_mail_pending", ())] >= 1
    assert seen[("imtheboss_mail_oldest_pending_seconds", ())] == 90
    assert seen[("imtheboss_deadlines_overdue", ())] == 1
    assert seen[("imtheboss_sweep_age_seconds", ())] == 120
    assert seen[("imtheboss_queue_depth", (("queue", "mail"),))] == 0
    assert seen[("imtheboss_queue_depth", (("queue", "deadlines"),))] == 0
    assert seen[("imtheboss_broker_up", ())] == 1
    assert seen[("imtheboss_webhook_posts_failed", ())] == 0
    text = client.get("/metrics").text
    assert game.game_id not in text and "example.org" not in text
    assert all(token not in text for token in game.seat_tokens)


def test_metrics_counts_requests_by_route_template_submits_and_replies(app, client) -> None:
    with app.app_context():
        game = create_game("Counted", PLAYERS)
    route = (("method", "GET"), ("route", "/api/games/<game_id>"), ("status", "200"))
    before = _scrape(client)
    api = Api(app.test_client(), game.game_id)
    assert api.game(game.seat_tokens[0]).status_code == 200
    api.send(game.seat_tokens[0], {"do": "chat", "text": "hi"}, "chat-1")
    with app.app_context():
        assert apply_reply(b"Subject: hello\r\n\r\nhi\r\n").status == "refused"
    after = _scrape(client)
    key = ("imtheboss_http_requests_total", route)
    assert after[key] - before.get(key, 0) == 1
    submits = ("imtheboss_submit_seconds_count", ())
    assert after[submits] - before.get(submits, 0) == 1
    replies = ("imtheboss_replies_total", (("outcome", "refused"), ("reason", "not_ours")))
    assert after[replies] - before.get(replies, 0) == 1
    text = client.get("/metrics").text
    assert game.game_id not in text and game.seat_tokens[0] not in text


def test_metrics_is_for_this_host_or_the_operator_token(app) -> None:
    outside = app.test_client()
    outside.environ_base["REMOTE_ADDR"] = "203.0.113.9"
    assert outside.get("/metrics").status_code == 403
    local = app.test_client()
    assert local.get("/metrics", headers={"X-Forwarded-For": "203.0.113.9"}).status_code == 403
    app.config["OPERATOR_TOKEN"] = "operator-secret-123"
    assert outside.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    _scrape(outside, headers={"Authorization": "Bearer operator-secret-123"})


def test_the_alert_rules_are_valid_and_name_series_that_metrics_has(client) -> None:
    """``promtool`` (Debian's prometheus; ``.ci/run`` installs it) checks the rules file and
    lints the exposition; every ``imtheboss_`` series an alert reads is one ``/metrics`` has."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: apt-get install prometheus"
    rules = ROOT / "deploy" / "alerts.yml"
    checked = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    exposition = client.get("/metrics").data
    linted = subprocess.run([promtool, "check", "metrics"], input=exposition, capture_output=True)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    families = {f.name for f in text_string_to_metric_families(exposition.decode())}
    read = set(re.findall(r"\b(imtheboss_[a-z_]+)", rules.read_text()))
    assert read and read <= families | {f"{name}_total" for name in families}
