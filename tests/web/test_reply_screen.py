"""Screening a reply before its body is read: a trusted relay's ``Authentication-Results`` read
as RFC 8601 writes them (a version, comments, several headers); automatic mail known by its
headers or, when it has none, by its subject (never answered); a mail of very many or very deep
parts costs little and is answered, never a traceback."""

from __future__ import annotations

import time

import pytest
from imtheboss.web.games.load import get_game
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.screen import AUTO_SUBJECTS, auto_subject
from support.logs import written
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import many_parts_mail, nested_mail, quoted, raw_mail

SERVID = "mx.boss.example.org"


@pytest.fixture
def app_config():
    return {**REPLY_CONFIG, "MAIL_REPLY_AUTH_SERVID": SERVID}


def _reply(a, body: str = "place 3", **kw) -> bytes:
    kw.setdefault("sender", a.email)
    kw.setdefault("in_reply_to", str(a.mail["Message-ID"]))
    kw.setdefault("to", a.address)
    return raw_mail(body + "\n\n" + quoted(), **kw)


def _on_top(raw: bytes, *lines: str) -> bytes:
    """``raw`` with header ``lines`` put on top, as relays add theirs."""
    return "".join(line + "\r\n" for line in lines).encode() + raw


def _last_seq(app, gid: str) -> int:
    with app.app_context():
        return get_game(gid).last_seq


@pytest.mark.parametrize(
    "lines",
    [
        [f"Authentication-Results: {SERVID} 1; dkim=fail header.d=example.org"],  # a version
        [f"Authentication-Results: {SERVID} (our relay); dkim=fail header.d=example.org"],
        [f"Authentication-Results: (relay) {SERVID.upper()}; spf=pass; dmarc=fail (p=reject)"],
        [
            "Authentication-Results: other.example.net; dkim=pass",
            f"Authentication-Results: {SERVID};\r\n\tdkim=pass header.d=example.org",
            f"Authentication-Results: {SERVID} 1;\r\n\tspf=permerror smtp.mailfrom=example.org",
        ],
        [f"Authentication-Results: {SERVID}; dkim=pass ;;; garbage"],  # unreadable: not trusted
    ],
)
def test_a_failure_the_trusted_relay_reports_is_refused(app, lines) -> None:
    a = asked(app)
    seq = _last_seq(app, a.game_id)
    with app.app_context():
        outcome = apply_reply(_on_top(_reply(a), *lines))
    assert (outcome.status, outcome.reason) == ("refused", "auth_failed")
    assert _last_seq(app, a.game_id) == seq and answers(app) == []


def test_a_pass_of_the_trusted_relay_is_the_move(app) -> None:
    a = asked(app)
    header = f"Authentication-Results: {SERVID} 1 (ok); dkim=pass (good) header.d=example.org"
    with app.app_context(), written() as log:
        assert apply_reply(_on_top(_reply(a), header)).status == "done"
    assert "no Authentication-Results" not in log.getvalue()


def test_a_reply_without_the_trusted_relay_s_results_is_logged(app) -> None:
    a = asked(app)
    forged = "Authentication-Results: mx.boss.example.org.evil.net; dkim=pass"
    with app.app_context(), written() as log:
        assert apply_reply(_on_top(_reply(a), forged)).status == "done"
    assert f"no Authentication-Results of {SERVID}" in log.getvalue()


@pytest.mark.parametrize(
    "subject",
    [
        "自动回复：Re: [I'm the Boss!] Friday: a card waits for your answer",
        "自動回覆：Re: [I'm the Boss!] Friday",
        "Automatic reply: Re: [I'm the Boss!] Friday",
        "Out of Office: Re: [I'm the Boss!] Friday",
        "AUTO: Amy is away",
        "自动答复: 我在休假",
    ],
)
def test_a_header_less_auto_reply_is_never_answered(app, subject) -> None:
    a = asked(app)
    seq = _last_seq(app, a.game_id)
    with app.app_context():
        for n in range(5):  # five rounds, five notices: none answered
            raw = _reply(a, "我现在不在办公室", subject=subject, message_id=f"<ooo{n}@client>")
            outcome = apply_reply(raw)
            assert (outcome.status, outcome.reason) == ("ignored", "automatic")
    assert _last_seq(app, a.game_id) == seq and answers(app) == []


@pytest.mark.parametrize(
    "headers", [{"X-Auto-Response-Suppress": "All"}, {"Return-Path": "<>"}, {"Precedence": "junk"}]
)
def test_automatic_mail_is_known_by_its_headers(app, headers) -> None:
    a = asked(app)
    with app.app_context():
        assert apply_reply(_reply(a, headers=headers)).reason == "automatic"
    assert answers(app) == []


def test_every_listed_subject_is_known_and_replies_are_not() -> None:
    for prefix in AUTO_SUBJECTS:
        assert auto_subject(prefix.replace(":", "：") + " Re: x"), prefix
        assert auto_subject("  " + prefix.upper() + " Re: x"), prefix
    for genuine in ("Re: [I'm the Boss!] Friday", "回复：Friday", "Automatic", "Autumn game"):
        assert not auto_subject(genuine), genuine


@pytest.mark.parametrize("signed", [True, False])
def test_a_mail_of_270000_parts_costs_under_a_second_of_cpu(app, signed) -> None:
    a = asked(app)
    to = a.address if signed else a.address.replace("+", "+x", 1)
    raw = many_parts_mail(270_000, to=to, sender=a.email)
    assert len(raw) > 9_000_000
    with app.app_context():
        start = time.process_time()
        outcome = apply_reply(raw)
        spent = time.process_time() - start
    assert spent < 1.0  # an upper bound of the work a mail may cause, not a speed figure
    if signed:  # the seat's own mail: answered, the move not made
        assert (outcome.status, outcome.reason) == ("answered", "unreadable")
        assert [row.body["answer"] for row in answers(app)] == ["unreadable"]
    else:
        assert (outcome.status, outcome.reason) == ("refused", "bad_token")


def test_a_3000_deep_multipart_is_answered_without_a_traceback(app) -> None:
    a = asked(app)
    raw = nested_mail(3000, to=a.address, sender=a.email)
    seq = _last_seq(app, a.game_id)
    with app.app_context(), written() as log:
        outcome = apply_reply(raw)
    assert (outcome.status, outcome.reason) == ("answered", "unreadable")
    assert "Traceback" not in log.getvalue()
    assert _last_seq(app, a.game_id) == seq


def test_the_unreadable_answer_speaks_the_seat_s_language(app) -> None:
    from email.parser import BytesParser
    from email.policy import default

    from imtheboss.web.mail.compose import compose
    from imtheboss.web.models import Game, db

    a = asked(app, locale="zh_Hans")
    with app.app_context():
        apply_reply(many_parts_mail(300, to=a.address, sender=a.email))
    [row] = answers(app)
    with app.app_context():
        mail = compose(db.session.get(Game, row.game_id), None, [row])
    text = BytesParser(policy=default).parsebytes(mail.as_bytes()).get_body(("plain",))
    assert "我们无法读取你的回复" in text.get_content()


def test_the_docs_list_every_auto_reply_subject() -> None:
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "mail-replies.md").read_text()
    for prefix in AUTO_SUBJECTS:
        assert f"`{prefix}`" in docs, prefix
