"""Engine benchmark.

For whole simulated games of 3, 4, 5 and 6 seats it prints the number of events, the time to
replay the whole log from its JSON text (parse and fold every record: ``replay_json``, as the
server reads a stored log, no ``Event`` built), the same through ``Event`` objects
(``replay(map(Event.take_json, ...))``), the mean time of one ``decide``, and, measured in the
same run on the same text, the time of a bare ``json.loads`` (the floor for reading the log).

The replays and ``json.loads`` are timed in turns (``ROUNDS`` rounds, the fastest of each kept)
on the thread's CPU clock, so other processes on a shared machine shift them alike.

    .venv/bin/python bench/engine.py [--games N] [--bots sensible|mixed|random] [--json]

``--json`` prints one JSON object as the last line: ``replay_over_json``, the largest ratio
(replay / ``json.loads``, medians over the games) over the seat counts, and the rows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import GameState, apply_in_place, replay, replay_json

ROUNDS = 15
SEATS = (3, 4, 5, 6)


def fastest(fns: list[Callable[[], object]], rounds: int = ROUNDS, calls: int = 5) -> list[float]:
    """The fastest mean of ``calls`` runs of each of ``fns``, timed in turns over ``rounds``
    rounds on the thread's CPU clock, in seconds."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.thread_time()
            for _ in range(calls):
                fn()
            best[i] = min(best[i], (time.thread_time() - t0) / calls)
    return best


def measure(seats: int, seed: int, bots: str) -> dict[str, float]:
    """One game: events, commands, replay s, replay through events s, json.loads s, mean
    decide s."""
    commands: list[Command] = []

    def record(state: GameState, command: Command, events: list[Event]) -> None:
        commands.append(command)

    game = simulate(seats, seed, bots=bots, observer=record)
    text = json.dumps([e.to_json() for e in game.events])
    assert replay_json(json.loads(text)) == game.state, "replay must give the same game"
    t_json, t_replay, t_events = fastest(
        [
            lambda: json.loads(text),
            lambda: replay_json(json.loads(text)),
            lambda: replay(map(Event.take_json, json.loads(text))),
        ]
    )
    state = replay(game.events[:1])
    spent = 0.0
    for command in commands:
        t0 = time.perf_counter()
        events = decide(state, command)
        spent += time.perf_counter() - t0
        for event in events:
            apply_in_place(state, event)
    assert state == game.state, "re-deciding the commands must give the same game"
    return {
        "events": len(game.events),
        "commands": len(commands),
        "replay": t_replay,
        "events_replay": t_events,
        "json": t_json,
        "decide": spent / len(commands),
        "ratio": t_replay / t_json,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="engine benchmark")
    parser.add_argument("--games", type=int, default=5, help="games per seat count")
    parser.add_argument("--bots", default="mixed", choices=["sensible", "mixed", "random"])
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    print(f"{args.games} games per seat count, bots={args.bots}; medians over the games")
    print(
        f"{'seats':>5} {'events':>7} {'commands':>8} {'replay ms':>10} {'via Event ms':>12} "
        f"{'json.loads ms':>14} {'replay/json':>11} {'decide us':>10}"
    )
    rows = {}
    for seats in SEATS:
        games = [measure(seats, 1000 * seats + g, args.bots) for g in range(args.games)]
        row = {key: statistics.median(g[key] for g in games) for key in games[0]}
        rows[str(seats)] = row
        print(
            f"{seats:>5} {row['events']:>7.0f} {row['commands']:>8.0f} {row['replay'] * 1e3:>10.2f}"
            f" {row['events_replay'] * 1e3:>12.2f} {row['json'] * 1e3:>14.3f}"
            f" {row['ratio']:>11.2f} {row['decide'] * 1e6:>10.1f}"
        )
    if args.json:
        worst = max(row["ratio"] for row in rows.values())
        print(json.dumps({"replay_over_json": round(worst, 3), "seats": rows}))


if __name__ == "__main__":
    main()
