"""Closing and failing a deal (R6.1-R6.5, A3, A4) and the end of the game (R7.2, R7.3, V7)."""

from __future__ import annotations

from imtheboss.engine.cards import (
    LAST_TILE,
    TILE_END_NUMBERS,
)
from imtheboss.engine.context import (
    Ctx,
    check_window,
    deal_proceeds,
    in_deal,
    price_value,
    require_boss,
)
from imtheboss.engine.errors import RuleError
from imtheboss.engine.lineup import lineup, missing
from imtheboss.engine.state import GameState
from imtheboss.engine.turn import end_turn, roll_die


def _close(ctx: Ctx) -> None:
    s = ctx.s
    in_deal(ctx, "R6.1", pending_ok=False)
    require_boss(ctx, "R6.1")
    if lineup(s) is None:
        raise RuleError("requirements_not_met", "still missing: " + ", ".join(missing(s)), "R6.1")
    start_close(ctx, ctx.by)


def start_close(ctx: Ctx, by: int) -> None:
    """R6.1, A3: the boss ``by`` closes a deal whose requirements are met: the last call opens
    (and ends at once when nobody is left to answer); after the negotiation deadline the deal
    closes at once (A4: no card may answer a last call)."""
    s = ctx.s
    if s.deal.expired or ctx.at >= s.deal.window.deadline:
        close_deal(ctx, by)
        return
    ctx.emit(
        "close_called",
        {
            "boss": by,
            "window": f"w{s.window_seq}",
            "deadline": ctx.deadline("last_call", last_call_eligible(s)),
        },
        by,
    )
    maybe_close(ctx, by)


def last_call_eligible(s: GameState) -> set[int]:
    return {seat for seat in range(s.n) if seat != s.deal.boss and not s.away[seat]}


def maybe_close(ctx: Ctx, by: int | None) -> None:
    s = ctx.s
    if s.last_call is not None and not (last_call_eligible(s) - s.last_call.answered):
        close_deal(ctx, by)


def _pass(ctx: Ctx) -> None:
    s = ctx.s
    if s.deal is not None and ctx.by == s.deal.boss and s.last_call is not None:
        raise RuleError("not_your_turn", "the boss does not answer the last call", "A3")
    window = check_window(ctx, s.last_call, "A3", "wrong_phase")
    ctx.emit("window_answered", {"seat": ctx.by, "window": window.id, "answer": "pass"}, ctx.by)
    maybe_close(ctx, ctx.by)


def _fail(ctx: Ctx) -> None:
    in_deal(ctx, "R6.5", last_call_ok=True, pending_ok=False)
    require_boss(ctx, "R6.5")
    fail_deal(ctx, ctx.by, "declared")


def finish_expired(ctx: Ctx, by: int | None) -> None:
    """A4: once no window is open, the deal closes if its requirements are met, else fails."""
    s = ctx.s
    if s.pending is not None or s.last_call is not None:
        return
    if lineup(s) is not None:
        close_deal(ctx, by)
    else:
        fail_deal(ctx, by, "deadline")


def close_deal(ctx: Ctx, by: int | None) -> None:
    """R6.2-R6.4 and R7.2: pay, dispose of the cards, cover the space, maybe end the game."""
    s = ctx.s
    deal = s.deal
    chosen = lineup(s)
    if chosen is None:  # cannot happen after a last call; stay safe
        fail_deal(ctx, by, "requirements_not_met")
        return
    proceeds = deal_proceeds(s)
    payments = [0] * s.n
    payments[deal.boss] += proceeds
    agreements = []
    for t in deal.agreements.values():
        value = price_value(s, t.price)
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
    end_turn(ctx, next_seat, not s.options.must_roll_after_close, by)


def _game_ends(ctx: Ctx, boss: int, tile: int) -> bool:
    """R7.2 (or V7): roll for the end; end after the last tile."""
    s = ctx.s
    reason = None
    if tile == LAST_TILE or not s.tiles:
        reason = "last_tile"
    elif s.options.has("V7"):
        if tile >= 10:
            roll_die(ctx, "end", boss, None)
            if s.end_sum >= 6:
                reason = "end_sum"
    elif tile in TILE_END_NUMBERS:
        value = roll_die(ctx, "end", boss, None)
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


def fail_deal(ctx: Ctx, by: int | None, reason: str) -> None:
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
    end_turn(ctx, next_seat, True, by)


HANDLERS = {
    "close": _close,
    "pass": _pass,
    "fail": _fail,
}
