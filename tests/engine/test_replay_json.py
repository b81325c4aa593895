"""Reading a stored log: records are folded as they come, nothing copied (``Event.take_json``,
``replay_json``), and a board and a seat's orders are checked once per process, then found by
their content (``stored_board``, ``stored_orders``)."""

from __future__ import annotations

import json
import random

import pytest
from imtheboss.engine.board import BoardError, default_board, stored_board
from imtheboss.engine.events import SCHEMA_VERSION, Event
from imtheboss.engine.game import Command, decide_state
from imtheboss.engine.options import VARIANTS
from imtheboss.engine.orders import Orders, OrdersError, stored_orders
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import (
    GameState,
    replay,
    replay_json,
    state_from_json,
    state_to_json,
)
from support.orders import random_orders


@pytest.fixture(scope="module")
def log() -> tuple[str, object]:
    """A bot game's log as JSON text, and its final state."""
    game = simulate(4, 11)
    return json.dumps([event.to_json() for event in game.events]), game.state


def test_take_json_makes_the_record_the_events_data() -> None:
    record = {"type": "chat", "v": SCHEMA_VERSION, "by": 2, "text": "hi", "at": "t"}
    event = Event.take_json(record)
    assert event == Event("chat", {"text": "hi", "at": "t"}, 2)
    assert event.data is record  # taken over, not copied


def test_from_json_leaves_the_record_as_it_was() -> None:
    record = {"type": "chat", "v": SCHEMA_VERSION, "by": 2, "text": "hi"}
    event = Event.from_json(record)
    assert record == {"type": "chat", "v": SCHEMA_VERSION, "by": 2, "text": "hi"}
    assert event.data is not record and event.data == {"text": "hi"}


def test_a_record_without_a_version_is_read_as_the_first() -> None:
    assert Event.take_json({"type": "chat", "text": "x"}) == Event("chat", {"text": "x"}, None, 1)


@pytest.mark.parametrize("record", [["chat"], {"text": "no type"}, "chat"])
def test_a_malformed_record_is_a_value_error(record, log) -> None:
    text, _state = log
    with pytest.raises(ValueError):
        Event.take_json(record)  # type: ignore[arg-type]
    records = json.loads(text)
    with pytest.raises(ValueError):
        replay_json([*records[:5], record])


def test_replay_json_is_the_replay_of_the_events(log) -> None:
    text, state = log
    assert replay_json(json.loads(text)) == state
    assert replay_json(json.loads(text)) == replay(map(Event.from_json, json.loads(text)))
    with pytest.raises(ValueError, match="starts with game_started"):
        replay_json([])


def test_the_board_of_equal_snapshots_is_checked_once(log) -> None:
    """Two loads of equal snapshots (distinct dicts, as two reads of the database give) share one
    board: the second was found, not validated again."""
    text, state = log
    first = state_from_json(json.loads(json.dumps(state_to_json(state))))
    second = state_from_json(json.loads(json.dumps(state_to_json(state))))
    assert first.board is second.board and first.board == state.board


def test_stored_boards_are_told_apart_by_content() -> None:
    spaces = default_board().to_json()
    other = json.loads(json.dumps(spaces))
    other[0]["shares"] += 1
    assert stored_board(other).spaces[0].shares == spaces[0]["shares"] + 1
    assert stored_board(spaces).spaces[0].shares == spaces[0]["shares"]
    assert stored_board({"name": "mine", "spaces": spaces}).name == "mine"
    for _ in range(2):  # a refused board is refused every time, never remembered
        with pytest.raises(BoardError, match="wrong number of spaces"):
            stored_board(spaces[:3])


def test_stored_orders_are_checked_once_and_refused_every_time() -> None:
    data = {"stop": "unless_aimed", "last_call": "pass", "prices": {"C": {"cash": 3}}}
    first = stored_orders(json.loads(json.dumps(data)))
    assert first is stored_orders(json.loads(json.dumps(data))) == Orders.from_json(data)
    assert stored_orders({**data, "stop": "ask"}).stop == "ask"
    for _ in range(2):
        with pytest.raises(OrdersError):
            stored_orders({**data, "stop": "sometimes"})


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_replays_and_decides_scratch_state_equal_the_live_game(players: int) -> None:
    """Over whole bot games with standing orders, the away proxy and variants: after every
    command the state ``decide_state`` returns is the live state, and the JSON log read back
    with ``replay_json`` (and through ``Event.take_json``) is the live game, at the end and at
    points on the way."""
    for seed in range(100 * players, 100 * players + 4):
        _check_game(players, seed)


def _check_game(players: int, seed: int) -> None:
    rng = random.Random(seed)
    variants = sorted({*rng.sample(VARIANTS, 2), *(("V9",) if players == 2 else ())})
    last: list[GameState] = []

    def observe(state: GameState, command: Command, events: list[Event]) -> None:
        assert decide_state(last[0], command) == (events, state)
        last[0] = state.clone()

    game = simulate(
        players,
        seed,
        variants=variants,
        bots=rng.choice(["sensible", "mixed", "random"]),
        observer=observe,
        on_start=lambda state: last.append(state.clone()),
        orders=random_orders(random.Random(seed), players, 0.5),
        proxy_hours=rng.choice([0, 24]),
    )
    text = json.dumps([event.to_json() for event in game.events])
    assert replay_json(json.loads(text)) == game.state
    assert replay(map(Event.take_json, json.loads(text))) == game.state
    for seq in rng.sample(range(1, len(game.events) + 1), 5):
        assert replay_json(json.loads(text)[:seq]) == replay(game.events[:seq])
