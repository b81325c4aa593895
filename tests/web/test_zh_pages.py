"""The pages a Chinese reader reads through a whole deal (docs/glossary.md, punctuation): no
ASCII bracket, comma or colon next to a Chinese character, lists joined with 、 and 和, and the
words the glossary chose; whatever the templates glue together (a deadline's time left, a
payout, a window's answers, the deal's missing investors)."""

from __future__ import annotations

import re

from support.page_forms import act, commands_on

CJK = "[\u3400-\u9fff（）]"
ASCII_NEXT_TO_CJK = re.compile(rf"{CJK} ?[,;:(]|[,;:)] ?{CJK}")


def _text(html: str) -> str:
    html = re.sub(r"<script.*?</script>|<style.*?</style>|<title>.*?</title>", "", html, flags=re.S)
    html = re.sub(r"<[^>]+>", "", html)
    return re.sub(r"\s+", " ", html)


def _read(client, gid: str) -> dict[str, str]:
    paths = ("", "/deals", "/deals/1", "/history", "/story", "/orders")
    pages = {}
    for path in paths:
        page = client.get(f"/g/{gid}{path}")
        assert page.status_code == 200, path
        pages[path or "/"] = _text(page.text)
    return pages


def _bad(pages: dict[str, str]) -> list[tuple[str, str]]:
    return [
        (path, text[max(0, m.start() - 30) : m.end() + 30])
        for path, text in pages.items()
        for m in ASCII_NEXT_TO_CJK.finditer(text)
    ]


def test_a_deal_read_in_simplified_chinese(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss, provider = clients[s.boss], clients[s.provider]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    act(
        provider, gid, {"do": "offer", "card": f"investor:{s.letter}"}, price="1", price_kind="cash"
    )
    for c in clients:
        c.get(f"/g/{gid}?lang=zh_Hans")
    running = _read(boss, gid)
    assert "还需要：" in running["/"] and "后）" in running["/"]  # the deadline's time left
    act(boss, gid, {"do": "accept", "with": s.provider, "letter": s.letter, "price": {"cash": 1}})
    act(boss, gid, {"do": "close"})
    for seat, c in enumerate(clients):
        if seat != s.boss and any(f["do"] == "pass" for f in _commands(c, gid)):
            act(c, gid, {"do": "pass"})
    closed = _read(boss, gid)
    assert "💰 已成交：" in closed["/deals"], closed["/deals"]
    assert "（" in closed["/deals/1"] and "：" in closed["/deals/1"]
    assert _bad(running) + _bad(closed) == []
    whole = " ".join([*running.values(), *closed.values()])
    for word in ("开价", "放过", "让它发生", "卡牌", "仍然缺少"):
        assert word not in whole, word
    assert not re.search(r"前往\S*旅行卡", whole)  # a travel card is not a trip to an investor


def _commands(client, gid: str) -> list[dict]:
    return commands_on(client, gid)
