"""One table of languages (``imtheboss.engine.languages``): no other module lists the codes, and
Japanese, added as a row and a catalog only, is spoken end to end: a page, a mail, the words of
a reply and the answer to it, and dates."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from babel.support import Translations
from imtheboss.engine import languages
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, db
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.words import shown, understand
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "engine" / "languages.py"
CATALOGS = ROOT / "web" / "translations"


def _listed_codes(path: Path) -> list[int]:
    """Lines of ``path`` holding a language code other than the default as a string of its own,
    or a literal collection of two or more codes."""
    codes = set(languages.CODES)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and node.value in codes - {languages.DEFAULT}:
            found.append(node.lineno)
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            named = [n for n in items if isinstance(n, ast.Constant) and n.value in codes]
            if len(named) >= 2:
                found.append(node.lineno)
    return found


def test_the_language_codes_are_listed_in_one_module_only() -> None:
    listed = {
        str(path.relative_to(ROOT)): lines
        for folder in ("engine", "web", "worker")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != TABLE and "migrations" not in path.parts
        for lines in [_listed_codes(path)]
        if lines
    }
    assert listed == {}
    assert _listed_codes(TABLE)  # the check sees a listing where there is one


def test_every_language_has_its_catalog_and_its_brand() -> None:
    """A row and its catalog: the compiled catalog exists and calls the game by the row's
    brand (the From line of its mail)."""
    for row in languages.LANGUAGES[1:]:
        folder = CATALOGS / row.code / "LC_MESSAGES"
        assert (folder / "messages.po").exists() and (folder / "messages.mo").exists()
        catalog = Translations.load(str(CATALOGS), [row.code])
        assert catalog.gettext("I'm the Boss!") == row.brand


def test_reply_words_come_from_the_table() -> None:
    assert understand("置く 5").space == 5
    assert understand("置く 12番").space == 12 and understand("置く マス3").space == 3
    assert understand("提示 1株").price == {"shares": 1}
    assert understand("チャット：よろしく").text == "よろしく"
    assert understand("許可").verb == "allow"
    assert shown(["offer", "chat"], "ja") == ["提示 3", "提示 1 株", "チャット：…"]


def test_a_page_in_japanese(client) -> None:
    page = client.get("/?lang=ja").get_data(as_text=True)
    assert '<html lang="ja">' in page and "アイム・ザ・ボス！" in page
    assert "ゲームを作る" in page


@pytest.mark.parametrize(
    ("asked", "lang"),
    [
        ("ja-JP,ja;q=0.9,en;q=0.5", "ja"),
        ("ja", "ja"),
        ("zh-TW,zh;q=0.8", "zh-Hant"),
        ("zh-HK", "zh-Hant"),
        ("zh-CN", "zh-Hans"),
        ("zh", "zh-Hans"),
        ("fr-FR,de;q=0.5", "en"),
    ],
)
def test_a_browser_reads_the_language_it_asks_for(app, asked, lang) -> None:
    page = app.test_client().get("/", headers={"Accept-Language": asked})
    assert f'<html lang="{lang}">' in page.get_data(as_text=True)


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


def test_a_mail_and_a_reply_answer_in_japanese(app) -> None:
    a = asked(app, "ja")  # the mail asking the seat to place the marker
    asking = a.mail.get_body(("plain",)).get_content()
    assert "アイム・ザ・ボス！" in str(a.mail["From"])
    assert "マーカーを置いて" in asking and f"置く {a.first_space}" in asking
    raw = raw_mail("置く 3\n\n" + quoted(), to=a.address, sender=a.email, message_id="<1@c>")
    with app.app_context():
        assert apply_reply(raw).status == "done"
    row = answers(app)[-1]
    with app.app_context():
        mail = compose(db.session.get(Game, row.game_id), None, [row])
    plain = mail.get_body(("plain",)).get_content()
    assert "マーカーを取引マス 3 に置きました。" in plain
    assert "ゲームを開く：" in plain and "Open the game" not in plain


def test_dates_in_japanese(app) -> None:
    """Dates go through Babel in the page's language: the weekday is Japanese."""
    from datetime import UTC, datetime

    from imtheboss.web.say.display import local_time

    with app.test_request_context("/?lang=ja"):
        assert local_time(datetime(2026, 12, 4, 1, 0, tzinfo=UTC), "Asia/Tokyo") == (
            "金 2026-12-04 10:00"
        )


def test_the_command_line_speaks_japanese(capsys) -> None:
    from imtheboss.worker.cli import main

    main(["simulate", "--players", "3", "--seed", "1", "--lang", "ja"])
    assert "でゲームが始まります" in capsys.readouterr().out


def test_a_japanese_auto_reply_is_not_read_as_a_move() -> None:
    from imtheboss.web.replies.screen import auto_subject

    assert auto_subject("自動応答: Re: [アイム・ザ・ボス！] Friday：あなたの手番")
    assert not auto_subject("Re: [アイム・ザ・ボス！] Friday：あなたの手番")
