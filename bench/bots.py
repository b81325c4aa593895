"""Bot strength: how often one seat played by a policy wins among four other bots.

    .venv/bin/python bench/bots.py [--games 1000] [--seats 5] [--seed 1] [--field sensible|random]
        [--policy seat|server|sensible|random|proxy] [--json]

Each game is a whole engine game (``engine.simulate``) of ``--seats`` seats; the seat under test
turns round the table (game i: seat i mod seats), the others are all ``sensible`` or all
``random`` bots. The policies under test:

- ``seat``: ``engine.bots.SeatBot`` (the bot seats' bot: ``SensibleBot`` on the seat's own view,
  ``bots.seat_state``) with the brisk pace's orders (fair posted prices, a boss limit, close).
- ``server``: the bot seats' bot as the server runs it (``web.bots.choose``): a fresh
  ``SeatBot`` for each decision, so it keeps no memory between commits (how often it named
  terms in a deal), with the brisk pace's orders.
- ``sensible``: ``SensibleBot`` on the full state, no orders.
- ``random``: ``RandomBot``.
- ``proxy``: the away proxy (A11): the seat says it is away at once and the server plays for it
  from an hour later (``proxy_hours=1``) to the end.

A win is a share of the winners (R7.2: a tie splits it); a fair share is 1/seats. Output: a table
of win rates, or with ``--json`` one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from imtheboss.engine.bots import RandomBot, SeatBot, SensibleBot
from imtheboss.engine.orders import NO_ORDERS, pace_orders
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import GameState

POLICIES = ("seat", "server", "sensible", "random", "proxy")
FIELDS = ("sensible", "random")


class AwayBot:
    """The proxy policy's seat: says it is away (A6) once, then never acts; the proxy plays."""

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random):
        return None if state.away[seat] else {"do": "away", "away": True}


class FreshSeatBot:
    """The server's bot seat (``web.bots``): a new ``SeatBot`` for every decision."""

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random):
        return SeatBot().choose(state, seat, legal, rng)


def one_game(policy: str, field: str, seats: int, seed: str, index: int) -> float:
    """The share of the win of the seat under test in game ``index``."""
    mine = index % seats
    other = SensibleBot if field == "sensible" else RandomBot
    bots: list[Any] = [other() for _ in range(seats)]
    bots[mine] = {
        "seat": SeatBot,
        "server": FreshSeatBot,
        "sensible": SensibleBot,
        "random": RandomBot,
        "proxy": AwayBot,
    }[policy]()
    orders = [NO_ORDERS] * seats
    if policy in ("seat", "server"):
        orders[mine] = pace_orders("brisk")
    game = simulate(
        seats,
        f"bots:{seed}:{index}",
        bots=bots,
        orders=orders,
        proxy_hours=1 if policy == "proxy" else 0,
        max_commands=20_000,
    )
    winners = game.state.winners
    return 1 / len(winners) if mine in winners else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="bot strength: win rates")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seats", type=int, default=5)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--field", choices=FIELDS, action="append", help="default: both")
    parser.add_argument("--policy", choices=POLICIES, action="append", help="default: all")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.field = args.field or list(FIELDS)
    args.policy = args.policy or list(POLICIES)
    if args.games < 1 or not 3 <= args.seats <= 6:
        parser.error("--games is at least 1 and --seats 3 to 6")
    t0 = time.perf_counter()
    rates: dict[str, dict[str, float]] = {}
    for field in args.field:
        for policy in args.policy:
            wins = sum(one_game(policy, field, args.seats, args.seed, i) for i in range(args.games))
            rates.setdefault(field, {})[policy] = round(wins / args.games, 4)
            print(f"among {field}: {policy} {wins / args.games:.3f}", file=sys.stderr, flush=True)
    out = {
        "params": vars(args),
        "fair_share": round(1 / args.seats, 4),
        "win_rate": rates,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{args.games} games each, {args.seats} seats, seed {args.seed}; fair share "
        f"{out['fair_share']:.3f}"
    )
    print("policy     " + "".join(f"among {f:<10}" for f in args.field))
    for policy in args.policy:
        print(f"{policy:<11}" + "".join(f"{rates[f][policy]:<16.3f}" for f in args.field))


if __name__ == "__main__":
    main()
