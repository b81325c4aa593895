"""Deadline benchmark: ``--deadlines`` deadlines (2,000) falling due within one minute across
``--games`` games (200), fired by ``--workers`` deadlines worker processes (1).

What it measures is the real path, end to end: games are made with
``imtheboss.web.games.create.create_game`` by an app whose after-commit hook enqueues the mail they
make to Redis, exactly as the web process does; the Procfile's processes run as subprocesses:
``--workers`` deadlines workers (``celery ... worker -Q deadlines``, beat embedded in the first)
whose firing threads claim due deadlines from the database in batches and fire them
(``timeout`` through the service: the engine plays the silent player's turn, A5), and one mail
worker (``-Q mail``). Each timeout opens the game's next turn window, found in the database in
turn. Reminders at 80% of each window and the "your turn" mail are made and delivered too (to
the local outbox table: no SMTP server is set), so the machine carries the whole load, not only
the timeouts. The mail worker runs at ``--mail-nice`` (``idle`` by default: Linux's
``SCHED_IDLE``, so it takes only CPU time the deadlines path leaves; or a nice value): two cores
cannot send 40,000 mails a minute at 20-30 ms each in any case, and in production mail has
processes (or hosts) of its own (the Procfile's ``worker`` and ``deadlines`` are separate
process types); its backlog is reported (``--no-mail-worker``: none runs, the deadlines alone
are measured).

A game has one turn deadline at a time, so the deadlines come from games whose turn windows time
out again and again: with ``--window 6`` each game's windows w0..w9 (``deadlines / games``
rounds) fall due 6 s apart over one minute. The games are made before the minute starts, each
with a clock of its own set ``window / games`` seconds after the one before, so the deadlines
fall due evenly (about 333 a second for 20,000) however long making them takes; ``--lead``
says how far ahead (enough for making them all; the run says if it was not). Inserting
``Deadline`` rows for made-up windows would not do: the engine only times out windows that are
really open.

Lateness is the fire time (the ``timed_out`` event's ``created_at``: the time the worker
submitted the timeout) minus the window's ``due_at``. "Fired twice" counts windows with more
than one ``timed_out`` event. The run ends when every game's last measured window has fired, or
``--grace`` seconds after the minute; the deadlines due by then are measured, and "never fired"
counts those still without a timeout ``--drain`` seconds later (a backlog may fire them late;
the games go on meanwhile, then they are paused). When the workers fall behind, each late fire
also delays the game's next window, so fewer may fall due by the end: the first line of the
output says how many did, and over how long. CPU seconds of the worker processes and of
PostgreSQL (this database's backends) during the run are printed per fired deadline, and
PostgreSQL's by whom its backends serve (each process connects with ``application_name``
``bench-deadlines``, ``bench-mail`` or ``bench-bench``: the deadlines workers with their sweep,
the mail worker, this process).

It uses a PostgreSQL database of its own, ``imtheboss_bench_deadlines_<pid>`` (created, then
dropped), and Redis database 14 (flushed before and after; ``FLUSHDB`` of that number only).
``--json`` prints one JSON object as the last line: ``due``, ``fired_once``, ``twice``,
``never``, ``p50_s``, ``p99_s``, ``max_s`` and the counts and CPU figures.

    .venv/bin/python bench/deadlines.py [--games 200] [--deadlines 2000] [--workers 1]
        [--window 6] [--threads 2] [--batch 50] [--concurrency 4] [--sweep 5] [--lead S]
        [--grace 45] [--drain 60] [--mail-nice idle|N] [--no-mail-worker] [--json]
        [--redis redis://127.0.0.1:6379/14] [--pg postgresql://postgres@127.0.0.1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import redis
from sqlalchemy import func, select, update

ROOT = Path(__file__).resolve().parents[1]
DB_NAME = f"imtheboss_bench_deadlines_{os.getpid()}"
TICK = os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def _nice(text: str) -> int | str:
    """``--mail-nice``: ``idle`` or a nice value."""
    return text if text == "idle" else int(text)


def start_worker(
    env: dict[str, str], log: Path, args: list[str], name: str, nice: int | str = 0
) -> subprocess.Popen:
    """A Celery worker (``args``: its queue, ``-B``...) in its own process group, at ``nice``
    (a number, or ``idle``: Linux's ``SCHED_IDLE``, CPU time no other process wants); returns
    when it is ready."""
    out = log.open("wb")
    command = [sys.executable, "-m", "celery", "-A", "imtheboss.worker.celery_app", "worker"]
    if nice == "idle":
        priority = ["chrt", "--idle", "0"]
    else:
        priority = ["nice", "-n", str(nice)] if int(nice) else []
    proc = subprocess.Popen(
        priority + command + args + ["--pool", "threads", "-l", "info", "-n", f"{name}@%h"],
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
        if " ready." in text and ("-B" not in args or "beat: Starting" in text):
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


def cpu_seconds(match) -> float:
    """User + system CPU seconds of the processes ``match(pid, stat_fields, cmdline)`` picks."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if match(int(entry), fields, cmdline):
            total += int(fields[11]) + int(fields[12])
    return total / TICK


def group_cpu(procs: list[subprocess.Popen]) -> float:
    """CPU seconds of the process groups of ``procs`` (the workers and their children)."""
    groups = {p.pid for p in procs}
    return cpu_seconds(lambda _pid, fields, _cmd: int(fields[2]) in groups)


def postgres_cpu() -> float:
    """CPU seconds of PostgreSQL's backends connected to this benchmark's database."""
    return cpu_seconds(lambda _pid, _fields, cmd: cmd.startswith("postgres") and DB_NAME in cmd)


ROLES = ("deadlines", "mail", "bench")  # who a backend serves: its ``application_name``


def backends_cpu(admin: psycopg.Connection) -> dict[int, tuple[str, float]]:
    """``{pid: (role, CPU seconds)}`` of the backends of this benchmark's database, by the
    ``application_name`` each process connects with (``bench-<role>``)."""
    rows = admin.execute(
        "SELECT pid, application_name FROM pg_stat_activity WHERE datname = %s", (DB_NAME,)
    ).fetchall()
    found = {}
    for pid, name in rows:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        found[pid] = (name.removeprefix("bench-"), (int(fields[11]) + int(fields[12])) / TICK)
    return found


def cpu_by_role(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """PostgreSQL's CPU seconds between two ``backends_cpu`` readings, by role (the backends
    alive at the second; one that ended meanwhile is not counted)."""
    spent = dict.fromkeys(ROLES, 0.0)
    for pid, (role, seconds) in after.items():
        start = before.get(pid, (role, 0.0))[1]
        spent[role] = spent.get(role, 0.0) + seconds - start
    return {role: round(seconds, 1) for role, seconds in spent.items()}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="deadline benchmark (real workers and beat)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--deadlines", type=int, default=2000, help="games x rounds")
    parser.add_argument("--window", type=int, default=6, help="turn window, seconds")
    parser.add_argument("--workers", type=int, default=1, help="deadlines worker processes")
    parser.add_argument("--threads", type=int, default=2, help="DEADLINE_THREADS per process")
    parser.add_argument("--batch", type=int, default=50, help="DEADLINE_BATCH")
    parser.add_argument("--concurrency", type=int, default=4, help="task threads per worker")
    parser.add_argument("--sweep", type=float, default=5.0, help="SWEEP_SECONDS (beat)")
    parser.add_argument("--lead", type=float, default=None, help="s before the first is due")
    parser.add_argument("--grace", type=float, default=45.0, help="wait for the last round")
    parser.add_argument("--drain", type=float, default=60.0, help="wait for late fires")
    parser.add_argument(
        "--mail-nice",
        type=_nice,
        default="idle",
        help="the mail worker's nice (a number) or idle (SCHED_IDLE: only CPU nothing else wants)",
    )
    parser.add_argument(
        "--no-mail-worker", action="store_true", help="measure the deadlines alone: mail waits"
    )
    parser.add_argument("--json", action="store_true", help="a JSON object as the last line")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1")
    args = parser.parse_args()
    args.rounds = max(1, args.deadlines // args.games)
    if args.lead is None:  # making a game takes 10-40 ms on a busy machine
        args.lead = 10 + 0.04 * args.games
    return args


class GameClock:
    """The bench app's clock: the time a game is made at, set before each ``create_game``."""

    def __init__(self) -> None:
        self.at: datetime | None = None

    def __call__(self) -> datetime:
        return self.at or datetime.now(UTC)


def worker_env(args: argparse.Namespace, database_url: str, folder: Path) -> dict[str, str]:
    """The workers' environment: this run's database, broker and settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SMTP_", "MAIL_", "CELERY", "IMTHEBOSS_BROKER", "DEADLINE_"))
    }
    env.update(
        REDIS_URL=args.redis,
        DATABASE_URL=database_url,
        SWEEP_SECONDS=str(args.sweep),
        DEADLINE_THREADS=str(args.threads),
        DEADLINE_BATCH=str(args.batch),
        BEAT_SCHEDULE_FILE=str(folder / "celerybeat-schedule"),
        SECRET_KEY="bench-deadlines",
        BASE_URL="http://bench.invalid",
        MIN_WINDOW_SECONDS="1",  # windows of a few seconds, to time out again and again
    )
    return env


def make_games(args: argparse.Namespace, clock: GameClock) -> tuple[list[str], int]:
    """The games, each made at its own time: ``lead`` seconds from now, then ``window /
    games`` apart. Returns their ids and how many were made after their time had come."""
    from imtheboss.web.games.create import create_game

    gap = args.window / args.games
    first = datetime.now(UTC) + timedelta(seconds=args.lead)
    games, behind = [], 0
    for i in range(args.games):
        clock.at = first + timedelta(seconds=i * gap)
        behind += clock.at < datetime.now(UTC)
        created = create_game(
            f"Bench {i}",
            [(f"P{s}", f"p{s}.g{i}@bench.example.org") for s in range(3)],
            {"windows": {"turn": args.window}},
            seed=i,
        )
        games.append(created.game_id)
    clock.at = None
    return games, behind


def wait_out(args: argparse.Namespace, games: list[str], start: float) -> datetime:
    """Wait for the last round of every game to fire, or ``grace`` after the minute, then up
    to ``drain`` for the deadlines due by then; pause every game. Returns when the run ended
    (deadlines due by then are measured)."""
    from imtheboss.web.models import Deadline, Game, db

    last = f"w{args.rounds - 1}"
    measured = [f"w{k}" for k in range(args.rounds)]

    def count(query) -> int:
        value = db.session.execute(query).scalar_one()
        db.session.rollback()
        return value

    fired_last = (  # cheap to ask every second (the events' JSON is not searched)
        select(func.count())
        .select_from(Deadline)
        .where(Deadline.window_id == last, Deadline.state == "done")
    )
    hard_end = start + args.window * (args.rounds + 1) + args.grace
    while time.monotonic() < hard_end and count(fired_last) < len(games):
        time.sleep(1.0)
    ended = datetime.now(UTC)
    unfired = (
        select(func.count())
        .select_from(Deadline)
        .where(Deadline.window_id.in_(measured), Deadline.state == "open")
        .where(Deadline.due_at <= ended)
    )
    drain_end = time.monotonic() + args.drain  # a backlog may still fire them
    while time.monotonic() < drain_end and count(unfired):
        time.sleep(1.0)
    # no further rounds; the rows locked in the order of their ids, as a batch of timeouts
    # locks them (in any other order the two can deadlock)
    in_order = select(Game.id).order_by(Game.id).with_for_update()
    db.session.execute(update(Game).where(Game.id.in_(in_order)).values(status="paused"))
    db.session.commit()
    time.sleep(1.0)
    return ended


def measure(args: argparse.Namespace, ended: datetime) -> dict[str, Any]:
    """Lateness and counts of the measured windows due by ``ended``."""
    from imtheboss.web.models import Deadline, EventRecord, Notification, OutboxMail, db

    measured = [f"w{k}" for k in range(args.rounds)]
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
    states = dict(
        db.session.execute(
            select(Notification.email_state, func.count()).group_by(Notification.email_state)
        ).all()
    )
    db.session.rollback()
    fires: dict[tuple[str, str], list] = {}
    for game_id, body, created_at in events:
        fires.setdefault((game_id, body["window"]), []).append(created_at)
    due = {(g, w): at for g, w, at in rows if at <= ended}  # fell due during the run
    late = {key: (min(fires[key]) - at).total_seconds() for key, at in due.items() if key in fires}
    first_due = min(due.values(), default=ended)
    last_fire = max((min(fires[key]) for key in due if key in fires), default=first_due)
    return {
        "rate": len(late) / max(1e-9, (last_fire - first_due).total_seconds()),
        "due": len(due),
        "fired_once": sum(1 for key in due if len(fires.get(key, [])) == 1),
        "twice": sum(1 for key in due if len(fires.get(key, [])) > 1),
        "never": sum(1 for key in due if key not in fires),
        "early": sum(1 for x in late.values() if x < 0),
        "lateness": late,
        "span_s": (max(due.values()) - min(due.values())).total_seconds() if due else 0.0,
        "windows": Counter(w for _, w in due),
        "mails": mails,
        "mail_states": states,
    }


def report(args: argparse.Namespace, result: dict[str, Any], extra: dict[str, Any]) -> None:
    """Print the figures (and the JSON line with ``--json``)."""
    late = result.pop("lateness")
    windows = result.pop("windows")
    last = f"w{args.rounds - 1}"
    total = args.games * args.rounds
    print(
        f"deadlines fell due: {result['due']} of {total} over {result['span_s']:.1f} s "
        f"(w0: {windows['w0']}, {last}: {windows[last]})"
    )
    values = list(late.values())
    figures = {"p50_s": None, "p99_s": None, "max_s": None}
    if values:
        figures = {
            "p50_s": round(percentile(values, 50), 3),
            "p99_s": round(percentile(values, 99), 3),
            "max_s": round(max(values), 3),
        }
        mean = sum(values) / len(values)
        print(
            "lateness (fire time - due time): "
            f"p50 {figures['p50_s'] * 1e3:.0f} ms, p99 {figures['p99_s'] * 1e3:.0f} ms, "
            f"max {figures['max_s'] * 1e3:.0f} ms, mean {mean * 1e3:.0f} ms"
        )
        print(f"fired before due: {result['early']}")
        rounds = []
        for k in range(args.rounds):
            part = [x for (_, w), x in late.items() if w == f"w{k}"]
            if part:
                rounds.append(f"w{k} {percentile(part, 50):.2f}/{max(part):.2f}")
        print("by window, p50/max s: " + ", ".join(rounds))
    print(
        f"fired once: {result['fired_once']}, fired twice: {result['twice']}; "
        f"{result['rate']:.0f} fired a second from the first due to the last fire"
    )
    print(f"never fired (no timeout {args.drain:g} s after the run ended): {result['never']}")
    print(
        f"mail sent to the local outbox during the run: {result['mails']} "
        f"(rows by state: {dict(sorted(result['mail_states'].items()))})"
    )
    fired = max(1, result["fired_once"] + result["twice"])
    print(
        f"CPU during the run: deadlines workers {extra['cpu_deadlines_s']:.1f} s "
        f"({extra['cpu_deadlines_s'] / fired * 1e3:.1f} ms a deadline), mail worker "
        f"{extra['cpu_mail_s']:.1f} s, PostgreSQL {extra['cpu_postgres_s']:.1f} s "
        f"({extra['cpu_postgres_s'] / fired * 1e3:.1f} ms a deadline)"
    )
    roles = extra["cpu_postgres_by_role_s"]
    print(
        "PostgreSQL's CPU by whom its backends serve: "
        + ", ".join(f"{role} {seconds:.1f} s" for role, seconds in roles.items())
        + f" (deadlines: {roles['deadlines'] / fired * 1e3:.1f} ms a deadline)"
    )
    print(f"worker log errors: {extra['errors']} (logs in {extra['logs']})")
    if args.json:
        out = {**{k: result[k] for k in ("due", "fired_once", "twice", "never")}, **figures}
        out.update({k: v for k, v in extra.items() if k != "logs"})
        out.update(games=args.games, workers=args.workers, mails=result["mails"])
        out["fired_per_s"] = round(result["rate"], 1)
        print(json.dumps(out))


def main() -> None:
    args = parse_args()
    admin = psycopg.connect(f"{args.pg}/postgres", autocommit=True)
    admin.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    admin.execute(f'CREATE DATABASE "{DB_NAME}"')
    database_url = f"{args.pg}/{DB_NAME}"
    broker = redis.Redis.from_url(args.redis)
    broker.flushdb()
    folder = Path(tempfile.mkdtemp(prefix="bench-deadlines-"))
    env = worker_env(args, database_url, folder)
    os.environ.update(REDIS_URL=args.redis, SECRET_KEY="bench-deadlines")
    for key in [k for k in os.environ if k.startswith("SMTP_")]:
        del os.environ[key]

    from imtheboss.web import create_app
    from imtheboss.web.models import db

    clock = GameClock()
    app = create_app(  # runs the migrations; TASKS on: a commit that made mail enqueues it
        {
            "SQLALCHEMY_DATABASE_URI": database_url.replace(
                "postgresql://", "postgresql+psycopg://"
            )
            + "?application_name=bench-bench",
            "SECRET_KEY": "bench-deadlines",
            "BASE_URL": "http://bench.invalid",
            "TASKS": True,
            "AUTO_MIGRATE": True,
            "MIN_WINDOW_SECONDS": 1,
            "CLOCK": clock,
        }
    )
    logs = [folder / f"deadlines{i}.log" for i in range(args.workers)] + [folder / "mail.log"]
    queue = ["--concurrency", str(args.concurrency), "--without-gossip", "--without-mingle", "-Q"]
    named = {
        role: {**env, "DATABASE_URL": f"{database_url}?application_name=bench-{role}"}
        for role in ROLES
    }
    procs = [
        start_worker(
            named["deadlines"], log, queue + ["deadlines"] + (["-B"] if i == 0 else []), f"dl{i}"
        )
        for i, log in enumerate(logs[:-1])
    ]
    mail = None
    if not args.no_mail_worker:
        mail = start_worker(named["mail"], logs[-1], queue + ["mail"], "mail", nice=args.mail_nice)
    print(
        f"{args.games} games x {args.rounds} turn windows of {args.window} s = "
        f"{args.games * args.rounds} deadlines; {args.workers} deadlines worker process(es) of "
        f"{args.threads} firing threads (batches of {args.batch}), one beat, sweep every "
        f"{args.sweep:g} s; "
        + ("no mail worker" if mail is None else f"one mail worker (nice {args.mail_nice})"),
        flush=True,
    )
    try:
        with app.app_context():
            t0 = time.monotonic()
            games, behind = make_games(args, clock)
            made = time.monotonic() - t0
            print(
                f"made {len(games)} games in {made:.1f} s, the first due "
                f"{args.lead + args.window:.0f} s after the start; made after their time: "
                f"{behind}",
                flush=True,
            )
            mailers = [mail] if mail else []
            cpu = (group_cpu(procs), group_cpu(mailers), postgres_cpu())
            backends = backends_cpu(admin)
            ended = wait_out(args, games, t0 + args.lead)
            extra = {
                "cpu_deadlines_s": round(group_cpu(procs) - cpu[0], 1),
                "cpu_mail_s": round(group_cpu(mailers) - cpu[1], 1),
                "cpu_postgres_s": round(postgres_cpu() - cpu[2], 1),
                "cpu_postgres_by_role_s": cpu_by_role(backends, backends_cpu(admin)),
                "made_late": behind,
            }
            result = measure(args, ended)
        extra["errors"] = sum(
            1
            for log in logs
            if log.exists()
            for line in log.read_text(errors="replace").splitlines()
            if "ERROR/" in line
        )
        extra["logs"] = str(folder)
        report(args, result, extra)
    finally:
        for proc in [*procs, *([mail] if mail else [])]:
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
