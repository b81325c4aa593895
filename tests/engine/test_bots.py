"""The bots: what they remember does not depend on where a state object lives in memory."""

from __future__ import annotations

import random

from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.views import legal_commands
from support.async_play import FLAT_BOARD, Table


def test_sensible_bot_remembers_a_deal_across_copies_of_the_state():
    """The sensible bot names terms for one seat and letter at most twice a deal. Its memory is
    keyed by the deal's number (its negotiation window), not by the Python object: a state
    rebuilt from the log (another process, a reload) is the same deal to it."""
    t = Table.at_position(
        {
            "investors": {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]},
            "side_pool": ["S", "W"],
            "draw_pile": "rest",
            "marker": 0,
            "active": 0,
        },
        board=FLAT_BOARD,
    )
    t.do(0, "open_deal", h=1)
    bot = SensibleBot()
    proposals = 0
    for _ in range(6):
        state = t.replayed()  # a fresh object each time, as after a reload
        choice = bot.choose(state, 0, legal_commands(state, 0), random.Random(1))
        if choice is not None and choice["do"] == "propose" and choice["to"] == 1:
            proposals += 1
    assert proposals == 2
