"""Firing cost benchmark: the CPU one fired deadline costs, in this process and in PostgreSQL.

Wall-clock figures on a shared machine move with the other work; CPU seconds move much less. On a
database of its own (``imtheboss_bench_firing_<pid>``, created and dropped here) it makes
``--games`` 3-seat games with turn windows of ``--window`` seconds, then, on a clock of its own,
moves past each round of their deadlines and runs ``firing.fire_round`` until nothing is due:
``--rounds`` rounds, each firing one deadline per game (a timeout opens the next turn window,
due a window later). Measured per fired deadline: this process's CPU (``time.process_time``)
and the CPU of PostgreSQL's backend of this database, for the rounds after the first (the first
warms the caches). The mail queued goes to Redis database 13 of ``--redis`` (flushed before and
after).

``--profile FILE`` writes a cProfile of the measured rounds (read it with ``python -m pstats``).
``--json`` prints one JSON object as the last line: ``fired``, ``cpu_ms``, ``pg_cpu_ms`` (per
deadline), ``batch``, ``games``.

    .venv/bin/python bench/firing.py [--games 400] [--rounds 4] [--batch 50] [--window 6]
        [--profile FILE] [--json] [--redis redis://127.0.0.1:6379]
        [--server postgresql+psycopg://postgres@127.0.0.1]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

DATABASE = f"imtheboss_bench_firing_{os.getpid()}"
TICK = os.sysconf("SC_CLK_TCK")


def backend_cpu() -> float:
    """CPU seconds of PostgreSQL's backends connected to this benchmark's database."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            if not (cmdline.startswith("postgres") and DATABASE in cmdline):
                continue
            fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


class Clock:
    """The app's clock, set by the benchmark."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="CPU per fired deadline, in-process")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=4, help="measured rounds (one more warms)")
    parser.add_argument("--batch", type=int, default=50, help="DEADLINE_BATCH")
    parser.add_argument("--window", type=int, default=6, help="turn window, seconds")
    parser.add_argument("--profile", default="", help="write a cProfile of the measured rounds")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379")
    parser.add_argument("--server", default="postgresql+psycopg://postgres@127.0.0.1")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import own_database

    broker = f"{args.redis}/13"
    os.environ.update(REDIS_URL=broker, SECRET_KEY="bench-firing", BASE_URL="http://bench")
    import redis

    redis.Redis.from_url(broker).flushdb()
    with own_database(args.server, DATABASE) as url:
        try:
            figures = run(args, url)
        finally:
            redis.Redis.from_url(broker).flushdb()
    print(
        f"{figures['fired']} deadlines fired in batches of {args.batch} across {args.games} games: "
        f"{figures['cpu_ms']:.2f} ms CPU a deadline in the firing process, "
        f"{figures['pg_cpu_ms']:.2f} ms in PostgreSQL ({figures['wall_ms']:.2f} ms wall)"
    )
    print(f"outcomes: {figures['outcomes']}")
    if args.json:
        print(json.dumps(figures))


def run(args: argparse.Namespace, url: str) -> dict:
    """Make the games, fire ``rounds + 1`` rounds, return the measured figures."""
    from imtheboss.web import create_app
    from imtheboss.web.games.create import create_game
    from imtheboss.web.models import db
    from imtheboss.worker import celery_app  # noqa: F401  (the Celery app the mail goes to)
    from imtheboss.worker.firing import fire_round

    clock = Clock()
    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": url,
            "SECRET_KEY": "bench-firing",
            "BASE_URL": "http://bench",
            "CLOCK": clock,
            "TASKS": False,
            "AUTO_MIGRATE": True,
            "MIN_WINDOW_SECONDS": 1,
        }
    )
    start = clock.now
    outcomes: Counter[str] = Counter()
    with app.app_context():
        for i in range(args.games):
            players = [(f"P{s}", f"p{s}.g{i}@bench.example.org") for s in range(3)]
            create_game(f"Bench {i}", players, {"windows": {"turn": args.window}}, seed=i)
        profile = cProfile.Profile(time.process_time) if args.profile else None
        cpu = pg = wall = 0.0
        for round_ in range(args.rounds + 1):
            clock.now = start + timedelta(seconds=args.window * (round_ + 1) + 0.5)
            measured = round_ > 0
            t0, c0, p0 = time.perf_counter(), time.process_time(), backend_cpu()
            if measured and profile:
                profile.enable()
            while got := fire_round(args.batch):
                if measured:
                    outcomes.update(got)
            if measured and profile:
                profile.disable()
            if measured:
                cpu += time.process_time() - c0
                pg += backend_cpu() - p0
                wall += time.perf_counter() - t0
        db.session.remove()
        db.engine.dispose()
    if profile:
        profile.dump_stats(args.profile)
    fired = max(1, outcomes["fired"])
    return {
        "fired": outcomes["fired"],
        "outcomes": dict(outcomes),
        "cpu_ms": round(cpu / fired * 1e3, 3),
        "pg_cpu_ms": round(pg / fired * 1e3, 3),
        "wall_ms": round(wall / fired * 1e3, 3),
        "batch": args.batch,
        "games": args.games,
    }


if __name__ == "__main__":
    main()
