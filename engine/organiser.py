"""The organiser's acts (A13): more time for an open window, or for every open window that waits
for one seat, with a reason the table reads; a seat passed to a new player.

Both are server commands (``by`` is ``None``, as ``timeout`` and ``extend``): no seat can send
them; the web layer sends them only for the game's organiser (its admin link). Their events
carry what they decided (each window's new deadline, the seat's new name), so a replay gives
the same deadlines without reading a clock or a time zone.

- ``extend_window`` ``{"minutes": 1..MAX_MINUTES, "reason": text, "window": id}`` or ``{...,
  "seat": n}``: the window named, or every open window that waits for seat ``n`` (its turn or
  discard step, a stop window or last call it owes an answer in, the negotiation it is boss
  of), ends ``minutes`` later. The away proxy's window (A11) is no answer and is not extended.
  Event ``window_extended`` ``{"windows": [{"window", "kind", "deadline"}], "minutes",
  "reason", "seat"}`` (``kind`` as ``awaiting``'s ``for``; ``deadline`` ISO 8601 UTC; ``seat``
  ``None`` for one window named).
- ``replace_player`` ``{"seat": n, "name": text}``: the seat passes to a new player. Event
  ``seat_replaced`` ``{"seat", "name", "was", "at"}``: the state names the seat ``name`` from
  then on; the new player starts afresh (not away, no misses, the recommended standing orders
  as a new seat of a server game, no night), with the seat's hand, money and investor cards.
  A bot seat passed to a person this way is a person's again.
- ``pass_to_bot`` ``{"seat": n}``: the server's bot plays the seat from now on (the seat keeps
  its name, cards and money; its standing orders become ``orders.bot_orders``). Refused when
  the seat is a bot's already, or when no seat would be left to a person (a game of bots only).
  Event ``seat_to_bot`` ``{"seat", "at"}``.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from imtheboss.engine.context import Ctx, seat_arg
from imtheboss.engine.errors import RuleError
from imtheboss.engine.state import GameState, Window, format_time
from imtheboss.engine.views import awaiting
from imtheboss.engine.windows import due_windows

MAX_MINUTES = 7 * 24 * 60  # one act gives at most a week more
MAX_REASON = 200  # characters
MAX_NAME = 40  # characters, as a seat's name at creation
# Control characters, lone surrogates, line and bidi controls (as the web's ``CONTROL``).
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

ORGANISER_COMMANDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "extend_window": (frozenset({"minutes", "reason"}), frozenset({"window", "seat"})),
    "replace_player": (frozenset({"seat", "name"}), frozenset()),
    "pass_to_bot": (frozenset({"seat"}), frozenset()),
    "pause_game": (frozenset(), frozenset()),
    "resume_game": (frozenset(), frozenset()),
    "change_email": (frozenset({"seat"}), frozenset()),
    "resend_invitation": (frozenset({"seat"}), frozenset()),
}

# What each of those acts appends: the event type, and whether it names a seat.
NOTED: dict[str, tuple[str, bool]] = {
    "pause_game": ("game_paused", False),
    "resume_game": ("game_resumed", False),
    "change_email": ("seat_email_changed", True),
    "resend_invitation": ("invitation_resent", True),
}


def text_arg(value: Any, what: str, longest: int) -> str:
    """``value`` as one line of 1 to ``longest`` characters (surrounding spaces dropped), with
    no control character. Raises ``RuleError`` ``bad_command`` (A13)."""
    if not isinstance(value, str) or CONTROL.search(value):
        raise RuleError("bad_command", f"{what} is one line of text", "A13")
    text = value.strip()
    if not 1 <= len(text) <= longest:
        raise RuleError("bad_command", f"{what} is 1 to {longest} characters", "A13")
    return text


def _minutes(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_MINUTES:
        raise RuleError("bad_command", f"minutes is a whole number from 1 to {MAX_MINUTES}", "A13")
    return value


def seat_windows(state: GameState, seat: int) -> list[Window]:
    """The open windows that wait for ``seat`` (``awaiting``), and the running negotiation
    while it is boss (also while a card waits out its stop window), earliest first."""
    owed = {a["window"] for a in awaiting(state) if a["seat"] == seat}
    deal = state.deal
    if deal is not None and deal.boss == seat and not deal.expired:
        owed.add(deal.window.id)
    return [w for w in due_windows(state) if w.id in owed]


def _chosen(ctx: Ctx) -> tuple[list[Window], int | None]:
    """The windows an ``extend_window`` names, and its seat (``None``: one window named)."""
    args = ctx.cmd.args
    if ("window" in args) == ("seat" in args):
        raise RuleError("bad_command", "name one window or one seat", "A13")
    if "seat" in args:
        seat = seat_arg(ctx, args["seat"])
        windows = seat_windows(ctx.s, seat)
        if not windows:
            raise RuleError("window_closed", "no open window waits for that seat", "A13")
        return windows, seat
    named = args["window"]
    found = [w for w in due_windows(ctx.s) if w.id == named and w.kind != "proxy"]
    if not found:
        raise RuleError("window_closed", f"window {named!r} is not open", "A13")
    return found, None


def _kind(ctx: Ctx, w: Window) -> str:
    """What the window asks, in ``awaiting``'s words (``place_marker`` for a first turn)."""
    asked = next((a["for"] for a in awaiting(ctx.s) if a["window"] == w.id), None)
    return asked or w.kind


