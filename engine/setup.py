"""Starting a game (R2): a fresh deal, or a chosen position (``state`` of docs/scenarios.md).

Both produce one ``game_started`` event holding the whole initial position; hidden parts of it
(hands, draw pile, seed) are redacted per seat by ``imtheboss.engine.views``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from imtheboss.engine.board import LETTERS, Board
from imtheboss.engine.cards import CARD_NAMES, DECK_SIZE, SHORT_GAME_REMOVED_TILES
from imtheboss.engine.events import Event
from imtheboss.engine.options import Options
from imtheboss.engine.orders import NO_ORDERS, Orders, OrdersError, bot_orders
from imtheboss.engine.rng import seed_hash, shuffled
from imtheboss.engine.state import format_time

HAND_SIZE = 5  # R2.3


class SetupError(ValueError):
    """A game or position that cannot be set up; the message says why."""


def tile_stack(options: Options) -> list[int]:
    """Deal tile numbers, top first (R1.2; V7 removes #3, #6, #9)."""
    tiles = list(range(1, 16))
    if options.has("V7"):
        tiles = [t for t in tiles if t not in SHORT_GAME_REMOVED_TILES]
    return tiles


def _check_players(players: Sequence[str], options: Options) -> None:
    if len(players) != len(set(players)) or any(
        not isinstance(p, str) or not p.strip() for p in players
    ):
        raise SetupError("players need distinct, non-empty names")
    if not 2 <= len(players) <= 6:
        raise SetupError("I'm the Boss! takes 3 to 6 players (2 with V9)")


def first_player(investors: dict[str, int | None]) -> int:
    """R2.4: whoever controls the alphabetically first investor letter."""
    return min((letter, seat) for letter, seat in investors.items() if seat is not None)[1]


def new_game(
    players: Sequence[str],
    options: Options,
    board: Board,
    seed: int | str,
    at: datetime,
    forced_dice: Sequence[int] = (),
    orders: Sequence[Orders] | None = None,
    bots: Sequence[int] = (),
) -> list[Event]:
    """R2 setup: investors dealt at random (R2.2), deck shuffled, 5 cards each (R2.3), first
    player places the marker (R2.4). Two players play by the two-player rules (V9 is added to
    ``options``, R2.1). ``orders``: each seat's standing orders to start with (A10; none by
    default). ``bots``: the bot seats (A13, seat indexes; the server's bot plays them), at
    least one seat left to a person. Returns ``[game_started]``. Raises ``SetupError``."""
    _check_players(players, options)
    bot_seats = check_bots(bots, len(players))
    options = options.for_players(len(players))
    n = len(players)
    per_seat = {2: 3, 3: 2}.get(n, 1)
    order = shuffled(seed, 0, list(range(6)))
    investors: dict[str, int | None] = dict.fromkeys(LETTERS)
    for i, letter_index in enumerate(order[: per_seat * n]):
        investors[LETTERS[letter_index]] = i % n
    deck = shuffled(seed, 1, list(range(DECK_SIZE)))
    hands = [deck[i * HAND_SIZE : (i + 1) * HAND_SIZE] for i in range(n)]
    return [
        _started(
            players,
            options,
            board,
            seed,
            at,
            forced_dice,
            rng_count=2,
            investors=investors,
            hands=hands,
            draw_pile=deck[n * HAND_SIZE :],
            discard_pile=[],
            money=[0] * n,
            covered=[],
            deals_closed=0,
            marker=None,
            active=first_player(investors),
            may_deal_in_place=True,
            orders=_bot_orders(_check_orders(orders, n), bot_seats, n),
            bots=bot_seats,
        )
    ]


def _bot_orders(orders: list[Orders] | None, bots: list[int], n: int) -> list[Orders] | None:
    """``orders`` with each bot seat's set to ``bot_orders`` (A13)."""
    if not bots:
        return orders
    chosen = list(orders or [NO_ORDERS] * n)
    return [bot_orders() if i in bots else o for i, o in enumerate(chosen)]


def check_bots(bots: Sequence[Any], n: int) -> list[int]:
    """The bot seats (A13) of a table of ``n`` seats, sorted: distinct seat indexes, not every
    seat. Raises ``SetupError`` (``"bots only"`` for a table with no person)."""
    if any(type(b) is not int or not 0 <= b < n for b in bots) or len(set(bots)) != len(bots):
        raise SetupError("bot seats are distinct seat numbers")
    if len(bots) >= n:
        raise SetupError("a game of bots only is refused: at least one seat is a person's")
    return sorted(bots)


def _check_orders(orders: Sequence[Any] | None, n: int) -> list[Orders] | None:
    """Starting orders, one per seat (``Orders`` or their JSON). Raises ``SetupError``."""
    if orders is None:
        return None
    if len(orders) != n:
        raise SetupError("orders: one set of standing orders per seat")
    try:
        return [o if isinstance(o, Orders) else Orders.from_json(o) for o in orders]
    except OrdersError as exc:
        raise SetupError(f"orders: {exc}") from None


def _started(players, options, board, seed, at, forced_dice, **pos: Any) -> Event:
    tiles = tile_stack(options)
    covered = {
        str(space): tiles[i] if i < len(tiles) else 0
        for i, space in enumerate(sorted(pos.pop("covered")))
    }
    deals = pos["deals_closed"]
    data = {
        "players": list(players),
        "options": options.to_json(),
        "board": board.to_json(),
        "seed": seed,
        "seed_hash": seed_hash(seed),
        "forced_dice": [int(d) for d in forced_dice],
        "covered": covered,
        "tiles": tiles[deals:],
        "phase": "place_marker" if pos["marker"] is None else "turn_start",
        "window": "w0",
        "deadline": format_time(at + options.window("turn")),
        **pos,
    }
    if options.proxy_hours:  # A11: every seat's last act counts from the start
        data["at"] = format_time(at)
    if not data.get("bots"):  # A13: the key only when a seat is a bot's
        data.pop("bots", None)
    orders = data.pop("orders", None)
    if orders and any(o != NO_ORDERS for o in orders):  # A10, private to each seat
        data["orders"] = [o.to_json() for o in orders]
    return Event("game_started", data)


def _position_orders(spec: Any, n: int) -> list[Orders] | None:
    """A position's ``orders``: ``{seat: orders JSON}`` for the seats that have some."""
    if spec is None:
        return None
    if not isinstance(spec, dict) or any(type(s) is not int or not 0 <= s < n for s in spec):
        raise SetupError("orders are by player")
    return _check_orders([spec.get(s, {}) for s in range(n)], n)


# The fields of a scenario's ``state`` (docs/scenarios.md).
POSITION_FIELDS = frozenset(
    {
        "investors",
        "side_pool",
        "hands",
        "draw_pile",
        "draw_pile_top",
        "discard_pile",
        "money",
        "covered",
        "deals_closed",
        "marker",
        "active",
        "may_deal_in_place",
        "orders",
    }
)


def position(
    players: Sequence[str],
    options: Options,
    board: Board,
    seed: int | str,
    at: datetime,
    spec: dict[str, Any],
    forced_dice: Sequence[int] = (),
) -> list[Event]:
    """A chosen mid-game position (docs/scenarios.md ``state``), with seats by index and cards by
    name. Raises ``SetupError`` when the 98 influence cards do not add up or a field is wrong."""
    _check_players(players, options)
    options = options.for_players(len(players))
    n = len(players)
    unknown = set(spec) - POSITION_FIELDS
    if unknown:
        raise SetupError(f"unknown state field {sorted(unknown)[0]!r}")
    investors = _position_investors(spec)
    hands, discard, draw_pile = _position_cards(spec, n, seed)
    money = [0] * n
    for seat, amount in (spec.get("money") or {}).items():
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise SetupError("money is a whole number of M, at least 0")
        money[seat] = amount
    covered, deals, marker = _position_board(spec, options)
    active = spec.get("active")
    if active is None:
        active = first_player(investors) if any(s is not None for s in investors.values()) else 0
    may = spec.get("may_deal_in_place", True)
    if not isinstance(may, bool):
        raise SetupError("may_deal_in_place is true or false")
    return [
        _started(
            players,
            options,
            board,
            seed,
            at,
            forced_dice,
            rng_count=2,
            investors=investors,
            hands=hands,
            draw_pile=draw_pile,
            discard_pile=discard,
            money=money,
            covered=covered,
            deals_closed=deals,
            marker=marker,
            active=active,
            may_deal_in_place=may,
            orders=_position_orders(spec.get("orders"), n),
        )
    ]


def _position_investors(spec: dict[str, Any]) -> dict[str, int | None]:
    """A position's investor cards: ``{letter: seat or None}`` (``None``: in the side pool, or
    not dealt when ``investors`` is not given). Raises ``SetupError``."""
    investors: dict[str, int | None] = dict.fromkeys(LETTERS)
    for seat, letters in (spec.get("investors") or {}).items():
        for letter in letters:
            if letter not in LETTERS or investors[letter] is not None:
                raise SetupError(f"investor {letter!r} is unknown or dealt twice")
            investors[letter] = seat
    side = spec.get("side_pool", [])
    for letter in side:
        if letter not in LETTERS or investors[letter] is not None:
            raise SetupError(f"side-pool investor {letter!r} is unknown or also dealt")
    if "investors" in spec and set(side) | {
        x for x, s in investors.items() if s is not None
    } != set(LETTERS):
        raise SetupError("every investor card must be dealt or in the side pool")
    return investors


def _position_cards(
    spec: dict[str, Any], n: int, seed: int | str
) -> tuple[list[list[int]], list[int], list[int]]:
    """A position's influence cards as card ids: ``(hands by seat, discard pile, draw pile)``,
    the draw pile's ``"rest"`` shuffled from ``seed``. Raises ``SetupError`` unless the 98
    cards add up."""
    pool = {name: [] for name in set(CARD_NAMES)}
    for card, name in enumerate(CARD_NAMES):
        pool[name].append(card)

    def take(names: Sequence[str], where: str) -> list[int]:
        out = []
        for name in names:
            if name not in pool:
                raise SetupError(f"unknown card {name!r} in {where}")
            if not pool[name]:
                raise SetupError(f"too many {name} cards (98-card deck) at {where}")
            out.append(pool[name].pop(0))
        return out

    hands = [[] for _ in range(n)]
    for seat, names in (spec.get("hands") or {}).items():
        hands[seat] = take(names, "hands")
    discard = take(spec.get("discard_pile", []), "discard_pile")
    draw = spec.get("draw_pile", "rest")
    if draw == "rest":
        top = take(spec.get("draw_pile_top", []), "draw_pile_top")
        rest = sorted(c for cards in pool.values() for c in cards)
        draw_pile = top + shuffled(seed, 1, rest)
    else:
        if "draw_pile_top" in spec:
            raise SetupError('draw_pile_top goes with draw_pile "rest"')
        draw_pile = take(draw, "draw_pile")
    if sum(len(h) for h in hands) + len(discard) + len(draw_pile) != DECK_SIZE:
        left = sum(len(c) for c in pool.values())
        raise SetupError(f"the 98 influence cards do not add up: {left} card(s) are nowhere")
    return hands, discard, draw_pile


def _position_board(spec: dict[str, Any], options: Options) -> tuple[list[int], int, int | None]:
    """A position's board: ``(covered space indices, deals closed, the marker's space or
    None)``. Raises ``SetupError``."""
    covered = spec.get("covered", [])
    if any(type(x) is not int or not 0 <= x < 16 for x in covered) or len(set(covered)) != len(
        covered
    ):
        raise SetupError("covered lists distinct space indices 0-15")
    deals = spec.get("deals_closed", len(covered))
    if type(deals) is not int or not 0 <= deals < len(tile_stack(options)):
        raise SetupError("deals_closed is out of range")
    if len(covered) > deals:  # each closed deal covered one space with one tile
        raise SetupError(f"{len(covered)} covered spaces but only {deals} closed deals")
    marker = spec.get("marker")
    if marker is not None and (
        not isinstance(marker, int) or not 0 <= marker < 16 or marker in covered
    ):
        raise SetupError("the marker sits on an uncovered space 0-15")
    return covered, deals, marker
