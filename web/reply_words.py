"""The words a reply may say, in English, 简体 and 繁體 (any of them is understood, whatever the
seat's language): ``place 5`` (the marker on space 5, as players number the spaces: 1 to 16),
``allow``, ``stop``, ``pass``, ``accept``, ``reject``, ``offer 3`` (3 M cash), ``offer 1 share``,
``roll``, ``draw``, ``deal``, ``fail``, ``close`` and ``chat: …``; and the words people answer
with (``PEOPLE``: ``yes``, ``好``, ``同意``, ``no``, ``不要``), which mean a move only where one
alone of theirs fits (``MEANS``: ``imtheboss.web.reply_choices``).

``understand(line)`` turns one line into a ``Reading`` (a verb, and a price or a text), or
``None`` when the line is not one of them: nothing is guessed. ``shown(verbs, lang)`` is how a
mail writes the words that work for its decision.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from imtheboss.web.inputs import BIDI, SINGLE_LINE_BAD

# verb -> language -> words (the first is the one a mail shows)
WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "allow": {"en": ("allow",), "zh_Hans": ("允许", "放行"), "zh_Hant": ("允許", "放行")},
    "stop": {"en": ("stop",), "zh_Hans": ("阻止",), "zh_Hant": ("阻止",)},
    "pass": {"en": ("pass",), "zh_Hans": ("放弃", "过"), "zh_Hant": ("放棄", "過")},
    "accept": {"en": ("accept",), "zh_Hans": ("接受",), "zh_Hant": ("接受",)},
    "reject": {"en": ("reject",), "zh_Hans": ("拒绝",), "zh_Hant": ("拒絕",)},
    "offer": {"en": ("offer",), "zh_Hans": ("出价", "报价"), "zh_Hant": ("出價", "報價")},
    "place": {"en": ("place",), "zh_Hans": ("放置",), "zh_Hant": ("放置",)},
    "roll": {"en": ("roll",), "zh_Hans": ("掷骰", "掷"), "zh_Hant": ("擲骰", "擲")},
    "draw": {"en": ("draw",), "zh_Hans": ("抽牌",), "zh_Hant": ("抽牌",)},
    "deal": {"en": ("deal",), "zh_Hans": ("交易", "开启交易"), "zh_Hant": ("交易", "開啟交易")},
    "fail": {"en": ("fail",), "zh_Hans": ("失败",), "zh_Hant": ("失敗",)},
    "close": {"en": ("close",), "zh_Hans": ("成交",), "zh_Hant": ("成交",)},
    "chat": {"en": ("chat",), "zh_Hans": ("聊天",), "zh_Hant": ("聊天",)},
}
# Understood, but never offered among a mail's words: failing a deal by one word is asked back
# (a reply "fail" is answered "reply fail again to confirm"), as the page asks "are you sure?"
NOT_SHOWN = frozenset({"fail"})
# The words people answer with, by what they may mean (``MEANS``): never shown by a mail.
PEOPLE: dict[str, dict[str, tuple[str, ...]]] = {
    "yes": {
        "en": ("yes", "ok", "okay", "sure", "agreed", "agree", "yes please"),
        "zh_Hans": ("同意", "好", "好的", "行", "可以", "是", "没问题"),
        "zh_Hant": ("同意", "好", "好的", "行", "可以", "是", "沒問題"),
    },
    "no": {
        "en": ("no", "no thanks", "nope"),
        "zh_Hans": ("不要", "不", "不同意", "不行", "不用"),
        "zh_Hant": ("不要", "不", "不同意", "不行", "不用"),
    },
}
# reply verb -> the verbs it may mean, in order: a reply acts only when one alone fits now
MEANS: dict[str, tuple[str, ...]] = {
    "yes": ("accept", "allow"),
    "no": ("reject", "pass"),
    "deal": ("deal", "accept"),  # "Deal!" to terms is accepting them
}
SHARE_WORDS = {
    "en": ("share", "shares"),
    "zh_Hans": ("份红利", "红利", "股"),
    "zh_Hant": ("份紅利", "紅利", "股"),
}
CASH_WORDS = ("m", "million", "millions", "百万", "百萬", "万", "萬")
LANGS = ("en", "zh_Hans", "zh_Hant")

_VERB_OF = {
    w: verb for verb, by_lang in (WORDS | PEOPLE).items() for ws in by_lang.values() for w in ws
}
_SHARES = {w for ws in SHARE_WORDS.values() for w in ws}
_TRAILING = " \t.,;!。！~～"
# thanks (or please) after the word, and the punctuation between: "Accept, thanks!", "接受，谢谢"
THANKS = re.compile(
    r"((?<=\w)[\s.,;!]+(thanks?( you)?( so much| a lot)?|thx|ty|cheers|please|pls)"
    r"|[\s.,;!。、]*(谢谢(你|您)?|謝謝(你|您)?|多谢|多謝|谢了|謝了|感谢|感謝))[\s.!。~]*$"
)
MAX_CHAT = 500  # characters of a chat line taken from mail


@dataclass(frozen=True)
class Reading:
    """What a line says: ``verb`` (a key of ``WORDS``), ``price`` (``{"cash": M}`` or
    ``{"shares": n}``, for ``offer``), ``space`` (for ``place``: the number players read, 1 to
    16) and ``text`` (for ``chat``, its first ``MAX_CHAT`` characters; ``cut``: the chat was
    longer, and was cut there)."""

    verb: str
    price: dict[str, int] | None = None
    text: str | None = None
    space: int | None = None
    cut: bool = False


def _normal(line: str) -> str:
    """NFKC (full-width digits, letters and colons become ASCII), lower case, single spaces,
    no trailing punctuation (full stop, comma, exclamation mark) nor thanks after the word."""
    text = unicodedata.normalize("NFKC", line).replace("\u3000", " ")
    text = " ".join(text.split()).strip(_TRAILING).casefold()
    return THANKS.sub("", text).strip(_TRAILING)


CHAT = re.compile(r"^(chat|聊天)\s*[:：]\s*(.+)$", re.IGNORECASE | re.DOTALL)
# "space 5", "第5格", "5号", "5號": the words around a space's number
SPACE_WORDS = re.compile(r"^\s*(on\s+)?(space\s+|第\s*)?|\s*(格|号|號|号格|號格)$")
PRICE = re.compile(r"^(\d{1,4})\s*([a-z]+|[\u4e00-\u9fff]+)?$")


def understand(line: str) -> Reading | None:
    """The ``Reading`` of one line, or ``None`` when it is none of the words (an offer without
    a number, a number that is not whole, anything else). A word of ``PEOPLE`` reads as its
    key (``yes``, ``no``): what it means is decided against the moves open now."""
    if CHAT.match(unicodedata.normalize("NFKC", line).strip()):
        whole = chat_text(BIDI.sub("", line))  # bidi controls go, as the web refuses them
        text = whole[:MAX_CHAT].rstrip()
        return Reading("chat", text=text, cut=len(whole) > MAX_CHAT) if text else None
    text = _normal(line)
    if text in _VERB_OF and _VERB_OF[text] not in ("offer", "chat", "place"):
        return Reading(_VERB_OF[text])
    for word, verb in _VERB_OF.items():
        if verb == "offer" and text.startswith(word):
            price = _price(text[len(word) :].strip())
            return Reading("offer", price=price) if price else None
        if verb == "place" and text.startswith(word):
            rest = SPACE_WORDS.sub("", text[len(word) :]).strip()
            return Reading("place", space=int(rest)) if rest.isdigit() and len(rest) < 3 else None
    return None


def chat_text(line: str) -> str:
    """The text of a chat line (``chat: …``, ``聊天：…``, ``ｃｈａｔ：…``) as it was written: only
    the word before the colon is read normalised (NFKC); full-width punctuation, letters and
    digits of the text stay as they are. Control characters (C0, DEL, C1) become spaces, and
    the text is stripped."""
    for index, char in enumerate(line):
        if unicodedata.normalize("NFKC", char) == ":":
            return SINGLE_LINE_BAD.sub(" ", line[index + 1 :]).strip()
    return ""


def _price(text: str) -> dict[str, int] | None:
    """``3``, ``3 m``, ``3百万`` -> ``{"cash": 3}``; ``1 share``, ``2 shares``, ``1股`` ->
    ``{"shares": n}``; anything else ``None``."""
    match = PRICE.match(text)
    if not match:
        return None
    amount, unit = int(match.group(1)), match.group(2)
    if unit in _SHARES:
        return {"shares": amount} if amount > 0 else None
    if unit is None or unit in CASH_WORDS:
        return {"cash": amount}
    return None


def shown(verbs: list[str], lang: str) -> list[str]:
    """How a mail in ``lang`` writes ``verbs`` (in the order given): the word, ``offer 3`` and
    ``offer 1 share`` for an offer, ``chat: …`` for chat; never those of ``NOT_SHOWN``."""
    lang = lang if lang in LANGS else "en"
    out = []
    for verb in (v for v in verbs if v not in NOT_SHOWN):
        word = WORDS[verb][lang][0]
        if verb == "offer":
            share = SHARE_WORDS[lang][0]
            out += [f"{word} 3", f"{word} 1 {share}"]
        elif verb == "place":
            out.append(f"{word} 5")
        elif verb == "chat":
            out.append(f"{word}: …" if lang == "en" else f"{word}：…")
        else:
            out.append(word)
    return out


def every_word() -> dict[str, Any]:
    """Every word of every language, by verb (``PEOPLE``'s too; for docs and tests)."""
    return {
        verb: [w for ws in by_lang.values() for w in ws]
        for verb, by_lang in (WORDS | PEOPLE).items()
    }
