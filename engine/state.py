"""Game state and ``apply``: folding events into state (no rule checks: events are facts).

The state is plain data. ``apply(state, event)`` returns a new state; ``replay(events)`` folds a
whole log (in place, for speed). Times are timezone-aware UTC ``datetime``s in state and ISO 8601
strings in events. Money is int millions (M). Seats are ints 0..n-1 in seat order (clockwise).

Snapshots (``state_to_json``/``state_from_json``) cache ``replay(events[:n])``. The events are the
truth, so a snapshot that might not equal that replay is refused (``SnapshotError``), never
half-read, and the caller replays the log instead. Two stamps tell:

- ``SNAPSHOT_FORMAT``, kept by hand, names the layout of the snapshot itself (its keys, what
  ``format`` and ``engine`` mean); bump it when that layout changes. Snapshots from before it
  existed have no ``format`` and are refused.
- ``ENGINE_FINGERPRINT``, the sha256 of the source of every module whose code ``apply`` runs or
  whose data it reads (``FOLDING_MODULES``), computed once at import. Any change to how events
  fold (a new state field, a changed handler) changes it, with nobody having to remember a bump.
  The price: an edit that changes nothing (a comment) retires the snapshots too, so each game is
  replayed from its log on load until its next write stores a fresh snapshot: cheap (a whole
  game replays in milliseconds) and never wrong. A hand-kept number alone is the other way
  round: free when someone forgets it, and then silently wrong.

A web process and a worker of two builds side by side (a rolling deploy) each refuse the other's
snapshots and replay; both stay correct.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any, NamedTuple

from imtheboss.engine import prices
from imtheboss.engine.board import Board, stored_board
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.events import SCHEMA_VERSION, Event, take_record
from imtheboss.engine.options import Options
from imtheboss.engine.orders import NO_ORDERS, RECOMMENDED, Orders, bot_orders, stored_orders

# A seat's acts since its turn began (V3): the influence events and opening a deal.
ACTING_EVENTS = frozenset({"family_played", "card_pending", "card_stopped", "deal_opened"})


def parse_time(text: str) -> datetime:
    """ISO 8601 text (as written by ``format_time``) to an aware UTC datetime."""
    return datetime.fromisoformat(text)


def format_time(at: datetime) -> str:
    """An aware datetime as ISO 8601 text in UTC. Raises ``ValueError`` for a naive datetime."""
    if at.tzinfo is None:
        raise ValueError("times must be timezone-aware (UTC)")

    return at.astimezone(UTC).isoformat()


@dataclass
class Window:
    """A window with a deadline: ``kind`` is ``turn``, ``discard``, ``stop``, ``last_call`` or
    ``negotiation``; ``answered`` holds the seats that answered (stop, last call)."""

    id: str
    kind: str
    deadline: datetime
    answered: set[int] = field(default_factory=set)

    def copy(self) -> Window:
        return Window(self.id, self.kind, self.deadline, set(self.answered))


class Terms(NamedTuple):
    """Terms between the boss and one provider for one letter (``None``: R4.5, no card).

    ``price`` is ``("cash", M)`` or ``("shares", n)``; ``by`` is ``"boss"`` or ``"provider"``
    (who named these terms: the other side may accept them, A7); ``card`` the card name put
    forward (``investor:C``, ``family:S``) or ``None``. A named tuple, as ``Event``: a replay
    builds one for every terms event."""

    provider: int
    letter: str | None
    price: tuple[str, int]
    by: str
    card: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "letter": self.letter,
            "price": {self.price[0]: self.price[1]},
            "by": self.by,
            "card": self.card,
        }


@dataclass
class Pending:
    """A travel, boss card or triple recruit waiting out its stop window (A2)."""

    window: Window
    seat: int
    kind: str  # travel | recruit | boss
    cards: list[int]
    target: str | None  # investor:X, family card id as "family:<id>", or a letter for recruit

    def copy(self) -> Pending:
        return Pending(self.window.copy(), self.seat, self.kind, list(self.cards), self.target)


@dataclass
class Deal:
    """The running negotiation (R4, R5): who is boss, what lies on the table, terms and
    agreements, and the negotiation window (A1, A4)."""

    space: int
    opener: int
    boss: int
    window: Window
    expired: bool = False
    table_family: list[tuple[int, int]] = field(default_factory=list)  # (card id, owner seat)
    travel_on: dict[str, int] = field(default_factory=dict)  # investor letter -> travel card id
    used: list[int] = field(default_factory=list)  # boss cards that took effect (R5.7)
    terms: dict[tuple[int, str | None], Terms] = field(default_factory=dict)
    agreements: dict[tuple[int, str | None], Terms] = field(default_factory=dict)
    lapsed: list[Terms] = field(default_factory=list)
    # (seat, letter, boss): a posted price (A10) or the proxy's (A11) was offered to that boss
    posted: set[tuple[int, str, int]] = field(default_factory=set)

    def copy(self) -> Deal:
        return Deal(
            space=self.space,
            opener=self.opener,
            boss=self.boss,
            window=self.window.copy(),
            expired=self.expired,
            table_family=list(self.table_family),
            travel_on=dict(self.travel_on),
            used=list(self.used),
            terms=dict(self.terms),
            agreements=dict(self.agreements),
            lapsed=list(self.lapsed),
            posted=set(self.posted),
        )


@dataclass
class GameState:
    """Everything about one game. Hidden parts (hands, draw pile order, seed) must only leave
    through ``imtheboss.engine.views`` (A8)."""

    players: list[str]
    options: Options
    board: Board
    seed: Any
    seed_hash: str
    rng_count: int
    forced_dice: list[int]
    investors: dict[str, int | None]  # letter -> seat, None = side pool (R2.2)
    hands: list[list[int]]
    draw_pile: list[int]  # top first
    discard_pile: list[int]
    money: list[int]
    covered: dict[int, int]  # space -> tile number
    tiles: list[int]  # tile numbers still in the stack, top first
    deals_closed: int
    marker: int | None
    active: int
    phase: str
    may_deal_in_place: bool = True
    must_deal: bool = False
    turn: Window | None = None
    deal: Deal | None = None
    pending: Pending | None = None
    last_call: Window | None = None
    discard_owed: dict[int, int] = field(default_factory=dict)
    after_discard: tuple[int, bool] | None = None  # (next seat, may deal in place)
    resume_phase: str | None = None  # phase to return to after a stop window outside a deal
    missed: list[int] = field(default_factory=list)
    away: list[bool] = field(default_factory=list)
    acted_since_turn: list[bool] = field(default_factory=list)  # V3
    had_turn: list[bool] = field(default_factory=list)
    window_seq: int = 0
    end_sum: int = 0  # V7 running sum
    winners: list[int] = field(default_factory=list)
    seq: int = 0  # events applied
    orders: list[Orders] = field(default_factory=list)  # A10, private to each seat
    last_act: list[str | None] = field(default_factory=list)  # ISO time of each seat's last act
    proxy_windows: dict[int, Window] = field(default_factory=dict)  # A11: seat -> when
    proxied: list[bool] = field(default_factory=list)  # A11: the server plays for the seat
    nights: list[dict[str, str] | None] = field(default_factory=list)  # A12: each seat's night
    bots: list[bool] = field(default_factory=list)  # A13: the server's bot plays the seat

    # -- derived -------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.players)

    def left_of(self, seat: int) -> int:
        """The seat to the left (the next in seat order, R3.2)."""
        return (seat + 1) % self.n

    @property
    def share_value(self) -> int:
        """The value of one share (M): the top deal tile's (R1.2); 0 when none is left."""
        return prices.share_value(self.tiles, self.options)

    def seat_investors(self, seat: int) -> list[str]:
        return sorted(letter for letter, s in self.investors.items() if s == seat)

    @property
    def side_pool(self) -> list[str]:
        return sorted(letter for letter, s in self.investors.items() if s is None)

    def hand_limit(self) -> int:
        """R6.6: 12; V6: 10 from the 10th deal on (nine deals closed)."""
        return 10 if self.options.has("V6") and self.deals_closed >= 9 else 12

    def clone(self) -> GameState:
        """A copy that shares nothing mutable with ``self`` (decide works on a scratch copy; the
        input is never changed). Board, options, players, seed and ``Terms`` are immutable and
        shared. Every new mutable field must be copied here (tests compare with deepcopy)."""
        new = copy.copy(self)
        new.players = list(self.players)
        new.forced_dice = list(self.forced_dice)
        new.investors = dict(self.investors)
        new.hands = [list(h) for h in self.hands]
        new.draw_pile = list(self.draw_pile)
        new.discard_pile = list(self.discard_pile)
        new.money = list(self.money)
        new.covered = dict(self.covered)
        new.tiles = list(self.tiles)
        new.turn = self.turn.copy() if self.turn else None
        new.deal = self.deal.copy() if self.deal else None
        new.pending = self.pending.copy() if self.pending else None
        new.last_call = self.last_call.copy() if self.last_call else None
        new.discard_owed = dict(self.discard_owed)
        new.missed = list(self.missed)
        new.away = list(self.away)
        new.acted_since_turn = list(self.acted_since_turn)
        new.had_turn = list(self.had_turn)
        new.winners = list(self.winners)
        new.orders = list(self.orders)
        new.last_act = list(self.last_act)
        new.proxy_windows = {k: w.copy() for k, w in self.proxy_windows.items()}
        new.proxied = list(self.proxied)
        new.nights = list(self.nights)
        new.bots = list(self.bots)
        return new


