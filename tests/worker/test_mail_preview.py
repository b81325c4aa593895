"""``imtheboss mail preview``: the console script, run as an operator or a translator runs it
(no database, no broker set), writes one ``.eml`` per kind of mail as the worker composes it, in
the language asked; the engine imports nothing of the web or the worker to offer it."""

from __future__ import annotations

import re
import subprocess
import sys
from email import policy
from email.parser import BytesParser

import pytest
from imtheboss.web.mail.kinds import KINDS as MAIL_KINDS
from imtheboss.web.mail.preview import KINDS, LANGUAGES
from support.mail_preview import run_preview


def test_one_eml_per_kind_as_the_worker_composes_it(tmp_path) -> None:
    out = tmp_path / "mail"
    done = run_preview(tmp_path, "--lang", "zh_Hans", "--out", str(out))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    files = sorted(out.glob("*.eml"))
    assert [str(f) for f in files] == done.stdout.decode().split()
    kinds = {f.stem for f in files}
    assert {"invited", "place_marker", "your_turn", "deal_closed", "game_over"} <= kinds
    assert kinds <= KINDS
    for path in files:
        mail = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        assert mail["To"].addresses[0].domain == "example.org"
        assert "我是大老板" in str(mail["Subject"]), path.name
        assert mail.get_body(("plain",)) is not None and mail.get_body(("html",)) is not None
        assert "https://boss.example.org" in mail.get_body(("plain",)).get_content()
    asked = BytesParser(policy=policy.default).parsebytes((out / "place_marker.eml").read_bytes())
    assert str(asked["Reply-To"]).startswith("play+")
    assert str(asked["Reply-To"]).endswith("@boss.example.org")
    assert not (tmp_path / "instance").exists() or not any((tmp_path / "instance").iterdir())


def test_an_unknown_language_is_refused(tmp_path) -> None:
    done = run_preview(tmp_path, "--lang", "fr", "--out", str(tmp_path / "mail"))
    assert done.returncode == 2 and b"invalid choice" in done.stderr
    assert not (tmp_path / "mail").exists()


def test_the_engine_imports_nothing_of_the_web_or_the_worker() -> None:
    code = (
        "import sys, pkgutil, importlib, imtheboss.engine as e;"
        "[importlib.import_module('imtheboss.engine.' + m.name) for m in pkgutil.iter_modules("
        "e.__path__)];"
        "print([m for m in sys.modules if m.startswith(('imtheboss.web', 'imtheboss.worker'))])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert done.stdout.decode().strip() == "[]"


TO_AN_ADDRESS = {"organiser", "email_changed", "seat_passed", "sign_in"}
# A card as the engine names it (``investor:G``, ``family:W@1``) or by its number: never in mail.
RAW_CARD = re.compile(r"\b(investor|family|travel|recruit|boss|stop):[A-Z*]|\bcard \d+", re.I)
HTML_LANG = {
    "en": 'lang="en"',
    "zh_Hans": 'lang="zh-Hans"',
    "zh_Hant": 'lang="zh-Hant"',
    "ja": 'lang="ja"',
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_kind_in_every_language_with_its_headers(tmp_path, lang: str) -> None:
    done = run_preview(tmp_path, "--lang", lang, "--out", str(tmp_path / "mail"))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    mails = {
        path.stem: BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        for path in (tmp_path / "mail").glob("*.eml")
    }
    assert set(mails) == KINDS
    assert set(MAIL_KINDS) < set(mails)
    for kind, mail in mails.items():
        want = "auto-replied" if kind == "reply_answer" else "auto-generated"
        assert mail["Auto-Submitted"] == want, kind
        if kind not in TO_AN_ADDRESS:  # a seat's mail
            assert str(mail["Reply-To"]).endswith("@boss.example.org"), kind
            assert mail["List-Id"].endswith(".boss.example.org>"), kind
        html = mail.get_body(("html",)).get_content()
        assert HTML_LANG[lang] in html, kind
        for part in (html, mail.get_body(("plain",)).get_content(), str(mail["Subject"])):
            assert not RAW_CARD.search(part), (kind, RAW_CARD.search(part))
    # one negotiation, one thread: a branch of the game's
    game = mails["invited"]["References"]
    deal = {mails[k]["In-Reply-To"] for k in ("deal_opened", "offer", "last_call", "deal_closed")}
    assert len(deal) == 1 and deal != {game}
    for kind in ("deal_opened", "offer", "last_call", "deal_closed"):
        assert mails[kind]["References"].split() == [game, *deal], kind
    # the answer to a reply threads on that reply, in the game's thread
    assert mails["reply_answer"]["References"].split()[0] == game


def test_a_part_with_a_line_too_long_for_smtp_goes_in_short_lines() -> None:
    """A part goes 8bit unless a line is past 998 bytes: then encoded in lines of at most 76
    (a 996-character base64 line is what spam filters count against a mail)."""
    from imtheboss.web.mail.compose import body_part

    short = body_part("<p>你好</p>\n" * 3, "html")
    assert short["Content-Transfer-Encoding"] == "8bit"
    long = body_part("<p>" + "庄家" * 400 + "</p>\n", "html")
    assert long["Content-Transfer-Encoding"] in ("base64", "quoted-printable")
    assert max(len(line) for line in long.as_string().splitlines()) <= 78
    assert long.get_content().rstrip() == "<p>" + "庄家" * 400 + "</p>"
