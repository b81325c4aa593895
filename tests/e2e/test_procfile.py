"""The README's deploy as written: after the release step, ``honcho start`` runs the shipped
Procfile from a working directory that holds nothing but the Procfile (no ``instance/``: a fresh
host), on a PostgreSQL database and a Redis database of the test's own.

Every process comes up (gunicorn answers, both workers and beat start, the inbound SMTP
receiver listens, the IMAP poller waits) and none exits for 60 s (a Procfile line that ends takes
honcho and every process down with it); gunicorn listens on 127.0.0.1 only and writes an access
log line per request; a game made by ``POST /api/games`` finds its tables; beat keeps its
schedule in the ``instance/`` it made; no Celery process prints its start banner (only log
lines: one JSON object a line with ``LOG_FORMAT=json``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from support.e2e import Process, free_port, wait_for
from support.postgres import own_database
from support.redis_db import own_redis_db
from test_wheel import RELEASE, procfile

ROOT = Path(__file__).resolve().parents[2]
HONCHO = Path(sys.executable).with_name("honcho")
REDIS_DB = 7  # this test's own Redis database number (support.redis_db.own_redis_db)
SECRET = "e2e-procfile-secret"
UP_FOR = 60  # seconds every process must stay up
PLAYERS = [{"name": n, "email": f"{n.lower()}@example.org"} for n in ("Amy", "Bill", "Cy")]
GAME = {"title": "Procfile", "players": PLAYERS, "creator_email": PLAYERS[0]["email"]}
# Settings of the test run that must not reach the processes (they get their own below).
NOT_INHERITED = ("SMTP_", "MAIL_", "IMAP_", "CELERY", "IMTHEBOSS_", "OPERATOR", "REDIS", "DATABASE")
NOT_INHERITED_NAMES = ("SECRET_KEY", "BASE_URL", "PORT", "TRUSTED_PROXIES", "PYTHONPATH")


def _environment(tmp_path: Path, pg_url: str, redis_url: str, port: int) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(NOT_INHERITED) and k not in NOT_INHERITED_NAMES
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        HOME=str(tmp_path),  # gunicorn's control socket, celery's files: none in the real home
        DATABASE_URL=pg_url.replace("postgresql+psycopg://", "postgresql://"),
        REDIS_URL=redis_url,
        SECRET_KEY=SECRET,
        BASE_URL=f"http://127.0.0.1:{port}",
        PORT=str(port),
        MAIL_INBOUND_PORT=str(free_port()),
        WEB_CONCURRENCY="1",
    )
    return env


def _listening_address(port: int) -> str:
    """The local address of the socket listening on TCP ``port`` (``/proc/net/tcp``)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, hex_port = local.partition(":")
        if int(hex_port, 16) == port and state == "0A":  # LISTEN
            return socket.inet_ntoa(bytes.fromhex(address)[::-1])
    return ""


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _all_up(honcho: Process, env: dict[str, str]) -> bool:
    """Whether every process has said it is ready (fails the test if honcho ended)."""
    if not honcho.running:
        pytest.fail(f"honcho exited:\n{honcho.tail(80)}")
    out = honcho.text()
    return (
        _accepts(int(env["PORT"]))
        and _accepts(int(env["MAIL_INBOUND_PORT"]))
        and out.count(" ready.") >= 3  # the mail, deadlines and outbound workers
        and "beat: Starting..." in out
        and "IMAP_HOST is not set" in out
    )


@pytest.mark.skipif(not HONCHO.exists(), reason="honcho (the dev extra) is not installed")
def test_honcho_runs_the_procfile_with_every_process_up(tmp_path: Path) -> None:
    assert "release" not in procfile(), "a process manager would start the release step"
    site = tmp_path / "site"  # the working directory: the Procfile and nothing else
    site.mkdir()
    shutil.copy(ROOT / "Procfile", site / "Procfile")
    with (
        own_redis_db(REDIS_DB, wait=300) as redis_url,
        own_database(f"imtheboss_e2e_procfile_{os.getpid()}") as pg_url,
    ):
        port = free_port()
        env = _environment(tmp_path, pg_url, redis_url, port)
        release = subprocess.run(
            shlex.split(RELEASE), cwd=site, env=env, capture_output=True, text=True, timeout=120
        )
        assert release.returncode == 0, release.stdout + release.stderr
        honcho = Process("honcho", [str(HONCHO), "start"], env, site, tmp_path / "honcho.log")
        started = time.monotonic()
        honcho.start()
        try:
            wait_for(lambda: _all_up(honcho, env), UP_FOR, what="every Procfile process")
            assert _listening_address(port) == "127.0.0.1", "web listens beyond this host"
            base = f"http://127.0.0.1:{port}"
            made = requests.post(f"{base}/api/games", json=GAME, timeout=20)
            assert made.status_code == 201, made.text
            assert requests.get(f"{base}/", timeout=20).status_code == 200
            wait_for(
                lambda: '"POST /api/games HTTP/1.1" 201' in honcho.text(), 20, what="access log"
            )
            assert honcho.proc is not None
            with pytest.raises(subprocess.TimeoutExpired):  # nothing ends: honcho stays up
                honcho.proc.wait(timeout=max(0.0, UP_FOR - (time.monotonic() - started)))
        finally:
            honcho.stop()
    out = honcho.text()
    assert "stopped (rc=" not in out.split("sending SIGTERM")[0], out[-4000:]
    assert list((site / "instance").glob("celerybeat-schedule*")), "beat's schedule is kept"
    assert [line for line in out.splitlines() if "Traceback" in line] == []
    # Celery's start banners are no log lines (a JSON log would hold ASCII art): --quiet
    assert "[config]" not in out and "celery beat v" not in out, out[:4000]
