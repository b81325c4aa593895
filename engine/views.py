"""What one seat may see and do (A8): ``view``, ``redact_event``, ``legal_commands``,
``awaiting``; and ``snapshot``, the whole state for scenarios and tests (never for a seat).

Hidden information (A8): other seats' hands, the draw pile's order, the seed before the game
ends, the forced dice, and (without ``open_money``) other seats' money totals.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from imtheboss.engine import prices
from imtheboss.engine.board import LETTERS
from imtheboss.engine.cards import CARD_NAMES, card_kind, card_letter, multiset
from imtheboss.engine.context import fair_price
from imtheboss.engine.events import Event
from imtheboss.engine.lineup import can_supply, lineup, missing
from imtheboss.engine.state import GameState, Terms, format_time
from imtheboss.engine.windows import due_windows

NEGOTIATION_PHASES = ("negotiation", "stop_window", "last_call")


# -- helpers ---------------------------------------------------------------------------------


def _price_json(price: tuple[str, int]) -> dict[str, int]:
    return {price[0]: price[1]}


def _price_value(state: GameState, price: tuple[str, int]) -> int:
    return prices.price_value(*price, state.share_value)


def _target_text(state: GameState, target: str | None) -> str | None:
    """A pending card's target for people: ``investor:S``, ``family:W@2`` or a letter."""
    if target and target.startswith("family:"):
        card = int(target.split(":")[1])
        owner = (
            next((o for c, o in state.deal.table_family if c == card), None) if state.deal else None
        )
        return f"{CARD_NAMES[card]}@{owner}"
    return target


def stop_waiting_for(state: GameState) -> list[int]:
    """Seats that still owe an answer to the open stop window (A2, A6)."""
    p = state.pending
    if p is None:
        return []
    return [
        s
        for s in range(state.n)
        if s != p.seat and not state.away[s] and s not in p.window.answered
    ]


def last_call_waiting_for(state: GameState) -> list[int]:
    """Seats that still owe an answer to the last call (A3, A6)."""
    if state.last_call is None or state.deal is None:
        return []
    return [
        s
        for s in range(state.n)
        if s != state.deal.boss and not state.away[s] and s not in state.last_call.answered
    ]


def awaiting(state: GameState) -> list[dict[str, Any]]:
    """Who the game waits for: ``[{"seat", "for", "window", "until"}]`` with ``for`` one of
    ``place_marker``, ``turn``, ``discard``, ``stop``, ``last_call``, ``negotiation`` (the boss
    may close or fail until then) and ``until`` an aware UTC datetime. Drives pages,
    notifications and deadlines (A1-A6)."""
    out: list[dict[str, Any]] = []
    if state.phase == "game_over":
        return out
    if state.pending is not None:
        w = state.pending.window
        out += [
            {"seat": s, "for": "stop", "window": w.id, "until": w.deadline}
            for s in stop_waiting_for(state)
        ]
    if state.last_call is not None:
        w = state.last_call
        out += [
            {"seat": s, "for": "last_call", "window": w.id, "until": w.deadline}
            for s in last_call_waiting_for(state)
        ]
    if state.deal is not None and state.phase == "negotiation" and not state.deal.expired:
        w = state.deal.window
        out.append(
            {"seat": state.deal.boss, "for": "negotiation", "window": w.id, "until": w.deadline}
        )
    if state.turn is not None and state.phase in ("place_marker", "turn_start", "after_roll"):
        w = state.turn
        kind = "place_marker" if state.phase == "place_marker" else "turn"
        out.append({"seat": state.active, "for": kind, "window": w.id, "until": w.deadline})
    if state.phase == "discard" and state.turn is not None:
        w = state.turn
        out += [
            {"seat": s, "for": "discard", "window": w.id, "until": w.deadline}
            for s in sorted(state.discard_owed)
        ]
    return out


def next_deadline(state: GameState) -> datetime | None:
    """The earliest open deadline: when the scheduler must send ``timeout`` (A4-A6)."""
    windows = due_windows(state)
    return windows[0].deadline if windows else None


# -- views -----------------------------------------------------------------------------------


def _terms_view(state: GameState, t: Terms) -> dict[str, Any]:
    return {**t.to_json(), "amount": _price_value(state, t.price)}


