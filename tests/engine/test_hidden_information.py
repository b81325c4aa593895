"""A8: no seat's view or event feed ever shows another seat's hand, the draw pile's order or the
seed (before the end); money of others only under ``open_money`` or after the end (R7.1).

The strongest form: take the live state, rearrange everything a seat must not know (other hands
shuffled with the draw pile, the draw pile reordered, the seed replaced) and the seat's view must
not change at all.
"""

from __future__ import annotations

import json
import random

import pytest
from imtheboss.engine.game import Command, decide
from imtheboss.engine.orders import Orders
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import GameState
from imtheboss.engine.views import redact_event, view
from support.orders import random_orders, random_orders_json


def scrambled(state: GameState, seat: int | None, rng: random.Random) -> GameState:
    """``state`` with every secret hidden from ``seat`` changed, hand sizes kept (``seat=None``:
    a spectator, from whom every hand is hidden): other hands, the draw pile, the seed, others'
    money, and others' standing orders (A10)."""
    other = state.clone()
    other.orders = [
        o if s == seat else Orders.from_json(random_orders_json(rng))
        for s, o in enumerate(other.orders)
    ]
    pool = list(other.draw_pile)
    for s in range(other.n):
        if s != seat:
            pool += other.hands[s]
    rng.shuffle(pool)
    for s in range(other.n):
        if s != seat:
            size = len(other.hands[s])
            other.hands[s], pool = pool[:size], pool[size:]
    other.draw_pile = pool
    if state.phase != "game_over":
        other.seed = f"scrambled-{rng.random()}"
        if not state.options.open_money:
            other.money = [m if s == seat else m + 7 for s, m in enumerate(other.money)]
    return other


@pytest.mark.parametrize(
    ("players", "seed", "variants", "bots", "with_orders"),
    [
        (3, 11, [], "sensible", False),
        (4, 12, ["V4"], "mixed", True),
        (5, 13, [], "random", True),
        (6, 14, ["V7"], "sensible", True),
    ],
)
def test_views_do_not_depend_on_hidden_information(players, seed, variants, bots, with_orders):
    """A8, A10: every view of every seat, after every command of whole games (some seats with
    standing orders), is unchanged when the information hidden from that seat is rearranged."""
    rng = random.Random(seed)
    checked = 0

    def observe(state: GameState, command: Command, events) -> None:
        nonlocal checked
        for seat in [*range(state.n), None]:
            mine = view(state, seat)
            assert view(scrambled(state, seat, rng), seat) == mine
            if state.phase != "game_over":
                assert "seed" not in mine
            for s, entry in enumerate(mine["seats"]):
                assert "hand" not in entry
                if s != seat and not state.options.open_money and state.phase != "game_over":
                    assert entry["money"] is None
            checked += 1

    orders = random_orders(random.Random(seed), players) if with_orders else None
    simulate(players, seed, variants=variants, bots=bots, observer=observe, orders=orders)
    assert checked > 100


def test_event_feed_is_redacted_per_seat() -> None:
    """A8: a seat's feed shows its own drawn cards, only counts of others', never the draw
    pile's order, the deck, the forced dice or the seed (until ``game_ended``)."""
    game = simulate(4, 21, bots="sensible")
    players = game.state.players
    seen_draws = 0
    for seat in range(len(players)):
        for event in game.events:
            red = redact_event(event, seat)
            if event.type == "game_started":
                assert "seed" not in red and "forced_dice" not in red
                assert isinstance(red["draw_pile"], int)
                assert red["hands"][seat] == event.data["hands"][seat]
                assert all(isinstance(h, int) for i, h in enumerate(red["hands"]) if i != seat)
                assert red["seed_hash"] == event.data["seed_hash"]
            elif event.type == "cards_drawn":
                if event.data["seat"] == seat:
                    assert red["cards"] == event.data["cards"]
                else:
                    assert red["cards"] == len(event.data["cards"])
                    seen_draws += 1
            elif event.type == "pile_reshuffled":
                assert isinstance(red["draw_pile"], int)
            elif event.type == "game_ended":
                assert red["seed"] == game.state.seed  # A9: revealed at the end
            if event.type != "game_ended":
                assert str(game.state.seed) != json.dumps(red.get("seed"))
    assert seen_draws > 0


def test_orders_of_another_seat_never_show_in_the_feed() -> None:
    """A10: another seat's ``orders_set`` reads the same whatever the orders say, and the mark
    on events its orders make is gone."""
    rng = random.Random(5)
    game = simulate(4, 31, bots="sensible", orders=random_orders(rng, 4, share=1.0))
    marked = [e for e in game.events if e.data.get("order")]
    assert marked
    for event in marked:
        for seat in range(4):
            red = redact_event(event, seat)
            assert ("order" in red) == (seat == event.by)


def _hand_scrambled(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with ``seat``'s hand swapped for as many cards of the draw pile."""
    other = state.clone()
    pool = other.hands[seat] + other.draw_pile
    rng.shuffle(pool)
    size = len(other.hands[seat])
    other.hands[seat], other.draw_pile = pool[:size], pool[size:]
    return other


def _answers(events, windows: set[str]) -> list[tuple[int, str]]:
    return [
        (e.data["seat"], e.data["window"])
        for e in events
        if e.type == "window_answered" and e.data.get("order") and e.data["window"] in windows
    ]


@pytest.mark.parametrize("seed", [41, 42, 43])
def test_window_orders_fire_the_same_whatever_the_hand_holds(seed) -> None:
    """A10, A8: whenever a stop window or a last call opens, the orders that answer it at once
    are the same when the hands of the seats answering are rearranged: when an order fires
    never tells the table what is in a hand."""
    rng = random.Random(seed)
    orders = random_orders(rng, 5, share=1.0)
    previous: list[GameState] = []
    checked = 0

    def observe(state: GameState, command: Command, events) -> None:
        nonlocal checked
        before = previous[0]
        previous[0] = state.clone()
        opened = {e.data["window"] for e in events if e.type in ("card_pending", "close_called")}
        if not opened:
            return
        for seat in range(before.n):
            if seat == command.by:
                continue
            again = decide(_hand_scrambled(before, seat, rng), command)
            assert _answers(again, opened) == _answers(events, opened)
            checked += 1

    simulate(
        5,
        seed,
        bots="sensible",
        orders=orders,
        observer=observe,
        on_start=lambda s: previous.append(s.clone()),
    )
    assert checked > 10
