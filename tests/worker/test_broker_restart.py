"""A Redis restart under the running workers: every process stays up and mail goes out again.

A redis-server of this test's own on a free port (never the shared one), without persistence;
the Procfile's worker processes (mail worker, deadlines worker, beat) on it. The mail worker
holds unacknowledged messages (tasks with a countdown, as retries and batches are), Redis is
killed (``SIGKILL``) and started again on the same port once the worker has seen it go; then a
new game's invitations must arrive. kombu's Redis channel used to stop the mail worker at that
moment (``imtheboss.worker.broker``).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from imtheboss.web.app import tasks_out
from imtheboss.web.games.create import create_game
from support.wait import free_port, wait_for
from support.worker import players

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
HELD = 50  # unacknowledged messages the mail worker holds when Redis dies


class RedisServer:
    """A redis-server on ``port`` in ``folder`` (no persistence) that a test kills and starts
    again."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        assert self.proc is None
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
        with (self.folder / "redis.log").open("ab") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        wait_for(self._answers, 20, what="redis-server to start")

    def _answers(self) -> bool:
        client = redis.Redis.from_url(self.url)
        try:
            return bool(client.ping())
        except redis.ConnectionError:
            return False
        finally:
            client.close()

    def kill(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.proc = None

    def unacked(self) -> int:
        """How many messages consumers hold unacknowledged (kombu's ``unacked`` hash)."""
        client = redis.Redis.from_url(self.url)
        try:
            return int(client.hlen("unacked"))
        finally:
            client.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def workers_on_own_redis(
    _worker_process: Any, own_redis: RedisServer, tmp_path: Path
) -> Iterator[Any]:
    """The Procfile's worker processes on ``own_redis`` (the session's workers stopped first:
    they must not send this test's mail)."""
    _worker_process.stop()
    env = {
        **_worker_process.env,
        "REDIS_URL": own_redis.url,
        "BEAT_SCHEDULE_FILE": str(tmp_path / "celerybeat-schedule"),
    }
    processes = type(_worker_process)(env, tmp_path, "redis-restart")
    processes.start()
    yield processes
    processes.stop()


def restart(own_redis: RedisServer, app: Any, procs: Any) -> dict[str, int]:
    """Kill Redis, start it again once the mail worker has seen it go; the log mark before."""
    mark = procs.mark()
    own_redis.kill()
    wait_for(
        lambda: "Connection to broker lost" in procs.log_since(mark, "worker"),
        30,
        what="the mail worker to see Redis go",
    )
    own_redis.start()
    app.extensions.pop("imtheboss.queue", None)  # its connection went with the old server
    return mark


def mail_goes_out(app: Any, smtp: Any, procs: Any, mark: dict[str, int], title: str) -> None:
    """A new game's invitation arrives, and every process is still up."""
    with app.app_context():
        create_game(title, players(title), SLOW)
    try:
        wait_for(lambda: smtp.to(players(title)[0][1]), 90, what=f"the invitation of {title}")
    finally:
        print(procs.tail(60))
    assert procs.running, procs.tail()
    assert "Unrecoverable error" not in procs.log_since(mark)
    assert "Connected to" in procs.log_since(mark, "worker")


def test_the_workers_outlive_a_redis_restart_and_mail_goes_out(
    app: Any, smtp: Any, own_redis: RedisServer, workers_on_own_redis: Any
) -> None:
    """Redis dies while the mail worker holds unacknowledged messages (it used to stop while
    giving them back)."""
    procs = workers_on_own_redis
    app.config["REDIS_URL"] = own_redis.url  # the web app queues to the same Redis
    app.extensions.pop("imtheboss.queue", None)
    with app.app_context():
        for _ in range(HELD):
            tasks_out.send("imtheboss.worker.tasks.sweep_mail", countdown=600)
    wait_for(lambda: own_redis.unacked() >= HELD, 30, what="the mail worker to hold the tasks")
    mark = restart(own_redis, app, procs)
    mail_goes_out(app, smtp, procs, mark, "restarted")


def test_a_send_under_way_when_redis_dies_does_not_stop_the_mail_worker(
    app: Any, smtp: Any, own_redis: RedisServer, workers_on_own_redis: Any
) -> None:
    """Sends last seconds (a slow SMTP server) and Redis dies under them: each task ends after
    its channel was closed (it used to stop the worker when acknowledged there)."""
    procs = workers_on_own_redis
    app.config["REDIS_URL"] = own_redis.url
    app.extensions.pop("imtheboss.queue", None)
    smtp.delay = 3.0
    mark = procs.mark()
    with app.app_context():
        create_game("underway", players("underway"), SLOW)
    wait_for(
        lambda: "imtheboss.worker.tasks.deliver" in procs.log_since(mark, "worker"),
        30,
        what="a send to start",
    )
    mark = restart(own_redis, app, procs)
    wait_for(lambda: smtp.to(players("underway")[0][1]), 30, what="the send under way to end")
    smtp.delay = 0.0
    mail_goes_out(app, smtp, procs, mark, "after")
