"""The web app as the tests make it (``tests/conftest.py``'s ``app`` fixture, and tests that need
a second app on the same database)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from flask import Flask
from imtheboss.web import create_app


def make_app(database_url: str, clock: Callable[[], datetime], **config: Any) -> Flask:
    """An app of the tests on ``database_url`` with ``clock``: CSRF on (as in production), no
    worker tasks (tests/worker runs a real worker), abuse limits off; ``config`` on top."""
    return create_app(
        {
            "SQLALCHEMY_DATABASE_URI": database_url,
            "SECRET_KEY": "test-secret",
            "CLOCK": clock,
            "AUTO_MIGRATE": False,
            "TESTING": True,
            "BASE_URL": "http://testserver",
            "TASKS": False,
            "RATELIMIT_ENABLED": False,  # tests of the limits turn them on (``app_config``)
            **config,
        }
    )


def client_at(app: Flask, address: str) -> Any:
    """A test client whose requests come from ``address`` (``REMOTE_ADDR``)."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client
