"""Readable lines for events (the game's and each negotiation's history; simulate's log).

``describe(event, state_before_or_players, seat)`` returns one English sentence. It reads only
what ``redact_event`` lets ``seat`` see (A8): drawn cards of others are counts, the draw pile
order and the seed never appear (the seed only in ``game_ended``).
"""

from __future__ import annotations

from typing import Any

from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.events import Event
from imtheboss.engine.state import parse_time
from imtheboss.engine.views import redact_event


def _price(price: dict[str, int]) -> str:
    kind, amount = next(iter(price.items()))
    return f"{amount} M" if kind == "cash" else f"{amount} share{'s' if amount != 1 else ''}"


def _cards(ids: Any) -> str:
    if isinstance(ids, int):
        return f"{ids} card{'s' if ids != 1 else ''}"
    return ", ".join(CARD_NAMES[c] for c in ids) or "nothing"


def describe(event: Event, players: list[str], seat: int | None = None) -> str:
    """One line for ``event`` as ``seat`` may see it (``None``: a spectator)."""
    d = redact_event(event, seat)
    name = players.__getitem__
    t = d["type"]

    def who(key: str = "seat") -> str:
        value = d.get(key)
        return name(value) if isinstance(value, int) else "the server"

    if t == "game_started":
        return f"Game started for {', '.join(d['players'])}; seed hash {d['seed_hash'][:12]}…"
    if t == "marker_placed":
        return f"{who()} places the marker on space {d['space']}"
    if t == "die_rolled":
        if d["purpose"] == "move":
            return f"{who()} rolls {d['value']}: the marker moves to space {d['space']}"
        return f"End roll for {who()}: {d['value']}"
    if t == "pile_reshuffled":
        return f"The discard pile is shuffled into a new draw pile ({_cards(d['draw_pile'])})"
    if t == "cards_drawn":
        return f"{who()} draws {_cards(d['cards'])}"
    if t == "discard_step":
        owing = ", ".join(f"{name(int(s))} {n}" for s, n in d["owed"].items())
        return f"Hands above the limit must discard: {owing}"
    if t == "cards_discarded":
        return f"{who()} discards {_cards(d['cards'])}"
    if t == "turn_started":
        extra = " (must open a deal)" if d["must_deal"] else ""
        return f"{who()}'s turn{extra}"
    if t == "deal_opened":
        return f'{who("boss")} opens a deal on space {d["space"]}: "Let\'s make a deal!"'
    if t == "family_played":
        return f"{who()} plays {CARD_NAMES[d['card']]}"
    if t == "terms_set":
        card = f" for {d['card']}" if d["card"] else " for no card"
        if d["by_side"] == "provider":
            return f"{who('provider')} offers{card} at {_price(d['price'])}"
        return f"The boss proposes {_price(d['price'])} to {who('provider')}{card}"
    if t == "terms_removed":
        letter = d["letter"] or "no card"
        return f"Terms with {who('provider')} for {letter} {d['reason']}"
    if t == "agreement_made":
        card = d["card"] or "no card"
        return f"Agreement: {who('provider')} gets {_price(d['price'])} for {card}"
    if t == "card_pending":
        target = ""
        if d["target"]:
            label = d["target"]
            if label.startswith("family:"):
                label = CARD_NAMES[int(label.split(":")[1])]
            owner = d.get("owner")
            of = f" of {players[owner]}" if isinstance(owner, int) else " from the side pool"
            target = f" on {label}{of}"
        if d["kind"] == "boss":
            return f'{who()} plays a boss card: "I\'m the Boss!" (stop window {d["window"]})'
        if d["kind"] == "recruit":
            return f"{who()} plays three recruit cards{target} (stop window {d['window']})"
        return f"{who()} plays {_cards(d['cards'])}{target} (stop window {d['window']})"
    if t == "window_answered":
        return f"{who()} answers {d['answer']} ({d['window']})"
    if t == "card_stopped":
        return f"{who()} plays a stop card: the pending card is cancelled"
    if t == "card_took_effect":
        return f"The {d['kind']} card of {who()} takes effect"
    if t == "close_called":
        return f"{who('boss')} calls the deal closed: last call ({d['window']})"
    if t == "negotiation_expired":
        return "The negotiation deadline has passed"
    if t == "timed_out":
        late = ", ".join(name(s) for s in d["missed"]) or "nobody"
        return f"The {d['kind']} window {d['window']} timed out (no answer from {late})"
    if t == "deal_closed":
        pays = ", ".join(f"{name(int(s))} {m:+d} M" for s, m in d["payments"].items())
        where = f"space {d['space']} (tile #{d['tile']}, proceeds {d['proceeds']} M)"
        return f"Deal closed on {where}: {pays}"
    if t == "deal_failed":
        return f"The deal of {who('boss')} on space {d['space']} failed ({d['reason']})"
    if t == "game_ended":
        money = ", ".join(f"{players[i]} {m} M" for i, m in enumerate(d["money"]))
        winners = ", ".join(players[i] for i in d["winners"])
        return f"Game over ({d['reason']}): {money}. Winner: {winners}"
    if t == "deadlines_extended":
        return f"Every open deadline moves {d['seconds'] // 60} min later (the game was paused)"
    if t == "seat_away":
        return f"{who()} is away: windows do not wait" if d["away"] else f"{who()} is back"
    if t == "chat":
        return f"{who()}: {d['text']}"
    if t == "orders_set":
        return "Your standing orders changed"  # only the seat itself sees this event (A10)
    if t == "private":
        return "(something private to another player)"
    if t == "night_set":
        night = d["night"]
        if night is None:
            return f"{who()} names no night: windows may run out at any hour"
        return f"{who()}'s night: {night['start']} to {night['end']} ({night['zone']})"
    if t == "proxy_scheduled":
        when = parse_time(d["deadline"]).strftime("%Y-%m-%d %H:%M UTC")
        return f"If {who()} stays away, the server plays for them from {when}"
    if t == "proxy_started":
        return f"{who()} has been away too long: the server plays for them until they are back"
    return t
