"""What an event says, as a message: an id and its parameters, for the history, the notices
after a move, the mail and simulate's log.

``message(event, seat)`` reads only what ``redact_event`` lets ``seat`` see (A8): drawn cards of
others are counts, the draw pile order and the seed never appear (the seed only in
``game_ended``). The engine says nothing in any language: ``imtheboss.web.say.messages`` renders a
message in the reader's language. Parameters name their kind by their key:

- ``player``, ``boss``, ``provider``, ``owner``: a seat index (``None``: nobody; ``owner``
  ``None`` is the side pool); ``players``: seat indexes; ``owed``, ``payments``, ``money``:
  ``[[seat, number], ...]`` (money in M, payments signed);
- ``card``: a card name (``investor:C``, ``family:W``... or ``None`` for no card, R4.5);
  ``cards``: card names, or a count when the reader may not see them;
- ``letter``: an investor letter (``None``: no card); ``price``: ``{"cash"|"shares": n}``;
- ``space``, ``value``, ``tile``, ``proceeds``, ``minutes``, ``count``, ``share_value``: numbers;
- ``time``: ISO 8601 UTC; ``duration``: minutes; ``answer``, ``reason``, ``kind``,
  ``window_kind``: codes the renderer translates (``window_kind`` as ``awaiting``'s ``for``);
  ``text``, ``zone``, ``start``, ``end``, ``hash``, ``name``, ``was``: shown as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.events import Event, own_act
from imtheboss.engine.views import redact_event


@dataclass(frozen=True)
class Message:
    """``id`` names the sentence (``"rolled"``, ``"offer"``...); ``params`` fill it (see the
    module docstring for their kinds); ``by_order``/``by_proxy``: the seat's own standing
    orders made the event (seen by that seat only, A10) or the server played for an away seat
    (A11); ``by_mail``: the seat made it by replying to a mail."""

    id: str
    params: dict[str, Any] = field(default_factory=dict)
    by_order: bool = False
    by_proxy: bool = False
    by_mail: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{"id", "params", "by_order", "by_proxy", "by_mail"}`` (for notification rows)."""
        return {
            "id": self.id,
            "params": self.params,
            "by_order": self.by_order,
            "by_proxy": self.by_proxy,
            "by_mail": self.by_mail,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        """The inverse of ``to_json``."""
        return cls(data["id"], dict(data.get("params") or {}), **_flags(data))


def _flags(data: dict[str, Any]) -> dict[str, bool]:
    return {
        "by_order": bool(data.get("by_order")),
        "by_proxy": bool(data.get("by_proxy")),
        "by_mail": bool(data.get("by_mail")),
    }


def message(event: Event, seat: int | None = None) -> Message:
    """The message of ``event`` as ``seat`` may see it (``None``: a spectator)."""
    d = redact_event(event, seat)
    make = _MAKERS.get(d["type"])
    if make is None:
        return Message("unknown", {"kind": d["type"]})
    msg_id, params = make(d, event.by)
    by_mail = d.get("via") == "mail" and own_act(d["type"], d)
    return Message(msg_id, params, bool(d.get("order")), bool(d.get("proxy")), by_mail)


def _cards(value: Any) -> Any:
    """Card ids as names; a count (a hand the reader may not see) stays a count."""
    return value if isinstance(value, int) else [CARD_NAMES[c] for c in value]


def _server(d: dict, by: int | None) -> bool:
    """The server acted for the seat (its window ran out, A5), not the seat itself."""
    return by is None and not d.get("proxy")


def _pairs(mapping: dict[str, int]) -> list[list[int]]:
    return [[int(s), n] for s, n in mapping.items()]


Maker = Callable[[dict, "int | None"], tuple[str, dict[str, Any]]]


def starting_investors(d: dict[str, Any]) -> tuple[dict[int, list[str]], list[str]]:
    """A ``game_started`` event's data split into ``({seat: [letters]}, side_pool)``: the
    investor cards each seat was dealt and those no seat was (R2.2: the side pool; the event
    has no key of its own for it), letters in order."""
    investors: dict[int, list[str]] = {s: [] for s in range(len(d["players"]))}
    side_pool = []
    for letter, owner in sorted((d.get("investors") or {}).items()):
        if isinstance(owner, int):
            investors[owner].append(letter)
        else:
            side_pool.append(letter)
    return investors, side_pool


def _started(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    investors, side_pool = starting_investors(d)
    return "game_started", {
        "players": list(range(len(d["players"]))),
        "holdings": [[s, letters] for s, letters in investors.items()],
        "side_pool": side_pool,
        "player": d.get("active", 0),
        "hash": d["seed_hash"][:12],
    }


def _marker(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    return ("marker_for" if _server(d, by) else "marker"), {
        "player": d["seat"],
        "space": d["space"],
    }


def _rolled(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    if d["purpose"] != "move":
        return "end_roll", {"player": d["seat"], "value": d["value"]}
    msg_id = "rolled_for" if _server(d, by) else "rolled"
    return msg_id, {"player": d["seat"], "value": d["value"], "space": d["space"]}


def _drawn(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    msg_id = "drew_for" if _server(d, by) else "drew"
    return msg_id, {"player": d["seat"], "cards": _cards(d["cards"])}


def _discarded(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    msg_id = "discarded_for" if _server(d, by) else "discarded"
    return msg_id, {"player": d["seat"], "cards": _cards(d["cards"])}


def _turn(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    return ("turn_must_deal" if d["must_deal"] else "turn"), {"player": d["seat"]}


def _opened(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    msg_id = "deal_opened_for" if _server(d, by) else "deal_opened"
    return msg_id, {"boss": d["boss"], "space": d["space"]}


def _terms(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    params = {"provider": d["provider"], "card": d["card"], "price": d["price"]}
    return ("offer" if d["by_side"] == "provider" else "proposal"), params


def _removed(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    params = {"provider": d["provider"], "letter": d["letter"]}
    return "terms_" + d["reason"], params  # rejected, withdrawn, lapsed


def _agreed(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    return "agreement", {"provider": d["provider"], "card": d["card"], "price": d["price"]}


def _pending(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"player": d["seat"]}
    target = d.get("target")
    if target:
        owner = d.get("owner")
        params.update(card=_target(target), owner=owner if isinstance(owner, int) else None)
    if d["kind"] == "boss":
        return "played_boss", params
    if d["kind"] == "recruit":  # travel and recruit cards always have a target (R5.2, R5.3)
        return "played_recruit_on", params
    params["cards"] = _cards(d["cards"])
    return "played_card_on", params


def _target(target: str) -> str:
    """A pending card's target as a card name: a family card on the table is stored by its id
    (``family:21``, R5.2), which names it as ``family:W``; ``investor:S`` and letters stay."""
    kind, _sep, rest = target.partition(":")
    if kind == "family" and rest.isdigit():
        return CARD_NAMES[int(rest)]
    return target


def _answered(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    return "answered_" + d["answer"], {"player": d["seat"]}  # allow, pass


def _took_effect(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    if d["kind"] == "boss":
        return "new_boss", {"player": d["seat"]}
    return "card_took_effect", {"player": d["seat"], "kind": d["kind"]}


def _timed_out(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    if d["kind"] == "negotiation":  # nobody owes the negotiation an answer but the boss
        return "timed_out_negotiation", {}
    return "timed_out_" + d["kind"], {"players": list(d["missed"])}


def _closed(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    return "deal_closed", {
        "boss": d["boss"],
        "space": d["space"],
        "tile": d["tile"],
        "proceeds": d["proceeds"],
        "payments": _pairs(d["payments"]),
    }


def _failed(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    return "deal_failed", {"boss": d["boss"], "space": d["space"], "reason": d["reason"]}


def _ended(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    money = [[i, m] for i, m in enumerate(d["money"])]
    winners = list(d["winners"])
    msg_id = "game_over_shared" if len(winners) > 1 else "game_over"
    return msg_id, {"reason": d["reason"], "money": money, "players": winners}


def _night(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    night = d["night"]
    if night is None:
        return "no_night", {"player": d["seat"]}
    return "night", {"player": d["seat"], **{k: night[k] for k in ("start", "end", "zone")}}


def _window_extended(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
    """A13: the organiser's extension, with its reason and the (latest) new deadline."""
    windows = d["windows"]
    params = {
        "duration": d["minutes"],
        "time": max(w["deadline"] for w in windows),
        "text": d["reason"],
    }
    if d.get("seat") is not None:
        return "organiser_extended_seat", {"player": d["seat"], **params}
    return "organiser_extended", {"window_kind": windows[0]["kind"], **params}


def _simple(msg_id: str, *keys: str) -> Maker:
    def make(d: dict, by: int | None) -> tuple[str, dict[str, Any]]:
        return msg_id, {("player" if k == "seat" else k): d[k] for k in keys}

    return make


_MAKERS: dict[str, Maker] = {
    "game_started": _started,
    "marker_placed": _marker,
    "die_rolled": _rolled,
    "pile_reshuffled": lambda d, by: ("reshuffled", {"count": d["draw_pile"]}),
    "cards_drawn": _drawn,
    "discard_step": lambda d, by: ("discard_step", {"owed": _pairs(d["owed"])}),
    "cards_discarded": _discarded,
    "turn_started": _turn,
    "deal_opened": _opened,
    "family_played": lambda d, by: ("family", {"player": d["seat"], "card": CARD_NAMES[d["card"]]}),
    "terms_set": _terms,
    "terms_removed": _removed,
    "agreement_made": _agreed,
    "card_pending": _pending,
    "window_answered": _answered,
    "card_stopped": _simple("stopped", "seat"),
    "card_took_effect": _took_effect,
    "close_called": _simple("close_called", "boss"),
    "negotiation_expired": _simple("negotiation_expired"),
    "timed_out": _timed_out,
    "deal_closed": _closed,
    "deal_failed": _failed,
    "game_ended": _ended,
    "deadlines_extended": lambda d, by: ("extended", {"minutes": d["seconds"] // 60}),
    "seat_away": lambda d, by: (("away" if d["away"] else "back"), {"player": d["seat"]}),
    "seat_present": _simple("present"),  # only the seat itself sees this event (A11)
    "chat": _simple("chat", "seat", "text"),
    "orders_set": _simple("orders_set"),  # only the seat itself sees this event (A10)
    "private": _simple("private"),
    "night_set": _night,
    "proxy_scheduled": lambda d, by: (
        "proxy_scheduled",
        {"player": d["seat"], "time": d["deadline"]},
    ),
    "proxy_started": _simple("proxy_started", "seat"),
    "window_extended": _window_extended,
    "seat_replaced": _simple("seat_replaced", "was", "name"),
    "seat_to_bot": _simple("seat_to_bot", "seat"),
    "game_paused": _simple("organiser_paused"),
    "game_resumed": _simple("organiser_resumed"),
    "seat_email_changed": _simple("organiser_changed_email", "seat"),
    "invitation_resent": _simple("organiser_resent", "seat"),
}
"""Every event type the engine emits (``imtheboss.engine.state``) and ``private``."""