def every_card(state: GameState) -> list[int]:
    """Every influence card id wherever it lies (R1.1): hands, draw pile, discard pile, and the
    table (family cards, travel cards on investors, boss cards used, the pending card(s)).
    Always the 98 ids, each once."""
    cards = [c for hand in state.hands for c in hand] + state.draw_pile + state.discard_pile
    if state.deal is not None:
        cards += [c for c, _ in state.deal.table_family]
        cards += list(state.deal.travel_on.values()) + state.deal.used
    if state.pending is not None:
        cards += state.pending.cards
    return cards


def new_window(state: GameState, kind: str, deadline: str) -> Window:
    return Window(id=f"w{state.window_seq}", kind=kind, deadline=parse_time(deadline))


def _take(hand: list[int], cards: Iterable[int]) -> None:
    for c in cards:
        hand.remove(c)


def _roll_source(state: GameState, source: str) -> None:
    if source == "forced":
        state.forced_dice.pop(0)
    else:
        state.rng_count += 1


def apply(state: GameState, event: Event) -> GameState:
    """Return the state after ``event`` (the input state is not changed)."""
    new = state.clone()
    apply_in_place(new, event)
    return new


def replay(events: Iterable[Event]) -> GameState:
    """Fold a whole log, starting with its ``game_started`` event, into a state. A9: never rolls.
    Raises ``ValueError`` when the log does not start with ``game_started``."""
    it = iter(events)
    first = next(it, None)
    if first is None or first.type != "game_started":
        raise ValueError("a game's log starts with game_started")
    state = start_state(first)
    for event in it:
        apply_in_place(state, event)
    return state