def _pending_view(state: GameState) -> dict[str, Any] | None:
    """The card waiting out its stop window (A2), in a deal or in the discard step (R6.6)."""
    p = state.pending
    if p is None:
        return None
    return {
        "seat": p.seat,
        "kind": p.kind,
        "cards": [CARD_NAMES[c] for c in p.cards],
        "target": _target_text(state, p.target),
        "window": p.window.id,
        "deadline": format_time(p.window.deadline),
        "waiting_for": stop_waiting_for(state),
    }


def _deal_view(state: GameState) -> dict[str, Any] | None:
    deal = state.deal
    if deal is None:
        return None
    space = state.board.spaces[deal.space]
    proceeds = prices.proceeds(space.shares, state.share_value)
    agreements = [_terms_view(state, t) for t in deal.agreements.values()]
    out: dict[str, Any] = {
        "space": deal.space,
        "boss": deal.boss,
        "opener": deal.opener,
        "window": deal.window.id,
        "deadline": format_time(deal.window.deadline),
        "expired": deal.expired,
        "proceeds": proceeds,
        "fair_price": fair_price(state),
        "letters": sorted(space.letters),
        "committed": sum(a["amount"] for a in agreements),
        "boss_investors": [x for x in state.seat_investors(deal.boss) if x in space.letters],
        "table_family": [{"card": CARD_NAMES[c], "owner": o} for c, o in deal.table_family],
        "travel_on": {letter: CARD_NAMES[c] for letter, c in sorted(deal.travel_on.items())},
        "terms": [_terms_view(state, t) for t in deal.terms.values()],
        "agreements": agreements,
        "lapsed": [_terms_view(state, t) for t in deal.lapsed],
        "boss_cards_played": len(deal.used),
        "requirements_met": lineup(state) is not None,
        "missing": missing(state),
        "pending": None,
        "last_call": None,
    }
    out["pending"] = _pending_view(state)
    if state.last_call is not None:
        out["last_call"] = {
            "window": state.last_call.id,
            "deadline": format_time(state.last_call.deadline),
            "waiting_for": last_call_waiting_for(state),
        }
    return out


def view(state: GameState, seat: int | None) -> dict[str, Any]:
    """Everything ``seat`` may see (A8) as JSON-ready data; ``seat=None`` is a spectator.
    Other seats' hands appear only as counts, money only under ``open_money`` or after the end."""
    over = state.phase == "game_over"
    show_all_money = state.options.open_money or over
    seats = []
    for s in range(state.n):
        seats.append(
            {
                "seat": s,
                "name": state.players[s],
                "investors": state.seat_investors(s),
                "hand_count": len(state.hands[s]),
                "money": state.money[s] if (show_all_money or s == seat) else None,
                "away": state.away[s],
                "proxied": state.proxied[s],  # A11: the server plays for this seat
                "bot": state.bots[s],  # A13: the server's bot plays this seat
            }
        )
    out: dict[str, Any] = {
        "phase": state.phase,
        "active": state.active,
        "marker": state.marker,
        "covered": {str(k): v for k, v in sorted(state.covered.items())},
        "deals_closed": state.deals_closed,
        "share_value": state.share_value,
        "tiles_left": len(state.tiles),
        "side_pool": state.side_pool,
        "may_deal_in_place": state.may_deal_in_place,
        "must_deal": state.must_deal,
        "board": state.board.to_json(),
        "options": state.options.to_json(),
        "seed_hash": state.seed_hash,
        "seats": seats,
        "draw_pile_count": len(state.draw_pile),
        "discard_pile": multiset(state.discard_pile),
        "deal": _deal_view(state),
        "pending": _pending_view(state),
        "discard_owed": {str(k): v for k, v in state.discard_owed.items()},
        "awaiting": [{**a, "until": format_time(a["until"])} for a in awaiting(state)],
        "winners": list(state.winners),
        "you": None,
    }
    if over:
        out["seed"] = state.seed
    if seat is not None:
        out["you"] = {
            "seat": seat,
            "name": state.players[seat],
            "hand": [CARD_NAMES[c] for c in state.hands[seat]],
            "money": state.money[seat],
            "hand_limit": state.hand_limit(),
            "orders": state.orders[seat].to_json(),  # A10: private to this seat
            "proxy_from": format_time(state.proxy_windows[seat].deadline)
            if seat in state.proxy_windows
            else None,  # A11: when the server starts playing for this away seat
        }
    return out


