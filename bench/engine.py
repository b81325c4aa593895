"""Engine benchmark.

For whole simulated games of 3, 4, 5 and 6 seats it prints the number of events, the time to
replay the whole log from its JSON text (parse, build events, fold), the mean time of one
``decide``, and, measured in the same run on the same text, the time of a bare ``json.loads``
(the floor for reading the log).

    .venv/bin/python bench/engine.py [--games N] [--bots sensible|mixed|random]
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
from imtheboss.engine.state import GameState, apply_in_place, replay


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` runs of ``fn()``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(seats: int, seed: int, bots: str) -> tuple[int, int, float, float, float]:
    """One game: (events, commands, replay s, json.loads s, mean decide s)."""
    commands: list[Command] = []

    def record(state: GameState, command: Command, events: list[Event]) -> None:
        commands.append(command)

    game = simulate(seats, seed, bots=bots, observer=record)
    text = json.dumps([e.to_json() for e in game.events])
    t_json = best_of(lambda: json.loads(text))
    t_replay = best_of(lambda: replay(Event.from_json(o) for o in json.loads(text)))
    state = replay(game.events[:1])
    spent = 0.0
    for command in commands:
        t0 = time.perf_counter()
        events = decide(state, command)
        spent += time.perf_counter() - t0
        for event in events:
            apply_in_place(state, event)
    assert state == game.state, "re-deciding the commands must give the same game"
    return len(game.events), len(commands), t_replay, t_json, spent / len(commands)


def main() -> None:
    parser = argparse.ArgumentParser(description="engine benchmark")
    parser.add_argument("--games", type=int, default=5, help="games per seat count")
    parser.add_argument("--bots", default="mixed", choices=["sensible", "mixed", "random"])
    args = parser.parse_args()
    print(f"{args.games} games per seat count, bots={args.bots}; medians over the games")
    print(
        f"{'seats':>5} {'events':>7} {'commands':>8} {'replay ms':>10} {'json.loads ms':>14} "
        f"{'replay/json':>11} {'decide us':>10}"
    )
    for seats in (3, 4, 5, 6):
        rows = [measure(seats, 1000 * seats + g, args.bots) for g in range(args.games)]
        ev, cm, rp, js, dc = (statistics.median(r[i] for r in rows) for i in range(5))
        print(
            f"{seats:>5} {ev:>7.0f} {cm:>8.0f} {rp * 1e3:>10.2f} {js * 1e3:>14.3f} "
            f"{rp / js:>11.1f} {dc * 1e6:>10.1f}"
        )


if __name__ == "__main__":
    main()
