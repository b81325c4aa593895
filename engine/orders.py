"""Standing orders (A10): decisions a seat makes in advance, as plain data.

A seat's orders are private to it (A8): they travel in its own ``orders`` command and
``orders_set`` event, which every other seat sees only as a private event, and they appear in no
other seat's view. When an order fires it makes the ordinary events (``window_answered``,
``terms_set``, ``agreement_made``, ``close_called``, ``die_rolled``, ``deal_opened``,
``cards_drawn``...) marked ``"order": true``, a mark only the seat itself sees; an event made by an
order does not count as the seat acting (A6). ``imtheboss.engine.settle`` fires them.

The orders and what each one may read:

- ``stop`` (a stop window, A2): ``ask`` me / ``unless_aimed``: let it happen unless it is aimed
  at me (``settle.aimed_at``) / ``allow``: always let it happen.
- ``last_call`` (A3): ``ask`` / ``unless_involved``: pass unless my investor card or an agreement
  of mine is in the deal (``settle.involved``: my investor card takes part in the lineup, or I
  have an agreement) / ``pass``: always pass.
- ``prices``: "I provide investor X for P" (cash M, shares, or ``fair``: the running deal's fair
  price, ``context.fair_price`` (A11), plus n M), for investor cards I control: in
  every deal that needs X, an open offer at P appears the moment the deal opens, the card comes
  to me, or a new boss takes over; the boss's terms for X at P or more are accepted at once.
- ``boss``: as boss, ``limits`` accepts at once an offer at or under P M, or at or under the fair
  price plus n M (``{"fair": n}``) (per letter, ``*`` for
  any) for a letter the deal still needs (``lineup.still_needed``); ``close`` closes at once when
  the requirements are met.
- ``turn`` (a turn pre-move): at the start of my turn deal in place if ``in_place`` holds, else
  roll; after the roll open a deal if ``after_roll`` holds, else draw. Conditions (``Condition``):
  ``never`` / ``always`` / ``needs_mine`` (the space needs one of my investor cards) / ``fill``
  with ``k`` (I can fill at least k of the space's letters myself: my investor cards and the
  family cards in my hand).

Fairness about hidden information: an order that answers another seat's window (``stop``,
``last_call``) reads only public information, so *when* it fires never tells the table what is
in the seat's hand; the turn pre-move, on the seat's own turn, may read the seat's own hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from imtheboss.engine.board import LETTERS
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.stored import ByContent

STOP_CHOICES = ("ask", "unless_aimed", "allow")
LAST_CALL_CHOICES = ("ask", "unless_involved", "pass")
WHEN_CHOICES = ("never", "always", "needs_mine", "fill")
MAX_PRICE = 10_000  # M or shares, as for offers (R4.2)
PRICE_KINDS = ("cash", "shares", "fair")  # "fair": the deal's fair price (A11) plus n M


class OrdersError(ValueError):
    """Orders that cannot be used; the message names the field."""


def _choice(data: dict[str, Any], key: str, choices: tuple[str, ...]) -> str:
    value = data.get(key, choices[0])
    if value not in choices:
        raise OrdersError(f"{key} is one of {', '.join(choices)}")
    return value


def _price(letter: str, value: Any) -> tuple[str, int]:
    if not isinstance(value, dict) or len(value) != 1:
        raise OrdersError(
            f'the price for {letter} is {{"cash": M}}, {{"shares": n}} or {{"fair": plus M}}'
        )
    kind, amount = next(iter(value.items()))
    if kind not in PRICE_KINDS or type(amount) is not int or not 0 <= amount <= MAX_PRICE:
        raise OrdersError(f"the price for {letter} is a whole number from 0 to {MAX_PRICE}")
    return kind, amount


def _limit(letter: str, value: Any) -> tuple[str, int]:
    if isinstance(value, dict):
        if set(value) != {"fair"}:
            raise OrdersError('a boss limit is a number of M or {"fair": plus M}')
        kind, amount = "fair", value["fair"]
    else:
        kind, amount = "cash", value
    if type(amount) is not int or not 0 <= amount <= MAX_PRICE:
        raise OrdersError(f"a boss limit is a whole number of M from 0 to {MAX_PRICE}")
    return kind, amount


@dataclass(frozen=True)
class Condition:
    """When a turn pre-move deals: ``never``, ``always``, ``needs_mine`` or ``fill`` (with ``k``:
    1 to 5 letters the seat can fill itself)."""

    when: str = "never"
    k: int = 1

    def holds(self, state: Any, seat: int, space_index: int) -> bool:
        """True when the condition holds for ``seat`` on deal space ``space_index``; reads only
        what the seat sees (its own hand included: it is the seat's own turn)."""
        if self.when in ("never", "always"):
            return self.when == "always"
        space = state.board.spaces[space_index]
        mine = set(state.seat_investors(seat))
        if self.when == "needs_mine":
            return any(x in mine for x in space.letters)
        family = {
            name.split(":")[1]
            for name in (CARD_NAMES[c] for c in state.hands[seat])
            if name.startswith("family:")
        }
        fill = {
            x for x in space.letters if x in mine or (x in family and x not in space.investor_only)
        }
        return len(fill) >= self.k

    def to_json(self) -> dict[str, Any]:
        return {"when": self.when, "k": self.k} if self.when == "fill" else {"when": self.when}

    @classmethod
    def from_json(cls, data: Any, where: str) -> Condition:
        """Raises ``OrdersError``."""
        if not isinstance(data, dict) or set(data) - {"when", "k"}:
            raise OrdersError(f'{where} is {{"when": ..., "k": n}}')
        when = _choice(data, "when", WHEN_CHOICES)
        if "k" in data and when != "fill":
            raise OrdersError(f'{where}.k goes with "when": "fill" only')
        k = data.get("k", 1)
        if type(k) is not int or not 1 <= k <= 5:
            raise OrdersError(f"{where}.k is a whole number from 1 to 5")
        return cls(when, k)


@dataclass(frozen=True)
class TurnOrder:
    """A turn pre-move: deal in place if ``in_place`` holds, else roll; after the roll, open a
    deal if ``after_roll`` holds, else draw."""

    in_place: Condition = field(default_factory=Condition)
    after_roll: Condition = field(default_factory=Condition)


@dataclass(frozen=True)
class Orders:
    """One seat's standing orders (immutable: states share them). ``prices``: ``(letter,
    ("cash"|"shares", n))`` pairs; ``limits``: ``(letter or "*", M)`` pairs; ``turn``: ``None``
    (ask me) or a ``TurnOrder``."""

    stop: str = "ask"
    last_call: str = "ask"
    prices: tuple[tuple[str, tuple[str, int]], ...] = ()
    limits: tuple[tuple[str, tuple[str, int]], ...] = ()
    close: bool = False
    turn: TurnOrder | None = None

    def price_for(self, letter: str) -> tuple[str, int] | None:
        """The posted price of investor ``letter``, or ``None``."""
        return dict(self.prices).get(letter)

    def limit_for(self, letter: str) -> tuple[str, int] | None:
        """The most this seat as boss pays at once for ``letter``: ``("cash", M)`` or
        ``("fair", n)`` (the deal's fair price plus n M, ``settle.in_cash``), or ``None``."""
        limits = dict(self.limits)
        return limits.get(letter, limits.get("*"))

    def to_json(self) -> dict[str, Any]:
        """The JSON form ``from_json`` reads."""
        return {
            "stop": self.stop,
            "last_call": self.last_call,
            "prices": {x: {kind: n} for x, (kind, n) in self.prices},
            "boss": {
                "limits": {x: n if kind == "cash" else {kind: n} for x, (kind, n) in self.limits},
                "close": self.close,
            },
            "turn": None
            if self.turn is None
            else {
                "in_place": self.turn.in_place.to_json(),
                "after_roll": self.turn.after_roll.to_json(),
            },
        }

    @classmethod
    def from_json(cls, data: Any) -> Orders:
        """Orders from ``{"stop", "last_call", "prices": {X: price}, "boss": {"limits": {X or
        "*": M or {"fair": plus M}}, "close": bool}, "turn": null | {"in_place": cond,
        "after_roll": cond}}``
        (every key optional: a missing one asks me). Raises ``OrdersError``."""
        if not isinstance(data, dict):
            raise OrdersError("orders are an object")
        unknown = set(data) - {"stop", "last_call", "prices", "boss", "turn"}
        if unknown:
            raise OrdersError(f"unknown order {sorted(unknown)[0]!r}")
        prices = _object(data, "prices")
        if not isinstance(prices, dict) or any(x not in LETTERS for x in prices):
            raise OrdersError("prices are by investor letter (C D G L S W)")
        boss = _object(data, "boss")
        if not isinstance(boss, dict) or set(boss) - {"limits", "close"}:
            raise OrdersError('boss is {"limits": {letter: M}, "close": true or false}')
        limits = _object(boss, "limits")
        if not isinstance(limits, dict) or any(x not in (*LETTERS, "*") for x in limits):
            raise OrdersError("boss limits are by investor letter, or * for any")
        if not isinstance(boss.get("close", False), bool):
            raise OrdersError("boss close is true or false")
        return cls(
            stop=_choice(data, "stop", STOP_CHOICES),
            last_call=_choice(data, "last_call", LAST_CALL_CHOICES),
            prices=tuple(sorted((x, _price(x, p)) for x, p in prices.items())),
            limits=tuple(sorted((x, _limit(x, m)) for x, m in limits.items())),
            close=boss.get("close", False),
            turn=_turn_from(data.get("turn")),
        )


def _object(data: dict[str, Any], key: str) -> Any:
    """``data[key]``, ``{}`` when it is missing or null; anything else as it is (so that a
    list or a number is refused, not read as "none")."""
    value = data.get(key)
    return {} if value is None else value


def _turn_from(data: Any) -> TurnOrder | None:
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) != {"in_place", "after_roll"}:
        raise OrdersError('turn is null or {"in_place": condition, "after_roll": condition}')
    return TurnOrder(
        Condition.from_json(data["in_place"], "turn.in_place"),
        Condition.from_json(data["after_roll"], "turn.after_roll"),
    )


