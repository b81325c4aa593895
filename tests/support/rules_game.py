"""Shared helpers for the rules tests (R1-R7): a ``Game`` wrapping a state, commands by seat
name or index, and refusals that must change nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from imtheboss.engine.board import default_board, load_board
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game, position
from imtheboss.engine.state import apply_in_place, replay
from imtheboss.engine.views import next_deadline, snapshot

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PLAYERS = ("Ann", "Bob", "Cat", "Dan")
SEAT_ARGS = ("to", "with")

# One space per purpose, the rest filler. Space 0 is the usual deal space.
FILLER = {"shares": 2, "required": ["C", "D"], "choices": [], "investor_only": []}


def board_json(*spaces: dict[str, Any]) -> list[dict[str, Any]]:
    """A 16-space board: the given spaces first, then filler spaces (R1.4)."""
    full = [
        {"choices": [], "investor_only": [], **space}
        for space in spaces  # each space needs shares and required
    ]
    return full + [dict(FILLER) for _ in range(16 - len(full))]


# Space 0 needs C, S and W (3 shares); space 1 needs G and L (2 shares).
SMALL_BOARD = board_json(
    {"shares": 3, "required": ["C", "S", "W"]},
    {"shares": 2, "required": ["G", "L"]},
)


class Game:
    """A game in a chosen position. Seats may be given by name or index everywhere; ``spec``
    follows docs/scenarios.md ``state`` with player names (or seat indices) as keys."""

    def __init__(
        self,
        state: dict[str, Any] | None = None,
        *,
        players: tuple[str, ...] | list[str] = PLAYERS,
        options: dict[str, Any] | None = None,
        board: Any = None,
        seed: int | str = 1,
        dice: tuple[int, ...] | list[int] = (),
        fresh: bool = False,
    ) -> None:
        self.players = list(players)
        self.options = Options.from_json(options or {})
        self.board = (
            default_board() if board in (None, "default") else load_board(board)  # R1.4
        )
        if fresh:
            self.events = new_game(self.players, self.options, self.board, seed, T0, dice)
        else:
            spec = self._spec(state or {})
            self.events = position(self.players, self.options, self.board, seed, T0, spec, dice)
        self.state = replay(self.events)
        self.now = T0

    # -- names and seats -------------------------------------------------------------------
    def seat(self, who: str | int) -> int:
        return who if isinstance(who, int) else self.players.index(who)

    def _spec(self, state: dict[str, Any]) -> dict[str, Any]:
        spec = dict(state)
        for key in ("investors", "hands", "money"):
            if key in spec:
                spec[key] = {self.seat(k): v for k, v in spec[key].items()}
        if "active" in spec:
            spec["active"] = self.seat(spec["active"])
        return spec

    def _args(self, args: dict[str, Any]) -> dict[str, Any]:
        out = dict(args)
        for key in SEAT_ARGS:
            if isinstance(out.get(key), str):
                out[key] = self.seat(out[key])
        target = out.get("target")
        if isinstance(target, str) and "@" in target:
            card, _, owner = target.partition("@")
            if owner in self.players:
                out["target"] = f"{card}@{self.seat(owner)}"
        return out

    # -- commands --------------------------------------------------------------------------
    def command(self, who: str | int | None, do: str, **args: Any) -> Command:
        by = None if who is None else self.seat(who)
        return Command(do, by, self._args(args), self.now)

    def do(self, who: str | int | None, do: str, **args: Any) -> list[Event]:
        """Decide and fold one command; returns its events."""
        events = decide(self.state, self.command(who, do, **args))
        for event in events:
            apply_in_place(self.state, event)
        self.events += events
        return events

    def refused(
        self, who: str | int | None, do: str, code: str, rule: str | None = None, **args: Any
    ) -> RuleError:
        """Assert the command is refused with ``code`` (and ``rule``) and changes nothing."""
        before = snapshot(self.state)
        seq = self.state.seq
        with pytest.raises(RuleError) as info:
            decide(self.state, self.command(who, do, **args))
        assert info.value.code == code, f"{info.value!r}"
        if rule is not None:
            assert info.value.rule == rule, f"{info.value!r}"
        assert snapshot(self.state) == before
        assert self.state.seq == seq
        return info.value

    def timeout(self) -> list[Event]:
        """The scheduler's timeout at the earliest open deadline (A4-A6)."""
        due = next_deadline(self.state)
        assert due is not None
        self.now = max(self.now, due)
        return self.do(None, "timeout")

    def later(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def allow_all(self) -> None:
        """Every seat still waited for lets the pending card happen (A2)."""
        for who in self.snap()["window"]["waiting_for"]:
            self.do(who, "allow")

    def pass_all(self) -> None:
        """Every seat still waited for passes the last call (A3)."""
        for who in self.snap()["window"]["waiting_for"]:
            self.do(who, "pass")

    # -- looking ---------------------------------------------------------------------------
    def snap(self) -> dict[str, Any]:
        return snapshot(self.state)

    def hand(self, who: str | int) -> dict[str, int]:
        return self.snap()["hands"][self.players[self.seat(who)]]

    def types(self, events: list[Event]) -> list[str]:
        return [e.type for e in events]

    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def active(self) -> str:
        return self.players[self.state.active]

    @property
    def boss(self) -> str | None:
        deal = self.state.deal
        return None if deal is None else self.players[deal.boss]


def scenario_doc(**fields: Any) -> dict[str, Any]:
    """A scenario document (docs/scenarios.md) with the usual defaults."""
    doc: dict[str, Any] = {
        "format": "imtheboss-scenario/1",
        "players": list(PLAYERS),
        "seed": 1,
        "commands": [],
    }
    doc.update(fields)
    return doc


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