def start_state(event: Event) -> GameState:
    """The state a ``game_started`` event describes."""
    d = event.data
    n = len(d["players"])
    state = GameState(
        players=list(d["players"]),
        options=Options.from_json(d["options"]),
        board=stored_board(d["board"]),
        seed=d["seed"],
        seed_hash=d["seed_hash"],
        rng_count=d["rng_count"],
        forced_dice=list(d["forced_dice"]),
        investors={k: v for k, v in d["investors"].items()},
        hands=[list(h) for h in d["hands"]],
        draw_pile=list(d["draw_pile"]),
        discard_pile=list(d["discard_pile"]),
        money=list(d["money"]),
        covered={int(k): v for k, v in d["covered"].items()},
        tiles=list(d["tiles"]),
        deals_closed=d["deals_closed"],
        marker=d["marker"],
        active=d["active"],
        phase=d["phase"],
        may_deal_in_place=d["may_deal_in_place"],
        missed=[0] * n,
        away=[False] * n,
        acted_since_turn=[True] * n,
        had_turn=[False] * n,
        seq=1,
        orders=[stored_orders(o) for o in d["orders"]] if "orders" in d else [NO_ORDERS] * n,
        last_act=[d.get("at")] * n,
        proxied=[False] * n,
        nights=[None] * n,
        bots=[s in d.get("bots", ()) for s in range(n)],
    )
    state.window_seq = 1
    state.must_deal = state.options.has("V2") and len(state.hands[state.active]) >= 10  # V2
    state.had_turn[state.active] = True
    state.acted_since_turn[state.active] = False
    state.turn = Window(id="w0", kind="turn", deadline=parse_time(d["deadline"]))
    return state


