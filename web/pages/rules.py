"""The rules page, ``GET /rules``: the rules contract (``docs/rules.md``) as players read it, in
the page's language (one source per language: ``docs/rules.md`` in English,
``docs/rules.<code>.md`` for another language of ``imtheboss.engine.languages``; English where
a translation is missing), each rule reachable by its id as an anchor (``/rules#R5.1``), so a
card in the hand, a mail or a refusal can point at the
rule it means (``CARD_RULES``, ``rule_url``). Rendered once per language and process with
markdown-it-py (CommonMark and tables); the sources are the project's own, so their HTML is
trusted, and links to the developers' other documents are shown as plain text."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from flask import Blueprint, Flask, render_template, url_for
from flask_babel import get_locale
from flask_babel import lazy_gettext as _l
from markdown_it import MarkdownIt
from markupsafe import Markup

bp = Blueprint("rules", __name__)

DOCS = Path(__file__).resolve().parents[2] / "docs"  # as TEMPLATES: the repository or wheel
DEFAULT_SOURCE = "rules.md"  # the rules in English; another language's: ``rules.<code>.md``

# the rule that says what each kind of influence card does, and a line for its help box
CARD_RULES = {
    "family": "R4.2",
    "travel": "R5.1",
    "recruit": "R5.4",
    "boss": "R5.5",
    "stop": "R5.6",
    "investor": "R4.1",
}
CARD_HELP = {
    "family": _l(
        "Stands in for its investor in a deal: the boss plays it from the hand, anyone else"
        " offers it for a price. It comes back unless it is used or sent on travel."
    ),
    "travel": _l(
        "Sends an investor card or a family card out of the running deal (a lettered one only"
        " that family, a wild one any). Others may stop it. Never your own investor."
    ),
    "recruit": _l(
        "Three together take control of another player's investor card for the rest of the"
        " game (the side pool first). Others may stop it."
    ),
    "boss": _l(
        "“I'm the Boss!”: you take over the negotiation that is running; terms made with the"
        " old boss lapse. Others may stop it."
    ),
    "stop": _l(
        "Cancels what was just played: a travel, a boss or a triple recruit. Anyone may play"
        " it; it cannot itself be stopped."
    ),
}

_RULE_ITEM = re.compile(r"<li>(\s*(?:<p>)?)<strong>([RVA]\d+(?:\.\d+)?)</strong>")
_HEADING = re.compile(r"<h([23])>(.*?)</h\1>")
_DOC_LINK = re.compile(r'<a href="[^"#:]*\.md(?:#[^"]*)?">(.*?)</a>')
# a line break between two CJK characters (or full-width punctuation): Chinese and Japanese put
# no space between words, so a wrapped source line must not leave one in the sentence
_CJK = "\u3000-\u30ff\u3400-\u9fff\uff00-\uffef"
_CJK_BREAK = re.compile(rf"(?<=[{_CJK}])\n(?=[{_CJK}])")


def rule_url(rule: str) -> str:
    """The rules page at the rule ``rule`` (``R5.1``, ``A2``), in the page's language."""
    return url_for("rules.rules_page", _anchor=rule)


def card_rule(card: str) -> str:
    """The id of the rule that says what the card ``card`` (``travel:S``, ``family:W``) does."""
    return CARD_RULES.get(card.split(":", 1)[0], "R1.1")


def card_help(card: str) -> str:
    """One line on what the card ``card`` does, in the page's language (``""``: none)."""
    return str(CARD_HELP.get(card.split(":", 1)[0], ""))


@cache
def rules_html(lang: str) -> Markup:
    """The rules in ``lang`` (English when that language has no source) as HTML: every rule an
    anchor of its id, every heading an anchor of its words (``#the-board``); a line break
    between two CJK characters is joined without a space."""
    translated = DOCS / f"rules.{lang}.md"
    source = translated if translated.is_file() else DOCS / DEFAULT_SOURCE
    html = MarkdownIt("commonmark").enable("table").render(source.read_text(encoding="utf-8"))
    html = _RULE_ITEM.sub(r'<li id="\2">\1<strong>\2</strong>', html)
    html = _HEADING.sub(_heading, html)
    html = _DOC_LINK.sub(r"\1", html)
    return Markup(_CJK_BREAK.sub("", html))


def _heading(found: re.Match[str]) -> str:
    level, text = found.group(1), found.group(2)
    words = re.sub(r"<[^>]+>", "", text).strip().lower()
    slug = re.sub(r"[^\w]+", "-", words).strip("-")
    return f'<h{level} id="{slug}">{text}</h{level}>'


@bp.get("/rules")
def rules_page() -> str:
    """The rules in the page's language."""
    return render_template("rules.html", rules=rules_html(str(get_locale() or "en")))


def register(app: Flask) -> None:
    """Add the rules page, and ``rule_url``, ``card_rule``, ``card_help`` for the templates."""
    app.register_blueprint(bp)
    app.jinja_env.globals.update(rule_url=rule_url, card_rule=card_rule, card_help=card_help)