PRIVATE_EVENTS = frozenset({"orders_set", "seat_present"})  # only their seat sees them


def redact_event(event: Event, seat: int | None) -> dict[str, Any]:
    """An event as ``seat`` may see it (A8), as JSON-ready data: other seats' drawn cards and
    hands become counts, the draw pile its size, the seed and forced dice disappear."""
    if event.type in PRIVATE_EVENTS and event.by != seat:
        return {"type": "private", "by": None}  # A10, A11: another seat's orders or presence
    out = event.to_json()
    if out.get("order") and event.by != seat:
        del out["order"]  # A10: only the seat itself sees that its order acted
    t = event.type
    if t == "game_started":
        if "orders" in out:
            out["orders"] = [o if i == seat else None for i, o in enumerate(out["orders"])]
        out["hands"] = [h if i == seat else len(h) for i, h in enumerate(out["hands"])]
        out["draw_pile"] = len(out["draw_pile"])
        if not event.data["options"].get("open_money"):  # R7.1: other totals stay hidden
            out["money"] = [m if i == seat else None for i, m in enumerate(out["money"])]
        out.pop("seed", None)
        out.pop("forced_dice", None)
    elif t == "cards_drawn" and out["seat"] != seat:
        out["cards"] = len(out["cards"])
    elif t == "pile_reshuffled":
        out["draw_pile"] = len(out["draw_pile"])
    return out


def snapshot(state: GameState) -> dict[str, Any]:
    """The whole state in docs/scenarios.md's result format (seats by name). Includes every hand:
    for scenarios, tests and operators' debugging only, never for a seat (A8)."""
    name = state.players
    deal = state.deal
    window = None
    if state.pending is not None:
        window = {
            "id": state.pending.window.id,
            "kind": "stop",
            "waiting_for": [name[s] for s in stop_waiting_for(state)],
        }
    elif state.last_call is not None:
        window = {
            "id": state.last_call.id,
            "kind": "last_call",
            "waiting_for": [name[s] for s in last_call_waiting_for(state)],
        }
    table: dict[str, Any] = {}
    agreements: list[dict[str, Any]] = []
    offers: list[dict[str, Any]] = []

    def terms(t: Terms) -> dict[str, Any]:
        return {
            "provider": name[t.provider],
            "letter": t.letter,
            "price": _price_json(t.price),
            "card": t.card,
        }

    if deal is not None:
        table = {
            "space": deal.space,
            "family": sorted(f"{CARD_NAMES[c]}@{name[o]}" for c, o in deal.table_family),
            "travel": {letter: CARD_NAMES[c] for letter, c in sorted(deal.travel_on.items())},
            "boss_cards": len(deal.used),
        }
        agreements = [terms(t) for t in deal.agreements.values()]
        offers = [{**terms(t), "by": t.by} for t in deal.terms.values()]
    return {
        "phase": state.phase,
        "active": name[state.active],
        "boss": name[deal.boss] if deal else None,
        "deals_closed": state.deals_closed,
        "marker": state.marker,
        "covered": sorted(state.covered),
        "share_value": state.share_value,
        "money": {name[s]: state.money[s] for s in range(state.n)},
        "investors": {name[s]: state.seat_investors(s) for s in range(state.n)},
        "side_pool": state.side_pool,
        "hands": {name[s]: multiset(state.hands[s]) for s in range(state.n)},
        "discard_pile": multiset(state.discard_pile),
        "draw_pile_count": len(state.draw_pile),
        "table": table,
        "agreements": agreements,
        "offers": offers,
        "window": window,
        "away": [name[s] for s in range(state.n) if state.away[s]],
        "proxied": [name[s] for s in range(state.n) if state.proxied[s]],
        "bots": [name[s] for s in range(state.n) if state.bots[s]],
        "deadlines": [
            {"id": w.id, "kind": w.kind, "deadline": format_time(w.deadline)}
            for w in due_windows(state)
        ],
        "orders": {name[s]: state.orders[s].to_json() for s in range(state.n)},
        "winners": [name[s] for s in state.winners],
    }