def replay_json(records: Iterable[dict[str, Any]]) -> GameState:
    """``replay`` of a log read as JSON (``Event.to_json`` records, as ``json.loads`` gives
    them): each record is folded as it comes, taken over (``take_record``: nothing copied, no
    ``Event`` built). Raises ``ValueError`` as ``replay``, and for a malformed record."""
    it = iter(records)
    first = next(it, None)
    state = replay(() if first is None else (Event.take_json(first),))
    for record in it:
        if type(record) is dict and record.get("v") == SCHEMA_VERSION and "type" in record:
            kind, by = record.pop("type"), record.pop("by", None)  # as take_record, inline
            del record["v"]
            fold(state, kind, record, by)
        else:
            kind, data, by, _v = take_record(record)  # checks, and upgrades older versions
            fold(state, kind, data, by)
    return state


def apply_in_place(state: GameState, event: Event) -> None:
    """Fold one event into ``state``, changing it."""
    fold(state, event.type, event.data, event.by)


def fold(state: GameState, kind: str, data: dict[str, Any], by: int | None) -> None:
    """``apply_in_place`` of the event ``Event(kind, data, by)``, given by its parts (a stored
    row's, a JSON record's) so that none needs to be built. Raises ``ValueError`` for an unknown
    event type."""
    state.seq += 1
    if by is not None:
        if kind != "timed_out" and not data.get("order"):
            # the seat's own act: it is not away, nor proxied, any more (A6, A11)
            state.missed[by] = 0
            state.away[by] = False
            state.proxied[by] = False
            if state.proxy_windows:
                state.proxy_windows.pop(by, None)
            if "at" in data:
                state.last_act[by] = data["at"]
        if kind in ACTING_EVENTS:
            state.acted_since_turn[by] = True
    try:
        handler = _HANDLERS[kind]
    except KeyError:
        raise ValueError(f"unknown event type {kind!r}") from None
    handler(state, data, by)


# -- handlers ---------------------------------------------------------------------------------


def _marker_placed(s: GameState, d: dict, by: int | None) -> None:
    s.marker = d["space"]
    s.phase = "turn_start"


def _die_rolled(s: GameState, d: dict, by: int | None) -> None:
    _roll_source(s, d["source"])
    if d["purpose"] == "move":
        s.marker = d["space"]
        s.phase = "after_roll"
    elif d["purpose"] == "end":
        s.end_sum += d["value"]


def _pile_reshuffled(s: GameState, d: dict, by: int | None) -> None:
    s.rng_count += 1
    s.draw_pile = list(d["draw_pile"])
    s.discard_pile = []


def _cards_drawn(s: GameState, d: dict, by: int | None) -> None:
    cards = d["cards"]
    del s.draw_pile[: len(cards)]
    s.hands[d["seat"]].extend(cards)


def _discard_step(s: GameState, d: dict, by: int | None) -> None:
    s.discard_owed = {int(k): v for k, v in d["owed"].items()}
    s.after_discard = (d["next"], d["may_deal_in_place"])
    s.phase = "discard"
    s.turn = new_window(s, "discard", d["deadline"])
    s.window_seq += 1


def _cards_discarded(s: GameState, d: dict, by: int | None) -> None:
    seat = d["seat"]
    _take(s.hands[seat], d["cards"])
    s.discard_pile.extend(d["cards"])
    if seat in s.discard_owed:
        left = s.discard_owed[seat] - len(d["cards"])
        if left > 0:
            s.discard_owed[seat] = left
        else:
            del s.discard_owed[seat]


def _turn_started(s: GameState, d: dict, by: int | None) -> None:
    seat = d["seat"]
    s.active = seat
    s.phase = "turn_start" if s.marker is not None else "place_marker"
    s.may_deal_in_place = d["may_deal_in_place"]
    s.must_deal = d["must_deal"]
    s.turn = new_window(s, "turn", d["deadline"])
    s.window_seq += 1
    s.discard_owed = {}
    s.after_discard = None
    s.had_turn[seat] = True
    s.acted_since_turn[seat] = False


def _deal_opened(s: GameState, d: dict, by: int | None) -> None:
    boss = d["boss"]
    s.deal = Deal(
        space=s.marker, opener=boss, boss=boss, window=new_window(s, "negotiation", d["deadline"])
    )
    s.window_seq += 1
    s.phase = "negotiation"
    s.turn = None


def _family_played(s: GameState, d: dict, by: int | None) -> None:
    s.hands[d["seat"]].remove(d["card"])
    s.deal.table_family.append((d["card"], d["seat"]))


