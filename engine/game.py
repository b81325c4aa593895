"""``decide``: every rule check. A command either yields the events it causes or raises
``RuleError``; the state passed in is never changed (docs/architecture.md, the engine's contract).

Commands are ``Command(do, by, args, at)``: ``by`` is a seat (``None`` only for ``timeout``),
``at`` the aware UTC time the command was made (the engine reads no clock: window deadlines are
computed from it, A1).

The rules live one section a file: ``turn`` (R2.4, R3, R6.6, R6.7), ``negotiation`` (R4),
``influence`` (R5, A2), ``closing`` (R6, R7, A3, A4) and ``windows`` (A1, A4-A6); ``context``
holds what they share. This module checks what every command needs and hands it to its section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from imtheboss.engine import (
    closing,
    influence,
    negotiation,
    organiser,
    quiet,
    settle,
    turn,
    windows,
)
from imtheboss.engine.context import MAX_PRICE, Ctx
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.negotiation import MAX_CHAT
from imtheboss.engine.state import GameState
from imtheboss.engine.windows import due_windows

COMMANDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # do: (required args, optional args)
    "place_marker": (frozenset({"space"}), frozenset()),
    "roll": (frozenset(), frozenset()),
    "open_deal": (frozenset(), frozenset()),
    "draw": (frozenset(), frozenset()),
    "discard": (frozenset({"cards"}), frozenset()),
    "play_family": (frozenset({"card"}), frozenset()),
    "offer": (frozenset({"price"}), frozenset({"card"})),
    "propose": (frozenset({"to", "price"}), frozenset({"card"})),
    "accept": (frozenset({"with"}), frozenset({"letter", "price"})),
    "reject": (frozenset({"with"}), frozenset({"letter"})),
    "withdraw": (frozenset(), frozenset({"letter"})),
    "travel": (frozenset({"card", "target"}), frozenset()),
    "recruit": (frozenset({"target"}), frozenset()),
    "boss": (frozenset(), frozenset()),
    "stop": (frozenset(), frozenset({"window"})),
    "allow": (frozenset(), frozenset({"window"})),
    "close": (frozenset(), frozenset()),
    "pass": (frozenset(), frozenset({"window"})),
    "fail": (frozenset(), frozenset()),
    "timeout": (frozenset(), frozenset()),
    "extend": (frozenset({"seconds"}), frozenset()),
    "chat": (frozenset({"text"}), frozenset()),
    "away": (frozenset({"away"}), frozenset()),
    "present": (frozenset(), frozenset()),
    "orders": (frozenset({"orders"}), frozenset()),
    "night": (frozenset({"night"}), frozenset()),
    **organiser.ORGANISER_COMMANDS,  # A13
}

# sent by the server, never by a seat (the organiser's acts through the server, A13)
SYSTEM_COMMANDS = frozenset({"timeout", "extend", *organiser.ORGANISER_COMMANDS})
HANDLERS = {
    **turn.HANDLERS,
    **negotiation.HANDLERS,
    **influence.HANDLERS,
    **closing.HANDLERS,
    **windows.HANDLERS,
    **settle.HANDLERS,
    **quiet.HANDLERS,
    **organiser.HANDLERS,
}
__all__ = ["COMMANDS", "MAX_CHAT", "MAX_PRICE", "Command", "decide", "decide_state", "due_windows"]


@dataclass(frozen=True)
class Command:
    """One input. ``do`` names it (docs/scenarios.md table), ``by`` is the seat (``None`` for
    ``timeout``), ``args`` its arguments (cards by name, seats by index, prices as
    ``{"cash": M}``/``{"shares": n}``), ``at`` an aware UTC datetime. ``via``: how the seat sent
    it (``""``: a page or the API; ``"mail"``: a reply to a mail), metadata no rule reads: it
    marks the command's own events (``"via"`` in their data) so the history can say so."""

    do: str
    by: int | None
    args: dict[str, Any] = field(default_factory=dict)
    at: datetime | None = None
    via: str = ""


def decide(state: GameState, command: Command) -> list[Event]:
    """The events ``command`` causes in ``state``. Raises ``RuleError`` (code, message, rule id)
    when the rules refuse it; ``state`` is never changed."""
    return decide_state(state, command)[0]


def decide_state(state: GameState, command: Command) -> tuple[list[Event], GameState]:
    """``decide``, and the state after its events: the scratch copy they were folded into as
    they were decided (a caller that needs both saves a copy and a second fold)."""
    if command.at is None or command.at.tzinfo is None:
        raise RuleError("bad_command", "a command needs an aware UTC time 'at'")
    spec = COMMANDS.get(command.do)
    if spec is None:
        raise RuleError("bad_command", f"unknown command {command.do!r}")
    required, optional = spec
    args = command.args
    missing_args = required - set(args)
    if missing_args:
        raise RuleError("bad_command", f"{command.do} needs {', '.join(sorted(missing_args))}")
    extra = set(args) - required - optional
    if extra:
        raise RuleError("bad_command", f"{command.do} takes no {', '.join(sorted(extra))}")
    if state.phase == "game_over":
        raise RuleError("game_over", "the game is over", "R7.2")
    if command.do in SYSTEM_COMMANDS:
        if command.by is not None:
            raise RuleError("bad_command", f"{command.do} is sent by the server, not by a seat")
    elif not (
        isinstance(command.by, int)
        and not isinstance(command.by, bool)
        and 0 <= command.by < state.n
    ):
        raise RuleError("bad_command", "unknown seat")
    if (
        state.phase == "discard"
        and command.by in state.discard_owed
        and command.do not in ("discard", "recruit", "present")
    ):
        raise RuleError("hand_over_limit", "discard down to your hand limit first", "R6.6")
    ctx = Ctx(state, command)
    HANDLERS[command.do](ctx)
    settle.settle(ctx)  # standing orders and the away proxy answer at once (A10, A11)
    return ctx.events, ctx.s
