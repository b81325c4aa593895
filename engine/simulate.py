"""Whole simulated games with bots, on a simulated clock (no sleeping).

``simulate(players, seed, variants=..., bots="sensible")`` plays until the game ends and returns
a ``SimulatedGame`` with the event log and the final state. The scheduler is modelled exactly as
the worker will run it: whenever the clock reaches the next deadline, a ``timeout`` is decided.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from imtheboss.engine.board import Board, default_board
from imtheboss.engine.bots import BOTS, Bot
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.options import VARIANTS, Options
from imtheboss.engine.orders import Orders
from imtheboss.engine.setup import SetupError, new_game
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.views import legal_commands, next_deadline

NAMES = ["Amy", "Bill", "Carla", "David", "Erin", "Larry"]
START = datetime(2026, 1, 1, tzinfo=UTC)
MAX_COMMANDS = 20_000


class SimulationError(ValueError):
    """Bad simulation arguments, or a game that did not end within ``MAX_COMMANDS``."""


@dataclass
class SimulatedGame:
    """The result of ``simulate``: the log, the final state, and counts."""

    events: list[Event]
    state: GameState
    commands: int = 0
    refused: list[tuple[dict[str, Any], str]] = field(default_factory=list)


def simulate(
    players: int,
    seed: int | str,
    *,
    variants: list[str] | tuple[str, ...] = (),
    bots: str | list[Bot] = "sensible",
    board: Board | None = None,
    idle_seats: frozenset[int] = frozenset(),
    max_commands: int = MAX_COMMANDS,
    observer: Callable[[GameState, Command, list[Event]], None] | None = None,
    on_start: Callable[[GameState], None] | None = None,
    orders: list[Orders] | None = None,
    proxy_hours: int = 0,
) -> SimulatedGame:
    """Play a whole game. ``bots``: ``"sensible"``, ``"random"``, ``"mixed"`` or one bot per seat.
    ``idle_seats`` never act (their windows time out, A5/A6). ``observer(state, command,
    events)`` is called after each accepted command with the state after it (for tests).
    ``orders``: each seat's standing orders from the start (A10); ``proxy_hours``: the away
    proxy (A11). Raises ``SimulationError``."""
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        raise SimulationError(f"unknown variant {bad[0]!r}; use V1..V9")
    if not 2 <= players <= 6:
        raise SimulationError("players must be 2 to 6 (2 needs --variant V9)")
    rng = random.Random(f"sim:{seed}")
    if isinstance(bots, str):
        if bots == "mixed":
            seat_bots = [BOTS["random" if i % 2 else "sensible"]() for i in range(players)]
        elif bots in BOTS:
            seat_bots = [BOTS[bots]() for _ in range(players)]
        else:
            raise SimulationError(f"unknown bot {bots!r}")
    else:
        seat_bots = list(bots)
    options = Options.from_json({"variants": list(variants), "proxy_hours": proxy_hours})
    try:
        events = new_game(
            NAMES[:players], options, board or default_board(), seed, START, orders=orders
        )
    except SetupError as exc:
        raise SimulationError(str(exc)) from None
    state = replay(events)
    if on_start is not None:
        on_start(state)
    now = START
    game = SimulatedGame(events=events, state=state)
    while state.phase != "game_over":
        if game.commands >= max_commands:
            error = SimulationError(f"the game did not end within {max_commands} commands")
            error.game = game  # type: ignore[attr-defined]
            raise error
        due = next_deadline(state)
        if due is not None and due <= now:
            command = Command("timeout", None, {}, now)
        else:
            command = _next_bot_command(state, seat_bots, idle_seats, rng, now)
            if command is None:  # everyone waits: the clock jumps to the deadline
                now = max(now, due) if due else now + timedelta(hours=1)
                continue
        try:
            new = decide(state, command)
        except RuleError as exc:
            game.refused.append(({"do": command.do, "by": command.by, **command.args}, exc.code))
            now += timedelta(minutes=1)
            continue
        game.commands += 1
        for event in new:
            apply_in_place(state, event)
        events.extend(new)
        if observer is not None:
            observer(state, command, new)
        now += timedelta(minutes=rng.randint(1, 45))
    return game


def _next_bot_command(
    state: GameState, bots: list[Bot], idle: frozenset[int], rng: random.Random, now: datetime
) -> Command | None:
    seats = [s for s in range(state.n) if s not in idle]
    rng.shuffle(seats)
    for seat in seats:
        legal = legal_commands(state, seat)
        if not legal:
            continue
        choice = bots[seat].choose(state, seat, legal, rng)
        if choice is not None:
            args = {k: v for k, v in choice.items() if k != "do"}
            return Command(choice["do"], seat, args, now)
    return None
