"""A negotiation that runs out of time is told once in the history and on the game page: the
engine records both ``timed_out`` (kind ``negotiation``) and ``negotiation_expired`` for it,
and only the second (with the deal's failure after it) is a line."""

from __future__ import annotations

import re

from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from support.page_forms import act


def test_a_negotiation_that_ran_out_is_one_line(app, game, clock) -> None:
    created, s, clients = game
    gid = created.game_id
    boss = clients[s.boss]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    clock.advance(days=3)  # past the negotiation window
    with app.app_context():
        submit(gid, None, {"do": "timeout"}, "t-negotiation")
        assert load_state(get_game(gid)).deal is None
    history = boss.get(f"/g/{gid}/history").text
    kinds = re.findall(r'<li class="ev ev-(\w+)"', history)
    assert kinds.count("negotiation_expired") == 1 and "deal_failed" in kinds
    assert "timed_out" not in kinds
