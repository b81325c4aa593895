"""gunicorn's logs for real: secret-link requests that fail (a page whose query fails, the
database gone) leave no token, signed link, bearer token or SQL parameter in the access or error
log, and every line of a request carries that request's id.

gunicorn runs as the Procfile's ``web`` does (``--preload``, two workers) on a PostgreSQL database
this test creates: from the repository (it reads ``gunicorn.conf.py`` there) and from another
folder without it (an installed wheel), where the app adopts gunicorn's own handlers.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import requests
from imtheboss.web import create_app
from imtheboss.web.games.basics import hash_token
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import db
from imtheboss.web.players.links import seat_link
from support.e2e import Process, free_port, wait_for
from support.postgres import allow_connections, own_database, refuse_connections

ROOT = Path(__file__).resolve().parents[2]
SECRET = "e2e-gunicorn-logs-secret"
PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]
# An operator's access format that even logs the Authorization header: it must come out redacted.
ACCESS_FORMAT = '%(h)s "%(r)s" %(s)s auth="%({authorization}i)s"'


@dataclass
class Server:
    base: str
    name: str  # the database
    psycopg_url: str
    web: Process
    gid: str
    token: str
    mail_link: str

    def get(self, path: str, request_id: str | None = None, **headers: str) -> requests.Response:
        if request_id:
            headers["X-Request-Id"] = request_id
        return requests.get(self.base + path, headers=headers, allow_redirects=False, timeout=20)

    def sql(self, statement: str) -> None:
        with psycopg.connect(self.psycopg_url, autocommit=True) as conn:
            conn.execute(statement)


@pytest.fixture(params=["gunicorn.conf.py", "no config file"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    name = f"imtheboss_e2e_logs_{os.getpid()}"
    with own_database(name) as url:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        app = create_app(
            {
                "SQLALCHEMY_DATABASE_URI": url,
                "SECRET_KEY": SECRET,
                "BASE_URL": base,
                "AUTO_MIGRATE": True,
                "TASKS": False,
            }
        )
        with app.app_context():
            created = create_game("Logs", PLAYERS)
            mail_link = seat_link(created.game_id, seats_of(created.game_id)[1])
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SMTP_", "MAIL_", "CELERY", "IMTHEBOSS_", "OPERATOR", "REDIS"))
        }
        env.update(
            DATABASE_URL=url.replace("postgresql+psycopg://", "postgresql://"),
            SECRET_KEY=SECRET,
            BASE_URL=base,
            IMTHEBOSS_INSTANCE=str(tmp_path),
        )
        argv = [sys.executable, "-m", "gunicorn", "--preload", "--workers", "2"]
        argv += ["--bind", f"127.0.0.1:{port}", "--access-logformat", ACCESS_FORMAT]
        if request.param == "gunicorn.conf.py":
            cwd = ROOT
        else:
            cwd = tmp_path
            argv += ["--access-logfile", "-"]
        web = Process(
            "gunicorn", [*argv, "imtheboss.web:create_app()"], env, cwd, tmp_path / "web.log"
        )
        web.start()
        psycopg_url = url.replace("postgresql+psycopg://", "postgresql://")
        handle = Server(base, name, psycopg_url, web, created.game_id, created.seat_tokens[0],
                        mail_link.removeprefix(base))  # fmt: skip
        try:
            wait_for(lambda: _serves(handle), 60, what="gunicorn to serve")
            yield handle
        finally:
            allow_connections(name)
            web.stop()
            print(f"---- gunicorn log (tail) ----\n{web.tail(40)}")
            with app.app_context():
                db.session.remove()
                db.engine.dispose()


def _serves(server: Server) -> bool:
    if not server.web.running:
        pytest.fail(f"gunicorn exited:\n{server.web.tail()}")
    try:
        return server.get("/").status_code == 200
    except requests.ConnectionError:
        return False


def _lines_of(text: str, request_id: str) -> list[str]:
    return [line for line in text.splitlines() if f"req={request_id}" in line]


def test_failing_secret_link_requests_log_no_secret_and_carry_their_request_id(server: Server):
    gid, token, bearer = server.gid, server.token, {"Authorization": f"Bearer {server.token}"}
    assert server.get(f"/g/{gid}/s/{token}").status_code == 303

    # A page whose query fails: the seat's row cannot be read.
    server.sql("ALTER TABLE seats RENAME COLUMN locale TO locale_gone")
    broken = server.get(f"/g/{gid}/s/{token}", "e2e-broken-0001")
    assert (broken.status_code, broken.headers["X-Request-Id"]) == (500, "e2e-broken-0001")
    mail = server.get(server.mail_link)
    api = server.get(f"/api/games/{gid}", **bearer)
    assert (mail.status_code, api.status_code) == (500, 500)
    server.sql("ALTER TABLE seats RENAME COLUMN locale_gone TO locale")

    # The database goes away.
    refuse_connections(server.name)
    down = server.get(f"/g/{gid}/s/{token}", "e2e-down-0001")
    assert (down.status_code, down.headers["Retry-After"]) == (503, "60")
    assert server.get(f"/api/games/{gid}", **bearer).status_code == 503
    allow_connections(server.name)
    assert server.get(f"/g/{gid}/s/{token}").status_code == 303
    server.web.stop()
    text = server.web.text()

    # Nothing secret in either log, though the failures were logged with their tracebacks.
    signed = server.mail_link.rsplit("/", 1)[1]
    for secret in (token, signed, hash_token(token), "amy@example.org"):
        assert secret not in text
    assert "[parameters:" not in text and "SQL parameters hidden" in text
    assert f"unexpected error on GET /g/{gid}/s/…" in text and "UndefinedColumn" in text
    assert 'auth="Bearer …"' in text

    # Every line of a request carries its id: the error or warning, and the access line.
    lines = _lines_of(text, "e2e-broken-0001")
    assert len(lines) == 2, lines
    assert f"unexpected error on GET /g/{gid}/s/…" in lines[0] and "[ERROR]" in lines[0]
    assert f'"GET /g/{gid}/s/… HTTP/1.1" 500' in lines[1]
    lines = _lines_of(text, "e2e-down-0001")
    assert len(lines) == 2, lines
    assert f"database unreachable on GET /g/{gid}/s/…: connection failed" in lines[0]
    assert "[WARNING]" in lines[0]
    assert f'"GET /g/{gid}/s/… HTTP/1.1" 503' in lines[1]
    lines = _lines_of(text, mail.headers["X-Request-Id"])  # an id the server made
    assert len(lines) == 2 and re.search(rf"/g/{gid}/m/… HTTP/1.1\" 500", lines[1]), lines
    # gunicorn's own lines go through the same format, outside any request.
    assert re.search(r"\[INFO\] gunicorn\.error -: Booting worker", text)
