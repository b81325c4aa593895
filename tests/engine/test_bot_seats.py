"""Bot seats (A13): the bot reads only its own seat's view (``bots.seat_state``), so what is
hidden from the seat (other hands, the draw pile's order, the seed, others' money and orders)
changes nothing it does; it never chats; and the pace benchmark's bot seats finish games."""

from __future__ import annotations

import json
import random

import pytest
from imtheboss.engine.bots import SeatBot, seat_state
from imtheboss.engine.game import Command
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands, snapshot
from test_hidden_information import scrambled
from test_pace_bench import pace


@pytest.mark.parametrize(("players", "seed"), [(3, 21), (5, 22)])
def test_the_bot_reads_its_seats_view_only(players, seed):
    """After every command of whole games, for every seat: the state the bot reads is the same
    when everything hidden from the seat is rearranged, and so is the bot's choice."""
    rng = random.Random(seed)
    checked = 0

    def observe(state: GameState, command: Command, events) -> None:
        nonlocal checked
        if state.phase == "game_over":
            return
        for seat in range(state.n):
            other = scrambled(state, seat, rng)
            assert snapshot(seat_state(other, seat)) == snapshot(seat_state(state, seat))
            legal = legal_commands(state, seat)
            mine = SeatBot().choose(state, seat, legal, random.Random(1))
            assert SeatBot().choose(other, seat, legal, random.Random(1)) == mine
            assert mine is None or mine["do"] != "chat"
            checked += 1

    simulate(players, seed, bots=[SeatBot() for _ in range(players)], observer=observe)
    assert checked > 100


def test_two_people_and_three_bots_finish_and_bots_only_is_refused():
    done = pace(
        "--seats",
        "5",
        "--bots",
        "3",
        "--orders",
        "default",
        "--no-back",
        "--games",
        "5",
        "--seed",
        "1",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["unfinished"] == 0 and out["params"]["bots"] == 3
    refused = pace("--seats", "5", "--bots", "5")
    assert refused.returncode == 2 and "bots only" in refused.stderr
