"""Web benchmark: submit latency early and late in one game, and the floor.

On a database of its own (``imtheboss_bench``, created and dropped here) it plays one 6-seat
game through ``imtheboss.web.service.submit``: sensible bots' moves, timeouts when everyone waits,
and chat (chat keeps the game alive while the log grows). Around event ~20 and again around event
~2,000 it times a batch of submits: bot moves, chat through ``submit``, and chat posted through
the JSON API (Flask test client: JSON, bearer token, redaction included). In the same run it
times the floor: a bare ``SELECT ... FOR UPDATE`` of one row, one ``INSERT`` and ``COMMIT``
with psycopg on the same database. A warm-up game runs first, untimed. The worker's
after-commit hooks are off (``TASKS``), so this measures the database path only.

    .venv/bin/python bench/web.py [--server postgresql+psycopg://postgres@127.0.0.1]
                                  [--batch 200] [--far 2000] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg
from harness import Clock, drop, next_move, plain, recreate
from imtheboss.engine.bots import SensibleBot
from imtheboss.web import create_app
from imtheboss.web.models import db
from imtheboss.web.service import ServiceError, create_game, get_game, load_state, submit

DATABASE = "imtheboss_bench"
PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla", "Dan", "Eve", "Fay")]


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
        return get_game(self.id).last_seq

    def next_move(self) -> tuple[int | None, dict[str, Any]] | None:
        """The next bot move (seat, command), a ``timeout`` when everyone waits (the clock jumps
        to the deadline), or ``None`` when the game is over."""
        state = load_state(get_game(self.id))
        db.session.commit()
        return next_move(state, self.clock, self.rng, self.bots)

    def move(self) -> float | None:
        """Submit one bot move; its latency in seconds (``None``: game over)."""
        found = self.next_move()
        if found is None:
            return None
        seat, cmd = found
        self.clock.now += timedelta(minutes=1)
        t0 = time.perf_counter()
        try:  # a bot's choice the rules refuse costs the same round trip
            submit(self.id, seat, cmd, self.key())
        except ServiceError:
            self.refused += 1
        return time.perf_counter() - t0

    def chat(self, seat: int) -> float:
        """Submit one chat message; its latency in seconds."""
        t0 = time.perf_counter()
        submit(self.id, seat, {"do": "chat", "text": f"message {self.n}"}, self.key())
        return time.perf_counter() - t0

    def api_chat(self, client: Any, seat: int) -> float:
        """Post one chat message through the JSON API; its latency in seconds."""
        body = {"command": {"do": "chat", "text": f"api {self.n}"}, "idempotency_key": self.key()}
        headers = {"Authorization": f"Bearer {self.tokens[seat]}"}
        t0 = time.perf_counter()
        response = client.post(f"/api/games/{self.id}/commands", json=body, headers=headers)
        spent = time.perf_counter() - t0
        assert response.status_code == 201, response.get_json()
        return spent


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p99) in milliseconds."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return statistics.median(samples) * 1e3, cuts[98] * 1e3


def measure_point(game: Game, client: Any, batch: int) -> dict[str, list[float]]:
    """Submits at the game's current length, interleaved so all see the same log length:
    ``batch`` chats through ``submit``, ``batch`` through the API, and a bot move every third
    step (a whole game is only ~150-300 moves, and both points need some)."""
    out: dict[str, list[float]] = {"bot move (submit)": [], "chat (submit)": [], "chat (API)": []}
    for i in range(batch):
        if i % 3 == 0:
            spent = game.move()
            if spent is None:
                raise SystemExit("the game ended during a measurement: use another --seed")
            out["bot move (submit)"].append(spent)
        out["chat (submit)"].append(game.chat(i % len(game.tokens)))
        out["chat (API)"].append(game.api_chat(client, (i + 1) % len(game.tokens)))
    return out


def floor(server: str, count: int) -> list[float]:
    """A bare row lock + insert + commit with psycopg on the same database."""
    with psycopg.connect(f"{plain(server)}/{DATABASE}") as conn:
        conn.execute("CREATE TABLE floor_games (id text PRIMARY KEY, last_seq int NOT NULL)")
        conn.execute(
            "CREATE TABLE floor_events (id bigserial PRIMARY KEY, game_id text NOT NULL, "
            "seq int NOT NULL, body json NOT NULL, UNIQUE (game_id, seq))"
        )
        conn.execute("INSERT INTO floor_games VALUES ('g', 0)")
        conn.commit()
        out = []
        for seq in range(1, count + 21):
            t0 = time.perf_counter()
            conn.execute("SELECT last_seq FROM floor_games WHERE id = 'g' FOR UPDATE")
            conn.execute(
                "INSERT INTO floor_events (game_id, seq, body) VALUES ('g', %s, %s)",
                (seq, '{"type": "chat", "text": "x"}'),
            )
            conn.commit()
            if seq > 20:  # warm-up
                out.append(time.perf_counter() - t0)
        return out


def run(server: str, batch: int, far: int, seed: int, progress: Callable[[str], None]) -> None:
    """Play, measure and print the table."""
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
    rows: list[tuple[str, str, list[float]]] = []
    with app.app_context():
        warm = create_game("warm-up", PLAYERS, seed=seed + 1)  # caches, pool, plans: not timed
        warm_game = Game(warm.game_id, warm.seat_tokens, clock, seed=seed + 1)
        for i in range(100):
            warm_game.chat(i % len(PLAYERS))
            warm_game.api_chat(app.test_client(), i % len(PLAYERS))
            warm_game.move()
        created = create_game("bench", PLAYERS, seed=seed)
        game = Game(created.game_id, created.seat_tokens, clock, seed=seed)
        client = app.test_client()
        while game.last_seq() < 20:
            if game.move() is None:
                raise SystemExit("the game ended before event 20")
        start = game.last_seq()
        progress(f"measuring around event {start}")
        near = measure_point(game, client, batch)
        rows += [(name, f"{start}-{game.last_seq()}", s) for name, s in near.items()]
        progress(f"growing the log to {far} events")
        while game.last_seq() < far:
            for seat in range(len(game.tokens)):  # chat only: the game must not end here
                game.chat(seat)
        start = game.last_seq()
        progress(f"measuring around event {start}")
        late = measure_point(game, client, batch)
        rows += [(name, f"{start}-{game.last_seq()}", s) for name, s in late.items()]
        refused = game.refused
        db.session.remove()
        db.engine.dispose()
    rows.append(("floor: lock+insert+commit", "-", floor(server, batch)))
    print(f"\nsubmit latency on PostgreSQL ({server}); bot moves refused: {refused}")
    print(f"{'what':<28} {'events':>11} {'n':>5} {'p50 ms':>8} {'p99 ms':>8}")
    for name, where, samples in rows:
        p50, p99 = percentiles(samples)
        print(f"{name:<28} {where:>11} {len(samples):>5} {p50:>8.2f} {p99:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description="web benchmark: submit latency and the floor")
    parser.add_argument("--server", default="postgresql+psycopg://postgres@127.0.0.1")
    parser.add_argument("--batch", type=int, default=200, help="submits per kind and point")
    parser.add_argument("--seed", type=int, default=7, help="the game's seed (and the bots')")
    parser.add_argument("--far", type=int, default=2000, help="the late point's event number")
    args = parser.parse_args()
    recreate(args.server, DATABASE)
    try:
        run(args.server, args.batch, args.far, args.seed, lambda text: print(text, file=sys.stderr))
    finally:
        drop(args.server, DATABASE)


if __name__ == "__main__":
    main()
