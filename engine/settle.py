"""Orders and the away proxy in play (A10, A11).

After every command ``settle`` lets standing orders (``imtheboss.engine.orders``) answer what
the game now asks, and the server play for proxied seats, one decision at a time through the
same code a seat's command runs, until nothing is left to do. Events an order makes are marked
``"order": true`` and carry the seat as ``by``; events the proxy makes are marked ``"proxy":
true`` and carry no ``by`` (the server acts, A11).

A11, the away proxy: once a seat has been away (A6) for the game's ``proxy_hours`` (counted
from when it became away, which is after its last presence: any own act or ``present``), the
server plays for it at once and until it shows up again, by this policy: its turn
is roll, then draw (under V2/V3 the deal it must open fails at once, as A5); windows do not wait
for it (A6); its investor cards the deal needs are offered at a fair price (``fair_price``), and
the boss's terms for them at that price or more, or for no card at any price, are accepted, and
terms under that price get a counter at it at once (``_proxy_counters``). It never plays an
influence card and never opens a deal of its own will. When every seat is proxied nobody is left
to play with: the proxy stops playing turns at once, and each turn waits for its deadline (A5),
so an abandoned game costs one turn per window, not a loop of turns.
"""

from __future__ import annotations

from datetime import timedelta

from imtheboss.engine.closing import fail_deal, maybe_close, start_close
from imtheboss.engine.context import Ctx, deal_proceeds, fair_price, price_value
from imtheboss.engine.errors import RuleError
from imtheboss.engine.influence import maybe_resolve_stop
from imtheboss.engine.lineup import can_supply, lineup, still_needed
from imtheboss.engine.negotiation import emit_terms
from imtheboss.engine.orders import Orders, OrdersError
from imtheboss.engine.state import GameState, Terms, format_time
from imtheboss.engine.turn import discard_done, do_draw, do_open_deal, roll_die
from imtheboss.engine.views import last_call_waiting_for, stop_waiting_for

MAX_STEPS = 500  # decisions one command may set off (a whole round of pre-moved turns is ~10)
DEALING = ("negotiation", "stop_window")  # terms may be named and accepted (A2, not A3)


def settle(ctx: Ctx) -> None:
    """Fire every order and proxy decision the state now calls for (A10, A11)."""
    for _ in range(MAX_STEPS):
        if ctx.s.phase == "game_over" or not _step(ctx):
            return


def _step(ctx: Ctx) -> bool:
    return (
        _schedule_proxies(ctx)
        or _answer_stop(ctx)
        or _answer_last_call(ctx)
        or _post_prices(ctx)
        or _providers_accept(ctx)
        or _proxy_counters(ctx)
        or _boss_accepts(ctx)
        or _boss_closes(ctx)
        or _play_turn(ctx)
        or _proxy_discards(ctx)
    )


# -- the proxy's window (A11) ----------------------------------------------------------------


def _schedule_proxies(ctx: Ctx) -> bool:
    s = ctx.s
    hours = s.options.proxy_hours
    if not hours:
        return False
    for seat in range(s.n):
        if not s.away[seat] or s.proxied[seat] or seat in s.proxy_windows:
            continue
        due = ctx.at + timedelta(hours=hours)  # it became away now, after its last presence
        data = {"seat": seat, "window": f"w{s.window_seq}", "deadline": format_time(due)}
        ctx.emit("proxy_scheduled", data)
        return True
    return False


# -- answering windows (A2, A3): public information only -------------------------------------


def aimed_at(state: GameState, seat: int) -> bool:
    """A10: the pending card (A2) is aimed at ``seat``: it targets the seat's investor card or
    its family card on the table, it is a boss card while the seat is boss, or it would make a
    term or agreement of the seat's lapse (a boss card lapses every one, R5.5; a travel or
    recruit only those of the provider whose card it takes, R4.7, so those are aimed at it
    already). Reads only public information."""
    p = state.pending
    deal = state.deal
    if p is None:
        return False
    if p.kind == "boss":
        return deal is not None and (
            deal.boss == seat
            or any(provider == seat for provider, _ in [*deal.terms, *deal.agreements])
        )
    if p.kind == "recruit":
        return state.investors.get(p.target) == seat
    if p.target.startswith("investor:"):
        return state.investors.get(p.target.split(":")[1]) == seat
    card = int(p.target.split(":")[1])
    return deal is not None and any(c == card and o == seat for c, o in deal.table_family)


def involved(state: GameState, seat: int) -> bool:
    """A10: ``seat`` is involved in the running deal's last call (A3): an investor card it
    controls is in the deal (takes part in the lineup the deal would close with, R6.3; under V9
    also without an agreement), or it has an agreement in the deal. Reads only public
    information."""
    deal = state.deal
    if deal is None:
        return False
    if any(provider == seat for provider, _ in deal.agreements):
        return True
    chosen = lineup(state)
    return chosen is not None and any(
        src.seat == seat and src.kind == "investor" for src in chosen.values()
    )


