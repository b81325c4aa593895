"""When the database cannot be reached the server answers 503 with ``Retry-After`` and plain
words (a page or JSON), changes nothing, logs no secret, and serves again once it is back.

Real PostgreSQL: a database of this test's own that stops taking connections (its connections
terminated, ``ALLOW_CONNECTIONS false``), and a port where nothing listens."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from imtheboss.web import create_app
from imtheboss.web.games.create import create_game
from imtheboss.web.models import EventRecord, db
from imtheboss.web.store import outage
from sqlalchemy import create_engine, func, select, text
from support.api_client import Api
from support.logs import written
from support.postgres import SERVER, allow_connections, own_database, refuse_connections
from support.wait import free_port

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]
MESSAGE = "cannot reach its database right now; nothing was changed; try again in a minute"
PAGE_MESSAGE = "The game is unavailable for a moment: try again in a minute."
CONFIG = {"SECRET_KEY": "test-secret", "BASE_URL": "http://testserver", "TASKS": False}


@dataclass
class Database:
    name: str
    app: object

    def go_away(self) -> None:
        refuse_connections(self.name)

    def come_back(self) -> None:
        allow_connections(self.name)


@pytest.fixture
def database(worker_id: str) -> Iterator[Database]:
    """A migrated database of its own and an app on it (dropped after the test)."""
    name = f"imtheboss_down_{worker_id}_{os.getpid()}".replace("-", "_")
    with own_database(name) as url:
        app = create_app({**CONFIG, "SQLALCHEMY_DATABASE_URI": url, "AUTO_MIGRATE": True})
        handle = Database(name, app)
        try:
            yield handle
        finally:
            handle.come_back()
            with app.app_context():
                db.session.remove()
                db.engine.dispose()


def _events(app) -> int:
    with app.app_context():
        return db.session.execute(select(func.count()).select_from(EventRecord)).scalar_one()


def _is_503(answer, json: bool) -> None:
    assert answer.status_code == 503, answer.text[:300]
    assert answer.headers["Retry-After"] == "60"
    if json:
        assert answer.get_json()["error"]["code"] == "database_unavailable"
        assert MESSAGE in answer.get_json()["error"]["message"]
    else:
        assert answer.mimetype == "text/html" and PAGE_MESSAGE in answer.text


def test_a_database_that_goes_away_answers_503_and_nothing_changes(database: Database) -> None:
    app = database.app
    with app.app_context():
        created = create_game("Down", PLAYERS)
    gid, token = created.game_id, created.seat_tokens[0]
    browser = app.test_client()
    assert browser.get(f"/g/{gid}/s/{token}").status_code == 303
    assert browser.get(f"/g/{gid}").status_code == 200
    api = Api(app.test_client(), gid)
    before = _events(app)

    database.go_away()
    with written() as out:
        _is_503(browser.get(f"/g/{gid}"), json=False)
        _is_503(api.game(token), json=True)
        _is_503(api.send(token, {"do": "chat", "text": "hello"}, "chat-1"), json=True)
        link = app.test_client().get(f"/g/{gid}/s/{token}")
        _is_503(link, json=False)
    chinese = browser.get(f"/g/{gid}?lang=zh_Hans")
    assert chinese.status_code == 503 and "游戏暂时无法使用" in chinese.text

    lines = out.getvalue().splitlines()
    assert token not in out.getvalue() and "Traceback" not in out.getvalue()
    warning = [line for line in lines if f"database unreachable on GET /g/{gid}/s/…" in line]
    assert len(warning) == 1 and f"req={link.headers['X-Request-Id']}" in warning[0]

    database.come_back()
    assert browser.get(f"/g/{gid}").status_code == 200
    assert _events(app) == before  # the chat sent while it was away was not taken


def test_a_database_server_that_is_not_there_answers_503() -> None:
    app = create_app(
        {
            **CONFIG,
            "SQLALCHEMY_DATABASE_URI": f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/x",
            "AUTO_MIGRATE": False,
        }
    )
    client = app.test_client()
    assert client.get("/").status_code == 200  # pages without the database still work
    _is_503(client.get("/g/Abc123def456"), json=False)
    _is_503(Api(client, "Abc123def456").game("x" * 32), json=True)
    assert re.fullmatch(r"[0-9a-f]{16}", client.get("/g/Abc123def456").headers["X-Request-Id"])


def _error_of(url: str, statement: str) -> Exception:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text(statement))
    except Exception as exc:  # the error is what the test looks at
        return exc
    finally:
        engine.dispose()
    pytest.fail(f"{statement} did not fail on {url}")


def test_only_errors_of_reaching_the_database_count_as_unreachable(tmp_path) -> None:
    """A wrong query is a 500 (a bug to fix), not a 503 (wait and retry)."""
    pg = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/x"
    assert outage.database_unreachable(_error_of(pg, "SELECT 1"))
    missing = f"sqlite:///{tmp_path}/no/such/folder/db.sqlite3"
    assert outage.database_unreachable(_error_of(missing, "SELECT 1"))
    assert not outage.database_unreachable(_error_of("sqlite://", "SELECT * FROM nothing"))
    server = SERVER + "/postgres"
    assert not outage.database_unreachable(_error_of(server, "SELECT * FROM nothing"))
    assert not outage.database_unreachable(_error_of(server, "SELECT 1/0"))
