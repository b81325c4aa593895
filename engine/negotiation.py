"""The negotiation (R4): family cards on the table, offers, the boss's terms, acceptances,
rejections and withdrawals, and table talk (R4.8)."""

from __future__ import annotations

from imtheboss.engine.cards import (
    CARD_NAMES,
    card_kind,
    card_letter,
)
from imtheboss.engine.context import (
    Ctx,
    card_name_arg,
    deal_proceeds,
    find_in_hand,
    in_deal,
    needed_letter,
    new_card_allowed,
    price_arg,
    price_value,
    require_boss,
    seat_arg,
)
from imtheboss.engine.errors import RuleError
from imtheboss.engine.lineup import can_supply
from imtheboss.engine.state import Terms

MAX_CHAT = 2000


def _play_family(ctx: Ctx) -> None:
    in_deal(ctx, "R4.1")
    require_boss(ctx, "R4.1")
    name = card_name_arg(ctx.cmd.args["card"])
    if card_kind(name) != "family":
        raise RuleError("bad_command", "play_family plays a family card", "R4.1")
    needed_letter(ctx, card_letter(name))
    if card_letter(name) in ctx.s.board.spaces[ctx.s.deal.space].investor_only:
        raise RuleError(
            "invalid_target", f"only the investor card may fill {name[-1]} here", "R1.4"
        )
    new_card_allowed(ctx)
    (card,) = find_in_hand(ctx, ctx.by, name)
    ctx.emit("family_played", {"seat": ctx.by, "card": card}, ctx.by)


def _offer(ctx: Ctx) -> None:
    """R4.2: a player puts forward a card for a letter at a price; R4.3 with R4.5: without a
    card, a player names the price of contributing nothing (a counter to the boss's terms for
    no card, or asking to be paid to keep quiet)."""
    s = ctx.s
    in_deal(ctx, "R4.2")
    if ctx.by == s.deal.boss:
        raise RuleError("bad_command", "the boss names terms with propose", "R4.3")
    price = price_arg(ctx.cmd.args["price"])
    if "card" not in ctx.cmd.args:
        _set_provider_terms(ctx, None, None, price)
        return
    name = card_name_arg(ctx.cmd.args["card"])
    kind, letter = card_kind(name), card_letter(name)
    if kind not in ("investor", "family") or letter is None:
        raise RuleError("bad_command", "an offer puts forward an investor or family card", "R4.2")
    needed_letter(ctx, letter)
    if kind == "investor":
        if s.investors.get(letter) != ctx.by:
            raise RuleError("invalid_target", f"you do not control investor {letter}", "R4.2")
        if letter in s.deal.travel_on:
            raise RuleError("invalid_target", f"investor {letter} is on travel", "R5.1")
    else:
        _offer_family(ctx, name, letter)
    _set_provider_terms(ctx, letter, name, price)


def _offer_family(ctx: Ctx, name: str, letter: str) -> None:
    """R4.2: a family card offered from hand is played face up onto the table."""
    s = ctx.s
    if letter in s.board.spaces[s.deal.space].investor_only:
        raise RuleError("invalid_target", f"only the investor card may fill {letter} here", "R1.4")
    on_table = any(o == ctx.by and CARD_NAMES[c] == name for c, o in s.deal.table_family)
    if not on_table:
        new_card_allowed(ctx)
        (card,) = find_in_hand(ctx, ctx.by, name)
        ctx.emit("family_played", {"seat": ctx.by, "card": card}, ctx.by)


def _set_provider_terms(
    ctx: Ctx, letter: str | None, card: str | None, price: tuple[str, int]
) -> None:
    if (ctx.by, letter) in ctx.s.deal.agreements:
        what = f"for {letter}" if letter else "for no card"
        raise RuleError("already_agreed", f"you already have an agreement {what}", "R4.3")
    emit_terms(ctx, ctx.by, letter, price, "provider", card, ctx.by)


