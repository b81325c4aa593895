"""``decide``: every rule check. A command either yields the events it causes or raises
``RuleError``; the state passed in is never changed (docs/architecture.md, the engine's contract).

Commands are ``Command(do, by, args, at)``: ``by`` is a seat (``None`` only for ``timeout``),
``at`` the aware UTC time the command was made (the engine reads no clock: window deadlines are
computed from it, A1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from imtheboss.engine.board import LETTERS
from imtheboss.engine.cards import (
    CARD_NAMES,
    LAST_TILE,
    TILE_END_NUMBERS,
    card_kind,
    card_letter,
    is_card_name,
)
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.lineup import can_supply, lineup, missing
from imtheboss.engine.rng import die, shuffled
from imtheboss.engine.state import GameState, Terms, Window, apply_in_place, format_time

COMMANDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # do: (required args, optional args)
    "place_marker": (frozenset({"space"}), frozenset()),
    "roll": (frozenset(), frozenset()),
    "open_deal": (frozenset(), frozenset()),
    "draw": (frozenset(), frozenset()),
    "discard": (frozenset({"cards"}), frozenset()),
    "play_family": (frozenset({"card"}), frozenset()),
    "offer": (frozenset({"card", "price"}), frozenset()),
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
}

INVESTOR_CARDS = frozenset(f"investor:{x}" for x in LETTERS)
MAX_PRICE = 10_000  # M; far above any proceeds (6 shares x 5 M), refuses absurd numbers
MAX_CHAT = 2000
SYSTEM_COMMANDS = frozenset({"timeout", "extend"})  # sent by the server, never by a seat
MAX_EXTEND = 365 * 86400  # seconds
NEGOTIATION_PHASES = ("negotiation", "stop_window", "last_call")


@dataclass(frozen=True)
class Command:
    """One input. ``do`` names it (docs/scenarios.md table), ``by`` is the seat (``None`` for
    ``timeout``), ``args`` its arguments (cards by name, seats by index, prices as
    ``{"cash": M}``/``{"shares": n}``), ``at`` an aware UTC datetime."""

    do: str
    by: int | None
    args: dict[str, Any] = field(default_factory=dict)
    at: datetime | None = None


class _Ctx:
    """A scratch copy of the state and the events decided so far."""

    def __init__(self, state: GameState, command: Command) -> None:
        self.s = state.clone()
        self.cmd = command
        self.at = command.at
        self.events: list[Event] = []

    def emit(self, type_: str, data: dict[str, Any], by: int | None = None) -> None:
        event = Event(type_, data, by)
        apply_in_place(self.s, event)
        self.events.append(event)

    def deadline(self, kind: str) -> str:
        return format_time(self.at + self.s.options.window(kind))

    @property
    def by(self) -> int:
        assert self.cmd.by is not None
        return self.cmd.by


def decide(state: GameState, command: Command) -> list[Event]:
    """The events ``command`` causes in ``state``. Raises ``RuleError`` (code, message, rule id)
    when the rules refuse it; ``state`` is never changed."""
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
        and command.do not in ("discard", "recruit")
    ):
        raise RuleError("hand_over_limit", "discard down to your hand limit first", "R6.6")
    ctx = _Ctx(state, command)
    _HANDLERS[command.do](ctx)
    return ctx.events


# -- argument parsing ------------------------------------------------------------------------


def _price(value: Any) -> tuple[str, int]:
    if not isinstance(value, dict) or len(value) != 1:
        raise RuleError("bad_command", 'a price is {"cash": M} or {"shares": n}', "R4.2")
    kind, amount = next(iter(value.items()))
    if kind not in ("cash", "shares"):
        raise RuleError("bad_command", 'a price is {"cash": M} or {"shares": n}', "R4.2")
    if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= MAX_PRICE:
        raise RuleError("bad_command", f"a price is a whole number from 0 to {MAX_PRICE}", "R4.2")
    return kind, amount


def _seat_arg(ctx: _Ctx, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < ctx.s.n:
        raise RuleError("bad_command", "unknown seat")
    return value


def _letter_arg(value: Any) -> str:
    if value not in LETTERS:
        raise RuleError(
            "invalid_target", f"{value!r} is not an investor letter (C D G L S W)", "R1.1"
        )
    return value


def _card_name_arg(value: Any) -> str:
    if not isinstance(value, str) or not (is_card_name(value) or value in INVESTOR_CARDS):
        raise RuleError("bad_command", f"unknown card {value!r} (e.g. 'family:W', 'investor:C')")
    return value


def _find_in_hand(ctx: _Ctx, seat: int, name: str, count: int = 1) -> list[int]:
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


def _window_value(ctx: _Ctx) -> Any:
    value = ctx.cmd.args.get("window")
    if value is not None and not isinstance(value, str):
        raise RuleError("bad_command", "window is a window id")
    return value


# -- shared checks ---------------------------------------------------------------------------


def _turn_command(ctx: _Ctx, phases: tuple[str, ...], rule: str) -> None:
    s = ctx.s
    if s.phase not in phases:
        raise RuleError("wrong_phase", f"{ctx.cmd.do} is not possible now ({s.phase})", rule)
    if ctx.by != s.active:
        raise RuleError("not_your_turn", f"it is {s.players[s.active]}'s turn", rule)


def _in_deal(ctx: _Ctx, rule: str, *, last_call_ok: bool = False, pending_ok: bool = True) -> None:
    s = ctx.s
    if s.deal is None or s.phase not in NEGOTIATION_PHASES:
        raise RuleError("wrong_phase", f"{ctx.cmd.do} needs a running negotiation", rule)
    if s.phase == "stop_window" and not pending_ok:
        raise RuleError("card_pending", "a card is waiting out its stop window", "A2")
    if s.phase == "last_call" and not last_call_ok:
        raise RuleError(
            "wrong_phase", "the deal is in its last call: agreements cannot change", "A3"
        )


def _new_card_allowed(ctx: _Ctx) -> None:
    deal = ctx.s.deal
    if deal is not None and (deal.expired or ctx.at >= deal.window.deadline):
        raise RuleError(
            "deadline_passed", "the negotiation deadline has passed: no new cards", "A4"
        )


def _needed_letter(ctx: _Ctx, letter: str | None) -> str:
    space = ctx.s.board.spaces[ctx.s.deal.space]
    if letter is None or letter not in space.letters:
        raise RuleError("not_needed", f"this deal space does not use {letter}", "R4.2")
    return letter


def _boss(ctx: _Ctx, rule: str) -> None:
    if ctx.by != ctx.s.deal.boss:
        raise RuleError(
            "not_boss", f"only the boss ({ctx.s.players[ctx.s.deal.boss]}) may {ctx.cmd.do}", rule
        )


def _card_play_phase(ctx: _Ctx, rule: str) -> None:
    """Travel, recruit and boss cards: during a negotiation (non-boss during last call), not
    while another card waits out its stop window (A2)."""
    s = ctx.s
    if s.phase == "stop_window":
        raise RuleError("card_pending", "another card is waiting out its stop window", "A2")
    _in_deal(ctx, rule, last_call_ok=True)
    if s.phase == "last_call" and ctx.by == s.deal.boss:
        raise RuleError(
            "wrong_phase", "the boss has called for closing; others answer the last call", "A3"
        )
    if s.phase == "last_call" and ctx.by in s.last_call.answered:
        raise RuleError("already_answered", "you passed in this last call", "A3")
    _new_card_allowed(ctx)


def _price_value(s: GameState, price: tuple[str, int]) -> int:
    return price[1] if price[0] == "cash" else price[1] * s.share_value


def _proceeds(s: GameState) -> int:
    return s.board.spaces[s.deal.space].shares * s.share_value


# -- turn commands (R2.4, R3) ---------------------------------------------------------------


def _place_marker(ctx: _Ctx) -> None:
    _turn_command(ctx, ("place_marker",), "R2.4")
    space = ctx.cmd.args["space"]
    if (
        isinstance(space, bool)
        or not isinstance(space, int)
        or not 0 <= space < 16
        or space in ctx.s.covered
    ):
        raise RuleError("invalid_target", "the marker goes on an uncovered deal space 0-15", "R2.4")
    ctx.emit("marker_placed", {"seat": ctx.by, "space": space}, ctx.by)


def _move(s: GameState, steps: int) -> int:
    space = s.marker
    while steps:
        space = (space + 1) % 16
        if space not in s.covered:
            steps -= 1
    return space


def _roll_die(ctx: _Ctx, purpose: str, seat: int | None, by: int | None) -> int:
    s = ctx.s
    if s.forced_dice:
        value, source = s.forced_dice[0], "forced"
    else:
        value, source = die(s.seed, s.rng_count), "rng"
    data: dict[str, Any] = {"seat": seat, "value": value, "source": source, "purpose": purpose}
    if purpose == "move":
        data["space"] = _move(s, value)
    ctx.emit("die_rolled", data, by)
    return value


def _roll(ctx: _Ctx) -> None:
    _turn_command(ctx, ("turn_start",), "R3.1")
    _roll_die(ctx, "move", ctx.by, ctx.by)


def _open_deal(ctx: _Ctx) -> None:
    s = ctx.s
    _turn_command(ctx, ("turn_start", "after_roll"), "R3.1")
    if s.phase == "turn_start" and not s.may_deal_in_place:
        raise RuleError("must_roll", "right after a closed deal you must roll first", "R3.5")
    _check_can_deal(s, ctx.by)
    _do_open_deal(ctx, ctx.by, ctx.by)


def _check_can_deal(s: GameState, seat: int) -> None:
    if s.options.has("V5") and len(s.hands[seat]) < 4:
        raise RuleError(
            "cannot_deal", "with fewer than 4 influence cards you may not open a deal", "V5"
        )


def _do_open_deal(ctx: _Ctx, seat: int, by: int | None) -> None:
    ctx.emit(
        "deal_opened",
        {
            "boss": seat,
            "space": ctx.s.marker,
            "window": f"w{ctx.s.window_seq}",
            "deadline": ctx.deadline("negotiation"),
        },
        by,
    )


def _draw_count(s: GameState, seat: int) -> int:
    if s.options.has("V4"):  # V4: 0 -> 4, 1 -> 3, 2 -> 2, 3+ -> 1
        return max(1, 4 - len(s.seat_investors(seat)))
    return 3


def _draw(ctx: _Ctx) -> None:
    s = ctx.s
    _turn_command(ctx, ("after_roll",), "R3.1")
    if s.must_deal:
        raise RuleError(
            "must_deal", "you must open a deal this turn", "V2" if s.options.has("V2") else "V3"
        )
    _do_draw(ctx, ctx.by, ctx.by)


def _do_draw(ctx: _Ctx, seat: int, by: int | None, auto_discard: bool = False) -> None:
    """R3.1 draw, R6.7 reshuffle, then R6.6 hand limit, then R3.2 the turn passes."""
    s = ctx.s
    need = _draw_count(s, seat)
    cards: list[int] = []
    while need:
        if not s.draw_pile:
            if not s.discard_pile:
                break
            if cards:
                ctx.emit("cards_drawn", {"seat": seat, "cards": cards}, by)
                cards = []
            ctx.emit(
                "pile_reshuffled", {"draw_pile": shuffled(s.seed, s.rng_count, s.discard_pile)}, by
            )
            continue
        take = s.draw_pile[:need]
        cards += take
        need -= len(take)
        if len(take) == len(s.draw_pile):
            ctx.emit("cards_drawn", {"seat": seat, "cards": cards}, by)
            cards = []
    if cards:
        ctx.emit("cards_drawn", {"seat": seat, "cards": cards}, by)
    if auto_discard and len(s.hands[seat]) > s.hand_limit():  # A5: the newest cards go
        newest = s.hands[seat][s.hand_limit() :]
        ctx.emit("cards_discarded", {"seat": seat, "cards": newest}, None)
    _end_turn(ctx, s.left_of(seat), True, by)


def _end_turn(ctx: _Ctx, next_seat: int, may_deal_in_place: bool, by: int | None) -> None:
    """Before the next turn: everyone above the hand limit discards (R6.6)."""
    s = ctx.s
    limit = s.hand_limit()
    owed = {str(seat): len(h) - limit for seat, h in enumerate(s.hands) if len(h) > limit}
    if owed:
        ctx.emit(
            "discard_step",
            {
                "owed": owed,
                "next": next_seat,
                "may_deal_in_place": may_deal_in_place,
                "window": f"w{s.window_seq}",
                "deadline": ctx.deadline("turn"),
            },
            by,
        )
    else:
        _start_turn(ctx, next_seat, may_deal_in_place, by)


def _start_turn(ctx: _Ctx, seat: int, may_deal_in_place: bool, by: int | None) -> None:
    s = ctx.s
    must = False
    if s.options.has("V2") and len(s.hands[seat]) >= 10:
        must = True
    if s.options.has("V3") and s.had_turn[seat] and not s.acted_since_turn[seat]:
        must = True
    if s.options.has("V5") and len(s.hands[seat]) < 4:
        must = False  # V5 wins over V2/V3: a seat that may not deal is not made to
    ctx.emit(
        "turn_started",
        {
            "seat": seat,
            "may_deal_in_place": may_deal_in_place,
            "must_deal": must,
            "window": f"w{s.window_seq}",
            "deadline": ctx.deadline("turn"),
        },
        by,
    )


def _discard(ctx: _Ctx) -> None:
    s = ctx.s
    if s.phase != "discard":
        raise RuleError("wrong_phase", "discarding is for a hand above its limit", "R6.6")
    owed = s.discard_owed.get(ctx.by)
    if not owed:
        raise RuleError("not_your_turn", "your hand is within its limit", "R6.6")
    names = ctx.cmd.args["cards"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise RuleError("bad_command", "cards is a list of card names")
    if len(names) > owed:
        raise RuleError("bad_command", f"discard at most {owed} card(s)", "R6.6")
    hand = list(s.hands[ctx.by])
    ids = []
    for name in names:
        match = [c for c in reversed(hand) if CARD_NAMES[c] == name]  # the newest such card
        if not match:
            raise RuleError("card_not_in_hand", f"you hold no (more) {name}", "R6.6")
        hand.remove(match[0])
        ids.append(match[0])
    ctx.emit("cards_discarded", {"seat": ctx.by, "cards": ids}, ctx.by)
    _discard_done(ctx, ctx.by)


def _discard_done(ctx: _Ctx, by: int | None) -> None:
    s = ctx.s
    if not s.discard_owed and s.phase == "discard" and s.after_discard is not None:
        seat, may = s.after_discard
        _start_turn(ctx, seat, may, by)


# -- negotiation (R4) ------------------------------------------------------------------------


def _play_family(ctx: _Ctx) -> None:
    _in_deal(ctx, "R4.1")
    _boss(ctx, "R4.1")
    name = _card_name_arg(ctx.cmd.args["card"])
    if card_kind(name) != "family":
        raise RuleError("bad_command", "play_family plays a family card", "R4.1")
    _needed_letter(ctx, card_letter(name))
    if card_letter(name) in ctx.s.board.spaces[ctx.s.deal.space].investor_only:
        raise RuleError(
            "invalid_target", f"only the investor card may fill {name[-1]} here", "R1.4"
        )
    _new_card_allowed(ctx)
    (card,) = _find_in_hand(ctx, ctx.by, name)
    ctx.emit("family_played", {"seat": ctx.by, "card": card}, ctx.by)


def _offer(ctx: _Ctx) -> None:
    s = ctx.s
    _in_deal(ctx, "R4.2")
    if ctx.by == s.deal.boss:
        raise RuleError("bad_command", "the boss names terms with propose", "R4.3")
    name = _card_name_arg(ctx.cmd.args["card"])
    price = _price(ctx.cmd.args["price"])
    kind, letter = card_kind(name), card_letter(name)
    if kind not in ("investor", "family") or letter is None:
        raise RuleError("bad_command", "an offer puts forward an investor or family card", "R4.2")
    _needed_letter(ctx, letter)
    if (ctx.by, letter) in s.deal.agreements:
        raise RuleError("already_agreed", f"you already have an agreement for {letter}", "R4.3")
    if kind == "investor":
        if s.investors.get(letter) != ctx.by:
            raise RuleError("invalid_target", f"you do not control investor {letter}", "R4.2")
        if letter in s.deal.travel_on:
            raise RuleError("invalid_target", f"investor {letter} is on travel", "R5.1")
    else:
        if letter in s.board.spaces[s.deal.space].investor_only:
            raise RuleError(
                "invalid_target", f"only the investor card may fill {letter} here", "R1.4"
            )
        on_table = any(o == ctx.by and CARD_NAMES[c] == name for c, o in s.deal.table_family)
        if not on_table:
            _new_card_allowed(ctx)
            (card,) = _find_in_hand(ctx, ctx.by, name)
            ctx.emit("family_played", {"seat": ctx.by, "card": card}, ctx.by)
    ctx.emit(
        "terms_set",
        {
            "provider": ctx.by,
            "letter": letter,
            "price": {price[0]: price[1]},
            "by_side": "provider",
            "card": name,
        },
        ctx.by,
    )


def _propose(ctx: _Ctx) -> None:
    s = ctx.s
    _in_deal(ctx, "R4.3")
    _boss(ctx, "R4.3")
    to = _seat_arg(ctx, ctx.cmd.args["to"])
    if to == ctx.by:
        raise RuleError("bad_command", "the boss proposes terms to another player", "R4.3")
    price = _price(ctx.cmd.args["price"])
    name = ctx.cmd.args.get("card")
    letter = None
    if name is not None:
        name = _card_name_arg(name)
        kind, letter = card_kind(name), card_letter(name)
        if kind not in ("investor", "family") or letter is None:
            raise RuleError("bad_command", "terms name an investor or family card, or none", "R4.3")
        _needed_letter(ctx, letter)
        if kind == "investor" and letter in s.deal.travel_on:
            raise RuleError("invalid_target", f"investor {letter} is on travel", "R5.1")
        if kind == "investor" and s.investors.get(letter) != to:
            raise RuleError(
                "invalid_target", f"{s.players[to]} does not control investor {letter}", "R4.3"
            )
    if (to, letter) in s.deal.agreements:
        raise RuleError("already_agreed", f"{s.players[to]} already has that agreement", "R4.3")
    ctx.emit(
        "terms_set",
        {
            "provider": to,
            "letter": letter,
            "price": {price[0]: price[1]},
            "by_side": "boss",
            "card": name,
        },
        ctx.by,
    )


def _answerable_terms(ctx: _Ctx) -> Terms:
    """The terms the command's seat may accept or reject: the other side's current terms."""
    s = ctx.s
    other = _seat_arg(ctx, ctx.cmd.args["with"])
    boss = s.deal.boss
    if ctx.by == boss:
        provider, side = other, "provider"
    elif other == boss:
        provider, side = ctx.by, "boss"
    else:
        raise RuleError("not_boss", "terms are made between the boss and one player", "R4.3")
    found = [t for (p, _), t in s.deal.terms.items() if p == provider and t.by == side]
    if "letter" in ctx.cmd.args:
        letter = ctx.cmd.args["letter"]
        found = [t for t in found if t.letter == letter]
    if not found:
        raise RuleError(
            "no_terms", f"{s.players[other]} has no terms open for you to answer", "R4.3"
        )
    if len(found) > 1:
        raise RuleError("bad_command", "several terms are open: name the letter", "R4.3")
    return found[0]


def _accept(ctx: _Ctx) -> None:
    s = ctx.s
    _in_deal(ctx, "R4.3")
    terms = _answerable_terms(ctx)
    if "price" in ctx.cmd.args and _price(ctx.cmd.args["price"]) != terms.price:
        raise RuleError(
            "terms_changed",
            f"the terms changed since you looked: now {terms.price[1]} {terms.price[0]}",
            "A7",
        )
    total = sum(_price_value(s, t.price) for t in s.deal.agreements.values()) + _price_value(
        s, terms.price
    )
    if total > _proceeds(s):
        raise RuleError(
            "over_proceeds",
            f"agreements would total {total} M, above the proceeds of {_proceeds(s)} M",
            "R4.4",
        )
    if (
        terms.card
        and card_kind(terms.card) == "family"
        and not can_supply(s, terms.provider, terms.letter)
    ):
        if ctx.by != terms.provider:
            raise RuleError("invalid_target", "that player has no such card on the table", "R4.3")
        _new_card_allowed(ctx)
        (card,) = _find_in_hand(ctx, ctx.by, terms.card)
        ctx.emit("family_played", {"seat": ctx.by, "card": card}, ctx.by)
    if terms.letter is not None and not can_supply(s, terms.provider, terms.letter):
        raise RuleError(
            "invalid_target",
            f"{s.players[terms.provider]} has no card for {terms.letter} that can take part",
            "R4.7",
        )
    ctx.emit(
        "agreement_made",
        {
            "provider": terms.provider,
            "letter": terms.letter,
            "price": {terms.price[0]: terms.price[1]},
            "card": terms.card,
        },
        ctx.by,
    )


def _reject(ctx: _Ctx) -> None:
    _in_deal(ctx, "R4.3")
    terms = _answerable_terms(ctx)
    ctx.emit(
        "terms_removed",
        {"provider": terms.provider, "letter": terms.letter, "reason": "rejected"},
        ctx.by,
    )


def _withdraw(ctx: _Ctx) -> None:
    s = ctx.s
    _in_deal(ctx, "R4.2")
    mine = [t for (p, _), t in s.deal.terms.items() if p == ctx.by and t.by == "provider"]
    if "letter" in ctx.cmd.args:
        mine = [t for t in mine if t.letter == ctx.cmd.args["letter"]]
    if not mine:
        raise RuleError("no_terms", "you have no open offer to withdraw", "R4.2")
    for t in mine:
        ctx.emit(
            "terms_removed", {"provider": ctx.by, "letter": t.letter, "reason": "withdrawn"}, ctx.by
        )


# -- influence cards (R5, A2) ----------------------------------------------------------------


def _open_stop_window(ctx: _Ctx, kind: str, cards: list[int], target: str | None) -> None:
    s = ctx.s
    data = {
        "seat": ctx.by,
        "kind": kind,
        "cards": cards,
        "target": target,
        "window": f"w{s.window_seq}",
        "deadline": ctx.deadline("stop"),
        "cancels_close": s.phase == "last_call",
        "owner": _target_owner(s, target),
    }
    ctx.emit("card_pending", data, ctx.by)
    _maybe_resolve_stop(ctx, ctx.by)


def _target_owner(s: GameState, target: str | None) -> int | None:
    """Whose card a travel targets (public: investor cards and table cards lie face up)."""
    if target is None or s.deal is None:
        return None
    if target.startswith("investor:"):
        return s.investors.get(target.split(":")[1])
    if target.startswith("family:"):
        card = int(target.split(":")[1])
        return next((o for c, o in s.deal.table_family if c == card), None)
    return s.investors.get(target)  # recruit: the letter's current controller


def _travel(ctx: _Ctx) -> None:
    s = ctx.s
    _card_play_phase(ctx, "R5.1")
    name = _card_name_arg(ctx.cmd.args["card"])
    if card_kind(name) != "travel":
        raise RuleError("bad_command", "travel plays a travel card", "R5.1")
    target = ctx.cmd.args["target"]
    if not isinstance(target, str):
        raise RuleError(
            "invalid_target", "name the target like 'investor:S' or 'family:W@1'", "R5.1"
        )
    wild = name == "travel:*"
    if target.startswith("investor:"):
        letter = target.split(":", 1)[1]
        if letter not in LETTERS or letter not in s.board.spaces[s.deal.space].letters:
            raise RuleError("invalid_target", f"{target} cannot take part in this deal", "R5.1")
        owner = s.investors[letter]
        if owner is None:
            raise RuleError("invalid_target", f"investor {letter} is in the side pool", "R5.1")
        if letter in s.deal.travel_on:
            raise RuleError("invalid_target", f"investor {letter} is already on travel", "R5.1")
        if not wild and card_letter(name) != letter:
            raise RuleError("invalid_target", f"{name} only targets {card_letter(name)}", "R5.3")
        if owner == ctx.by and not s.options.two_player_rules(s.n):
            raise RuleError("own_investor", "you may not send your own investor on travel", "R5.1")
        resolved = f"investor:{letter}"
    elif target.startswith("family:") and "@" in target:
        fam, _, owner_text = target.partition("@")
        letter = card_letter(fam)
        try:
            owner = int(owner_text)
        except ValueError:
            raise RuleError("invalid_target", f"unknown seat in {target}", "R5.2") from None
        cards = [c for c, o in s.deal.table_family if o == owner and CARD_NAMES[c] == fam]
        if letter is None or not cards:
            raise RuleError("invalid_target", f"no {fam} of that player lies on the table", "R5.2")
        if not wild and card_letter(name) != letter:
            raise RuleError("invalid_target", f"{name} only targets {card_letter(name)}", "R5.3")
        resolved = f"family:{cards[0]}"
    else:
        raise RuleError(
            "invalid_target", "name the target like 'investor:S' or 'family:W@1'", "R5.1"
        )
    (card,) = _find_in_hand(ctx, ctx.by, name)
    _open_stop_window(ctx, "travel", [card], resolved)


def _recruit(ctx: _Ctx) -> None:
    s = ctx.s
    if s.phase == "discard":
        if s.pending is not None:
            raise RuleError("card_pending", "another card is waiting out its stop window", "A2")
        if ctx.by not in s.discard_owed:
            raise RuleError(
                "not_your_turn", "only a seat above its hand limit may recruit now", "R6.6"
            )
    else:
        _card_play_phase(ctx, "R5.4")
    letter = _letter_arg(ctx.cmd.args["target"])
    if s.investors.get(letter) == ctx.by:
        raise RuleError("own_investor", f"you already control {letter}", "R5.4")
    if s.side_pool and letter not in s.side_pool:
        raise RuleError(
            "side_pool_first",
            "while the side pool holds investors, recruit from it: " + ", ".join(s.side_pool),
            "R5.4",
        )
    have = [c for c in s.hands[ctx.by] if CARD_NAMES[c] == "recruit"]
    if len(have) < 3:
        raise RuleError(
            "not_enough_recruits", f"a recruit takes 3 recruit cards; you hold {len(have)}", "R5.4"
        )
    _open_stop_window(ctx, "recruit", have[:3], letter)


def _boss_card(ctx: _Ctx) -> None:
    s = ctx.s
    _card_play_phase(ctx, "R5.5")
    if ctx.by == s.deal.boss:
        raise RuleError("not_boss", "you are the boss already", "R5.5")
    (card,) = _find_in_hand(ctx, ctx.by, "boss")
    _open_stop_window(ctx, "boss", [card], None)


def _stop_eligible(s: GameState) -> set[int]:
    return {seat for seat in range(s.n) if seat != s.pending.seat and not s.away[seat]}


def _check_window(ctx: _Ctx, window: Window | None, rule: str, none_code: str) -> Window:
    named = _window_value(ctx)
    if window is None or (named is not None and named != window.id):
        if named is not None:
            raise RuleError("window_closed", f"window {named} has ended", "A7")
        raise RuleError(none_code, "there is no window to answer", rule)
    if ctx.by in window.answered:
        raise RuleError("already_answered", "you have answered this window", rule)
    return window


def _stop(ctx: _Ctx) -> None:
    s = ctx.s
    window = _check_window(ctx, s.pending.window if s.pending else None, "R5.6", "nothing_to_stop")
    if ctx.by == s.pending.seat:
        raise RuleError("nothing_to_stop", "you played the pending card", "R5.6")
    (card,) = _find_in_hand(ctx, ctx.by, "stop")
    ctx.emit("card_stopped", {"seat": ctx.by, "card": card, "window": window.id}, ctx.by)
    _after_stop_window(ctx, ctx.by)


def _allow(ctx: _Ctx) -> None:
    s = ctx.s
    window = _check_window(ctx, s.pending.window if s.pending else None, "A2", "nothing_to_stop")
    if ctx.by == s.pending.seat:
        raise RuleError("nothing_to_stop", "you played the pending card", "A2")
    ctx.emit("window_answered", {"seat": ctx.by, "window": window.id, "answer": "allow"}, ctx.by)
    _maybe_resolve_stop(ctx, ctx.by)


def _maybe_resolve_stop(ctx: _Ctx, by: int | None) -> None:
    s = ctx.s
    if s.pending is not None and not (_stop_eligible(s) - s.pending.window.answered):
        _take_effect(ctx, by)


def _take_effect(ctx: _Ctx, by: int | None) -> None:
    """A2: the pending card takes effect; then R4.7/R5.5 lapses."""
    s = ctx.s
    kind = s.pending.kind
    ctx.emit(
        "card_took_effect",
        {
            "window": s.pending.window.id,
            "kind": kind,
            "seat": s.pending.seat,
            "target": s.pending.target,
        },
        by,
    )
    if s.deal is not None:
        if kind == "boss":
            for p, letter in list(s.deal.agreements) + list(s.deal.terms):
                ctx.emit("terms_removed", {"provider": p, "letter": letter, "reason": "lapsed"}, by)
        else:
            for p, letter in list(s.deal.agreements) + list(s.deal.terms):
                if letter is not None and not can_supply(s, p, letter):
                    ctx.emit(
                        "terms_removed", {"provider": p, "letter": letter, "reason": "lapsed"}, by
                    )
    _after_stop_window(ctx, by)


def _after_stop_window(ctx: _Ctx, by: int | None) -> None:
    s = ctx.s
    if s.deal is not None and s.deal.expired:
        _finish_expired(ctx, by)
    elif s.deal is None and s.phase == "discard":
        _discard_done(ctx, by)


# -- closing and failing (R6, A3, A4) -------------------------------------------------------


def _close(ctx: _Ctx) -> None:
    s = ctx.s
    _in_deal(ctx, "R6.1", pending_ok=False)
    _boss(ctx, "R6.1")
    if lineup(s) is None:
        raise RuleError("requirements_not_met", "still missing: " + ", ".join(missing(s)), "R6.1")
    if s.deal.expired or ctx.at >= s.deal.window.deadline:  # A4: no card may answer a last call
        _close_deal(ctx, ctx.by)
        return
    ctx.emit(
        "close_called",
        {"boss": ctx.by, "window": f"w{s.window_seq}", "deadline": ctx.deadline("last_call")},
        ctx.by,
    )
    _maybe_close(ctx, ctx.by)


def _last_call_eligible(s: GameState) -> set[int]:
    return {seat for seat in range(s.n) if seat != s.deal.boss and not s.away[seat]}


def _maybe_close(ctx: _Ctx, by: int | None) -> None:
    s = ctx.s
    if s.last_call is not None and not (_last_call_eligible(s) - s.last_call.answered):
        _close_deal(ctx, by)


def _pass(ctx: _Ctx) -> None:
    s = ctx.s
    if s.deal is not None and ctx.by == s.deal.boss and s.last_call is not None:
        raise RuleError("not_your_turn", "the boss does not answer the last call", "A3")
    window = _check_window(ctx, s.last_call, "A3", "wrong_phase")
    ctx.emit("window_answered", {"seat": ctx.by, "window": window.id, "answer": "pass"}, ctx.by)
    _maybe_close(ctx, ctx.by)


def _fail(ctx: _Ctx) -> None:
    _in_deal(ctx, "R6.5", last_call_ok=True, pending_ok=False)
    _boss(ctx, "R6.5")
    _fail_deal(ctx, ctx.by, "declared")


def _finish_expired(ctx: _Ctx, by: int | None) -> None:
    """A4: once no window is open, the deal closes if its requirements are met, else fails."""
    s = ctx.s
    if s.pending is not None or s.last_call is not None:
        return
    if lineup(s) is not None:
        _close_deal(ctx, by)
    else:
        _fail_deal(ctx, by, "deadline")


def _close_deal(ctx: _Ctx, by: int | None) -> None:
    """R6.2-R6.4 and R7.2: pay, dispose of the cards, cover the space, maybe end the game."""
    s = ctx.s
    deal = s.deal
    chosen = lineup(s)
    if chosen is None:  # cannot happen after a last call; stay safe
        _fail_deal(ctx, by, "requirements_not_met")
        return
    proceeds = _proceeds(s)
    payments = [0] * s.n
    payments[deal.boss] += proceeds
    agreements = []
    for t in deal.agreements.values():
        value = _price_value(s, t.price)
        payments[deal.boss] -= value
        payments[t.provider] += value
        agreements.append({**t.to_json(), "amount": value})
    auto = sorted({src.seat for src in chosen.values() if src.auto})
    if auto:  # V9: split what is left equally; the boss keeps the odd millions
        rest = payments[deal.boss]
        share = rest // (len(auto) + 1)
        for seat in auto:
            payments[seat] += share
            payments[deal.boss] -= share
    used_family = {src.card for src in chosen.values() if src.kind == "family"}
    returned: dict[str, list[int]] = {}
    discarded: list[int] = []
    for card, owner in deal.table_family:
        if card in used_family:
            discarded.append(card)
        else:
            returned.setdefault(str(owner), []).append(card)
    discarded += list(deal.travel_on.values()) + deal.used
    covered = set(s.covered) | {deal.space}
    marker = deal.space
    if len(covered) < 16:
        marker = (marker + 1) % 16
        while marker in covered:
            marker = (marker + 1) % 16
    boss, opener, tile = deal.boss, deal.opener, s.tiles[0]
    ctx.emit(
        "deal_closed",
        {
            "boss": boss,
            "space": deal.space,
            "tile": tile,
            "share_value": s.share_value,
            "proceeds": proceeds,
            "lineup": [src.to_json() for _, src in sorted(chosen.items())],
            "agreements": agreements,
            "payments": {str(seat): amount for seat, amount in enumerate(payments) if amount},
            "returned": returned,
            "discarded": discarded,
            "marker": marker,
        },
        by,
    )
    if _game_ends(ctx, boss, tile):
        return
    next_seat = s.left_of(opener if s.options.has("V1") else boss)  # R6.4, V1
    _end_turn(ctx, next_seat, not s.options.must_roll_after_close, by)


def _game_ends(ctx: _Ctx, boss: int, tile: int) -> bool:
    """R7.2 (or V7): roll for the end; end after the last tile."""
    s = ctx.s
    reason = None
    if tile == LAST_TILE or not s.tiles:
        reason = "last_tile"
    elif s.options.has("V7"):
        if tile >= 10:
            _roll_die(ctx, "end", boss, None)
            if s.end_sum >= 6:
                reason = "end_sum"
    elif tile in TILE_END_NUMBERS:
        value = _roll_die(ctx, "end", boss, None)
        if value in TILE_END_NUMBERS[tile]:
            reason = "end_roll"
    if reason is None:
        return False
    top = max(s.money)
    winners = [seat for seat, m in enumerate(s.money) if m == top]
    ctx.emit(
        "game_ended",
        {"reason": reason, "money": list(s.money), "winners": winners, "seed": s.seed},
        None,
    )
    return True


def _fail_deal(ctx: _Ctx, by: int | None, reason: str) -> None:
    """R6.5: family cards go back, other influence cards to the discard pile; marker stays."""
    s = ctx.s
    deal = s.deal
    returned: dict[str, list[int]] = {}
    for card, owner in deal.table_family:
        returned.setdefault(str(owner), []).append(card)
    discarded = list(deal.travel_on.values()) + deal.used
    boss, opener = deal.boss, deal.opener
    ctx.emit(
        "deal_failed",
        {
            "boss": boss,
            "space": deal.space,
            "reason": reason,
            "returned": returned,
            "discarded": discarded,
        },
        by,
    )
    next_seat = s.left_of(opener if s.options.has("V1") else boss)  # R3.3, R3.4, V1
    _end_turn(ctx, next_seat, True, by)


# -- timeouts (A4, A5, A6) -------------------------------------------------------------------


def due_windows(s: GameState) -> list[Window]:
    """The open windows with deadlines, earliest first."""
    out = []
    if s.pending is not None:
        out.append(s.pending.window)
    if s.last_call is not None:
        out.append(s.last_call)
    if s.deal is not None and not s.deal.expired:
        out.append(s.deal.window)
    if s.turn is not None and s.phase in ("place_marker", "turn_start", "after_roll", "discard"):
        out.append(s.turn)
    return sorted(out, key=lambda w: w.deadline)


def _timeout(ctx: _Ctx) -> None:
    s = ctx.s
    windows = due_windows(s)
    if not windows or windows[0].deadline > ctx.at:
        raise RuleError("not_due", "no deadline has passed", "A4")
    for _ in range(64):  # each pass ends one window; new windows lie in the future
        windows = [w for w in due_windows(s) if w.deadline <= ctx.at]
        if not windows or s.phase == "game_over":
            return
        _expire(ctx, windows[0])


def _expire(ctx: _Ctx, w: Window) -> None:
    s = ctx.s
    if s.pending is not None and w is s.pending.window:
        late = sorted(_stop_eligible(s) - w.answered)
        ctx.emit("timed_out", {"window": w.id, "kind": "stop", "missed": late})
        _take_effect(ctx, None)
    elif w is s.last_call:
        late = sorted(_last_call_eligible(s) - w.answered)
        ctx.emit("timed_out", {"window": w.id, "kind": "last_call", "missed": late})
        _close_deal(ctx, None)
    elif s.deal is not None and w is s.deal.window:
        ctx.emit("timed_out", {"window": w.id, "kind": "negotiation", "missed": []})
        ctx.emit("negotiation_expired", {"window": w.id}, None)
        _finish_expired(ctx, None)
    elif w.kind == "discard":
        late = sorted(s.discard_owed)
        ctx.emit("timed_out", {"window": w.id, "kind": "discard", "missed": late})
        for seat in late:  # A5: the newest cards above the limit go
            count = s.discard_owed[seat]
            ctx.emit("cards_discarded", {"seat": seat, "cards": s.hands[seat][-count:]}, None)
        _discard_done(ctx, None)
    else:  # the turn window (A5)
        seat = s.active
        ctx.emit("timed_out", {"window": w.id, "kind": "turn", "missed": [seat]})
        if s.phase == "place_marker":
            first = min(x for x in range(16) if x not in s.covered)
            ctx.emit("marker_placed", {"seat": seat, "space": first}, None)
        if s.phase == "turn_start" and not (s.must_deal and s.may_deal_in_place):
            _roll_die(ctx, "move", seat, None)
        if s.must_deal:  # V2/V3: a deal is opened for them and fails at once
            _do_open_deal(ctx, seat, None)
            _fail_deal(ctx, None, "turn_deadline")
        else:
            _do_draw(ctx, seat, None, auto_discard=True)


def _storable(text: str) -> bool:
    """False for text holding NUL or a lone surrogate (U+D800-U+DFFF): such text cannot be
    encoded, so it could be neither kept in the log nor shown to anyone."""
    return not any(c == "\x00" or "\ud800" <= c <= "\udfff" for c in text)


def _chat(ctx: _Ctx) -> None:
    """R4.8: public table talk, 1 to ``MAX_CHAT`` characters of text that can be stored."""
    text = ctx.cmd.args["text"]
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHAT:
        raise RuleError("bad_command", f"chat text is 1 to {MAX_CHAT} characters", "R4.8")
    if not _storable(text):
        raise RuleError("bad_command", "chat text may not hold NUL or broken characters", "R4.8")
    ctx.emit(
        "chat",
        {"seat": ctx.by, "text": text, "deal": ctx.s.deal.space if ctx.s.deal else None},
        ctx.by,
    )


def _extend(ctx: _Ctx) -> None:
    """A1: the server moves every open deadline by ``seconds`` (a game resumed after a pause:
    the paused time does not count against anyone's window)."""
    seconds = ctx.cmd.args["seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not 1 <= seconds <= MAX_EXTEND:
        raise RuleError("bad_command", f"seconds is a whole number from 1 to {MAX_EXTEND}", "A1")
    if not due_windows(ctx.s):
        raise RuleError("not_due", "no window is open", "A1")
    ctx.emit("deadlines_extended", {"seconds": seconds}, None)


def _away(ctx: _Ctx) -> None:
    """A6: a seat says it is away (on holiday): windows stop waiting for it, as for a seat
    marked away after two timeouts; it counts as answering "let it happen"/"pass". Any later
    command of the seat clears it. ``away: false`` clears it at once."""
    away = ctx.cmd.args["away"]
    if not isinstance(away, bool):
        raise RuleError("bad_command", "away is true or false", "A6")
    ctx.emit("seat_away", {"seat": ctx.by, "away": away}, ctx.by)
    if away:  # what follows is not the seat's act (it would clear away again)
        _maybe_resolve_stop(ctx, None)
        if ctx.s.deal is not None:
            _maybe_close(ctx, None)


_HANDLERS = {
    "place_marker": _place_marker,
    "roll": _roll,
    "open_deal": _open_deal,
    "draw": _draw,
    "discard": _discard,
    "play_family": _play_family,
    "offer": _offer,
    "propose": _propose,
    "accept": _accept,
    "reject": _reject,
    "withdraw": _withdraw,
    "travel": _travel,
    "recruit": _recruit,
    "boss": _boss_card,
    "stop": _stop,
    "allow": _allow,
    "close": _close,
    "pass": _pass,
    "fail": _fail,
    "timeout": _timeout,
    "chat": _chat,
    "away": _away,
    "extend": _extend,
}
