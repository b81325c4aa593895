"""Standing orders for the tests (A10): random ones, for property and hidden-information tests."""

from __future__ import annotations

import random
from typing import Any

from imtheboss.engine.board import LETTERS
from imtheboss.engine.orders import LAST_CALL_CHOICES, STOP_CHOICES, WHEN_CHOICES, Orders


def random_condition(rng: random.Random) -> dict[str, Any]:
    when = rng.choice(WHEN_CHOICES)
    return {"when": when, "k": rng.randint(1, 3)} if when == "fill" else {"when": when}


def random_orders_json(rng: random.Random) -> dict[str, Any]:
    """Any orders a seat could set, as the ``orders`` command takes them."""
    letters = rng.sample(LETTERS, rng.randint(0, 3))
    prices = {
        x: {"cash": rng.randint(0, 8)} if rng.random() < 0.7 else {"shares": rng.randint(0, 2)}
        for x in letters
    }
    limits = {x: rng.randint(0, 8) for x in rng.sample([*LETTERS, "*"], rng.randint(0, 2))}
    turn = None
    if rng.random() < 0.5:
        turn = {"in_place": random_condition(rng), "after_roll": random_condition(rng)}
    return {
        "stop": rng.choice(STOP_CHOICES),
        "last_call": rng.choice(LAST_CALL_CHOICES),
        "prices": prices,
        "boss": {"limits": limits, "close": rng.random() < 0.5},
        "turn": turn,
    }


def random_orders(rng: random.Random, seats: int, share: float = 0.5) -> list[Orders]:
    """Orders for ``seats`` seats: about ``share`` of them have random orders, the rest none."""
    return [
        Orders.from_json(random_orders_json(rng)) if rng.random() < share else Orders()
        for _ in range(seats)
    ]
