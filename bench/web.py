"""Web benchmark: submit latency and round trips early and late in one game, and the floor.

On a database of its own (``imtheboss_bench_web_<pid>``, created and dropped here) it plays one
6-seat game through ``imtheboss.web.games.submit.submit``: sensible bots' moves, timeouts when
everyone waits, and chat (chat keeps the game alive while the log grows). Around event ~20 and again
around event ~2,000 it times a batch of submits: bot moves, chat through ``submit``, and chat posted
through the JSON API (Flask test client: JSON, bearer token, redaction included).

Interleaved with them, so that a shared machine's load falls on both alike, it times the floor:
the minimum statements of a chat with psycopg on the same tables (lock the game row, insert the
command and its events, update the game, commit) with the engine's ``decide`` inside the
transaction, on a game of its own whose state stays in memory. A warm-up game runs first,
untimed. The worker's after-commit hooks are off (``TASKS``), so this measures the database path
only.

Round trips are counted on the app's engine with SQLAlchemy's events: ``BEGIN`` (psycopg sends it
before a transaction's first statement), each statement, ``COMMIT``/``ROLLBACK``, and the pool's
pre-ping when there is one.

    .venv/bin/python bench/web.py [--server postgresql+psycopg://postgres@127.0.0.1]
                                  [--batch 200] [--far 2000] [--seed 7] [--json]

A process keeps the state it wrote last for a game (``store.STATES``), so its next submit there
reads only the events after it: the chats above are that case. "chat, another wrote last" is
a chat for which the process holds no state (as when another process wrote the game last), so
it reads the snapshot and the events after it.

``--json`` prints one JSON object as the last line: ``submit_p50_ms_20``, ``submit_p50_ms_2000``
(chat through ``submit``), ``min_statements_p50_ms`` (the floor, both points),
``round_trips_chat`` (the most any chat through ``submit`` took), ``cold_submit_p50_ms_20``,
``cold_submit_p50_ms_2000`` (another wrote last), and the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import psycopg
from harness import Clock, drop, next_move, plain, recreate
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.game import Command, decide
from imtheboss.engine.state import GameState, apply_in_place
from imtheboss.web import create_app
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import db
from imtheboss.web.store.rows import STATES
from psycopg.types.json import Json
from sqlalchemy import event

DATABASE = f"imtheboss_bench_web_{os.getpid()}"
PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla", "Dan", "Eve", "Fay")]
Sample = tuple[float, int]  # (seconds, round trips)


class RoundTrips:
    """Counts the round trips of the app's engine (see the module)."""

    def __init__(self, engine: Any) -> None:
        self.count = 0
        bump = self._bump
        for name in ("begin", "commit", "rollback"):
            event.listen(engine, name, lambda conn: bump())
        event.listen(engine, "before_cursor_execute", lambda *args: bump())
        ping = engine.dialect.do_ping

        def counted_ping(dbapi_connection: Any) -> bool:
            bump()
            return ping(dbapi_connection)

        engine.dialect.do_ping = counted_ping

    def _bump(self) -> None:
        self.count += 1

    @contextmanager
    def timed(self, out: list[Sample]) -> Iterator[None]:
        """Append ``(seconds, round trips)`` of the block to ``out``."""
        start, t0 = self.count, time.perf_counter()
        yield
        out.append((time.perf_counter() - t0, self.count - start))


class Game:
    """One game driven through ``submit``, with a counter for unique idempotency keys."""

    def __init__(self, game_id: str, tokens: list[str], clock: Clock, seed: int) -> None:
        self.id = game_id
        self.tokens = tokens
        self.clock = clock
        self.rng = random.Random(seed)
        self.bots = [SensibleBot() for _ in tokens]
        self.n = 0
        self.refused = 0

    def key(self) -> str:
        self.n += 1
        return f"k{self.n}"

    def last_seq(self) -> int:
        seq = get_game(self.id).last_seq
        db.session.commit()
        return seq

    def next_move(self) -> tuple[int | None, dict[str, Any]] | None:
        """The next bot move (seat, command), a ``timeout`` when everyone waits (the clock jumps
        to the deadline), or ``None`` when the game is over."""
        state = load_state(get_game(self.id))
        db.session.commit()
        return next_move(state, self.clock, self.rng, self.bots)

    def move(self, trips: RoundTrips, out: list[Sample]) -> bool:
        """Submit one bot move (timed into ``out``); ``False`` when the game is over."""
        found = self.next_move()
        if found is None:
            return False
        seat, cmd = found
        self.clock.now += timedelta(minutes=1)
        with trips.timed(out):
            try:  # a bot's choice the rules refuse costs the same round trip
                submit(self.id, seat, cmd, self.key())
            except ServiceError:
                self.refused += 1
        return True

    def chat(self, seat: int) -> None:
        """Submit one chat message."""
        submit(self.id, seat, {"do": "chat", "text": f"message {self.n}"}, self.key())

    def cold_chat(self, trips: RoundTrips, out: list[Sample]) -> None:
        """Submit one chat message as if another process had written the game last: this
        process holds no state of it (``STATES``), so the snapshot and the events after it are
        read (timed into ``out``)."""
        STATES.drop(self.id)
        with trips.timed(out):
            self.chat(0)

    def api_chat(self, client: Any, seat: int) -> None:
        """Post one chat message through the JSON API."""
        body = {"command": {"do": "chat", "text": f"api {self.n}"}, "idempotency_key": self.key()}
        headers = {"Authorization": f"Bearer {self.tokens[seat]}"}
        response = client.post(f"/api/games/{self.id}/commands", json=body, headers=headers)
        assert response.status_code == 201, response.get_json()


