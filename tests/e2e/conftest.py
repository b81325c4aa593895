"""Browser test fixtures: the app served for real by werkzeug in a background thread (on the
test PostgreSQL database of tests/conftest.py) or by gunicorn (the Procfile's web command) in a
process of its own, and Debian's chromium driven by Playwright.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (``.ci/run``
installs it); the browser tests are skipped with a clear reason when it is missing.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from support.e2e import Process, free_port, wait_for
from werkzeug.serving import make_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
ROOT = Path(__file__).resolve().parents[2]
# Settings of the environment the tests run in that must not reach a server the test starts.
NOT_INHERITED = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "BASE_URL", "TRUSTED_PROXIES")
NOT_INHERITED_PREFIXES = ("SMTP_", "MAIL_", "OPERATOR", "IMTHEBOSS_", "FORWARDED_ALLOW_IPS")


@pytest.fixture
def live_server(app) -> Iterator[str]:
    """The app on a free local port, served by werkzeug's threaded server; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


@pytest.fixture
def gunicorn(app, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Starts gunicorn serving ``imtheboss.web:create_app()`` on the test database (the ``app``
    fixture's, emptied for this test) with no broker but the embedded one in ``tmp_path``:
    ``gunicorn(BASE_URL=..., TRUSTED_PROXIES="1")`` takes settings as environment variables and
    returns the server's own address ``http://127.0.0.1:<port>``. Stopped after the test."""
    started: list[Process] = []

    def start(**settings: str) -> str:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in NOT_INHERITED and not k.startswith(NOT_INHERITED_PREFIXES)
        }
        env.update(
            DATABASE_URL=app.config["SQLALCHEMY_DATABASE_URI"],
            SECRET_KEY=app.config["SECRET_KEY"],
            BASE_URL=base,
            IMTHEBOSS_INSTANCE=str(tmp_path / f"instance-{port}"),
        )
        env.update(settings)
        # As the Procfile's web command, with one worker and no control socket (one per
        # user's home: tests running at once would share it).
        argv = [sys.executable, "-m", "gunicorn", "--preload", "--workers", "1"]
        argv += ["--no-control-socket", "--access-logfile", "-"]
        argv += ["--bind", f"127.0.0.1:{port}", "imtheboss.web:create_app()"]
        process = Process("gunicorn", argv, env, ROOT, tmp_path / f"gunicorn-{port}.log")
        started.append(process)
        process.start()
        wait_for(lambda: serving(base, process), 60, what="gunicorn to serve")
        return base

    try:
        yield start
    finally:
        for process in started:
            process.stop()


def serving(base: str, process: Process) -> bool:
    """True once ``base`` answers its home page; fails the test if ``process`` exited."""
    if not process.running:
        pytest.fail(f"{process.name} exited:\n{process.tail()}")
    try:
        return requests.get(f"{base}/", timeout=2).status_code == 200
    except (requests.ConnectionError, requests.Timeout):
        return False


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless chromium for the session (each player gets a context of its own)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def screenshots() -> Path:
    """Where the browser tests save their screenshots (gitignored)."""
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
