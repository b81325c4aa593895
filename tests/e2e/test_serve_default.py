"""The README's first command (``./dev serve``), with nothing else running (no
PostgreSQL, no Redis, no SMTP), serves a game whose windows time out (A5) and whose mail shows
up in the local outbox (``/operator/mail``). A real process tree: the web app, a Celery worker
and beat on the embedded broker, SQLite, all in a temporary instance folder."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from support.organiser import confirm, confirm_link
from support.wait import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SMTP_HOST")
    }
    env.update(
        IMTHEBOSS_INSTANCE=str(tmp_path),
        SWEEP_SECONDS="1",
        BATCH_DELAY_SECONDS="1",
        MIN_WINDOW_SECONDS="1",  # the windows of this test last seconds
        RATELIMIT_ENABLED="0",
    )
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(ROOT / "dev"), "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return requests.get(base + "/", timeout=2).status_code == 200
        except requests.ConnectionError:
            return False

    try:
        wait_for(up, 60, what="the server to answer")
        yield base, tmp_path
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def test_dev_serve_times_out_windows_and_keeps_mail_locally(served) -> None:
    base, instance = served
    players = [{"name": n, "email": f"{n.lower()}@example.org"} for n in ("Amy", "Bill", "Carla")]
    windows = {"turn": 2, "stop": 2, "last_call": 2, "negotiation": 3}
    organiser = "organiser@example.org"
    answer = requests.post(
        base + "/api/games",
        json={
            "title": "Embedded",
            "players": players,
            "options": {"windows": windows},
            "creator_email": organiser,
        },
        timeout=10,
    )
    assert answer.status_code == 201, answer.text
    game_id = answer.json()["game_id"]
    database = instance / "imtheboss.sqlite3"
    # The organiser's mail waits in the local outbox (open on loopback to the embedded default);
    # confirming its link starts the game.
    page = wait_for(
        lambda: (
            (page := requests.get(base + "/operator/mail", timeout=5)).ok
            and f"/g/{game_id}/confirm/" in page.text
            and page.text
        ),
        30,
        what="the organiser's mail in the local outbox",
    )
    assert organiser in page and not any(p["email"] in page for p in players)
    confirm(requests.Session(), confirm_link(page, game_id))

    def timeouts() -> int:
        with sqlite3.connect(database) as conn:
            (count,) = conn.execute(
                "SELECT count(*) FROM events WHERE game_id = ? AND type = 'timed_out'", (game_id,)
            ).fetchone()
        return count if count >= 2 else 0

    assert wait_for(timeouts, 45, what="two windows to time out") >= 2  # A5: nobody acted
    outbox = wait_for(
        lambda: (
            (page := requests.get(base + "/operator/mail", timeout=5)).ok
            and all(p["email"] in page.text for p in players)
            and page.text
        ),
        30,
        what="the invitations in the local outbox",
    )
    assert "invited" in outbox and f"/g/{game_id}/s/" in outbox


def test_a_taken_port_stops_serve_with_a_message(tmp_path: Path) -> None:
    """Another program on the port: ``./dev serve`` says so, names a way out, exits 2 and
    leaves no worker behind (none is started)."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.update(IMTHEBOSS_INSTANCE=str(tmp_path))
        done = subprocess.run(
            [str(ROOT / "dev"), "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert not (tmp_path / "imtheboss.sqlite3").exists()  # it stopped before the app was made
