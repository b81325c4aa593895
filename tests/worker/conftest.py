"""Worker test fixtures: real processes, nothing mocked that we can run.

- a PostgreSQL database of the session's own (``imtheboss_worker_<xdist id>_<pid>``), created
  and migrated here (``web.create_app``) and dropped after;
- a Redis database number of the tests' own: 13 (``master``/``gw0``), 12 for ``gw1``... It is
  flushed before and after (``FLUSHDB`` of that number only, never ``FLUSHALL``);
- an SMTP server (aiosmtpd's ``Controller``) in this process on a free port, collecting mail;
  it can be stopped and started again on the same port;
- a Celery worker with embedded beat as a subprocess (``worker``), which a test may kill with
  ``SIGKILL`` and restart;
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
import email
import email.policy
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from helpers_db import own_database
from helpers_redis import own_redis_db
from helpers_wait import SmtpServer, free_port, wait_for
from imtheboss.web import create_app
from imtheboss.web.models import db
from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[2]
TABLES = "mail_outbox, notifications, deadlines, events, commands, seats, games"
SECRET = "worker-tests-secret"
BASE_URL = "http://testserver"
SWEEP_SECONDS = 1
BATCH_DELAY_SECONDS = 2
RETRY_MAX_SECONDS = 3
MIN_WINDOW_SECONDS = 1  # the tests' windows last seconds (the server's least is a minute)

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
    after the session (``helpers_redis.own_redis_db``)."""
    index = int(worker_id[2:]) if worker_id.startswith("gw") else 0
    with own_redis_db(13 - index) as url:
        yield url


# -- SMTP ------------------------------------------------------------------------------------


class Mailbox(SmtpServer):
    """An aiosmtpd server on ``port`` that keeps every message it receives (``messages``).
    ``stop()`` and ``start()`` take it down and bring it back on the same port."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.messages: list[EmailMessage] = []
        self.received: list[datetime] = []  # when each message arrived

    def keep(self, content: bytes) -> None:
        self.messages.append(email.message_from_bytes(content, policy=email.policy.default))  # type: ignore[arg-type]
        self.received.append(datetime.now(UTC))

    def to(self, address: str) -> list[EmailMessage]:
        """The messages received for ``address``, in order."""
        with self.lock:
            return [m for m in self.messages if m["To"] == address]

    def arrival(self, message: EmailMessage) -> datetime:
        """When ``message`` arrived."""
        with self.lock:
            return next(
                at for m, at in zip(self.messages, self.received, strict=True) if m is message
            )

    def about(self, game_title: str) -> list[EmailMessage]:
        """The messages whose subject names the game ``game_title``."""
        with self.lock:
            return [m for m in self.messages if f"] {game_title}:" in str(m["Subject"])]


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
    with _mailbox.lock:
        _mailbox.messages.clear()
        _mailbox.received.clear()
    yield _mailbox
    if _mailbox.controller is None:
        _mailbox.start()


# -- the Celery worker -----------------------------------------------------------------------


class WorkerProcess:
    """``celery -A imtheboss.worker.celery_app worker -B`` as a subprocess in its own process group
    (beat runs as its child), its output in ``log``."""

    def __init__(self, env: dict[str, str], log: Path, name: str) -> None:
        self.env = env
        self.log = log
        self.name = name
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 60.0) -> None:
        """Start it and wait until the worker says it is ready and beat has started."""
        assert not self.running
        self.starts += 1
        offset = self.log.stat().st_size if self.log.exists() else 0
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "imtheboss.worker.celery_app",
                "worker",
                "-B",
                "--pool",
                "threads",
                "--concurrency",
                "4",
                "-l",
                "info",
                "-n",
                f"{self.name}@%h",
                "--without-mingle",
                "--without-gossip",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()

        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                pytest.fail(f"the worker exited with {self.proc.returncode}:\n{self.tail()}")
            with self.log.open("rb") as fh:
                fh.seek(offset)
                seen = fh.read().decode(errors="replace")
            return " ready." in seen and "beat: Starting" in seen

        wait_for(ready, timeout, what="the Celery worker to start")

    def kill(self) -> None:
        """``SIGKILL`` the worker and its beat (the whole process group)."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None

    def stop(self) -> None:
        """A warm shutdown (``SIGTERM``); ``SIGKILL`` if it takes too long."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            except ProcessLookupError:
                pass
        self.kill()

    def tail(self, lines: int = 60) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def _worker_process(
    pg_url: str,
    redis_url: str,
    _mailbox: Mailbox,
    worker_id: str,
    tmp_path_factory: pytest.TempPathFactory,
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
        DATABASE_URL=pg_url.replace("postgresql+psycopg://", "postgresql://"),
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=str(_mailbox.port),
        SWEEP_SECONDS=str(SWEEP_SECONDS),
        DEADLINE_STALE_SECONDS="5",  # lost deadline tasks are re-fired 5 s after due
        BATCH_DELAY_SECONDS=str(BATCH_DELAY_SECONDS),
        MAIL_RETRY_MAX_SECONDS=str(RETRY_MAX_SECONDS),
        BEAT_SCHEDULE_FILE=str(folder / "celerybeat-schedule"),
        SECRET_KEY=SECRET,
        BASE_URL=BASE_URL,
        MIN_WINDOW_SECONDS=str(MIN_WINDOW_SECONDS),
        RATELIMIT_ENABLED="0",
    )
    process = WorkerProcess(env, folder / "worker.log", f"tests-{worker_id}")
    yield process
    process.stop()


@pytest.fixture
def worker(_worker_process: WorkerProcess, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The Celery worker with beat, running (started once and kept between tests; a test may
    ``kill()`` it and ``start()`` it again). Its log tail is printed when a test fails, and a
    task that failed during the test (a deadlock, an exception) fails the test."""
    if not _worker_process.running:
        _worker_process.start()
    offset = _worker_process.log.stat().st_size
    yield _worker_process
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print("---- worker log ----\n" + _worker_process.tail(120))
        return
    with _worker_process.log.open("rb") as fh:
        fh.seek(offset)
        errors = [
            line
            for line in fh.read().decode(errors="replace").splitlines()
            if "ERROR/" in line or "CRITICAL/" in line
        ]
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
def _test_env(redis_url: str, _mailbox: Mailbox) -> Iterator[None]:
    """This process has the worker's settings too: ``imtheboss.web.queue`` enqueues to the tests'
    Redis database, and worker code a test runs here (``imtheboss.worker.tasks.fire_deadline.run``)
    sees the same database, SMTP server and delays. The environment is restored after each test
    (other test folders may run in this process next)."""
    values = {
        "REDIS_URL": redis_url,
        "SECRET_KEY": SECRET,
        "BASE_URL": BASE_URL,
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(_mailbox.port),
        "SWEEP_SECONDS": str(SWEEP_SECONDS),
        "BATCH_DELAY_SECONDS": str(BATCH_DELAY_SECONDS),
        "MAIL_RETRY_MAX_SECONDS": str(RETRY_MAX_SECONDS),
        "MIN_WINDOW_SECONDS": str(MIN_WINDOW_SECONDS),
        "RATELIMIT_ENABLED": "0",
    }
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _make_app(pg_url: str, tasks: bool):
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