class Floor:
    """The minimum statements of one chat with psycopg on the benchmark's tables, the engine's
    ``decide`` inside the transaction, on a game of its own kept in memory."""

    def __init__(self, server: str, game_id: str, state: GameState, clock: Clock) -> None:
        self.conn = psycopg.connect(f"{plain(server)}/{DATABASE}")
        self.game_id = game_id
        self.state = state
        self.clock = clock
        self.n = 0

    def chat(self, out: list[Sample]) -> None:
        """One chat at the floor, timed into ``out`` (6 round trips)."""
        self.n += 1
        seat = self.n % self.state.n
        t0 = time.perf_counter()
        (last,) = self.conn.execute(
            "SELECT last_seq FROM games WHERE id = %s FOR UPDATE", (self.game_id,)
        ).fetchone()
        args = {"text": f"floor {self.n}"}
        events = decide(self.state, Command("chat", seat, args, self.clock.now))
        (command_id,) = self.conn.execute(
            "INSERT INTO commands (game_id, seat, scope, idempotency_key, body, first_seq,"
            " last_seq, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                self.game_id,
                seat,
                seat,
                f"f{self.n}",
                Json({"do": "chat", **args}),
                last + 1,
                last + len(events),
                self.clock.now,
            ),
        ).fetchone()
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(events))
        params = [
            x
            for i, e in enumerate(events)
            for x in (
                self.game_id,
                last + 1 + i,
                e.type,
                Json({"v": e.v, **e.data}),
                e.by,
                self.clock.now,
                command_id,
            )
        ]
        self.conn.execute(
            "INSERT INTO events (game_id, seq, type, body, seat, created_at, command_id)"
            f" VALUES {values}",
            params,
        )
        self.conn.execute(
            "UPDATE games SET last_seq = %s WHERE id = %s", (last + len(events), self.game_id)
        )
        self.conn.commit()
        out.append((time.perf_counter() - t0, 6))
        for e in events:  # the state after, outside the floor (the service needs it too)
            apply_in_place(self.state, e)


KINDS = (
    "bot move (submit)",
    "chat (submit)",
    "chat (API)",
    "floor: minimum statements",
    "chat, another wrote last",
)


def measure_point(
    game: Game, floor: Floor, trips: RoundTrips, client: Any, batch: int
) -> dict[str, list[Sample]]:
    """Submits at the game's current length, interleaved so all see the same log length and the
    same load: ``batch`` chats through ``submit``, ``batch`` through the API, ``batch`` at the
    floor, a bot move every third step (a whole game is only ~150-300 moves) and a chat as if
    another process wrote last every third step."""
    out: dict[str, list[Sample]] = {kind: [] for kind in KINDS}
    for i in range(batch):
        if i % 3 == 0 and not game.move(trips, out[KINDS[0]]):
            raise SystemExit("the game ended during a measurement: use another --seed")
        with trips.timed(out[KINDS[1]]):
            game.chat(i % len(game.tokens))
        with trips.timed(out[KINDS[2]]):
            game.api_chat(client, (i + 1) % len(game.tokens))
        floor.chat(out[KINDS[3]])
        if i % 3 == 1:
            game.cold_chat(trips, out[KINDS[4]])
    return out


def percentiles(samples: list[Sample]) -> tuple[float, float, float, int]:
    """(p50 ms, p99 ms, p50 round trips, most round trips)."""
    seconds = [s for s, _ in samples]
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    counts = [c for _, c in samples]
    return statistics.median(seconds) * 1e3, cuts[98] * 1e3, statistics.median(counts), max(counts)


