"""Page benchmark: each page's time at about 200 and about 2,000 events (the replay's at the
last event and 100 events before it).

On a database of its own (``imtheboss_bench_pages``, created and dropped here) two 4-seat games with
the same seed are played through ``imtheboss.web.games.submit.submit`` by sensible bots making the
same moves, until a deal is running past event ``--start`` (default 160) with at least one
negotiation ended before it. Then the seats chat in that running deal: one game up to 200 events,
the other up to 2,000. So both games show the same negotiations (the deals list and the page of the
last ended negotiation are the same page in both), the game page's chat panel the last 20 messages
of the running deal, the history's newest page 100 events: what differs is the length of the log
behind them. The worker's after-commit hooks are off (``TASKS``).

Each page is fetched by seat 0's signed-in browser (Flask test client, the whole request: routing,
session, database, templates; no app context around the requests, so each has its own, as in a
server), in rounds that alternate the two games so both see the same machine; a few untimed
rounds warm the caches first. It prints the median of ``--rounds`` requests per page and game,
and the ratio, of the wall time and of this process's CPU time (the Python side, without
PostgreSQL's: less shaken by other work on a shared machine); with ``--json`` the last line is one
JSON object of the wall times, ``{"<page>": {"200": ms, "2000": ms}, ...}``.

    .venv/bin/python bench/pages.py [--server postgresql+psycopg://postgres@127.0.0.1]
                                    [--rounds 30] [--start 160] [--seed 3] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from harness import Clock, next_move, own_database
from imtheboss.engine.bots import SensibleBot
from imtheboss.web import create_app
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import EventRecord, db
from sqlalchemy import func, select

DATABASE = "imtheboss_bench_pages"
PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla", "Dan")]
SIZES = (200, 2000)
WARM_ROUNDS = 3


def bot_move(gid: str, clock: Clock, rng: random.Random, bots: list[SensibleBot], key: str) -> bool:
    """One bot move (or a ``timeout``). False when the game is over."""
    state = load_state(get_game(gid))
    db.session.commit()
    found = next_move(state, clock, rng, bots)
    if found is None:
        return False
    clock.now += timedelta(minutes=1)
    with contextlib.suppress(ServiceError):  # a bot's choice the rules refuse changes nothing
        submit(gid, *found, key)
    return True


def ended_negotiations(gid: str) -> int:
    """How many negotiations of the game have ended (a ``deal_closed`` or ``deal_failed``)."""
    return db.session.execute(
        select(func.count()).where(
            EventRecord.game_id == gid, EventRecord.type.in_(("deal_closed", "deal_failed"))
        )
    ).scalar_one()


def build(clock: Clock, seed: int, start: int, size: int) -> tuple[str, list[str], int]:
    """A game played by bots until a deal runs past event ``start`` with one negotiation ended
    before it, then chat in that deal up to ``size`` events. Returns the game id, the seats'
    tokens and the number of negotiations shown (the last one is running)."""
    clock.now = Clock().now
    created = create_game("bench", PLAYERS, seed=seed)
    gid = created.game_id
    rng, bots = random.Random(seed), [SensibleBot() for _ in PLAYERS]
    moves = 0
    while True:
        game = get_game(gid)
        state = load_state(game)
        db.session.commit()
        if game.last_seq >= start and state.deal is not None and ended_negotiations(gid):
            break
        moves += 1
        if not bot_move(gid, clock, rng, bots, f"m{moves}"):
            raise SystemExit(f"the game ended before event {start}: use another --seed")
    n = 0
    while get_game(gid).last_seq < size:
        n += 1
        submit(gid, n % len(PLAYERS), {"do": "chat", "text": f"message {n}"}, f"c{n}")
    return gid, created.seat_tokens, ended_negotiations(gid) + 1


def page_paths(gid: str, shown: int, size: int) -> dict[str, str]:
    """The pages timed, by name: the deal page is the last negotiation that ended; the replay
    at the last event (the game's snapshot and the events after it) and 100 events before it,
    ``size - 100`` (from the start of the log in the short game, from the last checkpoint in
    the long one); the story (its newest page)."""
    base = f"/g/{gid}"
    return {
        "game": base,
        "fragment": f"{base}/fragment",
        "history": f"{base}/history",
        "deals": f"{base}/deals",
        "deal": f"{base}/deals/{shown - 1}",
        "inbox": f"{base}/inbox",
        "settings": f"{base}/settings",
        "orders": f"{base}/orders",
        "replay": f"{base}/replay",
        "replay -100": f"{base}/replay?at={size - 100}",
        "story": f"{base}/story",
    }


def time_pages(app: Any, games: dict[int, tuple[str, list[str], int]], rounds: int) -> dict:
    """``{page: {size: [(wall seconds, this process's CPU seconds)]}}``: every page of every game
    once a round, the games' order alternating."""
    clients = {}
    for size, (gid, tokens, _shown) in games.items():
        client = app.test_client()
        assert client.get(f"/g/{gid}/s/{tokens[0]}").status_code == 303
        clients[size] = client
    paths = {size: page_paths(gid, shown, size) for size, (gid, _t, shown) in games.items()}
    out: dict[str, dict[int, list[tuple[float, float]]]] = {
        name: {s: [] for s in games} for name in paths[SIZES[0]]
    }
    for r in range(WARM_ROUNDS + rounds):
        order = list(games) if r % 2 else list(games)[::-1]
        for name in out:
            for size in order:
                t0, cpu0 = time.perf_counter(), time.process_time()
                response = clients[size].get(paths[size][name])
                spent = (time.perf_counter() - t0, time.process_time() - cpu0)
                assert response.status_code == 200, (name, size, response.status_code)
                if r >= WARM_ROUNDS:
                    out[name][size].append(spent)
    return out


def run(url: str, rounds: int, start: int, seed: int, progress: Callable[[str], None]) -> dict:
    """Build the games, time the pages: ``{page: {"200": (wall ms, CPU ms), "2000": ...}}``,
    medians."""
    clock = Clock()  # after the games are built it stays at their last move: the pages' now
    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": url,
            "SECRET_KEY": "bench",
            "CLOCK": clock,
            "TASKS": False,
            "BASE_URL": "http://bench",
            "AUTO_MIGRATE": True,
            "RATELIMIT_ENABLED": False,  # thousands of chat messages from four seats
        }
    )
    with app.app_context():
        games = {}
        for size in SIZES:
            progress(f"building a game of {size} events")
            games[size] = build(clock, seed, start, size)
            gid, _tokens, shown_here = games[size]
            game = get_game(gid)
            progress(
                f"  {game.last_seq} events ({game.last_seq - game.snapshot_seq} after the"
                f" snapshot), {shown_here} negotiations (one running)"
            )
        db.session.remove()
    shown = {size: g[2] for size, g in games.items()}
    if len(set(shown.values())) != 1:
        raise SystemExit(f"the games differ in negotiations: {shown}")
    progress(f"timing {rounds} rounds")
    samples = time_pages(app, games, rounds)  # outside an app context: each request has its own
    with app.app_context():
        db.engine.dispose()
    return {
        name: {
            str(size): tuple(statistics.median(x) * 1e3 for x in zip(*s, strict=True))
            for size, s in by_size.items()
        }
        for name, by_size in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="page benchmark: 200 and 2,000 events")
    parser.add_argument("--server", default="postgresql+psycopg://postgres@127.0.0.1")
    parser.add_argument("--rounds", type=int, default=30, help="timed requests per page and game")
    parser.add_argument("--start", type=int, default=160, help="bot moves until this event")
    parser.add_argument("--seed", type=int, default=3, help="the games' seed (and the bots')")
    parser.add_argument("--json", action="store_true", help="a JSON object as the last line")
    args = parser.parse_args()
    with own_database(args.server, DATABASE) as url:
        figures = run(url, args.rounds, args.start, args.seed, lambda t: print(t, file=sys.stderr))
    print(f"\npage time on PostgreSQL, seat 0's browser, median of {args.rounds} requests")
    print("(wall: the whole request; CPU: this process's, without PostgreSQL's, less noisy)")
    head = ("page", "200 ev ms", "2000 ev ms", "ratio", "CPU 200", "CPU 2000", "ratio")
    print(f"{head[0]:<10}" + "".join(f"{h:>11}" for h in head[1:]))
    for name, by in figures.items():
        (small, cpu_small), (large, cpu_large) = by[str(SIZES[0])], by[str(SIZES[1])]
        row = (small, large, large / small, cpu_small, cpu_large, cpu_large / cpu_small)
        print(f"{name:<10}" + "".join(f"{x:>11.2f}" for x in row))
    if args.json:  # wall times
        print(
            json.dumps({n: {k: round(v[0], 3) for k, v in by.items()} for n, by in figures.items()})
        )


if __name__ == "__main__":
    main()