# -- legal commands --------------------------------------------------------------------------


def legal_commands(state: GameState, seat: int) -> list[dict[str, Any]]:
    """What ``seat`` may do now: a list of commands ``{"do": ..., **args}``. Arguments a player
    chooses freely are listed in ``"needs"`` (``price``, ``text``, ``cards``) and must be added
    before submitting; every listed command so completed is accepted by ``decide`` (tested)."""
    s = state
    if s.phase == "game_over":
        return []
    out: list[dict[str, Any]] = []
    hand_names = [CARD_NAMES[c] for c in s.hands[seat]]
    distinct = sorted(set(hand_names))
    if s.phase == "discard":
        if seat in s.discard_owed:
            out.append({"do": "discard", "needs": ["cards"], "count": s.discard_owed[seat]})
            out += _recruits(s, seat, hand_names)
    elif s.phase in ("place_marker", "turn_start", "after_roll") and seat == s.active:
        can_deal = not (s.options.has("V5") and len(s.hands[seat]) < 4)
        if s.phase == "place_marker":
            out += [{"do": "place_marker", "space": x} for x in range(16) if x not in s.covered]
        elif s.phase == "turn_start":
            out.append({"do": "roll"})
            if s.may_deal_in_place and can_deal:
                out.append({"do": "open_deal"})
        else:
            if can_deal:
                out.append({"do": "open_deal"})
            if not s.must_deal:
                out.append({"do": "draw"})
    if s.pending is not None and seat != s.pending.seat and seat not in s.pending.window.answered:
        w = s.pending.window.id
        out.append({"do": "allow", "window": w})
        if "stop" in hand_names:
            out.append({"do": "stop", "window": w})
    if s.deal is not None and s.phase in NEGOTIATION_PHASES:
        out += _deal_commands(s, seat, hand_names, distinct)
    if not (s.phase == "discard" and seat in s.discard_owed):  # R6.6: hand_over_limit
        out.append({"do": "chat", "needs": ["text"]})
    return out


def _recruits(s: GameState, seat: int, hand_names: list[str]) -> list[dict[str, Any]]:
    if hand_names.count("recruit") < 3 or s.pending is not None:
        return []
    pool = s.side_pool
    targets = pool if pool else [x for x in LETTERS if s.investors[x] not in (None, seat)]
    return [{"do": "recruit", "target": x} for x in targets if s.investors[x] != seat]


def _deal_commands(
    s: GameState, seat: int, hand_names: list[str], distinct: list[str]
) -> list[dict[str, Any]]:
    """What ``seat`` may do in the running deal: influence cards (R5, A2-A4), then the last
    call's answers (R6) or the negotiation's (R4), as the boss or as a provider."""
    deal = s.deal
    boss = seat == deal.boss
    in_last_call = s.phase == "last_call"
    passed = in_last_call and seat in s.last_call.answered
    out: list[dict[str, Any]] = []
    if s.pending is None and not deal.expired and not (in_last_call and boss) and not passed:
        out += _influence_commands(s, seat, hand_names, distinct)
    if in_last_call:
        if not boss and seat not in s.last_call.answered:
            out.append({"do": "pass", "window": s.last_call.id})
        if boss:
            out.append({"do": "fail"})
        return out
    if boss:
        return out + _boss_commands(s, seat, distinct)
    return out + _provider_commands(s, seat, hand_names)


def _influence_commands(
    s: GameState, seat: int, hand_names: list[str], distinct: list[str]
) -> list[dict[str, Any]]:
    """Influence cards in a deal: travel, recruit, boss (R5, A2, A3, A4)."""
    deal = s.deal
    space = s.board.spaces[deal.space]
    out: list[dict[str, Any]] = []
    for name in distinct:
        if card_kind(name) != "travel":
            continue
        letter = card_letter(name)
        for x in space.letters:
            owner = s.investors[x]
            if owner is None or x in deal.travel_on or (letter is not None and letter != x):
                continue
            if owner == seat and not s.options.two_player_rules(s.n):
                continue
            out.append({"do": "travel", "card": name, "target": f"investor:{x}"})
        for fam in sorted({f"{CARD_NAMES[c]}@{o}" for c, o in deal.table_family}):
            if letter is None or card_letter(fam.split("@")[0]) == letter:
                out.append({"do": "travel", "card": name, "target": fam})
    out += _recruits(s, seat, hand_names)
    if seat != deal.boss and "boss" in hand_names:
        out.append({"do": "boss"})
    return out


