"""The words a reply may say, in every language of ``imtheboss.engine.languages`` (its rows'
``replies``; any of them is understood, whatever the seat's language): ``place 5`` (the
marker on space 5, as players number the spaces: 1 to 16), ``allow``, ``stop``, ``pass``,
``accept``, ``reject`` (or ``accept C``, ``reject W``: the terms for that letter, when a mail
shows several), ``offer 3`` (3 M cash), ``offer 1 share``, ``roll``, ``draw``, ``deal``,
``fail``, ``close`` and ``chat: …``; and the words people answer with (``PEOPLE``, the rows'
``yes_words`` and ``no_words``: ``yes``, ``好``, ``同意``, ``no``, ``不要``), which mean a move
only where one alone of theirs fits (``MEANS``: ``imtheboss.web.replies.choices``).

``understand(line)`` turns one line into a ``Reading`` (a verb, and a price or a text), or
``None`` when the line is not one of them: nothing is guessed. ``shown(verbs, lang)`` is how a
mail writes the words that work for its decision.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from imtheboss.engine import languages
from imtheboss.engine.board import LETTERS
from imtheboss.web.app.inputs import BIDI, SINGLE_LINE_BAD, whole_number
from imtheboss.web.say.commands import COMMANDS, NOT_IN_MAIL, VERB_COMMAND

# verb -> language -> words (the first is the one a mail shows): the language table's rows
WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    verb: {row.code: row.replies[verb] for row in languages.LANGUAGES}
    for verb in languages.LANGUAGES[0].replies
}
# Understood, but never offered among a mail's words: failing a deal by one word is asked back
# (a reply "fail" is answered "reply fail again to confirm"), as the page asks "are you sure?"
NOT_SHOWN = NOT_IN_MAIL
# The words people answer with, by what they may mean (``MEANS``): never shown by a mail.
PEOPLE: dict[str, dict[str, tuple[str, ...]]] = {
    "yes": {row.code: row.yes_words for row in languages.LANGUAGES},
    "no": {row.code: row.no_words for row in languages.LANGUAGES},
}
# reply verb -> the verbs it may mean, in order: a reply acts only when one alone fits now
MEANS: dict[str, tuple[str, ...]] = {
    "yes": ("accept", "allow"),
    "no": ("reject", "pass"),
    "deal": ("deal", "accept"),  # "Deal!" to terms is accepting them
}
# the verbs a letter may follow: "accept C" names the terms for Cashman (C) a mail showed
LETTER_VERBS = ("accept", "reject")
SHARE_WORDS = {row.code: row.share_words for row in languages.LANGUAGES}
CASH_WORDS = tuple(dict.fromkeys(w for row in languages.LANGUAGES for w in row.cash_words))

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
    16), ``letter`` (for ``accept`` or ``reject`` of the terms for one letter: ``"C"``) and
    ``text`` (for ``chat``, its first ``MAX_CHAT`` characters; ``cut``: the chat was longer,
    and was cut there)."""

    verb: str
    price: dict[str, int] | None = None
    text: str | None = None
    space: int | None = None
    cut: bool = False
    letter: str | None = None


def _normal(line: str) -> str:
    """NFKC (full-width digits, letters and colons become ASCII), lower case, single spaces,
    no trailing punctuation (full stop, comma, exclamation mark) nor thanks after the word."""
    text = unicodedata.normalize("NFKC", line).replace("\u3000", " ")
    text = " ".join(text.split()).strip(_TRAILING).casefold()
    return THANKS.sub("", text).strip(_TRAILING)


_CHAT_WORDS = "|".join(re.escape(w) for ws in WORDS["chat"].values() for w in ws)
CHAT = re.compile(rf"^({_CHAT_WORDS})\s*[:：]\s*(.+)$", re.IGNORECASE | re.DOTALL)


def _either(words: set[str]) -> str:
    """A regex alternation of ``words``, the longest first; a word ending in a space needs
    whitespace after it."""
    parts = [re.escape(w.strip()) + (r"\s+" if w.endswith(" ") else r"\s*") for w in words]
    return "|".join(sorted(parts, key=len, reverse=True))


# "space 5", "第5格", "5号", "5號", "5番": the words around a space's number (the table's rows)
_BEFORE = _either({w for row in languages.LANGUAGES for w in row.space_before})
_AFTER = _either({w for row in languages.LANGUAGES for w in row.space_after})
SPACE_WORDS = re.compile(rf"^\s*(?:{_BEFORE})?|\s*(?:{_AFTER})$")
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
            space = whole_number(rest) if len(rest) < 3 else None
            return Reading("place", space=space) if space is not None else None
        if verb in LETTER_VERBS and text.startswith(word):
            letter = text[len(word) :].strip().upper()
            if letter in LETTERS:
                return Reading(verb, letter=letter)
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


def shown(verbs: list[str], lang: str, place: int = 5) -> list[str]:
    """How a mail in ``lang`` writes ``verbs`` (in the order given): the word, ``offer 3`` and
    ``offer 1 share`` for an offer, ``place 5`` for placing the marker (``place``: the space's
    number as players read it, 1-16: the one the mail suggests first), ``chat: …`` for chat;
    never those of ``NOT_SHOWN``."""
    row = languages.language(lang)
    lang = row.code
    out = []
    for verb in (v for v in verbs if v not in NOT_SHOWN):
        word = WORDS[verb][lang][0]
        if verb == "offer":
            share = SHARE_WORDS[lang][0]
            out += [f"{word} 3", f"{word} 1 {share}"]
        elif verb == "place":
            out.append(f"{word} {place}")
        elif verb == "chat":
            out.append(f"{word}{row.colon}…")
        else:
            out.append(word)
    return out


def meaning(verb: str) -> Any:
    """What the reply word ``verb`` does, as a mail says it beside the word (a lazy string)."""
    return COMMANDS[VERB_COMMAND[verb]].means


def explained(verbs: list[str], lang: str, place: int = 5) -> list[tuple[str, Any]]:
    """``shown``'s words, each with what it does: ``[("roll", "roll the die and move the
    marker"), ("offer 3", …), ("offer 1 share", …)]``."""
    return [(word, meaning(verb)) for verb in verbs for word in shown([verb], lang, place)]


def lettered(verb: str, letter: str, lang: str) -> str:
    """How a mail in ``lang`` writes ``verb`` (``accept`` or ``reject``) of the terms for
    ``letter``: ``accept C``, ``接受 C``."""
    return f"{WORDS[verb][languages.language(lang).code][0]} {letter}"


def every_word() -> dict[str, Any]:
    """Every word of every language, by verb (``PEOPLE``'s too; for docs and tests)."""
    return {
        verb: [w for ws in by_lang.values() for w in ws]
        for verb, by_lang in (WORDS | PEOPLE).items()
    }
