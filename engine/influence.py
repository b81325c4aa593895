"""Influence cards during a negotiation (R5) and their stop windows (A2): travel, triple
recruit, boss card, stop and "let it happen"; lapses when a card takes effect (R4.7, R5.5)."""

from __future__ import annotations

from imtheboss.engine.board import LETTERS
from imtheboss.engine.cards import (
    CARD_NAMES,
    card_kind,
    card_letter,
)
from imtheboss.engine.closing import finish_expired
from imtheboss.engine.context import (
    Ctx,
    card_name_arg,
    card_play_phase,
    check_window,
    find_in_hand,
    letter_arg,
)
from imtheboss.engine.errors import RuleError
from imtheboss.engine.lineup import can_supply
from imtheboss.engine.state import GameState
from imtheboss.engine.turn import discard_done


def _open_stop_window(ctx: Ctx, kind: str, cards: list[int], target: str | None) -> None:
    s = ctx.s
    data = {
        "seat": ctx.by,
        "kind": kind,
        "cards": cards,
        "target": target,
        "window": f"w{s.window_seq}",
        "deadline": ctx.deadline("stop", [x for x in range(s.n) if x != ctx.by and not s.away[x]]),
        "cancels_close": s.phase == "last_call",
        "owner": _target_owner(s, target),
    }
    ctx.emit("card_pending", data, ctx.by)
    maybe_resolve_stop(ctx, ctx.by)


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


def _travel(ctx: Ctx) -> None:
    s = ctx.s
    card_play_phase(ctx, "R5.1")
    name = card_name_arg(ctx.cmd.args["card"])
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
    (card,) = find_in_hand(ctx, ctx.by, name)
    _open_stop_window(ctx, "travel", [card], resolved)


def _recruit(ctx: Ctx) -> None:
    s = ctx.s
    if s.phase == "discard":
        if s.pending is not None:
            raise RuleError("card_pending", "another card is waiting out its stop window", "A2")
        if ctx.by not in s.discard_owed:
            raise RuleError(
                "not_your_turn", "only a seat above its hand limit may recruit now", "R6.6"
            )
    else:
        card_play_phase(ctx, "R5.4")
    letter = letter_arg(ctx.cmd.args["target"])
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


def _boss_card(ctx: Ctx) -> None:
    s = ctx.s
    card_play_phase(ctx, "R5.5")
    if ctx.by == s.deal.boss:
        raise RuleError("not_boss", "you are the boss already", "R5.5")
    (card,) = find_in_hand(ctx, ctx.by, "boss")
    _open_stop_window(ctx, "boss", [card], None)


def stop_eligible(s: GameState) -> set[int]:
    return {seat for seat in range(s.n) if seat != s.pending.seat and not s.away[seat]}


def _stop(ctx: Ctx) -> None:
    s = ctx.s
    window = check_window(ctx, s.pending.window if s.pending else None, "R5.6", "nothing_to_stop")
    if ctx.by == s.pending.seat:
        raise RuleError("nothing_to_stop", "you played the pending card", "R5.6")
    (card,) = find_in_hand(ctx, ctx.by, "stop")
    ctx.emit("card_stopped", {"seat": ctx.by, "card": card, "window": window.id}, ctx.by)
    after_stop_window(ctx, ctx.by)


def _allow(ctx: Ctx) -> None:
    s = ctx.s
    window = check_window(ctx, s.pending.window if s.pending else None, "A2", "nothing_to_stop")
    if ctx.by == s.pending.seat:
        raise RuleError("nothing_to_stop", "you played the pending card", "A2")
    ctx.emit("window_answered", {"seat": ctx.by, "window": window.id, "answer": "allow"}, ctx.by)
    maybe_resolve_stop(ctx, ctx.by)


def maybe_resolve_stop(ctx: Ctx, by: int | None) -> None:
    s = ctx.s
    if s.pending is not None and not (stop_eligible(s) - s.pending.window.answered):
        take_effect(ctx, by)


def take_effect(ctx: Ctx, by: int | None) -> None:
    """A2: the pending card takes effect; then R5.5 (a boss card: every term and agreement
    lapses) or R4.7 (terms lapse whose provider could supply the letter before and no longer
    can: a family card still in the provider's hand is not touched by a travel elsewhere)."""
    s = ctx.s
    kind = s.pending.kind
    held = (
        [
            key
            for key in list(s.deal.agreements) + list(s.deal.terms)
            if key[1] is not None and can_supply(s, *key)
        ]
        if s.deal is not None
        else []
    )
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
            for p, letter in held:
                if not can_supply(s, p, letter):
                    ctx.emit(
                        "terms_removed", {"provider": p, "letter": letter, "reason": "lapsed"}, by
                    )
    after_stop_window(ctx, by)


def after_stop_window(ctx: Ctx, by: int | None) -> None:
    s = ctx.s
    if s.deal is not None and s.deal.expired:
        finish_expired(ctx, by)
    elif s.deal is None and s.phase == "discard":
        discard_done(ctx, by)


HANDLERS = {
    "travel": _travel,
    "recruit": _recruit,
    "boss": _boss_card,
    "stop": _stop,
    "allow": _allow,
}
