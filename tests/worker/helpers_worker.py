"""Helpers for the worker tests: bounded waiting, players, reading events back."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import redis
from helpers_wait import wait_for  # noqa: F401  (re-exported)
from imtheboss.engine.board import default_board
from imtheboss.engine.game import Command, decide
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.views import legal_commands
from imtheboss.web.models import EventRecord, db
from imtheboss.web.service import get_game, load_state, submit
from sqlalchemy import select


def players(tag: str, n: int = 3) -> list[tuple[str, str]]:
    """``n`` players with addresses unique to ``tag``."""
    return [(f"P{i}", f"p{i}.{tag}@example.net") for i in range(n)]


def timed_out_windows(game_id: str) -> list[str]:
    """The window ids of the game's ``timed_out`` events, in order (repeats kept)."""
    rows = db.session.execute(
        select(EventRecord.body)
        .where(EventRecord.game_id == game_id, EventRecord.type == "timed_out")
        .order_by(EventRecord.seq)
    ).all()
    db.session.rollback()
    return [body["window"] for (body,) in rows]


def flush_redis(url: str) -> None:
    """``FLUSHDB`` the tests' Redis database (that number only)."""
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


# -- planning positions on the pure engine (the tests do not hard-code cards) ----------------

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def engine_do(state: GameState, seat: int, cmd: dict[str, Any]) -> None:
    args = {k: v for k, v in cmd.items() if k != "do"}
    for event in decide(state, Command(cmd["do"], seat, args, AT)):
        apply_in_place(state, event)


def find_opening(
    n: int, accept: Callable[[GameState, int], bool], seeds: Iterable[int] = range(500)
) -> tuple[int, int]:
    """``(seed, space)``: the first seed and space where, once the first seat has placed the
    marker there and opened a deal, ``accept(state, space)`` holds."""
    names = [f"P{i}" for i in range(n)]
    for seed in seeds:
        start = replay(new_game(names, Options.from_json({}), default_board(), seed, AT))
        for space in range(16):
            state = start.clone()
            engine_do(state, state.active, {"do": "place_marker", "space": space})
            if not any(c["do"] == "open_deal" for c in legal_commands(state, state.active)):
                continue
            engine_do(state, state.active, {"do": "open_deal"})
            if accept(state, space):
                return seed, space
    raise AssertionError("no seed gives the position")


def uninvolved(state: GameState, space: int) -> list[int]:
    """The seats, other than the boss, holding none of the space's investor letters (their
    ``deal_opened`` notice is news, not a call to act)."""
    letters = state.board.spaces[space].letters
    return [
        seat
        for seat in range(state.n)
        if seat != state.deal.boss and not any(state.investors.get(x) == seat for x in letters)
    ]


def card_plays(state: GameState) -> list[tuple[int, dict[str, Any]]]:
    """``(seat, command)`` for every travel or boss card that can be played now (each opens a
    stop window, A2)."""
    return [
        (seat, cmd)
        for seat in range(state.n)
        for cmd in legal_commands(state, seat)
        if cmd["do"] in ("travel", "boss")
    ]


def act(game_id: str, seat: int, cmd: dict[str, Any], key: str) -> None:
    """Submit a seat's command through the service (the web's one way in)."""
    submit(game_id, seat, {k: v for k, v in cmd.items() if k not in ("needs", "count")}, key)


def legal(game_id: str, seat: int, do: str) -> list[dict[str, Any]]:
    """The seat's legal commands named ``do`` in the stored game."""
    state = load_state(get_game(game_id))
    db.session.rollback()
    return [c for c in legal_commands(state, seat) if c["do"] == do]
