"""Fixtures of the web tests beyond tests/conftest.py: ``world``, two games for the bad-input
tests and the fuzz test (the first in a running negotiation); ``game``, the known deal of
tests/support/deal.py with a signed-in client per seat; ``migration_database``, an empty
database of the test's own for the migration tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from imtheboss.web import create_app
from imtheboss.web.games.create import create_game
from imtheboss.web.models import db
from support.api_client import World, find_deal_plan
from support.deal import PLAYERS, find_setup
from support.postgres import own_database


@pytest.fixture
def world(app, client) -> World:
    """Game ``gid`` with a deal opened by ``boss`` (``other`` may offer ``offer_card``), and
    ``other_gid``, a second game with tokens of its own."""
    plan = find_deal_plan()
    with app.app_context():
        created = create_game("bad input", PLAYERS, seed=plan.seed)
        second = create_game("another", PLAYERS)
    w = World(
        client,
        created.game_id,
        created.seat_tokens,
        created.admin_token,
        plan.boss,
        plan.provider,
        second.game_id,
        second.seat_tokens,
    )
    w.offer_card = plan.offer_card
    for key, cmd in (
        ("marker", {"do": "place_marker", "space": plan.space}),
        ("open", {"do": "open_deal"}),
    ):
        response = w.cmd(cmd, plan.boss, key)
        assert response.status_code == 201, response.get_json()
    return w


@pytest.fixture
def game(app):
    """A 3-player game made by the service with a known seed; one signed-in client per seat."""
    setup = find_setup()
    with app.app_context():
        created = create_game("Test deal", PLAYERS, seed=setup.seed)
    clients = []
    for token in created.seat_tokens:
        client = app.test_client()
        response = client.get(f"/g/{created.game_id}/s/{token}")
        assert response.status_code == 303
        assert response.headers["Location"].endswith(f"/g/{created.game_id}")
        clients.append(client)
    return created, setup, clients


@pytest.fixture(params=["postgresql", "sqlite"])
def migration_database(request, tmp_path: Path, worker_id: str):
    """The URL of an empty database of the test's own: PostgreSQL (dropped after the test), or
    a SQLite file in its temporary folder (the embedded default)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.sqlite3'}"
        return
    with own_database(f"imtheboss_migrate_{worker_id}_{os.getpid()}") as url:
        yield url


@pytest.fixture
def sqlite_app(tmp_path, clock) -> Iterator:
    """The app on a SQLite file of the test's own (the embedded default), no worker tasks."""
    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/games.sqlite3",
            "SECRET_KEY": "test-secret",
            "BASE_URL": "http://testserver",
            "TASKS": False,
            "AUTO_MIGRATE": True,
            "CLOCK": clock,
            "RATELIMIT_ENABLED": False,
        }
    )
    yield app
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
