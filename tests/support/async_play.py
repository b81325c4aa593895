"""Shared helpers for the variant, asynchronous-play and view tests (V1-V9, A1-A9).

``Table`` holds a game state, its event log and an explicit clock: every command is made at
``T0 + hours`` (never a real clock, never sleep). ``do`` decides and folds a command, ``refused``
checks a refusal (code, rule) and that it changed nothing, ``timeout`` sends the scheduler's
command.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from imtheboss.engine.board import Board, default_board, load_board
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game, position
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.views import awaiting, snapshot

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PLAYERS = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"]


def flat_board(shares: int = 2, required: Sequence[str] = ("C", "D")) -> Board:
    """A board whose 16 spaces all need ``required`` and pay ``shares``: wherever the die moves
    the marker, a deal needs the same letters."""
    return load_board([{"shares": shares, "required": list(required)}] * 16)


FLAT_BOARD: Board = flat_board()


def at(hours: float) -> datetime:
    """``T0`` plus ``hours``."""
    return T0 + timedelta(hours=hours)


def options(
    variants: Sequence[str] = (), windows: dict[str, int] | None = None, **extra
) -> Options:
    data: dict[str, Any] = {"variants": list(variants), **extra}
    if windows is not None:
        data["windows"] = windows
    return Options.from_json(data)


def names(cards: Sequence[int]) -> list[str]:
    """Card ids as names, in order."""
    return [CARD_NAMES[c] for c in cards]


def types(events: Sequence[Event]) -> list[str]:
    return [e.type for e in events]


def of_type(events: Sequence[Event], type_: str) -> list[Event]:
    return [e for e in events if e.type == type_]


class Table:
    """One game driven by explicit times. ``now`` (hours after ``T0``) is the time of the next
    command unless a command names its own ``h``."""

    def __init__(self, events: list[Event]) -> None:
        self.events: list[Event] = list(events)
        self.state: GameState = replay(self.events)
        self.now: float = 0.0

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def at_position(
        cls,
        spec: dict[str, Any],
        *,
        players: int = 4,
        variants: Sequence[str] = (),
        windows: dict[str, int] | None = None,
        board: Board | None = None,
        seed: int | str = 7,
        dice: Sequence[int] = (),
        **extra: Any,
    ) -> Table:
        opts = options(variants, windows, **extra)
        events = position(PLAYERS[:players], opts, board or default_board(), seed, T0, spec, dice)
        return cls(events)

    @classmethod
    def fresh(
        cls,
        *,
        players: int = 4,
        variants: Sequence[str] = (),
        seed: int | str = 7,
        dice: Sequence[int] = (),
        board: Board | None = None,
    ) -> Table:
        events = new_game(
            PLAYERS[:players], options(variants), board or default_board(), seed, T0, dice
        )
        return cls(events)

    # -- commands ----------------------------------------------------------------------------
    def command(
        self, seat: int | None, do: str, args: dict[str, Any] | None, h: float | None, kw
    ) -> Command:
        if h is not None:
            self.now = h
        return Command(do, seat, {**(args or {}), **kw}, at(self.now))

    def do(
        self,
        seat: int | None,
        do: str,
        args: dict[str, Any] | None = None,
        *,
        h: float | None = None,
        **kw: Any,
    ) -> list[Event]:
        """Decide ``do`` by ``seat`` at ``h`` (default: ``now``) and fold its events."""
        evs = decide(self.state, self.command(seat, do, args, h, kw))
        for e in evs:
            apply_in_place(self.state, e)
        self.events += evs
        return evs

    def timeout(self, h: float) -> list[Event]:
        return self.do(None, "timeout", h=h)

    def refused(
        self,
        seat: int | None,
        do: str,
        code: str,
        args: dict[str, Any] | None = None,
        *,
        rule: str | None = None,
        h: float | None = None,
        **kw: Any,
    ) -> RuleError:
        """Assert ``do`` is refused with ``code`` (and ``rule`` if given) and changes nothing."""
        before = snapshot(self.state)
        seq = self.state.seq
        with pytest.raises(RuleError) as info:
            decide(self.state, self.command(seat, do, args, h, kw))
        assert info.value.code == code, info.value
        if rule is not None:
            assert info.value.rule == rule, info.value
        assert snapshot(self.state) == before
        assert self.state.seq == seq
        return info.value

    # -- looking -----------------------------------------------------------------------------
    def hand(self, seat: int) -> list[str]:
        return names(self.state.hands[seat])

    @property
    def phase(self) -> str:
        return self.state.phase

    def waiting(self) -> list[tuple[int, str]]:
        """``awaiting`` as (seat, for) pairs."""
        return [(a["seat"], a["for"]) for a in awaiting(self.state)]

    def until(self, for_: str) -> set[datetime]:
        return {a["until"] for a in awaiting(self.state) if a["for"] == for_}

    def window_id(self) -> str:
        """The id of the open stop window or last call."""
        s = self.state
        if s.pending is not None:
            return s.pending.window.id
        assert s.last_call is not None
        return s.last_call.id

    def replayed(self) -> GameState:
        """Replay the log from JSON text (A9) and check it gives the same state."""
        text = json.dumps([e.to_json() for e in self.events])
        again = replay(Event.from_json(o) for o in json.loads(text))
        assert snapshot(again) == snapshot(self.state)
        return again


def close_now(t: Table, h: float | None = None) -> list[Event]:
    """The boss calls for closing (A3) and every seat the last call waits for passes."""
    evs = t.do(t.state.deal.boss, "close", h=h)
    while t.state.last_call is not None:
        seat = t.waiting()[0][0]
        evs += t.do(seat, "pass")
    return evs


def allow_all(t: Table) -> list[Event]:
    """Every seat the open stop window waits for answers ``allow`` (A2)."""
    evs: list[Event] = []
    while t.state.pending is not None:
        seat = next(s for s, f in t.waiting() if f == "stop")
        evs += t.do(seat, "allow")
    return evs
