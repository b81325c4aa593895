"""The inbox says when a question no longer waits for its seat (its window answered or ended),
instead of still reading like a call to act."""

from __future__ import annotations

from support.page_forms import act

OVER = "no longer waits for you"


def test_an_answered_window_no_longer_waits_in_the_inbox(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss = clients[s.boss]
    first = boss.get(f"/g/{gid}/inbox").text
    assert "Place the marker to start the game" in first and OVER not in first
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    page = boss.get(f"/g/{gid}/inbox").text
    assert "Place the marker to start the game" in page and page.count(OVER) == 1
