"""What the web benchmarks share (``bench/web.py``, ``bench/pages.py``): a PostgreSQL database of
their own, the app's clock, and the sensible bots' next move."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands, next_deadline


class Clock:
    """The app's clock: moves a minute per command, jumps to deadlines when everyone waits."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def plain(url: str) -> str:
    """A SQLAlchemy PostgreSQL URL as psycopg takes it."""
    return url.replace("postgresql+psycopg://", "postgresql://")


def recreate(server: str, name: str) -> None:
    """Drop and create the benchmark's own database ``name``."""
    with psycopg.connect(f"{plain(server)}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop(server: str, name: str) -> None:
    """Drop the benchmark's database ``name``."""
    with psycopg.connect(f"{plain(server)}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def own_database(server: str, name: str) -> Iterator[str]:
    """A fresh database ``name`` on ``server``, its URL while the block runs, dropped after."""
    recreate(server, name)
    try:
        yield f"{server}/{name}"
    finally:
        drop(server, name)


def next_move(
    state: GameState, clock: Clock, rng: random.Random, bots: list[SensibleBot]
) -> tuple[int | None, dict[str, Any]] | None:
    """The next bot move (seat, command), a ``timeout`` when one is due or everyone waits (the
    clock jumps to the deadline), or ``None`` when the game is over."""
    if state.phase == "game_over":
        return None
    due = next_deadline(state)
    if due is not None and due <= clock.now:
        return None, {"do": "timeout"}
    seats = list(range(state.n))
    rng.shuffle(seats)
    for seat in seats:
        legal = legal_commands(state, seat)
        choice = bots[seat].choose(state, seat, legal, rng) if legal else None
        if choice is not None:
            return seat, choice
    clock.now = max(clock.now, due) if due else clock.now + timedelta(hours=1)
    return None, {"do": "timeout"}
