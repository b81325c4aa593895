"""A PostgreSQL restart under the web app: 503s while it is down, never a 500, and submits go
through again once it is back, on the same app (its pooled connections died with the server).

A PostgreSQL cluster of this test's own (``initdb``/``pg_ctl`` from the installed server, run as
the ``postgres`` user when the tests run as root) on a free port: the shared server is never
stopped. The restart is ``pg_ctl stop -m fast`` (every backend terminated, as a restart does),
then ``pg_ctl start``; one stop lands between a request's answer and its end, where the
connection is cut while the request's transaction is ended (it used to escape the app and reach
the WSGI server as its HTML 500).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from imtheboss.web import create_app
from imtheboss.web.games.create import create_game
from imtheboss.web.models import db
from support.api_client import Api
from support.wait import free_port

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]
CONFIG = {"SECRET_KEY": "test-secret", "BASE_URL": "http://testserver", "TASKS": False}
BINARIES = sorted(glob.glob("/usr/lib/postgresql/*/bin"))


class Cluster:
    """A PostgreSQL cluster in a folder of its own on ``port`` (trust authentication)."""

    def __init__(self) -> None:
        if not BINARIES:
            pytest.fail("no PostgreSQL server binaries under /usr/lib/postgresql")
        self.bin = Path(BINARIES[-1])
        self.folder = Path(tempfile.mkdtemp(prefix="imtheboss-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/imtheboss"
        if os.geteuid() == 0:  # the server refuses to run as root
            shutil.chown(self.folder, "postgres", "postgres")

    def _run(self, tool: str, *args: str) -> None:
        argv = [str(self.bin / tool), *args]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        subprocess.run(argv, check=True, capture_output=True, timeout=120)

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")
        self.start()
        where = ["-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        self._run("createdb", *where, "imtheboss")

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
                  "-w", "start")  # fmt: skip

    def stop(self) -> None:
        """A fast shutdown: every backend is terminated, as in a restart."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        subprocess.run(
            [str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"]
            if os.geteuid() != 0
            else [
                "runuser",
                "-u",
                "postgres",
                "--",
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "stop",
            ],  # fmt: skip
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    own = Cluster()
    try:
        own.init()
        yield own
    finally:
        own.remove()


@pytest.fixture
def game_app(cluster: Cluster) -> Iterator[tuple[Any, Api, str]]:
    app = create_app({**CONFIG, "SQLALCHEMY_DATABASE_URI": cluster.url, "AUTO_MIGRATE": True})
    with app.app_context():
        created = create_game("Restart", PLAYERS)
    yield app, Api(app.test_client(), created.game_id), created.seat_tokens[0]
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def test_a_restart_cut_at_the_end_of_a_request_answers_the_json_503(
    cluster: Cluster, game_app: tuple[Any, Api, str]
) -> None:
    app, api, token = game_app
    stop_at_end: list[bool] = []

    @app.after_request
    def restart_now(response: Any) -> Any:  # runs before the app's own last step
        if stop_at_end:
            stop_at_end.clear()
            cluster.stop()
        return response

    assert api.game(token).status_code == 200
    stop_at_end.append(True)
    answer = api.game(token)
    assert answer.status_code == 503, answer.text[:300]
    assert answer.headers["Retry-After"] == "60"
    assert answer.get_json()["error"]["code"] == "database_unavailable"
    cluster.start()
    assert api.game(token).status_code == 200


def test_submits_resume_after_a_restart_with_503s_between_and_no_500(
    cluster: Cluster, game_app: tuple[Any, Api, str]
) -> None:
    app, api, token = game_app
    statuses = []

    def submit(n: int) -> int:
        answer = api.send(token, {"do": "chat", "text": f"hello {n}"}, f"chat-{n}")
        statuses.append(answer.status_code)
        return answer.status_code

    assert [submit(n) for n in range(3)] == [201, 201, 201]
    cluster.stop()
    down = [submit(n) for n in range(3, 6)]
    cluster.start()
    up = [submit(n) for n in range(6, 9)]
    assert down == [503, 503, 503]
    assert up == [201, 201, 201]
    assert 500 not in statuses
    # the refused ones changed nothing: their keys are free, and a retry goes through
    assert submit(3) == 201
