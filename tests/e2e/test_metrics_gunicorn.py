"""``/metrics`` under gunicorn as the Procfile runs it (``--preload``, two workers) with
``PROMETHEUS_MULTIPROC_DIR``: whichever worker answers the scrape, it counts the requests both
workers served; the probes' access lines that answered fine are not written, others are."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import requests
from imtheboss.web import create_app
from imtheboss.web.models import db
from prometheus_client.parser import text_string_to_metric_families
from support.e2e import Process, free_port, wait_for
from support.postgres import own_database

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = 40


def _count(base: str, route: str) -> float:
    text = requests.get(f"{base}/metrics", timeout=20).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            wanted = {"route": route, "status": "200"}.items()
            if sample.name.endswith("requests_total") and wanted <= sample.labels.items():
                return sample.value
    return 0.0


def test_metrics_add_up_every_gunicorn_worker(tmp_path: Path) -> None:
    name = f"imtheboss_e2e_metrics_{os.getpid()}"
    with own_database(name) as url:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        config = {"SECRET_KEY": "s", "BASE_URL": base, "AUTO_MIGRATE": True, "TASKS": False}
        app = create_app({**config, "SQLALCHEMY_DATABASE_URI": url})
        (tmp_path / "prom").mkdir()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("IMTHEBOSS_", "OPERATOR", "REDIS", "PROMETHEUS"))
        }
        env.update(
            DATABASE_URL=url.replace("postgresql+psycopg://", "postgresql://"),
            SECRET_KEY="s",
            BASE_URL=base,
            IMTHEBOSS_INSTANCE=str(tmp_path),
            PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "prom"),
        )
        argv = [sys.executable, "-m", "gunicorn", "--preload", "--workers", "2"]
        argv += ["--bind", f"127.0.0.1:{port}", "imtheboss.web:create_app()"]
        web = Process("gunicorn", argv, env, ROOT, tmp_path / "web.log")
        web.start()
        try:
            wait_for(lambda: _up(base, web), 60, what="gunicorn to serve")
            for _ in range(REQUESTS):
                answer = requests.get(f"{base}/", timeout=20)
                assert answer.status_code == 200
            for _ in range(REQUESTS):
                assert requests.get(f"{base}/healthz", timeout=20).status_code == 200
            counts = {_count(base, "/") for _ in range(10)}
            assert counts == {REQUESTS + 1}  # and the one that saw it serve
            assert _count(base, "/healthz") == REQUESTS
            assert len(list((tmp_path / "prom").glob("counter_*.db"))) == 2  # both workers
            assert requests.get(f"{base}/readyz", timeout=20).status_code == 200
            log = web.text()
            assert "GET / HTTP" in log and "/healthz" not in log and "/metrics" not in log
        finally:
            web.stop()
            print(f"---- gunicorn log (tail) ----\n{web.tail(40)}")
            with app.app_context():
                db.session.remove()
                db.engine.dispose()


def _up(base: str, web: Process) -> bool:
    if not web.running:
        pytest.fail(f"gunicorn exited:\n{web.tail()}")
    try:
        return requests.get(f"{base}/", timeout=5).status_code == 200
    except requests.ConnectionError:
        return False
