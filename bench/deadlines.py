"""Deadline benchmark: 2,000 deadlines falling due within one minute across 200 games.

What it measures is the real path, end to end: games are made with
``imtheboss.web.service.create_game`` by an app whose after-commit hook enqueues ``game_changed`` to
Redis, exactly as the web process does; a real Celery worker with embedded beat (``celery -A
imtheboss.worker.celery_app worker
-B``, a subprocess) schedules each deadline as an ETA task, fires it (``fire_deadline`` locks
the game, submits ``timeout``, the engine plays the silent player's turn, A5), and the timeout
opens the next turn window, which the worker schedules in turn. Reminders at 80% of each window
and the "your turn" mail are made and delivered too (to the local outbox table: no SMTP server
is set), so the worker carries its whole load, not only the timeouts.

A game has one turn deadline at a time, so 2,000 deadlines come from 200 games whose turn
windows time out again and again: with ``--window 6`` and ``--rounds 10`` each game's windows
w0..w9 fall due 6 s apart over one minute, and the games are created ``window / games`` seconds
apart so the deadlines fall due evenly (about 33 a second). Inserting ``Deadline`` rows for
made-up windows would not do: the engine only times out windows that are really open.

Lateness is the fire time (the ``timed_out`` event's ``created_at``: the time the worker
submitted the timeout) minus the window's ``due_at``. "Fired twice" counts windows with more
than one ``timed_out`` event. The run ends when every game's last measured window has fired, or
``--grace`` seconds after the minute; the deadlines due by then are measured, and "never fired"
counts those still without a timeout ``--drain`` seconds later (a backlog may fire them late;
the games go on meanwhile, then they are paused). When the worker falls behind, each late fire
also delays the game's next window, so fewer than 2,000 may fall due by the end: the first line
of the output says how many did, and over how long.

It uses a PostgreSQL database of its own, ``imtheboss_bench_deadlines`` (created, then dropped),
and Redis database 14 (flushed before and after; ``FLUSHDB`` of that number only).

``--workers N`` starts N worker processes on the same broker and database (beat runs in the
first only), as a deployment would scale out; threads within one process share one core.

    .venv/bin/python bench/deadlines.py [--games 200] [--rounds 10] [--window 6]
        [--workers 1] [--concurrency 4] [--sweep 5] [--grace 45] [--drain 60]
        [--redis redis://127.0.0.1:6379/14] [--pg postgresql://postgres@127.0.0.1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import redis
from sqlalchemy import func, select, update

ROOT = Path(__file__).resolve().parents[1]
DB_NAME = "imtheboss_bench_deadlines"


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def start_worker(
    env: dict[str, str], log: Path, concurrency: int, name: str, beat: bool
) -> subprocess.Popen:
    """A Celery worker (with embedded beat when ``beat``), in its own process group; returns
    when it is ready."""
    out = log.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "imtheboss.worker.celery_app", "worker"]
        + (["-B"] if beat else [])
        + ["--pool", "threads", "--concurrency", str(concurrency), "-l", "info"]
        + ["-n", f"{name}@%h"],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    out.close()
    end = time.monotonic() + 60
    while time.monotonic() < end:
        text = log.read_text(errors="replace")
        if " ready." in text and (not beat or "beat: Starting" in text):
            return proc
        if proc.poll() is not None:
            raise SystemExit(f"the worker exited with {proc.returncode}:\n{text[-3000:]}")
        time.sleep(0.2)
    stop_worker(proc)
    raise SystemExit("the worker did not start within 60 s")


def stop_worker(proc: subprocess.Popen) -> None:
    """Warm shutdown, then SIGKILL for whatever is left of the process group."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description="deadline benchmark (real worker and beat)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10, help="turn windows timed out per game")
    parser.add_argument("--window", type=int, default=6, help="turn window, seconds")
    parser.add_argument("--concurrency", type=int, default=4, help="threads per worker")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (one beat)")
    parser.add_argument("--sweep", type=float, default=5.0, help="SWEEP_SECONDS (beat)")
    parser.add_argument("--grace", type=float, default=45.0, help="wait for the last round")
    parser.add_argument("--drain", type=float, default=60.0, help="wait for late fires")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1")
    args = parser.parse_args()

    admin = psycopg.connect(f"{args.pg}/postgres", autocommit=True)
    admin.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    admin.execute(f'CREATE DATABASE "{DB_NAME}"')
    database_url = f"{args.pg}/{DB_NAME}"
    broker = redis.Redis.from_url(args.redis)
    broker.flushdb()
    folder = Path(tempfile.mkdtemp(prefix="bench-deadlines-"))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SMTP_", "MAIL_", "CELERY", "IMTHEBOSS_BROKER"))
    }
    env.update(
        REDIS_URL=args.redis,
        DATABASE_URL=database_url,
        SWEEP_SECONDS=str(args.sweep),
        BEAT_SCHEDULE_FILE=str(folder / "celerybeat-schedule"),
        SECRET_KEY="bench-deadlines",
        BASE_URL="http://bench.invalid",
        MIN_WINDOW_SECONDS="1",  # windows of a few seconds, to time out again and again
    )
    os.environ.update(REDIS_URL=args.redis, SECRET_KEY="bench-deadlines")
    for key in [k for k in os.environ if k.startswith("SMTP_")]:
        del os.environ[key]

    from imtheboss.web import create_app
    from imtheboss.web.models import Deadline, EventRecord, Game, OutboxMail, db
    from imtheboss.web.service import create_game

    app = create_app(  # runs the migrations; TASKS on: create_game enqueues game_changed
        {
            "SQLALCHEMY_DATABASE_URI": database_url.replace(
                "postgresql://", "postgresql+psycopg://"
            ),
            "SECRET_KEY": "bench-deadlines",
            "BASE_URL": "http://bench.invalid",
            "TASKS": True,
            "AUTO_MIGRATE": True,
            "MIN_WINDOW_SECONDS": 1,
        }
    )
    logs = [folder / f"worker{i}.log" for i in range(args.workers)]
    procs = [
        start_worker(env, log, args.concurrency, f"bench-deadlines-{i}", beat=i == 0)
        for i, log in enumerate(logs)
    ]
    total = args.games * args.rounds
    print(
        f"{args.games} games x {args.rounds} turn windows of {args.window} s = {total} deadlines; "
        f"{args.workers} worker process(es) of {args.concurrency} threads, one beat, "
        f"sweep every {args.sweep:g} s",
        flush=True,
    )
    try:
        with app.app_context():
            gap = args.window / args.games
            t0 = time.monotonic()
            games = []
            for i in range(args.games):
                delay = t0 + i * gap - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                created = create_game(
                    f"Bench {i}",
                    [(f"P{s}", f"p{s}.g{i}@bench.example.org") for s in range(3)],
                    {"windows": {"turn": args.window}},
                    seed=i,
                )
                games.append(created.game_id)
            print(f"created {len(games)} games in {time.monotonic() - t0:.1f} s", flush=True)
            measured = [f"w{k}" for k in range(args.rounds)]
            last = f"w{args.rounds - 1}"

            def fired_last() -> int:
                value = db.session.execute(
                    select(func.count())
                    .select_from(EventRecord)
                    .where(
                        EventRecord.type == "timed_out",
                        EventRecord.body["window"].as_string() == last,
                    )
                ).scalar_one()
                db.session.rollback()
                return value

            expected_end = time.monotonic() + args.window * args.rounds
            hard_end = expected_end + args.grace
            while time.monotonic() < hard_end and fired_last() < len(games):
                time.sleep(0.5)
            ended = datetime.now(UTC)  # deadlines due by now are measured

            def unfired() -> int:
                value = db.session.execute(
                    select(func.count())
                    .select_from(Deadline)
                    .where(Deadline.window_id.in_(measured), Deadline.state == "open")
                    .where(Deadline.due_at <= ended)
                ).scalar_one()
                db.session.rollback()
                return value

            drain_end = time.monotonic() + args.drain  # a backlog may still fire them
            while time.monotonic() < drain_end and unfired():
                time.sleep(0.5)
            db.session.execute(update(Game).values(status="paused"))  # no further rounds
            db.session.commit()
            time.sleep(1.0)

            rows = db.session.execute(
                select(Deadline.game_id, Deadline.window_id, Deadline.due_at).where(
                    Deadline.window_id.in_(measured)
                )
            ).all()
            events = db.session.execute(
                select(EventRecord.game_id, EventRecord.body, EventRecord.created_at).where(
                    EventRecord.type == "timed_out"
                )
            ).all()
            mails = db.session.execute(select(func.count()).select_from(OutboxMail)).scalar_one()
            db.session.rollback()
        fires: dict[tuple[str, str], list] = {}
        for game_id, body, created_at in events:
            fires.setdefault((game_id, body["window"]), []).append(created_at)
        due = {(g, w): at for g, w, at in rows if at <= ended}  # fell due during the run
        lateness = [
            (min(fires[key]) - at).total_seconds() for key, at in due.items() if key in fires
        ]
        twice = sum(1 for key in due if len(fires.get(key, [])) > 1)
        never = sum(1 for key in due if key not in fires)
        span = (max(due.values()) - min(due.values())).total_seconds() if due else 0.0
        windows = Counter(w for _, w in due)
        print(
            f"deadlines fell due: {len(due)} of {total} over {span:.1f} s "
            f"(w0: {windows['w0']}, {last}: {windows[last]})"
        )
        if lateness:
            print(
                "lateness (fire time - due time): "
                f"p50 {percentile(lateness, 50) * 1e3:.0f} ms, "
                f"p99 {percentile(lateness, 99) * 1e3:.0f} ms, "
                f"max {max(lateness) * 1e3:.0f} ms, mean {statistics.fmean(lateness) * 1e3:.0f} ms"
            )
            early = sum(1 for x in lateness if x < 0)
            print(f"fired before due: {early}")
            rounds = []
            for window in measured:
                late = [
                    (min(fires[key]) - at).total_seconds()
                    for key, at in due.items()
                    if key[1] == window and key in fires
                ]
                if late:
                    rounds.append(f"{window} {percentile(late, 50):.2f}/{max(late):.2f}")
            print("by window, p50/max s: " + ", ".join(rounds))
        print(f"fired twice: {twice}")
        print(f"never fired (no timeout {args.drain:g} s after the run ended): {never}")
        print(f"mail written to the local outbox during the run: {mails}")
        errors = sum(
            1
            for log in logs
            for line in log.read_text(errors="replace").splitlines()
            if "ERROR/" in line
        )
        print(f"worker log errors: {errors} (logs in {folder})")
    finally:
        for proc in procs:
            stop_worker(proc)
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
        broker.flushdb()
        broker.close()
        admin.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        admin.close()


if __name__ == "__main__":
    main()
