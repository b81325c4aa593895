"""One Chinese word per game term in each catalog (web/translations/zh_Hans|zh_Hant): the words
of the Chinese rule texts the project follows (docs/rules.md, Terms), never a variant of them.

| term | 简体 | 繁體 |
|---|---|---|
| the game | 《我是大老板》 | 《我是大老闆》 |
| investor (card) | 投资家（卡） | 資本家（卡） |
| the board | 游戏板 | 遊戲板 |
| deal space | 交易格 N | 交易格 N |
| deal tile | 交易板 | 景氣卡 |
| standing orders | 常设指令 | 常設指令 |
| window, stop window | 时限, 停止时限 | 時限, 停止時限 |
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
TRANSLATIONS = ROOT / "web" / "translations"

# The variants a catalog must not use, each with the word to use instead.
BANNED = {
    "zh_Hans": {
        r"I'm the Boss|我是老板": "《我是大老板》",
        r"投资人|投资者|资本家": "投资家",
        r"棋盘|版图": "游戏板",
        r"第 ?%\(space\)\w ?格|空格|格子": "交易格 %(space)s",
        r"交易板块|板块": "交易板",
        r"预设": "常设指令",
        r"窗口|阻止时段": "时限",
        r"开价": "出价",  # offer (docs/glossary.md)
        r"放过": "放弃",  # pass at last call
        r"让它发生|停止它": "阻止它或让它生效",  # the answers to a stop window
        r"约定|协定": "协议",  # agreement
        r"来做笔交易|做个买卖": "来谈笔交易吧！",
        r"报价": "出价",
        r"卡牌|(?<![手抽弃洗发出令挂])牌(?![堆桌上组])": "卡片 (牌 only in 手牌, 抽牌, 弃牌...)",
    },
    "zh_Hant": {
        r"I'm the Boss|我是老闆": "《我是大老闆》",
        r"投資人|投資者|投資家": "資本家",
        r"棋盤|版圖": "遊戲板",
        r"第 ?%\(space\)\w ?格|空格|格子": "交易格 %(space)s",
        r"交易板|板塊": "景氣卡",
        r"預設指令": "常設指令",
        r"窗口|視窗|阻止時段": "時限",
        r"開價": "出價",
        r"放過": "放棄",
        r"讓它發生|停止它": "阻止它或讓它生效",
        r"約定|協定": "協議",
        r"來做筆交易|做個買賣": "來談筆交易吧！",
        r"報價": "出價",
        r"卡牌|(?<![手抽棄洗發出令掛])牌(?![堆桌上組])": "卡片 (牌 only in 手牌, 抽牌, 棄牌...)",
    },
}


def _strings(lang: str) -> list[tuple[str, str]]:
    with (TRANSLATIONS / lang / "LC_MESSAGES" / "messages.po").open("rb") as fh:
        catalog = read_po(fh, locale=lang)
    out = []
    for m in catalog:
        if not m.id:
            continue
        key = m.id[0] if isinstance(m.id, tuple) else m.id
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        out += [(key, s) for s in strings if s]
    return out


@pytest.mark.parametrize("lang", sorted(BANNED))
def test_each_term_has_one_word(lang: str) -> None:
    found = [
        (msgid, text, instead)
        for msgid, text in _strings(lang)
        for pattern, instead in BANNED[lang].items()
        if re.search(pattern, text)
    ]
    assert not found, "\n".join(f"{m!r}: {t!r} (say {i})" for m, t, i in found)


def test_the_terms_are_the_rule_texts_words() -> None:
    """The words chosen are used: each catalog names the investor card, the deal space, the
    deal tile and standing orders by them."""
    words = {
        "zh_Hans": ("投资家卡", "交易格", "交易板", "常设指令", "停止时限", "《我是大老板》"),
        "zh_Hant": ("資本家卡", "交易格", "景氣卡", "常設指令", "停止時限", "《我是大老闆》"),
    }
    for lang, expected in words.items():
        text = "\n".join(t for _m, t in _strings(lang))
        assert all(w in text for w in expected), (lang, [w for w in expected if w not in text])


@pytest.mark.parametrize("lang", sorted(BANNED))
def test_the_chinese_rules_use_the_same_words(lang: str) -> None:
    """The rules page (docs/rules.<lang>.md) names each term as the catalogs do, names the
    investors as the game does, and shows no raw code word (``shares``, ``must_roll_...``)."""
    text = (ROOT / "docs" / f"rules.{lang}.md").read_text(encoding="utf-8")
    found = [
        (pattern, instead)
        for pattern, instead in BANNED[lang].items()
        if pattern != r"I'm the Boss|我是老板" and re.search(pattern, text)
    ]
    assert not found, found
    assert not re.search(r"\b(Cashman|Dougherty|Goldman|Liebgeld|Sacks|Wadsworth)\b", text)
    assert not re.search(r"`[a-z_]{3,}`", text), re.findall(r"`[a-z_]{3,}`", text)
    assert "(rules.md)" not in text


@pytest.mark.parametrize(
    ("lang", "nav", "page"),
    [("zh_Hans", "Deals", "Negotiations"), ("zh_Hant", "Deals", "Negotiations")],
)
def test_one_word_for_the_same_thing_across_places(lang: str, nav: str, page: str) -> None:
    """Words that name one thing in two places say it alike: the subject and the body of the
    mail that asks about a card, the pass of a last call on the buttons and on the orders page
    (one word for each, checked above); the nav's "Deals" and the deals page's title are one
    msgid (templates/deals.html)."""
    strings = dict(_strings(lang))
    subject = strings["a card waits for your answer"]
    body = next(s for m, s in _strings(lang) if m.startswith("A card waits for your answer"))
    assert subject.rstrip("。") in body, (subject, body)
    deals = (ROOT / "templates" / "deals.html").read_text(encoding="utf-8")
    assert f'_("{page}")' not in deals and f'_("{nav}")' in deals


@pytest.mark.parametrize("lang", sorted(BANNED))
def test_a_quote_ends_its_sentence(lang: str) -> None:
    """A call in quotes (“我是大老板！”) that ends a sentence is followed by its full stop, not
    run into the next sentence."""
    run_on = [s for _m, s in _strings(lang) if re.search(r"[！？][”」](?=在|任|其|如)", s)]
    assert not run_on
