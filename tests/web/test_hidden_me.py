"""A8 on ``/me`` and ``/api/me``: the list shows no hand (not even the player's own), no pile
order, no seed, no money while the game runs. Checked by the scramble (as in
tests/web/test_hidden_pages.py): every hand is dealt anew from the pool of hands and pile, the
pile reordered, the seed replaced, every seat's money and every other seat's standing orders
changed in the snapshot the pages load, and both answers must stay exactly the same."""

from __future__ import annotations

import random

from imtheboss.engine.orders import Orders
from imtheboss.engine.state import GameState, state_to_json
from imtheboss.web.games.load import get_game, load_state
from support.home_games import make_home_games
from support.orders import random_orders_json
from support.scramble import normalized, store_log
from support.sign_in import signed_in_client

EMAIL = "player@example.org"


def scrambled(state: GameState, viewer: int, rng: random.Random) -> GameState:
    """``state`` with every hand redealt (sizes kept), the pile reordered, the seed, every
    seat's money and the other seats' orders changed."""
    other = state.clone()
    pool = list(other.draw_pile) + [c for hand in other.hands for c in hand]
    rng.shuffle(pool)
    for s in range(other.n):
        size = len(other.hands[s])
        other.hands[s], pool = pool[:size], pool[size:]
    other.draw_pile = pool
    other.seed = f"scrambled-{rng.random()}"
    other.money = [m + 7 for m in other.money]
    other.orders = [
        o if s == viewer else Orders.from_json(random_orders_json(rng))
        for s, o in enumerate(other.orders)
    ]
    return other


def _answers(client) -> tuple[str, dict]:
    page = client.get("/me")
    api = client.get("/api/me")
    assert page.status_code == api.status_code == 200
    return normalized(page.text), api.get_json()


def test_me_shows_nothing_hidden(app):
    games = make_home_games(app, EMAIL)
    client = signed_in_client(app, EMAIL)
    before = _answers(client)
    rng = random.Random(11)
    states = {}
    with app.app_context():
        for gid in games.order:
            states[gid] = load_state(get_game(gid))
    for gid, state in states.items():
        for attempt in range(3):
            other = scrambled(state, games.seats[gid], rng)
            assert other.hands != state.hands and other.draw_pile != state.draw_pile
            store_log(app, gid, state_to_json(other), {})
            assert _answers(client) == before, (gid, attempt)
        store_log(app, gid, state_to_json(state), {})
    assert _answers(client) == before
