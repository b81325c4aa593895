"""One term per concept in each language (docs/glossary.md): no translation in a catalog uses a
variant the glossary forbids, each term of the glossary is used, and Chinese text has no ASCII
punctuation next to a Chinese character. Pure: the glossary and the catalogs, as files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from imtheboss.web.replies.words import SHARE_WORDS, WORDS, shown

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / "web" / "translations"
COLUMN = {"zh_Hans": (2, 4), "zh_Hant": (3, 5)}  # the term's column, its variants' column
# other words that hold a forbidden variant (docs/glossary.md says so)
OTHER_WORDS = {"标记": ("标记为", "方向标记"), "標記": ("標記為", "方向標記")}
CJK = "[\u3400-\u9fff]"
ASCII_NEXT_TO_CJK = re.compile(rf"{CJK}[,;:?!]|[,;?!]{CJK}")


def _rows() -> list[list[list[str]]]:
    """The glossary table: per row, per column, the words in backticks (or the cell's text)."""
    rows = []
    for line in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or line.startswith(("| concept", "|---")):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append([re.findall(r"`([^`]+)`", c) or [c] for c in cells])
    return rows


def _translations(lang: str) -> list[str]:
    with (TRANSLATIONS / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalog = read_po(f)
    out = []
    for message in catalog:
        if message.id:
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            out += [s for s in strings if s]
    return out


def test_the_glossary_has_every_concept_the_game_names() -> None:
    concepts = {row[0][0] for row in _rows()}
    wanted = {"boss", "investor", "family card", "travel", "recruit", "stop card", "deal space"}
    wanted |= {"share", "proceeds", "agreement", "marker", "last call", "stop window"}
    wanted |= {"negotiation", "offer", "counter", "terms"}
    assert wanted <= concepts


@pytest.mark.parametrize("lang", ["zh_Hans", "zh_Hant"])
def test_no_translation_uses_a_variant_the_glossary_forbids(lang: str) -> None:
    texts = _translations(lang)
    term_at, variants_at = COLUMN[lang]
    found = []
    for row in _rows():
        for variant in row[variants_at]:
            for text in texts:
                for other in OTHER_WORDS.get(variant, ()):
                    text = text.replace(other, "")
                if variant in text:
                    found.append((row[0][0], variant, text))
    assert found == []


@pytest.mark.parametrize("lang", ["zh_Hans", "zh_Hant"])
def test_every_term_of_the_glossary_is_used(lang: str) -> None:
    whole = "\n".join(_translations(lang))
    term_at, _variants = COLUMN[lang]
    unused = [row[term_at][0] for row in _rows() if row[term_at][0] not in whole]
    assert unused == []


@pytest.mark.parametrize("lang", ["zh_Hans", "zh_Hant"])
def test_chinese_text_has_full_width_punctuation(lang: str) -> None:
    bad = [t for t in _translations(lang) if ASCII_NEXT_TO_CJK.search(t)]
    assert bad == []


@pytest.mark.parametrize("lang", ["zh_Hans", "zh_Hant"])
def test_the_words_a_mail_shows_are_the_glossary_s(lang: str) -> None:
    """The reply words a mail shows use the glossary's terms: its offer of shares names the
    share as the catalogs do, and no word is a forbidden variant."""
    _term, variants_at = COLUMN[lang]
    words = " ".join(shown(list(WORDS), lang))
    share = next(row for row in _rows() if row[0][0] == "share")[COLUMN[lang][0]][0]
    assert share in SHARE_WORDS[lang][0]
    assert not [v for row in _rows() for v in row[variants_at] if v in words]