def _answer_stop(ctx: Ctx) -> bool:
    s = ctx.s
    if s.pending is None:
        return False
    for seat in stop_waiting_for(s):
        rule = s.orders[seat].stop
        if rule == "allow" or (rule == "unless_aimed" and not aimed_at(s, seat)):
            _answer(ctx, seat, s.pending.window.id, "allow")
            maybe_resolve_stop(ctx, None)
            return True
    return False


def _answer_last_call(ctx: Ctx) -> bool:
    s = ctx.s
    if s.last_call is None:
        return False
    for seat in last_call_waiting_for(s):
        rule = s.orders[seat].last_call
        if rule == "pass" or (rule == "unless_involved" and not involved(s, seat)):
            _answer(ctx, seat, s.last_call.id, "pass")
            maybe_close(ctx, None)
            return True
    return False


def _answer(ctx: Ctx, seat: int, window: str, answer: str) -> None:
    """``seat``'s order answers ``window`` (``allow`` or ``pass``)."""
    with ctx.marked(order=True):
        ctx.emit("window_answered", {"seat": seat, "window": window, "answer": answer}, seat)


# -- posted prices and the boss's limits (R4.2, R4.3, R4.4) ----------------------------------


def _posted(s: GameState, seat: int, letter: str) -> tuple[str, int] | None:
    if s.proxied[seat]:
        return ("cash", fair_price(s))
    return in_cash(s, s.orders[seat].price_for(letter))


def in_cash(s: GameState, price: tuple[str, int] | None) -> tuple[str, int] | None:
    """An order's price with a ``fair`` one (``("fair", n)``: the fair price plus n M, A10)
    made a cash price for the running deal; others as they are."""
    if price is None or price[0] != "fair":
        return price
    return ("cash", fair_price(s) + price[1])


def _as_seat(ctx: Ctx, seat: int, type_: str, data: dict) -> None:
    """Emit ``type_`` for ``seat``: by its order, or by the server when it is proxied."""
    if ctx.s.proxied[seat]:
        with ctx.marked(proxy=True):
            ctx.emit(type_, data, None)
    else:
        with ctx.marked(order=True):
            ctx.emit(type_, data, seat)


def _post_prices(ctx: Ctx) -> bool:
    s = ctx.s
    deal = s.deal
    if deal is None or s.phase not in DEALING or deal.expired or s.options.two_player_rules(s.n):
        return False
    for letter in s.board.spaces[deal.space].letters:
        seat = s.investors.get(letter)
        if seat is None or seat == deal.boss or letter in deal.travel_on:
            continue
        key = (seat, letter)
        if key in deal.terms or key in deal.agreements or (seat, letter, deal.boss) in deal.posted:
            continue
        price = _posted(s, seat, letter)
        if price is None:
            continue
        _offer_for(ctx, seat, letter, price)
        return True
    return False


def _offer_for(ctx: Ctx, seat: int, letter: str, price: tuple[str, int]) -> None:
    """``seat``'s order, or the proxy when the seat is proxied, offers its investor ``letter``
    at ``price``."""
    proxied = ctx.s.proxied[seat]
    with ctx.marked(**({"proxy": True} if proxied else {"order": True})):
        card = f"investor:{letter}"
        emit_terms(ctx, seat, letter, price, "provider", card, None if proxied else seat)


def _fits(s: GameState, t: Terms) -> bool:
    """R4.4 and R4.7: accepting ``t`` keeps the agreements within the proceeds and its
    provider can still supply the letter."""
    committed = sum(price_value(s, a.price) for a in s.deal.agreements.values())
    if committed + price_value(s, t.price) > deal_proceeds(s):
        return False
    return t.letter is None or can_supply(s, t.provider, t.letter)


def _agree(ctx: Ctx, t: Terms, by_boss: bool) -> None:
    data = {
        "provider": t.provider,
        "letter": t.letter,
        "price": {t.price[0]: t.price[1]},
        "card": t.card,
    }
    if by_boss:
        with ctx.marked(order=True):
            ctx.emit("agreement_made", data, ctx.s.deal.boss)
    else:
        _as_seat(ctx, t.provider, "agreement_made", data)


def _provider_takes(s: GameState, t: Terms) -> bool:
    """A provider's order (or the proxy) accepts the boss's terms ``t``."""
    seat = t.provider
    if s.proxied[seat] and t.letter is None:
        return True
    if t.letter is None or t.card != f"investor:{t.letter}":
        return False
    posted = _posted(s, seat, t.letter)
    return posted is not None and price_value(s, t.price) >= price_value(s, posted)