def _extend_window(ctx: Ctx) -> None:
    """A13: the organiser gives a window (or a seat's windows) more time, saying why."""
    minutes = _minutes(ctx.cmd.args["minutes"])
    reason = text_arg(ctx.cmd.args["reason"], "reason", MAX_REASON)
    windows, seat = _chosen(ctx)
    shift = timedelta(minutes=minutes)
    moved = [
        {"window": w.id, "kind": _kind(ctx, w), "deadline": format_time(w.deadline + shift)}
        for w in windows
    ]
    data = {"windows": moved, "minutes": minutes, "reason": reason, "seat": seat}
    ctx.emit("window_extended", data, None)


def _replace_player(ctx: Ctx) -> None:
    """A13: the seat passes to a new player, named ``name`` (distinct from the other seats')."""
    seat = seat_arg(ctx, ctx.cmd.args["seat"])
    name = text_arg(ctx.cmd.args["name"], "name", MAX_NAME)
    others = [p for i, p in enumerate(ctx.s.players) if i != seat]
    if name in others:
        raise RuleError("bad_command", "another seat has that name", "A13")
    was = ctx.s.players[seat]
    data = {"seat": seat, "name": name, "was": was, "at": format_time(ctx.at)}
    ctx.emit("seat_replaced", data, None)


def _pass_to_bot(ctx: Ctx) -> None:
    """A13: the server's bot plays the seat from now on; a person must be left at the table."""
    seat = seat_arg(ctx, ctx.cmd.args["seat"])
    if ctx.s.bots[seat]:
        raise RuleError("bad_command", "a bot plays that seat already", "A13")
    if sum(not b for b in ctx.s.bots) <= 1:
        raise RuleError(
            "bots_only", "a game of bots only is refused: one seat is a person's", "A13"
        )
    ctx.emit("seat_to_bot", {"seat": seat, "at": format_time(ctx.at)}, None)


def _noted(ctx: Ctx) -> None:
    """A13: an act of the organiser that changes no rule's state, told to the table."""
    kind, names_seat = NOTED[ctx.cmd.do]
    data = {"seat": seat_arg(ctx, ctx.cmd.args["seat"])} if names_seat else {}
    ctx.emit(kind, data, None)


HANDLERS = {
    "extend_window": _extend_window,
    "replace_player": _replace_player,
    "pass_to_bot": _pass_to_bot,
    **{do: _noted for do in NOTED},
}
