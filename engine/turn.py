"""A turn (R2.4, R3): placing the marker, rolling, opening a deal, drawing (R6.7); the hand limit
after a draw (R6.6) and the start of the next turn (V2, V3, V5)."""

from __future__ import annotations

from typing import Any

from imtheboss.engine.cards import (
    CARD_NAMES,
)
from imtheboss.engine.context import (
    Ctx,
    turn_command,
)
from imtheboss.engine.errors import RuleError
from imtheboss.engine.rng import die, shuffled
from imtheboss.engine.state import GameState


def _place_marker(ctx: Ctx) -> None:
    turn_command(ctx, ("place_marker",), "R2.4")
    space = ctx.cmd.args["space"]
    if (
        isinstance(space, bool)
        or not isinstance(space, int)
        or not 0 <= space < 16
        or space in ctx.s.covered
    ):
        raise RuleError("invalid_target", "the marker goes on an uncovered deal space 0-15", "R2.4")
    ctx.emit("marker_placed", {"seat": ctx.by, "space": space}, ctx.by)


def move_target(s: GameState, steps: int) -> int:
    """The space a roll of ``steps`` moves the marker to: that many uncovered spaces on from
    where it stands, covered spaces not counted (R3.1)."""
    space = s.marker
    while steps:
        space = (space + 1) % 16
        if space not in s.covered:
            steps -= 1
    return space


def roll_die(ctx: Ctx, purpose: str, seat: int | None, by: int | None) -> int:
    s = ctx.s
    if s.forced_dice:
        value, source = s.forced_dice[0], "forced"
    else:
        value, source = die(s.seed, s.rng_count), "rng"
    data: dict[str, Any] = {"seat": seat, "value": value, "source": source, "purpose": purpose}
    if purpose == "move":
        data["space"] = move_target(s, value)
    ctx.emit("die_rolled", data, by)
    return value


def _roll(ctx: Ctx) -> None:
    turn_command(ctx, ("turn_start",), "R3.1")
    roll_die(ctx, "move", ctx.by, ctx.by)


def _open_deal(ctx: Ctx) -> None:
    s = ctx.s
    turn_command(ctx, ("turn_start", "after_roll"), "R3.1")
    if s.phase == "turn_start" and not s.may_deal_in_place:
        raise RuleError("must_roll", "right after a closed deal you must roll first", "R3.5")
    check_can_deal(s, ctx.by)
    do_open_deal(ctx, ctx.by, ctx.by)


def check_can_deal(s: GameState, seat: int) -> None:
    if s.options.has("V5") and len(s.hands[seat]) < 4:
        raise RuleError(
            "cannot_deal", "with fewer than 4 influence cards you may not open a deal", "V5"
        )


def do_open_deal(ctx: Ctx, seat: int, by: int | None) -> None:
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


def _draw(ctx: Ctx) -> None:
    s = ctx.s
    turn_command(ctx, ("after_roll",), "R3.1")
    if s.must_deal:
        raise RuleError(
            "must_deal", "you must open a deal this turn", "V2" if s.options.has("V2") else "V3"
        )
    do_draw(ctx, ctx.by, ctx.by)


def do_draw(ctx: Ctx, seat: int, by: int | None, auto_discard: bool = False) -> None:
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
    end_turn(ctx, s.left_of(seat), True, by)


def end_turn(ctx: Ctx, next_seat: int, may_deal_in_place: bool, by: int | None) -> None:
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
                "deadline": ctx.deadline("turn", [int(k) for k in owed]),
            },
            by,
        )
    else:
        start_turn(ctx, next_seat, may_deal_in_place, by)


def start_turn(ctx: Ctx, seat: int, may_deal_in_place: bool, by: int | None) -> None:
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
            "deadline": ctx.deadline("turn", [seat]),
        },
        by,
    )


def _discard(ctx: Ctx) -> None:
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
    discard_done(ctx, ctx.by)


def discard_done(ctx: Ctx, by: int | None) -> None:
    s = ctx.s
    if not s.discard_owed and s.phase == "discard" and s.after_discard is not None:
        seat, may = s.after_discard
        start_turn(ctx, seat, may, by)


HANDLERS = {
    "place_marker": _place_marker,
    "roll": _roll,
    "open_deal": _open_deal,
    "draw": _draw,
    "discard": _discard,
}
