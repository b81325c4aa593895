"""Shared fixtures of the web and browser tests (tests/web, tests/e2e): a PostgreSQL database of
the tests' own (created for the session, dropped after it; one per xdist worker), an app with an
injectable clock, and a test client. tests/worker has its own (a real worker, Redis, SMTP).

``IMTHEBOSS_TEST_PG`` overrides the server URL (default ``postgresql+psycopg://postgres@127.0.0.1``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from imtheboss.web import create_app
from imtheboss.web.models import db
from sqlalchemy import text
from support.app import make_app
from support.postgres import own_database

TABLES = (
    "mail_outbox, notifications, deadlines, events, commands, seats, games, players, sign_in_links"
)


class Clock:
    """An injectable clock: ``clock()`` is the time, ``advance(**kw)`` moves it."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> datetime:
        self.now += timedelta(**kwargs)
        return self.now


@pytest.fixture(scope="session")
def pg_url(worker_id: str) -> Iterator[str]:
    """A fresh database ``imtheboss_test_<worker>_<pid>`` for this test session (the pid: test
    sessions running at once on one server must not drop each other's database)."""
    name = f"imtheboss_test_{worker_id}_{os.getpid()}".replace("-", "_")
    with own_database(name) as url:
        yield url


@pytest.fixture(scope="session")
def worker_id(request: pytest.FixtureRequest) -> str:
    """The xdist worker id (``master`` without xdist)."""
    return getattr(request.config, "workerinput", {}).get("workerid", "master")


@pytest.fixture(scope="session")
def _migrated(pg_url: str) -> str:
    create_app(  # runs the migrations (as the release step does)
        {
            "SQLALCHEMY_DATABASE_URI": pg_url,
            "SECRET_KEY": "test-secret",
            "BASE_URL": "http://t",
            "AUTO_MIGRATE": True,
        }
    )
    return pg_url


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app_config() -> dict[str, Any]:
    """Config on top of ``make_app``'s for the ``app`` fixture; a test module overrides this
    fixture to change it (e.g. ``{"RATELIMIT_ENABLED": True}``)."""
    return {}


@pytest.fixture
def app(_migrated: str, clock: Clock, app_config: dict[str, Any]):
    """The app on the test database (``make_app`` with ``app_config``), emptied before each
    test."""
    application = make_app(_migrated, clock, **app_config)
    with application.app_context():
        db.session.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
        db.session.commit()
    yield application
    with application.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app):
    return app.test_client()