def _terms_set(s: GameState, d: dict, by: int | None) -> None:
    (price,) = d["price"].items()  # ("cash", M) or ("shares", n)
    provider, letter, deal = d["provider"], d["letter"], s.deal
    terms = _new_terms(Terms, (provider, letter, price, d["by_side"], d["card"]))
    deal.terms[(provider, letter)] = terms
    if d.get("order") or d.get("proxy"):  # a posted price: offered once to each boss (A10, A11)
        deal.posted.add((provider, letter, deal.boss))


_new_terms = tuple.__new__  # ``Terms(...)`` without the Python-level ``__new__`` of a named tuple


def _terms_removed(s: GameState, d: dict, by: int | None) -> None:
    key = (d["provider"], d["letter"])
    deal = s.deal
    t = deal.terms.pop(key, None) or deal.agreements.pop(key, None)
    if d["reason"] == "lapsed" and t is not None:
        deal.lapsed.append(t)


def _agreement_made(s: GameState, d: dict, by: int | None) -> None:
    key = (d["provider"], d["letter"])
    t = s.deal.terms.pop(key)
    s.deal.agreements[key] = t


def _card_pending(s: GameState, d: dict, by: int | None) -> None:
    seat = d["seat"]
    _take(s.hands[seat], d["cards"])
    w = new_window(s, "stop", d["deadline"])
    s.window_seq += 1
    s.pending = Pending(
        window=w, seat=seat, kind=d["kind"], cards=list(d["cards"]), target=d["target"]
    )
    if s.last_call is not None:  # A3: a card cancels the closing attempt
        s.last_call = None
    if s.phase != "negotiation" and s.phase != "last_call":
        s.resume_phase = s.phase
    s.phase = "stop_window"


def _window_answered(s: GameState, d: dict, by: int | None) -> None:
    w = (
        s.pending.window
        if s.pending is not None and s.pending.window.id == d["window"]
        else s.last_call
    )
    w.answered.add(d["seat"])


def _end_stop_window(s: GameState) -> None:
    s.pending = None
    if s.deal is not None:
        s.phase = "negotiation"
    else:  # back to the discard step (R6.6): what is still above the limit is owed
        s.phase = s.resume_phase or "discard"
        s.resume_phase = None
        limit = s.hand_limit()
        s.discard_owed = {
            seat: len(s.hands[seat]) - limit
            for seat in s.discard_owed
            if len(s.hands[seat]) > limit
        }


def _card_stopped(s: GameState, d: dict, by: int | None) -> None:
    seat = d["seat"]
    s.hands[seat].remove(d["card"])
    s.discard_pile.extend(s.pending.cards)
    s.discard_pile.append(d["card"])
    _end_stop_window(s)


def _card_took_effect(s: GameState, d: dict, by: int | None) -> None:
    p = s.pending
    if p.kind == "travel":
        target = p.target
        if target.startswith("investor:"):
            s.deal.travel_on[target.split(":")[1]] = p.cards[0]
        else:  # R5.2: both cards go to the discard pile at once
            card = int(target.split(":")[1])
            s.deal.table_family = [(c, o) for c, o in s.deal.table_family if c != card]
            s.discard_pile.extend([card, p.cards[0]])
    elif p.kind == "recruit":  # R5.4
        s.investors[p.target] = p.seat
        s.discard_pile.extend(p.cards)
    elif p.kind == "boss":  # R5.5
        s.deal.boss = p.seat
        s.deal.used.extend(p.cards)
    _end_stop_window(s)


def _close_called(s: GameState, d: dict, by: int | None) -> None:
    s.last_call = new_window(s, "last_call", d["deadline"])
    s.window_seq += 1
    s.phase = "last_call"


def _negotiation_expired(s: GameState, d: dict, by: int | None) -> None:
    s.deal.expired = True


def _timed_out(s: GameState, d: dict, by: int | None) -> None:
    for seat in d["missed"]:
        s.missed[seat] += 1
        if s.missed[seat] >= 2:  # A6
            s.away[seat] = True


def _end_deal(s: GameState, d: dict) -> None:
    for seat, cards in d["returned"].items():
        s.hands[int(seat)].extend(cards)
    s.discard_pile.extend(d["discarded"])
    s.deal = None
    s.last_call = None
    s.pending = None


def _deal_closed(s: GameState, d: dict, by: int | None) -> None:
    for seat, amount in d["payments"].items():
        s.money[int(seat)] += amount
    _end_deal(s, d)
    tile = s.tiles.pop(0)
    s.covered[d["space"]] = tile
    s.deals_closed += 1
    s.marker = d["marker"]
    s.phase = "closing"


