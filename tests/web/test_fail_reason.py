"""While the deal's requirements are unmet the boss has no Close button, only Fail: the reason
(what is still missing) stands beside that button, not a screen further down; once Close is
offered, no such note."""

from __future__ import annotations

import re

from support.page_forms import act


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
    assert note and "You cannot close yet: the deal still needs " in note.group(1)
    assert f"({s.letter})" in note.group(1)  # the provider's investor, by name and letter
    assert note.group(1).strip().endswith(".")  # one whole sentence
    zh = _close_group(boss.get(f"/g/{gid}?lang=zh_Hans").text)
    said = re.search(r'<p class="hint note-fail">(.*?)</p>', zh, re.S).group(1)
    assert said.startswith("你还不能成交：这笔交易还需要") and said.endswith("。"), said
    assert f"（{s.letter}）" in said and "," not in said and "仍然缺少" not in said
    boss.get(f"/g/{gid}?lang=en")
    act(
        provider, gid, {"do": "offer", "card": f"investor:{s.letter}"}, price="1", price_kind="cash"
    )
    act(boss, gid, {"do": "accept", "with": s.provider, "letter": s.letter, "price": {"cash": 1}})
    group = _close_group(boss.get(f"/g/{gid}").text)
    assert "cmd-close" in group and "note-fail" not in group