def _boss_commands(s: GameState, seat: int, distinct: list[str]) -> list[dict[str, Any]]:
    """The boss's negotiation (R4): family cards to play, proposals to each other seat,
    answers to terms, close and fail."""
    deal = s.deal
    space = s.board.spaces[deal.space]
    out: list[dict[str, Any]] = []
    if not deal.expired:
        for name in distinct:
            letter = card_letter(name)
            usable = letter in space.letters and letter not in space.investor_only
            if card_kind(name) == "family" and usable:
                out.append({"do": "play_family", "card": name})
    for other in range(s.n):
        if other == seat:
            continue
        cards: list[str | None] = [None]
        for x in space.letters:
            if s.investors[x] == other and x not in deal.travel_on:
                cards.append(f"investor:{x}")
        for x in space.letters:  # asking for a family card is public talk (R4.3)
            if x not in space.investor_only and f"family:{x}" not in cards:
                cards.append(f"family:{x}")
        for card in cards:
            letter = card_letter(card) if card else None
            if (other, letter) in deal.agreements:
                continue
            cmd: dict[str, Any] = {"do": "propose", "to": other, "needs": ["price"]}
            if card:
                cmd["card"] = card
            out.append(cmd)
    for t in deal.terms.values():
        if t.by == "provider":
            out += _answers(s, t, t.provider)
    if s.pending is None:
        if lineup(s) is not None:
            out.append({"do": "close"})
        out.append({"do": "fail"})
    return out


def _provider_commands(s: GameState, seat: int, hand_names: list[str]) -> list[dict[str, Any]]:
    """A provider's negotiation (R4): offers, a counter for no card (R4.5), answers to the
    boss's terms, withdraw."""
    deal = s.deal
    space = s.board.spaces[deal.space]
    expired = deal.expired
    offered: set[str] = set()
    for x in space.letters:
        if (seat, x) in deal.agreements:
            continue
        if s.investors[x] == seat and x not in deal.travel_on:
            offered.add(f"investor:{x}")
        if x in space.investor_only:
            continue
        on_table = any(o == seat and card_letter(CARD_NAMES[c]) == x for c, o in deal.table_family)
        if on_table or (not expired and f"family:{x}" in hand_names):
            offered.add(f"family:{x}")
    out = [{"do": "offer", "card": c, "needs": ["price"]} for c in sorted(offered)]
    no_card = deal.terms.get((seat, None))
    if no_card is not None and no_card.by == "boss":  # R4.5 with R4.3: a counter
        out.append({"do": "offer", "needs": ["price"]})
    for t in deal.terms.values():
        if t.provider == seat and t.by == "boss":
            needs_card = t.card and card_kind(t.card) == "family"
            if (
                needs_card
                and not can_supply(s, seat, t.letter)
                and (expired or t.card not in hand_names)
            ):
                out.append(_reject(t, deal.boss))
                continue
            out += _answers(s, t, deal.boss)
    if any(t.provider == seat and t.by == "provider" for t in deal.terms.values()):
        out.append({"do": "withdraw"})
    return out


def _reject(t: Terms, other: int) -> dict[str, Any]:
    return {"do": "reject", "with": other, "letter": t.letter}


def _answers(s: GameState, t: Terms, other: int) -> list[dict[str, Any]]:
    deal = s.deal
    out = [_reject(t, other)]
    committed = sum(_price_value(s, a.price) for a in deal.agreements.values())
    proceeds = prices.proceeds(s.board.spaces[deal.space].shares, s.share_value)
    if committed + _price_value(s, t.price) <= proceeds:
        out.insert(
            0, {"do": "accept", "with": other, "letter": t.letter, "price": _price_json(t.price)}
        )
    return out
