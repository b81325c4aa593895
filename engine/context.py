"""The command context ``Ctx`` (a scratch state and the events decided so far) and the
argument parsing and checks that every rule section shares."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from imtheboss.engine import prices, quiet
from imtheboss.engine.board import LETTERS
from imtheboss.engine.cards import (
    CARD_NAMES,
    is_card_name,
)
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event, own_act
from imtheboss.engine.state import GameState, Window, apply_in_place, format_time

if TYPE_CHECKING:
    from imtheboss.engine.game import Command

INVESTOR_CARDS = frozenset(f"investor:{x}" for x in LETTERS)
MAX_PRICE = 10_000  # M; far above any proceeds (6 shares x 5 M), refuses absurd numbers
NEGOTIATION_PHASES = ("negotiation", "stop_window", "last_call")


class Ctx:
    """A scratch copy of the state and the events decided so far.

    ``mark`` (set with ``marked``) goes into the data of every event emitted meanwhile: ``{"order":
    True}`` while a seat's standing order acts (A10), ``{"proxy": True}`` while the server plays
    for an away seat (A11). In a game with the away proxy, the first event a seat's own command
    emits carries the command's time (``"at"``): the state keeps each seat's last own act. A
    command sent by mail (``Command.via``) marks the events of its own act ``{"via": "mail"}``
    (``events.own_act``: not the card it let take effect, nor the next turn)."""

    def __init__(self, state: GameState, command: Command) -> None:
        self.s = state.clone()
        self.cmd = command
        self.at = command.at
        self.events: list[Event] = []
        self.mark: dict[str, bool] | None = None
        self._stamped = False

    def emit(self, type_: str, data: dict[str, Any], by: int | None = None) -> None:
        own = not self.mark and by is not None and by == self.cmd.by
        if self.mark:
            data = {**data, **self.mark}
        elif own and self.cmd.via and own_act(type_, data, self.cmd.do):
            data = {**data, "via": self.cmd.via}  # metadata: no rule reads it
        if own and not self._stamped and self.s.options.proxy_hours:
            data = {**data, "at": format_time(self.at)}
            self._stamped = True
        event = Event(type_, data, by)
        apply_in_place(self.s, event)
        self.events.append(event)

    @contextmanager
    def marked(self, **mark: bool) -> Iterator[None]:
        """Mark the events emitted inside the block (see the class docstring)."""
        before, self.mark = self.mark, mark
        try:
            yield
        finally:
            self.mark = before

    def deadline(self, kind: str, waits_for: Iterable[int] = ()) -> str:
        """The deadline of a new window of ``kind`` (A1) as ISO text; under quiet hours (A12)
        moved past the nights of the seats it ``waits_for``."""
        due = self.at + self.s.options.window(kind)
        if self.s.options.quiet_hours:
            due = quiet.adjust(due, self.s.nights, waits_for)
        return format_time(due)

    @property
    def by(self) -> int:
        assert self.cmd.by is not None
        return self.cmd.by


def price_arg(value: Any) -> tuple[str, int]:
    if not isinstance(value, dict) or len(value) != 1:
        raise RuleError("bad_command", 'a price is {"cash": M} or {"shares": n}', "R4.2")
    kind, amount = next(iter(value.items()))
    if kind not in ("cash", "shares"):
        raise RuleError("bad_command", 'a price is {"cash": M} or {"shares": n}', "R4.2")
    if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= MAX_PRICE:
        raise RuleError("bad_command", f"a price is a whole number from 0 to {MAX_PRICE}", "R4.2")
    return kind, amount


def seat_arg(ctx: Ctx, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < ctx.s.n:
        raise RuleError("bad_command", "unknown seat")
    return value


def letter_arg(value: Any) -> str:
    if value not in LETTERS:
        raise RuleError(
            "invalid_target", f"{value!r} is not an investor letter (C D G L S W)", "R1.1"
        )
    return value


def card_name_arg(value: Any) -> str:
    if not isinstance(value, str) or not (is_card_name(value) or value in INVESTOR_CARDS):
        raise RuleError("bad_command", f"unknown card {value!r} (e.g. 'family:W', 'investor:C')")
    return value


def find_in_hand(ctx: Ctx, seat: int, name: str, count: int = 1) -> list[int]:
    hand = ctx.s.hands[seat]
    ids = [c for c in hand if CARD_NAMES[c] == name]
    if len(ids) < count:
        raise RuleError(
            "card_not_in_hand",
            f"{ctx.s.players[seat]} holds no {name}"
            if count == 1
            else f"{ctx.s.players[seat]} holds {len(ids)} {name}, needs {count}",
        )
    return ids[:count]


def window_arg(ctx: Ctx) -> Any:
    value = ctx.cmd.args.get("window")
    if value is not None and not isinstance(value, str):
        raise RuleError("bad_command", "window is a window id")
    return value


def turn_command(ctx: Ctx, phases: tuple[str, ...], rule: str) -> None:
    """A turn command (R3.1): from the active seat (checked first: another seat hears that it
    is not its turn, whatever the phase), in one of ``phases``. During a discard step (R6.6)
    the seat whose turn comes next counts as the active one (it hears ``wrong_phase``)."""
    s = ctx.s
    active = s.after_discard[0] if s.phase == "discard" and s.after_discard else s.active
    if ctx.by != active:
        raise RuleError("not_your_turn", f"it is {s.players[active]}'s turn", rule)
    if s.phase not in phases:
        raise RuleError("wrong_phase", f"{ctx.cmd.do} is not possible now ({s.phase})", rule)


def in_deal(ctx: Ctx, rule: str, *, last_call_ok: bool = False, pending_ok: bool = True) -> None:
    s = ctx.s
    if s.deal is None or s.phase not in NEGOTIATION_PHASES:
        raise RuleError("wrong_phase", f"{ctx.cmd.do} needs a running negotiation", rule)
    if s.phase == "stop_window" and not pending_ok:
        raise RuleError("card_pending", "a card is waiting out its stop window", "A2")
    if s.phase == "last_call" and not last_call_ok:
        raise RuleError(
            "wrong_phase", "the deal is in its last call: agreements cannot change", "A3"
        )


def new_card_allowed(ctx: Ctx) -> None:
    deal = ctx.s.deal
    if deal is not None and (deal.expired or ctx.at >= deal.window.deadline):
        raise RuleError(
            "deadline_passed", "the negotiation deadline has passed: no new cards", "A4"
        )


def needed_letter(ctx: Ctx, letter: str | None) -> str:
    space = ctx.s.board.spaces[ctx.s.deal.space]
    if letter is None or letter not in space.letters:
        raise RuleError("not_needed", f"this deal space does not use {letter}", "R4.2")
    return letter


def require_boss(ctx: Ctx, rule: str) -> None:
    if ctx.by != ctx.s.deal.boss:
        raise RuleError(
            "not_boss", f"only the boss ({ctx.s.players[ctx.s.deal.boss]}) may {ctx.cmd.do}", rule
        )


def card_play_phase(ctx: Ctx, rule: str) -> None:
    """Travel, recruit and boss cards: during a negotiation (non-boss during last call), not
    while another card waits out its stop window (A2)."""
    s = ctx.s
    if s.phase == "stop_window":
        raise RuleError("card_pending", "another card is waiting out its stop window", "A2")
    in_deal(ctx, rule, last_call_ok=True)
    if s.phase == "last_call" and ctx.by == s.deal.boss:
        raise RuleError(
            "wrong_phase", "the boss has called for closing; others answer the last call", "A3"
        )
    if s.phase == "last_call" and ctx.by in s.last_call.answered:
        raise RuleError("already_answered", "you passed in this last call", "A3")
    new_card_allowed(ctx)


def price_value(s: GameState, price: tuple[str, int]) -> int:
    return prices.price_value(*price, s.share_value)


def deal_proceeds(s: GameState) -> int:
    return prices.proceeds(s.board.spaces[s.deal.space].shares, s.share_value)


def fair_price_of(shares: int, investors: int, share_value: int) -> int:
    """A11's fair price (M) of one investor card for a space of ``shares`` shares needing
    ``investors`` investors at ``share_value`` M a share: the proceeds split evenly among the
    investors and the boss, at least 1 M. Public information only."""
    return max(1, prices.proceeds(shares, share_value) // (investors + 1))


def fair_price(s: GameState) -> int:
    """A11: the fair price (M) of one investor card in the running deal (``fair_price_of`` for
    its space at the current share value). The proxy, the ``fair`` posted prices and boss limits
    of standing orders (A10), the bots and bench/pace.py all use it."""
    space = s.board.spaces[s.deal.space]
    return fair_price_of(space.shares, space.investor_count, s.share_value)


def check_window(ctx: Ctx, window: Window | None, rule: str, none_code: str) -> Window:
    named = window_arg(ctx)
    if window is None or (named is not None and named != window.id):
        if named is not None:
            raise RuleError("window_closed", f"window {named} has ended", "A7")
        raise RuleError(none_code, "there is no window to answer", rule)
    if ctx.by in window.answered:
        raise RuleError("already_answered", "you have answered this window", rule)
    return window
