"""Asking-mail benchmark: how long after the event a mail that asks for an answer reaches the
SMTP server while games are busy with news (p50/p99/max), beside the news itself.

``--games`` 3-seat games (8) are played by the sensible bots through
``imtheboss.web.games.submit.submit`` on the real clock, ``--rate`` moves a second in all (4), for
``--seconds`` (60), by an app whose after-commit hook enqueues the mail to Redis as the web
process does; the Procfile's mail worker runs as a subprocess (``celery ... worker -Q mail``,
beat embedded: the mail sweeps) and sends to an SMTP server of this process (aiosmtpd, which
notes each message's arrival time). Windows are long (hours): only the bots move the games, so
news (deals opened, agreements, deals closed...) keeps coming while terms and turns ask.
``BATCH_DELAY_SECONDS`` is the default, 180 s.

Measured per outbox row of an asking kind (``your_turn``, ``place_marker``, ``discard``,
``stop``, ``last_call``, and ``offer``: new terms) whose mail was sent: the end of its try
(``emailed_at``, written by the worker once the SMTP server accepted the message) minus the
row's ``created_at`` (the event's commit). News rows the same way, for comparison (news
still pending after the play is counted, not waited for). After the play it waits up to
``--drain`` seconds (200) for the asking rows still pending.

It uses a PostgreSQL database of its own, ``imtheboss_bench_asking_<pid>`` (created, then
dropped), and Redis database 12 (flushed before and after). ``--json`` prints one JSON object
as the last line.

    .venv/bin/python bench/asking_mail.py [--games 8] [--rate 4] [--seconds 60] [--drain 200]
        [--json] [--redis redis://127.0.0.1:6379/12] [--pg postgresql://postgres@127.0.0.1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import socket
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import redis
from aiosmtpd.controller import Controller

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deadlines import percentile, start_worker, stop_worker  # noqa: E402

DB_NAME = f"imtheboss_bench_asking_{os.getpid()}"
ASKING = ("your_turn", "place_marker", "discard", "stop", "last_call", "offer")
HOURS = {"windows": {"turn": 7200, "stop": 7200, "last_call": 7200, "negotiation": 14400}}


class Arrivals:
    """aiosmtpd handler: accepts every message and counts it."""

    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: N802 - aiosmtpd's name
        self.count += 1
        return "250 OK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--rate", type=float, default=4.0, help="moves per second, all games")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--drain", type=float, default=200.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1")
    return parser.parse_args()


def play(args: argparse.Namespace, games: list[str]) -> int:
    """The bots move the games, ``rate`` moves a second, for ``seconds``. Returns the moves."""
    from imtheboss.engine.bots import SensibleBot
    from imtheboss.engine.views import legal_commands
    from imtheboss.web.games.basics import ServiceError
    from imtheboss.web.games.load import get_game, load_state
    from imtheboss.web.games.submit import submit
    from imtheboss.web.models import db

    rng, bot, moves = random.Random(7), SensibleBot(), 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        gid = rng.choice(games)
        state = load_state(get_game(gid))
        db.session.rollback()
        for seat in rng.sample(range(state.n), state.n):
            legal = legal_commands(state, seat)
            choice = bot.choose(state, seat, legal, rng) if legal else None
            if choice is not None and choice["do"] != "timeout":
                with contextlib.suppress(ServiceError):
                    submit(gid, seat, choice, f"bench-{moves}")
                    moves += 1
                break
        time.sleep(1 / args.rate)
    return moves


def delays(kinds: tuple[str, ...], asking: bool, drain: float) -> tuple[list[float], int]:
    """Seconds from each sent row's ``created_at`` to the end of its try (``emailed_at``),
    rows of ``kinds`` (``asking``) or of the other kinds; and how many are still pending after
    waiting up to ``drain`` seconds for them."""
    from imtheboss.web.models import Notification, db
    from sqlalchemy import select

    chosen = Notification.kind.in_(kinds) if asking else Notification.kind.not_in(kinds)
    wanted = (chosen, Notification.seat_index >= 0, Notification.kind != "invited")
    end = time.monotonic() + drain
    while time.monotonic() < end:
        pending = db.session.execute(
            select(Notification.id).where(*wanted, Notification.email_state == "pending")
        ).all()
        db.session.rollback()
        if not pending:
            break
        time.sleep(2)
    rows = db.session.execute(
        select(Notification.created_at, Notification.emailed_at, Notification.email_state).where(
            *wanted
        )
    ).all()
    db.session.rollback()
    sent = [(e - c).total_seconds() for c, e, state in rows if state == "sent" and e]
    return sent, sum(1 for _c, _e, state in rows if state == "pending")


def figures(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"count": 0}
    return {
        "count": len(values),
        "p50_s": round(percentile(values, 50), 2),
        "p99_s": round(percentile(values, 99), 2),
        "max_s": round(max(values), 2),
    }


def run(args: argparse.Namespace, app, handler: Arrivals, log: Path) -> dict:
    """Make the games, play them, wait for the asking mail; the figures."""
    from imtheboss.web.games.create import create_game

    with app.app_context():
        games = [
            create_game(
                f"Bench {i}",
                [(f"P{s}", f"p{s}.g{i}@bench.example.org") for s in range(3)],
                HOURS,
                seed=i,
            ).game_id
            for i in range(args.games)
        ]
        started = datetime.now(UTC)
        moves = play(args, games)
        asking, asking_left = delays(ASKING, True, args.drain)
        news, news_left = delays(ASKING, False, 0)
    lines = log.read_text(errors="replace").splitlines()
    return {
        "games": args.games,
        "moves": moves,
        "seconds": round((datetime.now(UTC) - started).total_seconds()),
        "smtp_messages": handler.count,
        "asking": {**figures(asking), "still_pending": asking_left},
        "news": {**figures(news), "still_pending": news_left},
        "errors": sum(1 for line in lines if "ERROR/" in line),
    }


def main() -> None:
    args = parse_args()
    admin = psycopg.connect(f"{args.pg}/postgres", autocommit=True)
    admin.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    admin.execute(f'CREATE DATABASE "{DB_NAME}"')
    database_url = f"{args.pg}/{DB_NAME}"
    broker = redis.Redis.from_url(args.redis)
    broker.flushdb()
    handler, port = Arrivals(), free_port()
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd's line per command
    smtp = Controller(handler, hostname="127.0.0.1", port=port)
    smtp.start()
    folder = Path(tempfile.mkdtemp(prefix="bench-asking-"))
    settings = {
        "REDIS_URL": args.redis,
        "SECRET_KEY": "bench-asking",
        "BASE_URL": "http://bench.invalid",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(port),
        "MAIL_FROM": "boss@bench.example.org",
        "BEAT_SCHEDULE_FILE": str(folder / "celerybeat-schedule"),
        "RATELIMIT_ENABLED": "0",
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMTP_", "MAIL_", "CELERY"))}
    env.update(settings, DATABASE_URL=database_url)
    os.environ.update(settings)

    from imtheboss.web import create_app
    from imtheboss.web.models import db

    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": database_url.replace(
                "postgresql://", "postgresql+psycopg://"
            ),
            "TASKS": True,
            "AUTO_MIGRATE": True,
        }
    )
    log = folder / "mail.log"
    worker = start_worker(
        env,
        log,
        ["--concurrency", "4", "--without-gossip", "--without-mingle", "-B", "-Q", "mail"],
        "mail",
    )
    try:
        result = run(args, app, handler, log)
        print(
            f"{args.games} games, {result['moves']} moves in {args.seconds:g} s; "
            f"{handler.count} messages reached the SMTP server.\nasking mail, event to SMTP: "
            f"{result['asking']}\nnews, event to SMTP: {result['news']}\nworker log: {log}",
            flush=True,
        )
        if args.json:
            print(json.dumps(result))
    finally:
        stop_worker(worker)
        smtp.stop()
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
        broker.flushdb()
        broker.close()
        admin.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        admin.close()


if __name__ == "__main__":
    main()