def _providers_accept(ctx: Ctx) -> bool:
    s = ctx.s
    if s.deal is None or s.phase not in DEALING:
        return False
    for t in list(s.deal.terms.values()):
        if t.by == "boss" and _provider_takes(s, t) and _fits(s, t):
            _agree(ctx, t, by_boss=False)
            return True
    return False


def _proxy_counters(ctx: Ctx) -> bool:
    """A11: the boss's terms under the fair price for a proxied seat's investor card are
    answered at once with a counter at the fair price (R4.5); the boss is never left waiting
    for an answer that would not come."""
    s = ctx.s
    deal = s.deal
    if deal is None or s.phase not in DEALING or deal.expired:
        return False
    price = fair_price(s)
    for t in list(deal.terms.values()):
        if (
            t.by == "boss"
            and s.proxied[t.provider]
            and t.card == f"investor:{t.letter}"
            and s.investors.get(t.letter) == t.provider
            and t.letter not in deal.travel_on
            and price_value(s, t.price) < price
        ):
            _offer_for(ctx, t.provider, t.letter, ("cash", price))
            return True
    return False


def _boss_accepts(ctx: Ctx) -> bool:
    s = ctx.s
    deal = s.deal
    if deal is None or s.phase not in DEALING or s.proxied[deal.boss]:
        return False
    orders = s.orders[deal.boss]
    if not orders.limits:
        return False
    needed = still_needed(s)
    for t in list(deal.terms.values()):
        if t.by != "provider" or t.letter not in needed:
            continue
        limit = in_cash(s, orders.limit_for(t.letter))
        if limit is not None and price_value(s, t.price) <= limit[1] and _fits(s, t):
            _agree(ctx, t, by_boss=True)
            return True
    return False


def _boss_closes(ctx: Ctx) -> bool:
    s = ctx.s
    deal = s.deal
    if deal is None or s.phase != "negotiation" or s.proxied[deal.boss]:
        return False
    if not s.orders[deal.boss].close or lineup(s) is None:
        return False
    with ctx.marked(order=True):
        start_close(ctx, deal.boss)
    return True


# -- turns (R3.1): pre-moves and the proxy ---------------------------------------------------


def _can_deal(s: GameState, seat: int) -> bool:
    return not (s.options.has("V5") and len(s.hands[seat]) < 4)


def _play_turn(ctx: Ctx) -> bool:
    s = ctx.s
    if s.phase not in ("place_marker", "turn_start", "after_roll"):
        return False
    seat = s.active
    if s.proxied[seat]:
        if all(s.proxied):  # nobody is left at the table: turns wait for their deadline (A5)
            return False
        _proxy_turn(ctx, seat)
        return True
    turn = s.orders[seat].turn
    if turn is None or s.phase == "place_marker":
        return False
    deal = _can_deal(s, seat)
    with ctx.marked(order=True):
        if s.phase == "turn_start":
            if s.may_deal_in_place and deal and turn.in_place.holds(s, seat, s.marker):
                do_open_deal(ctx, seat, seat)
            else:
                roll_die(ctx, "move", seat, seat)
        elif deal and (s.must_deal or turn.after_roll.holds(s, seat, s.marker)):
            do_open_deal(ctx, seat, seat)
        else:
            do_draw(ctx, seat, seat)
    return True


def _proxy_turn(ctx: Ctx, seat: int) -> None:
    s = ctx.s
    with ctx.marked(proxy=True):
        if s.phase == "place_marker":
            first = min(x for x in range(16) if x not in s.covered)
            ctx.emit("marker_placed", {"seat": seat, "space": first}, None)
        elif s.phase == "turn_start":
            roll_die(ctx, "move", seat, None)
        elif s.must_deal and _can_deal(s, seat):
            do_open_deal(ctx, seat, None)
            fail_deal(ctx, None, "proxy")
        else:
            do_draw(ctx, seat, None, auto_discard=True)


def _proxy_discards(ctx: Ctx) -> bool:
    s = ctx.s
    if s.phase != "discard" or s.pending is not None:
        return False
    for seat in sorted(s.discard_owed):
        if s.proxied[seat]:
            count = s.discard_owed[seat]
            with ctx.marked(proxy=True):
                ctx.emit("cards_discarded", {"seat": seat, "cards": s.hands[seat][-count:]}, None)
                discard_done(ctx, None)
            return True
    return False


# -- the command (A10) -----------------------------------------------------------------------


def _orders(ctx: Ctx) -> None:
    """A10: a seat sets its standing orders (``Orders.from_json``'s form); they take effect at
    once (``settle`` runs after every command)."""
    try:
        orders = Orders.from_json(ctx.cmd.args["orders"])
    except OrdersError as exc:
        raise RuleError("bad_command", str(exc), "A10") from None
    ctx.emit("orders_set", {"seat": ctx.by, "orders": orders.to_json()}, ctx.by)


HANDLERS = {"orders": _orders}
