"""While the deal's requirements are unmet the boss has no Close button, only Fail: the reason
(what is still missing) stands beside that button, not a screen further down; once Close is
offered, no such note."""

from __future__ import annotations

import re

from helpers_pages import act


def _close_group(page: str) -> str:
    return page.split('<div class="group group-close">')[1].split('<div class="group')[0]


def test_the_boss_reads_why_there_is_no_close_beside_fail(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss, provider = clients[s.boss], clients[s.provider]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    group = _close_group(boss.get(f"/g/{gid}").text)
    assert "cmd-close" not in group and "cmd-fail" in group
    note = re.search(r'<p class="hint note-fail">(.*?)</p>', group, re.S)
    assert note and "You cannot close yet: still missing" in note.group(1)
    assert f'<span class="inv inv-{s.letter}"' in note.group(1)  # the provider's letter
    act(
        provider, gid, {"do": "offer", "card": f"investor:{s.letter}"}, price="1", price_kind="cash"
    )
    act(boss, gid, {"do": "accept", "with": s.provider, "letter": s.letter, "price": {"cash": 1}})
    group = _close_group(boss.get(f"/g/{gid}").text)
    assert "cmd-close" in group and "note-fail" not in group
