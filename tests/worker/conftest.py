"""Worker test fixtures: real processes, nothing mocked that we can run.

- a PostgreSQL database of the session's own (``imtheboss_worker_<xdist id>_<pid>``), created
  and migrated here (``web.create_app``) and dropped after;
- a Redis database number of the tests' own: 13 (``master``/``gw0``), 12 for ``gw1``... It is
  flushed before and after (``FLUSHDB`` of that number only, never ``FLUSHALL``);
- an SMTP server (aiosmtpd's ``Controller``) in this process on a free port, collecting mail;
  it can be stopped and started again on the same port;
- the worker processes as the Procfile starts them (``worker``: the mail worker, the deadlines
  worker and beat, read from the Procfile), which a test may kill with ``SIGKILL`` and restart;
- ``app``: the web app on the same database with ``TASKS`` on, so it enqueues to the worker's
  Redis database; ``quiet_app``: the same without tasks (nothing is enqueued after commit).

The worker is another process, so it cannot use an injectable clock: tests use windows of a few
seconds (``MIN_WINDOW_SECONDS`` lowered for them) and wait with ``wait_for`` (bounded,
polling), never a bare long sleep. Abuse limits are off (``RATELIMIT_ENABLED``).

``IMTHEBOSS_TEST_PG`` and ``IMTHEBOSS_TEST_REDIS`` override the servers
(``postgresql+psycopg://postgres@127.0.0.1``, ``redis://127.0.0.1:6379``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trustme
from imtheboss.web import create_app
from imtheboss.web.models import db
from py_vapid import Vapid
from sqlalchemy import text
from support.hook_server import new_ca
from support.postgres import own_database
from support.redis_db import own_redis_db
from support.wait import free_port, wait_for
from support.worker import WORKER_DB_NAME, Mailbox

ROOT = Path(__file__).resolve().parents[2]
TABLES = "mail_outbox, notifications, deadlines, events, commands, seats, games"
SECRET = "worker-tests-secret"
BASE_URL = "http://testserver"
SWEEP_SECONDS = 1
BATCH_DELAY_SECONDS = 2
RETRY_MAX_SECONDS = 3
MIN_WINDOW_SECONDS = 1  # the tests' windows last seconds (the server's least is a minute)
SMTP_TIMEOUT = 10  # a send to a server that hangs gives up after this (so does each retry wait)
WEBHOOK_TIMEOUT = 3  # a webhook or push post is cut after this

# -- PostgreSQL ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pg_url(worker_id: str) -> Iterator[str]:
    """A fresh, migrated database for this session (dropped after it)."""
    name = f"imtheboss_worker_{worker_id}_{os.getpid()}".replace("-", "_")
    with own_database(name) as url:
        create_app(
            {
                "SQLALCHEMY_DATABASE_URI": url,
                "SECRET_KEY": SECRET,
                "BASE_URL": BASE_URL,
                "TASKS": False,
                "AUTO_MIGRATE": True,
            }
        )
        yield url


# -- Redis -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_url(worker_id: str) -> Iterator[str]:
    """The tests' own Redis database number (13, 12... by xdist worker), flushed before and
    after the session (``support.redis_db.own_redis_db``)."""
    index = int(worker_id[2:]) if worker_id.startswith("gw") else 0
    with own_redis_db(13 - index) as url:
        yield url


# -- SMTP ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _mailbox() -> Iterator[Mailbox]:
    box = Mailbox(free_port())
    box.start()
    yield box
    box.stop()


@pytest.fixture
def smtp(_mailbox: Mailbox) -> Iterator[Mailbox]:
    """The SMTP server, running, with an empty list of messages."""
    if _mailbox.controller is None:
        _mailbox.start()
    _mailbox.reset()
    yield _mailbox
    _mailbox.reset()
    if _mailbox.controller is None:
        _mailbox.start()


# -- webhooks and push -----------------------------------------------------------------------


@dataclass(frozen=True)
class Outbound:
    """What the worker and this process share for webhooks and push: a CA of the tests' own
    (its certificate in ``ca_file``, trusted by both through ``WEBHOOK_CA_FILE``), the VAPID
    key, and the settings as environment variables (loopback allowed: the endpoints are the
    tests' own, on this machine)."""

    ca: trustme.CA
    ca_file: Path
    env: dict[str, str]


@pytest.fixture(scope="session")
def outbound(tmp_path_factory: pytest.TempPathFactory) -> Outbound:
    ca, ca_file = new_ca(tmp_path_factory.mktemp("outbound"))
    key = Vapid()
    key.generate_keys()
    env = {
        "WEBHOOK_ALLOW_LOOPBACK": "1",
        "WEBHOOK_CA_FILE": str(ca_file),
        "WEBHOOK_RETRY_MAX_SECONDS": "2",
        "WEBHOOK_TIMEOUT": str(WEBHOOK_TIMEOUT),
        "VAPID_PRIVATE_KEY": key.private_pem().decode(),
    }
    return Outbound(ca, ca_file, env)


# -- the Celery worker -----------------------------------------------------------------------


PROCFILE_LINES = ("worker", "deadlines", "outbound", "beat")  # the Procfile's worker processes


def procfile_commands() -> dict[str, list[str]]:
    """The Procfile's worker lines (``worker``, ``deadlines``, ``beat``: those it has) as argument
    lists, ``celery`` run by this Python."""
    commands = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() in PROCFILE_LINES:
            argv = shlex.split(command)
            assert argv[0] == "celery", line
            commands[name.strip()] = [sys.executable, "-m", *argv]
    return commands


class WorkerProcess:
    """The worker processes the Procfile starts (the mail worker, the deadlines worker, beat),
    each a subprocess in its own process group writing to ``<line>.log`` in ``folder``. The
    tests run the workers with four threads each (the Procfile leaves the pool to Celery's
    default). ``mark()`` notes how far the logs go; ``log_since(mark, line)`` reads on from
    there."""

    def __init__(self, env: dict[str, str], folder: Path, name: str) -> None:
        self.env = env
        self.folder = folder
        self.name = name
        self.procs: dict[str, subprocess.Popen] = {}
        self.starts = 0
        self.tolerated: re.Pattern[str] | None = None

    @property
    def running(self) -> bool:
        return bool(self.procs) and all(p.poll() is None for p in self.procs.values())

    def _command(self, line: str, argv: list[str]) -> list[str]:
        if line == "beat":
            return argv
        return argv + [
            "--pool", "threads", "--concurrency", "4", "-l", "info",
            "-n", f"{line}-{self.name}@%h", "--without-mingle", "--without-gossip",
        ]  # fmt: skip

    def _log(self, line: str) -> Path:
        return self.folder / f"{line}.log"

    def mark(self) -> dict[str, int]:
        """How long each process's log is now (bytes)."""
        return {
            line: self._log(line).stat().st_size if self._log(line).exists() else 0
            for line in PROCFILE_LINES
        }

    def log_since(self, mark: dict[str, int] | None = None, line: str | None = None) -> str:
        """What the processes (or the one Procfile ``line``) wrote after ``mark``."""
        out = []
        for name in [line] if line else PROCFILE_LINES:
            if self._log(name).exists():
                with self._log(name).open("rb") as fh:
                    fh.seek((mark or {}).get(name, 0))
                    out.append(fh.read().decode(errors="replace"))
        return "".join(out)

    def start(self, timeout: float = 60.0) -> None:
        """Start them and wait until each worker says it is ready and beat has started."""
        assert not self.procs
        self.starts += 1
        mark = self.mark()
        for line, argv in procfile_commands().items():
            with self._log(line).open("ab") as out:
                self.procs[line] = subprocess.Popen(
                    self._command(line, argv),
                    cwd=ROOT,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )

        def ready() -> bool:
            for line, proc in self.procs.items():
                if proc.poll() is not None:
                    pytest.fail(f"{line} exited with {proc.returncode}:\n{self.tail()}")
            started = {
                line: "beat: Starting" if line == "beat" else " ready." for line in self.procs
            }
            return all(word in self.log_since(mark, line) for line, word in started.items())

        wait_for(ready, timeout, what="the Celery workers and beat to start")

    def kill(self) -> None:
        """``SIGKILL`` every process (each whole process group)."""
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        self.procs = {}

    def stop(self) -> None:
        """A warm shutdown (``SIGTERM``); ``SIGKILL`` for what takes too long."""
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=15)
        self.kill()

    def tolerate(self, pattern: str) -> None:
        """Error lines matching ``pattern`` do not fail the current test (one that breaks the
        worker's connections on purpose)."""
        self.tolerated = re.compile(pattern)

    def errors_since(self, mark: dict[str, int]) -> list[str]:
        """The error lines logged after ``mark``, less the tolerated ones."""
        return [
            line
            for line in self.log_since(mark).splitlines()
            if ("ERROR/" in line or "CRITICAL/" in line)
            and not (self.tolerated and self.tolerated.search(line))
        ]

    def tail(self, lines: int = 40) -> str:
        return "\n".join(
            f"---- {name} ----\n" + "\n".join(self.log_since(line=name).splitlines()[-lines:])
            for name in PROCFILE_LINES
        )


