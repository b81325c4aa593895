"""Browser test fixtures: the app served for real by werkzeug in a background thread (on the
test PostgreSQL database of tests/conftest.py), and Debian's chromium driven by Playwright.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (``.ci/run``
installs it); the browser tests are skipped with a clear reason when it is missing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
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