def _deal_failed(s: GameState, d: dict, by: int | None) -> None:
    _end_deal(s, d)
    s.phase = "closing"


def _game_ended(s: GameState, d: dict, by: int | None) -> None:
    s.phase = "game_over"
    s.winners = list(d["winners"])
    s.turn = None
    s.deal = None


def _chat(s: GameState, d: dict, by: int | None) -> None:
    pass


def _deadlines_extended(s: GameState, d: dict, by: int | None) -> None:
    shift = timedelta(seconds=d["seconds"])
    windows = [s.turn, s.last_call, s.deal.window if s.deal else None]
    windows.append(s.pending.window if s.pending else None)
    windows += list(s.proxy_windows.values())
    for w in windows:
        if w is not None:
            w.deadline += shift


def _window_extended(s: GameState, d: dict, by: int | None) -> None:
    """A13: each window named ends at its new deadline."""
    due = {x["window"]: x["deadline"] for x in d["windows"]}
    windows = [s.turn, s.last_call, s.deal.window if s.deal else None]
    windows.append(s.pending.window if s.pending else None)
    for w in windows:
        if w is not None and w.id in due:
            w.deadline = parse_time(due[w.id])


def _seat_replaced(s: GameState, d: dict, by: int | None) -> None:
    """A13: the seat's new player starts afresh: not away, no misses, not played for, the
    recommended standing orders, no night."""
    seat = d["seat"]
    s.players[seat] = d["name"]
    s.missed[seat] = 0
    s.away[seat] = False
    s.proxied[seat] = False
    s.proxy_windows.pop(seat, None)
    s.orders[seat] = RECOMMENDED
    s.nights[seat] = None
    s.last_act[seat] = d["at"]
    s.bots[seat] = False


def _seat_to_bot(s: GameState, d: dict, by: int | None) -> None:
    """A13: the server's bot plays the seat from now on, with the brisk pace's orders (posted
    prices and boss limits); not away, no misses, not played for by the proxy, no night."""
    seat = d["seat"]
    s.bots[seat] = True
    s.missed[seat] = 0
    s.away[seat] = False
    s.proxied[seat] = False
    s.proxy_windows.pop(seat, None)
    s.orders[seat] = bot_orders()
    s.nights[seat] = None
    s.last_act[seat] = d["at"]


def _seat_away(s: GameState, d: dict, by: int | None) -> None:
    s.away[d["seat"]] = d["away"]


def _orders_set(s: GameState, d: dict, by: int | None) -> None:
    s.orders[d["seat"]] = stored_orders(d["orders"])


def _proxy_scheduled(s: GameState, d: dict, by: int | None) -> None:
    s.proxy_windows[d["seat"]] = new_window(s, "proxy", d["deadline"])
    s.window_seq += 1


def _night_set(s: GameState, d: dict, by: int | None) -> None:
    s.nights[d["seat"]] = d["night"]


def _proxy_started(s: GameState, d: dict, by: int | None) -> None:
    s.proxy_windows.pop(d["seat"], None)
    s.proxied[d["seat"]] = True


_HANDLERS = {
    "marker_placed": _marker_placed,
    "die_rolled": _die_rolled,
    "pile_reshuffled": _pile_reshuffled,
    "cards_drawn": _cards_drawn,
    "discard_step": _discard_step,
    "cards_discarded": _cards_discarded,
    "turn_started": _turn_started,
    "deal_opened": _deal_opened,
    "family_played": _family_played,
    "terms_set": _terms_set,
    "terms_removed": _terms_removed,
    "agreement_made": _agreement_made,
    "card_pending": _card_pending,
    "window_answered": _window_answered,
    "card_stopped": _card_stopped,
    "card_took_effect": _card_took_effect,
    "close_called": _close_called,
    "negotiation_expired": _negotiation_expired,
    "timed_out": _timed_out,
    "deal_closed": _deal_closed,
    "deal_failed": _deal_failed,
    "game_ended": _game_ended,
    "chat": _chat,
    "seat_away": _seat_away,
    "seat_present": _chat,  # A11: the fold of every own event clears away and proxied
    "deadlines_extended": _deadlines_extended,
    "window_extended": _window_extended,
    "seat_replaced": _seat_replaced,
    "seat_to_bot": _seat_to_bot,
    "game_paused": _chat,  # the organiser's acts the table is told of (A13): no rule reads them
    "game_resumed": _chat,
    "seat_email_changed": _chat,
    "invitation_resent": _chat,
    "orders_set": _orders_set,
    "proxy_scheduled": _proxy_scheduled,
    "proxy_started": _proxy_started,
    "night_set": _night_set,
}