def _propose(ctx: Ctx) -> None:
    s = ctx.s
    in_deal(ctx, "R4.3")
    require_boss(ctx, "R4.3")
    to = seat_arg(ctx, ctx.cmd.args["to"])
    if to == ctx.by:
        raise RuleError("bad_command", "the boss proposes terms to another player", "R4.3")
    price = price_arg(ctx.cmd.args["price"])
    name = ctx.cmd.args.get("card")
    letter = None
    if name is not None:
        name = card_name_arg(name)
        kind, letter = card_kind(name), card_letter(name)
        if kind not in ("investor", "family") or letter is None:
            raise RuleError("bad_command", "terms name an investor or family card, or none", "R4.3")
        needed_letter(ctx, letter)
        if kind == "investor" and letter in s.deal.travel_on:
            raise RuleError("invalid_target", f"investor {letter} is on travel", "R5.1")
        if kind == "investor" and s.investors.get(letter) != to:
            raise RuleError(
                "invalid_target", f"{s.players[to]} does not control investor {letter}", "R4.3"
            )
    if (to, letter) in s.deal.agreements:
        raise RuleError("already_agreed", f"{s.players[to]} already has that agreement", "R4.3")
    emit_terms(ctx, to, letter, price, "boss", name, ctx.by)


def emit_terms(
    ctx: Ctx,
    provider: int,
    letter: str | None,
    price: tuple[str, int],
    side: str,
    card: str | None,
    by: int | None,
) -> None:
    """R4.2, R4.3: terms between the boss and ``provider`` for ``letter`` (``None``: no card,
    R4.5), named by ``side`` (``"boss"`` or ``"provider"``) at ``price`` (``("cash", M)`` or
    ``("shares", n)``), putting forward ``card`` (a card name or ``None``)."""
    data = {
        "provider": provider,
        "letter": letter,
        "price": {price[0]: price[1]},
        "by_side": side,
        "card": card,
    }
    ctx.emit("terms_set", data, by)


def _answerable_terms(ctx: Ctx) -> Terms:
    """The terms the command's seat may accept or reject: the other side's current terms."""
    s = ctx.s
    other = seat_arg(ctx, ctx.cmd.args["with"])
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


def _accept(ctx: Ctx) -> None:
    s = ctx.s
    in_deal(ctx, "R4.3")
    terms = _answerable_terms(ctx)
    if "price" in ctx.cmd.args and price_arg(ctx.cmd.args["price"]) != terms.price:
        raise RuleError(
            "terms_changed",
            f"the terms changed since you looked: now {terms.price[1]} {terms.price[0]}",
            "A7",
        )
    total = sum(price_value(s, t.price) for t in s.deal.agreements.values()) + price_value(
        s, terms.price
    )
    if total > deal_proceeds(s):
        raise RuleError(
            "over_proceeds",
            f"agreements would total {total} M, above the proceeds of {deal_proceeds(s)} M",
            "R4.4",
        )
    if (
        terms.card
        and card_kind(terms.card) == "family"
        and not can_supply(s, terms.provider, terms.letter)
    ):
        if ctx.by != terms.provider:
            raise RuleError("invalid_target", "that player has no such card on the table", "R4.3")
        new_card_allowed(ctx)
        (card,) = find_in_hand(ctx, ctx.by, terms.card)
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


def _reject(ctx: Ctx) -> None:
    in_deal(ctx, "R4.3")
    terms = _answerable_terms(ctx)
    ctx.emit(
        "terms_removed",
        {"provider": terms.provider, "letter": terms.letter, "reason": "rejected"},
        ctx.by,
    )


def _withdraw(ctx: Ctx) -> None:
    s = ctx.s
    in_deal(ctx, "R4.2")
    mine = [t for (p, _), t in s.deal.terms.items() if p == ctx.by and t.by == "provider"]
    if "letter" in ctx.cmd.args:
        mine = [t for t in mine if t.letter == ctx.cmd.args["letter"]]
    if not mine:
        raise RuleError("no_terms", "you have no open offer to withdraw", "R4.2")
    for t in mine:
        ctx.emit(
            "terms_removed", {"provider": ctx.by, "letter": t.letter, "reason": "withdrawn"}, ctx.by
        )


def _storable(text: str) -> bool:
    """False for text holding NUL or a lone surrogate (U+D800-U+DFFF): such text cannot be
    encoded, so it could be neither kept in the log nor shown to anyone."""
    return not any(c == "\x00" or "\ud800" <= c <= "\udfff" for c in text)


def _chat(ctx: Ctx) -> None:
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


HANDLERS = {
    "play_family": _play_family,
    "offer": _offer,
    "propose": _propose,
    "accept": _accept,
    "reject": _reject,
    "withdraw": _withdraw,
    "chat": _chat,
}
