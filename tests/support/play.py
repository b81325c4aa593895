"""Whole games played by the engine's bots THROUGH ``imtheboss.web.games.submit.submit`` on the test
database, on the test clock (no sleeping: when nobody can act, the clock jumps to the next
deadline and the scheduler's ``timeout`` is submitted)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from imtheboss.engine.bots import Bot
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.submit import submit

MAX_COMMANDS = 3000
# Every phase a game can be in: the games of the hidden-information tests visit them all.
PHASES = {
    "place_marker",
    "turn_start",
    "after_roll",
    "negotiation",
    "stop_window",
    "last_call",
    "discard",
    "game_over",
}


def play_to_end(
    app: Any,
    clock: Any,
    gid: str,
    state: GameState,
    bots: Sequence[Bot],
    rng: random.Random,
    after: Callable[[GameState], None] | None = None,
) -> GameState:
    """Play game ``gid`` (now in ``state``) to its end with one bot per seat choosing among the
    legal commands (``rng`` decides who acts and how long each takes); ``after(state)`` runs
    after each accepted command. Returns the final state. A refusal other than a rule's (409)
    fails the test."""
    now, commands = clock.now, 0
    while state.phase != "game_over":
        assert commands < MAX_COMMANDS, "the game did not end"
        due = next_deadline(state)
        seat: int | None = None
        command: dict[str, Any] | None = None
        if due is not None and due <= now:
            command = {"do": "timeout"}
        else:
            for candidate in rng.sample(range(state.n), state.n):
                legal = legal_commands(state, candidate)
                choice = bots[candidate].choose(state, candidate, legal, rng) if legal else None
                if choice is not None:
                    seat, command = candidate, choice
                    break
        if command is None:
            now = max(now, due) if due else now + timedelta(hours=1)
            continue
        clock.now = now
        try:
            with app.app_context():
                result = submit(gid, seat, command, f"sim-{commands}", now)
        except ServiceError as exc:
            assert exc.status == 409, exc.to_dict()
            now += timedelta(minutes=1)
            continue
        commands += 1
        state = result.state
        now += timedelta(minutes=rng.randint(1, 45))
        if after is not None:
            after(state)
    return state