def play(app: Any, server: str, clock: Clock, batch: int, far: int, seed: int, progress) -> dict:
    """Warm up, then measure near event 20 and near event ``far``: ``{point: {kind: samples}}``
    and the bot moves refused."""
    trips = RoundTrips(db.engine)
    client = app.test_client()
    warm = create_game("warm-up", PLAYERS, seed=seed + 1)  # caches, pool, plans: not timed
    warm_game = Game(warm.game_id, warm.seat_tokens, clock, seed=seed + 1)
    floor_game = create_game("floor", PLAYERS, seed=seed + 2).game_id
    floor = Floor(server, floor_game, load_state(get_game(floor_game)), clock)
    db.session.commit()
    scratch: list[Sample] = []
    for i in range(100):
        warm_game.chat(i % len(PLAYERS))
        warm_game.api_chat(client, i % len(PLAYERS))
        warm_game.move(trips, scratch)
        floor.chat(scratch)
    created = create_game("bench", PLAYERS, seed=seed)
    game = Game(created.game_id, created.seat_tokens, clock, seed=seed)
    while game.last_seq() < 20:
        if not game.move(trips, scratch):
            raise SystemExit("the game ended before event 20")
    points = {}
    for target in (20, far):
        while game.last_seq() < target:
            for seat in range(len(game.tokens)):  # chat only: the game must not end here
                game.chat(seat)
        start = game.last_seq()
        progress(f"measuring around event {start}")
        samples = measure_point(game, floor, trips, client, batch)
        points[target] = (f"{start}-{game.last_seq()}", samples)
    floor.conn.close()
    return {"points": points, "refused": game.refused}


def run(server: str, batch: int, far: int, seed: int, progress: Callable[[str], None]) -> dict:
    """Play, measure, print the table; the figures for ``--json``."""
    clock = Clock()
    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": f"{server}/{DATABASE}",
            "SECRET_KEY": "bench",
            "CLOCK": clock,
            "TASKS": False,
            "BASE_URL": "http://bench",
            "AUTO_MIGRATE": True,
            "RATELIMIT_ENABLED": False,  # one seat chats thousands of times: no chat limit
        }
    )
    with app.app_context():
        played = play(app, server, clock, batch, far, seed, progress)
        db.session.remove()
        db.engine.dispose()
    print(f"\nsubmit latency on PostgreSQL ({server}); bot moves refused: {played['refused']}")
    head = f"{'what':<27} {'events':>11} {'n':>5} {'p50 ms':>8} {'p99 ms':>8}"
    print(f"{head} {'trips':>6} {'max':>4}")
    figures: dict[str, Any] = {"rows": {}}
    for target, (where, samples) in played["points"].items():
        for kind, found in samples.items():
            p50, p99, trips, most = percentiles(found)
            print(
                f"{kind:<27} {where:>11} {len(found):>5} {p50:>8.2f} {p99:>8.2f} {trips:>6.0f}"
                f" {most:>4}"
            )
            figures["rows"][f"{kind} @{target}"] = {"p50_ms": p50, "p99_ms": p99, "trips": most}
        low = percentiles(samples[KINDS[3]])[0]
        for kind in (KINDS[1], KINDS[4]):
            print(f"{'':<27} {where:>11} {kind} / floor: {percentiles(samples[kind])[0] / low:.2f}")
    points = played["points"]
    floors = [s for _, samples in points.values() for s in samples[KINDS[3]]]
    chats = [s for _, samples in points.values() for s in samples[KINDS[1]]]
    figures.update(
        submit_p50_ms_20=percentiles(points[20][1][KINDS[1]])[0],
        submit_p50_ms_2000=percentiles(points[far][1][KINDS[1]])[0],
        min_statements_p50_ms=percentiles(floors)[0],
        round_trips_chat=max(c for _, c in chats),
        cold_submit_p50_ms_20=percentiles(points[20][1][KINDS[4]])[0],
        cold_submit_p50_ms_2000=percentiles(points[far][1][KINDS[4]])[0],
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description="web benchmark: submit latency and the floor")
    parser.add_argument("--server", default="postgresql+psycopg://postgres@127.0.0.1")
    parser.add_argument("--batch", type=int, default=200, help="submits per kind and point")
    parser.add_argument("--seed", type=int, default=7, help="the game's seed (and the bots')")
    parser.add_argument("--far", type=int, default=2000, help="the late point's event number")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    recreate(args.server, DATABASE)
    try:
        figures = run(
            args.server, args.batch, args.far, args.seed, lambda t: print(t, file=sys.stderr)
        )
    finally:
        drop(args.server, DATABASE)
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