stored_orders: ByContent[Orders] = ByContent(Orders.from_json)
"""``Orders.from_json(data)`` for orders stored as JSON (a snapshot's, an event's), checked once
per process and then found by their content (``engine.stored``). Raises ``OrdersError``."""


NO_ORDERS = Orders()
# The set a new seat of a server game starts with. It reads public information only, and it
# keeps the game moving: a last call asks a seat only whether to upset a closing deal with a card
# (A3), so the recommendation passes it (a seat that wants that chance picks "unless involved" or
# "ask"); cards aimed at the seat still wait for it.
RECOMMENDED = Orders(stop="unless_aimed", last_call="pass")

# The pace a table chooses at creation: the standing orders every seat starts with (each seat
# changes its own in one tap). None plays a seat's own turn or an influence card for it; all read
# public information only (a fair price is public: the space's shares and investors, the share
# value). "relaxed": every window asks. "standard": the recommended set. "brisk" (the default):
# the recommended set, a posted price for every investor card the seat holds at the fair price,
# as boss a limit of the fair price plus 2 M for any letter, and close when the requirements are
# met.
BRISK = Orders(
    stop="unless_aimed",
    last_call="pass",
    prices=tuple((x, ("fair", 0)) for x in LETTERS),
    limits=(("*", ("fair", 2)),),
    close=True,
)
PACES: dict[str, Orders] = {"relaxed": NO_ORDERS, "standard": RECOMMENDED, "brisk": BRISK}
DEFAULT_PACE = "brisk"


def pace_orders(pace: str) -> Orders:
    """The standing orders every seat of a table at ``pace`` (``PACES``) starts with. Raises
    ``OrdersError`` for an unknown pace."""
    if pace not in PACES:
        raise OrdersError(f"the pace is one of {', '.join(PACES)}")
    return PACES[pace]


BOT_PACE = "brisk"  # A13: a bot seat's standing orders are this pace's (posted prices, limits)


def bot_orders() -> Orders:
    """The standing orders of a bot seat (A13): those of the pace ``BOT_PACE``."""
    return PACES[BOT_PACE]


def pace_of(orders: Orders) -> str | None:
    """The pace whose starting orders ``orders`` are, or ``None`` (the seat changed them)."""
    return next((name for name, o in PACES.items() if o == orders), None)