@pytest.fixture(scope="session")
def _worker_process(
    pg_url: str,
    redis_url: str,
    _mailbox: Mailbox,
    worker_id: str,
    tmp_path_factory: pytest.TempPathFactory,
    outbound: Outbound,
) -> Iterator[WorkerProcess]:
    folder = tmp_path_factory.mktemp("celery")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SMTP_", "MAIL_", "CELERY", "IMTHEBOSS_BROKER"))
    }
    env.update(
        PYTHONPATH=str(ROOT),
        REDIS_URL=redis_url,
        DATABASE_URL=pg_url.replace("postgresql+psycopg://", "postgresql://")
        + f"?application_name={WORKER_DB_NAME}",
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=str(_mailbox.port),
        SMTP_TIMEOUT=str(SMTP_TIMEOUT),
        SWEEP_SECONDS=str(SWEEP_SECONDS),
        DEADLINE_STALE_SECONDS="5",  # lost deadline tasks are re-fired 5 s after due
        BATCH_DELAY_SECONDS=str(BATCH_DELAY_SECONDS),
        MAIL_RETRY_MAX_SECONDS=str(RETRY_MAX_SECONDS),
        BEAT_SCHEDULE_FILE=str(folder / "celerybeat-schedule"),
        SECRET_KEY=SECRET,
        BASE_URL=BASE_URL,
        MIN_WINDOW_SECONDS=str(MIN_WINDOW_SECONDS),
        RATELIMIT_ENABLED="0",
        **outbound.env,
    )
    process = WorkerProcess(env, folder, f"tests-{worker_id}")
    yield process
    process.stop()