EVENT_TYPES = frozenset(_HANDLERS)
"""Every type of event the log may hold (each folds by its handler above)."""


def card_name(card_id: int) -> str:
    return CARD_NAMES[card_id]


# -- snapshots --------------------------------------------------------------------------------

SNAPSHOT_FORMAT = 4
FOLDING_MODULES = (
    "state",
    "board",
    "cards",
    "events",
    "options",
    "orders",
    "prices",
    "stored",
)


class SnapshotError(ValueError):
    """A snapshot this engine will not read: another ``format``, another engine's fingerprint,
    or malformed. The caller rebuilds the state from the events instead."""


def source_fingerprint(modules: Iterable[str] = FOLDING_MODULES) -> str:
    """sha256 hex of the source files of ``imtheboss.engine.<module>`` for each of ``modules``
    (names and contents, in order), read from the installed package."""
    digest = hashlib.sha256()
    package = resources.files("imtheboss.engine")
    for name in modules:
        digest.update(name.encode() + b"\0")
        digest.update(package.joinpath(f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()


ENGINE_FINGERPRINT = source_fingerprint()


def snapshot_is_current(d: Any) -> bool:
    """True when snapshot ``d`` was written in this ``SNAPSHOT_FORMAT`` by this engine code."""
    return (
        isinstance(d, dict)
        and d.get("format") == SNAPSHOT_FORMAT
        and d.get("engine") == ENGINE_FINGERPRINT
    )


def _window_json(w: Window | None) -> dict[str, Any] | None:
    if w is None:
        return None
    return {
        "id": w.id,
        "kind": w.kind,
        "deadline": format_time(w.deadline),
        "answered": sorted(w.answered),
    }


def _window_from(d: dict[str, Any] | None) -> Window | None:
    if d is None:
        return None
    return Window(d["id"], d["kind"], parse_time(d["deadline"]), set(d["answered"]))


def _terms_from(d: dict[str, Any]) -> Terms:
    kind, amount = next(iter(d["price"].items()))
    return Terms(d["provider"], d["letter"], (kind, amount), d["by"], d["card"])


def state_to_json(state: GameState) -> dict[str, Any]:
    """The whole state as JSON-native data, for snapshots (``state_from_json`` inverts it),
    stamped with ``SNAPSHOT_FORMAT`` and ``ENGINE_FINGERPRINT``. Holds hidden information:
    store it, never show it."""
    deal = state.deal
    pending = state.pending
    return {
        "format": SNAPSHOT_FORMAT,
        "engine": ENGINE_FINGERPRINT,
        "players": state.players,
        "options": state.options.to_json(),
        "board": state.board.to_json(),
        "seed": state.seed,
        "seed_hash": state.seed_hash,
        "rng_count": state.rng_count,
        "forced_dice": state.forced_dice,
        "investors": state.investors,
        "hands": state.hands,
        "draw_pile": state.draw_pile,
        "discard_pile": state.discard_pile,
        "money": state.money,
        "covered": [[k, v] for k, v in state.covered.items()],
        "tiles": state.tiles,
        "deals_closed": state.deals_closed,
        "marker": state.marker,
        "active": state.active,
        "phase": state.phase,
        "may_deal_in_place": state.may_deal_in_place,
        "must_deal": state.must_deal,
        "turn": _window_json(state.turn),
        "deal": None
        if deal is None
        else {
            "space": deal.space,
            "opener": deal.opener,
            "boss": deal.boss,
            "window": _window_json(deal.window),
            "expired": deal.expired,
            "table_family": [list(x) for x in deal.table_family],
            "travel_on": deal.travel_on,
            "used": deal.used,
            "terms": [t.to_json() for t in deal.terms.values()],
            "agreements": [t.to_json() for t in deal.agreements.values()],
            "lapsed": [t.to_json() for t in deal.lapsed],
            "posted": sorted(list(x) for x in deal.posted),
        },
        "pending": None
        if pending is None
        else {
            "window": _window_json(pending.window),
            "seat": pending.seat,
            "kind": pending.kind,
            "cards": pending.cards,
            "target": pending.target,
        },
        "last_call": _window_json(state.last_call),
        "discard_owed": [[k, v] for k, v in state.discard_owed.items()],
        "after_discard": list(state.after_discard) if state.after_discard else None,
        "resume_phase": state.resume_phase,
        "missed": state.missed,
        "away": state.away,
        "acted_since_turn": state.acted_since_turn,
        "had_turn": state.had_turn,
        "window_seq": state.window_seq,
        "end_sum": state.end_sum,
        "winners": state.winners,
        "seq": state.seq,
        "orders": [o.to_json() for o in state.orders],
        "last_act": state.last_act,
        "proxy_windows": [[k, _window_json(w)] for k, w in sorted(state.proxy_windows.items())],
        "proxied": state.proxied,
        "nights": state.nights,
        "bots": state.bots,
    }


def state_from_json(d: dict[str, Any]) -> GameState:
    """Inverse of ``state_to_json``. Raises ``SnapshotError`` for a snapshot of another format or
    engine (``snapshot_is_current``) or a malformed one."""
    if not isinstance(d, dict) or d.get("format") != SNAPSHOT_FORMAT:
        found = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise SnapshotError(f"snapshot format {found!r}; this engine reads {SNAPSHOT_FORMAT}")
    if d.get("engine") != ENGINE_FINGERPRINT:
        raise SnapshotError(
            f"snapshot written by other engine code ({str(d.get('engine'))[:12]}; this engine is"
            f" {ENGINE_FINGERPRINT[:12]})"
        )
    try:
        return _state_from(d)
    except (KeyError, TypeError, ValueError, AttributeError, StopIteration) as exc:
        raise SnapshotError(f"malformed snapshot: {type(exc).__name__}: {exc}") from exc


def _state_from(d: dict[str, Any]) -> GameState:
    deal = None
    if d["deal"] is not None:
        x = d["deal"]
        deal = Deal(
            space=x["space"],
            opener=x["opener"],
            boss=x["boss"],
            window=_window_from(x["window"]),
            expired=x["expired"],
            table_family=[(c, o) for c, o in x["table_family"]],
            travel_on=dict(x["travel_on"]),
            used=list(x["used"]),
            terms={(t.provider, t.letter): t for t in map(_terms_from, x["terms"])},
            agreements={(t.provider, t.letter): t for t in map(_terms_from, x["agreements"])},
            lapsed=[_terms_from(t) for t in x["lapsed"]],
            posted={tuple(p) for p in x["posted"]},
        )
    pending = None
    if d["pending"] is not None:
        p = d["pending"]
        pending = Pending(
            _window_from(p["window"]), p["seat"], p["kind"], list(p["cards"]), p["target"]
        )
    return GameState(
        players=list(d["players"]),
        options=Options.from_json(d["options"]),
        board=stored_board(d["board"]),
        seed=d["seed"],
        seed_hash=d["seed_hash"],
        rng_count=d["rng_count"],
        forced_dice=list(d["forced_dice"]),
        investors=dict(d["investors"]),
        hands=[list(h) for h in d["hands"]],
        draw_pile=list(d["draw_pile"]),
        discard_pile=list(d["discard_pile"]),
        money=list(d["money"]),
        covered={k: v for k, v in d["covered"]},
        tiles=list(d["tiles"]),
        deals_closed=d["deals_closed"],
        marker=d["marker"],
        active=d["active"],
        phase=d["phase"],
        may_deal_in_place=d["may_deal_in_place"],
        must_deal=d["must_deal"],
        turn=_window_from(d["turn"]),
        deal=deal,
        pending=pending,
        last_call=_window_from(d["last_call"]),
        discard_owed={k: v for k, v in d["discard_owed"]},
        after_discard=tuple(d["after_discard"]) if d["after_discard"] else None,
        resume_phase=d["resume_phase"],
        missed=list(d["missed"]),
        away=list(d["away"]),
        acted_since_turn=list(d["acted_since_turn"]),
        had_turn=list(d["had_turn"]),
        window_seq=d["window_seq"],
        end_sum=d["end_sum"],
        winners=list(d["winners"]),
        seq=d["seq"],
        orders=[stored_orders(o) for o in d["orders"]],
        last_act=list(d["last_act"]),
        proxy_windows={k: _window_from(w) for k, w in d["proxy_windows"]},
        proxied=list(d["proxied"]),
        nights=list(d["nights"]),
        bots=list(d["bots"]),
    )