@pytest.fixture
def worker(_worker_process: WorkerProcess, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The Celery worker with beat, running (started once and kept between tests; a test may
    ``kill()`` it and ``start()`` it again). Its log tail is printed when a test fails, and a
    task that failed during the test (a deadlock, an exception) fails the test."""
    if not _worker_process.running:
        _worker_process.kill()  # what is left of them
        _worker_process.start()
    mark = _worker_process.mark()
    _worker_process.tolerated = None
    yield _worker_process
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print("---- worker logs ----\n" + _worker_process.tail(80))
        return
    errors = _worker_process.errors_since(mark)
    if errors:
        pytest.fail("the worker logged errors during the test:\n" + "\n".join(errors[:10]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]


# -- the web app -----------------------------------------------------------------------------


@pytest.fixture
def _test_env(redis_url: str, _mailbox: Mailbox, outbound: Outbound) -> Iterator[None]:
    """This process has the worker's settings too: ``imtheboss.web.app.tasks_out`` enqueues to the
    tests' Redis database, and worker code a test runs here
    (``imtheboss.worker.tasks.fire_deadline.run``) sees the same database, SMTP server and delays.
    The environment is restored after each test (other test folders may run in this process
    next)."""
    values = {
        "REDIS_URL": redis_url,
        "SECRET_KEY": SECRET,
        "BASE_URL": BASE_URL,
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(_mailbox.port),
        "SMTP_TIMEOUT": str(SMTP_TIMEOUT),
        "SWEEP_SECONDS": str(SWEEP_SECONDS),
        "BATCH_DELAY_SECONDS": str(BATCH_DELAY_SECONDS),
        "MAIL_RETRY_MAX_SECONDS": str(RETRY_MAX_SECONDS),
        "MIN_WINDOW_SECONDS": str(MIN_WINDOW_SECONDS),
        "RATELIMIT_ENABLED": "0",
        **outbound.env,
    }
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _make_app(pg_url: str, tasks: bool, **config: Any) -> Any:
    return create_app(
        {
            "SQLALCHEMY_DATABASE_URI": pg_url,
            "SECRET_KEY": SECRET,
            "AUTO_MIGRATE": False,
            "TESTING": True,
            "BASE_URL": BASE_URL,
            "TASKS": tasks,
            "MIN_WINDOW_SECONDS": MIN_WINDOW_SECONDS,
            "RATELIMIT_ENABLED": False,
            **config,
        }
    )


@pytest.fixture
def app(pg_url: str, _test_env: None) -> Iterator[Any]:
    """The web app with ``TASKS`` on (after each commit it enqueues ``game_changed`` to the
    worker's Redis database); the tables are emptied before each test. After the test every
    game still going is paused, so the worker leaves it alone."""
    application = _make_app(pg_url, tasks=True)
    with application.app_context():
        db.session.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
        db.session.commit()
    yield application
    with application.app_context():
        db.session.execute(text("UPDATE games SET status = 'paused' WHERE status = 'active'"))
        db.session.commit()
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def quiet_app(app: Any, pg_url: str) -> Iterator[Any]:
    """The same database, ``TASKS`` off: its commits enqueue nothing (only the worker's sweep
    can find what they made)."""
    application = _make_app(pg_url, tasks=False)
    yield application
    with application.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def local_app(app: Any, pg_url: str, clock: Any) -> Iterator[Any]:
    """``make(**config)``: an app on the same database (``TASKS`` off) whose ``CLOCK`` is
    ``clock`` set a day ahead, with ``config`` on top, for running the worker's code in this
    process (``deliver.run``) with settings of the test's own. The running worker's sweep goes
    by the real clock, so it leaves the rows such an app writes alone (none is due for it)."""
    clock.now = datetime.now(UTC) + timedelta(days=1)
    made: list[Any] = []

    def make(**config: Any) -> Any:
        application = _make_app(pg_url, tasks=False, CLOCK=clock, **config)
        made.append(application)
        return application

    yield make
    for application in made:
        with application.app_context():
            db.session.remove()
            db.engine.dispose()


@pytest.fixture
def ahead(local_app: Any, clock: Any, worker: Any) -> tuple[Any, Any]:
    """``(app, clock)``: an app on the same database (``TASKS`` off) whose clock the test sets;
    it starts an hour and a minute ahead, past the first deadline of a ``SLOW`` game
    (``support.worker.slow_games``). Worker code run here queues mail to the running worker's
    broker."""
    importlib.import_module("imtheboss.worker.celery_app")  # the current Celery app
    application = local_app()
    clock.now = datetime.now(UTC) + timedelta(hours=1, minutes=1)
    return application, clock
