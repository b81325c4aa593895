"""The answer to a reply by mail, as the seat reads it on a phone: what the move was, in words
about the game; the seat's own game link and the footer every mail has (the game's name, the
unsubscribe link); the time of the next decision in the seat's zone; all in the seat's
language, for a move made and for a reply that did nothing. A chat longer than a mail takes is
cut, and the answer says so."""

from __future__ import annotations

import re
from email.message import EmailMessage

import pytest
from imtheboss.web.games.load import load_events
from imtheboss.web.games.seats import set_status
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.players.links import _verify
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.words import MAX_CHAT
from sqlalchemy import select
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail

ZONE = {"en": "America/New_York", "zh_Hans": "Asia/Shanghai", "zh_Hant": "Asia/Taipei"}
OFFSET = {"en": "UTC-5", "zh_Hans": "UTC+8", "zh_Hant": "UTC+8"}
SAYS = {
    "en": {
        "placed": "You placed the marker on space 3.",
        "footer": "Friday on I'm the Boss!",
        "stop": "Unsubscribe from this game:",
        "open": "Open the game:",
        "cut": "longer than 500 characters, so it was cut",
        "unclear": "We could not read a move in your reply",
        "paused": "The organiser has paused the game.",
    },
    "zh_Hans": {
        "placed": "你把金钱标示物放在了交易格 3。",
        "footer": "《我是大老板》游戏“Friday”",
        "stop": "退订这局游戏的邮件：",
        "open": "打开游戏：",
        "cut": "超过了 500 个字符，因此被截断",
        "unclear": "我们没能从你的回复中读出",
        "paused": "组织者已暂停游戏。",
    },
    "zh_Hant": {
        "placed": "你把金錢標示物放在了交易格 3。",
        "footer": "《我是大老闆》遊戲「Friday」",
        "stop": "退訂這局遊戲的郵件：",
        "open": "打開遊戲：",
        "cut": "超過了 500 個字元，因此被截斷",
        "unclear": "我們沒能從你的回覆中讀出",
        "paused": "組織者已暫停遊戲。",
    },
}
# The template's English, none of which a Chinese seat may read.
ENGLISH = re.compile(
    r"Hello|Open the game|on I'm the Boss|Unsubscribe from this game|Your reply|You placed|We read"
    r"|We could not|nothing was done|is due by|You can also answer|paused|not started"
)


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


def _asked(app, lang: str):
    a = asked(app, lang)
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == a.game_id, Seat.seat_index == a.seat)
        ).scalar_one()
        seat.timezone = ZONE[lang]
        db.session.commit()
    return a


def _reply(app, a, body: str, n: int = 1) -> str:
    raw = raw_mail(body + "\n\n" + quoted(), to=a.address, sender=a.email, message_id=f"<{n}@c>")
    with app.app_context():
        return apply_reply(raw).status


def _answer(app) -> EmailMessage:
    row = answers(app)[-1]
    with app.app_context():
        return compose(db.session.get(Game, row.game_id), None, [row])


def _texts(mail: EmailMessage) -> tuple[str, str]:
    return (
        mail.get_body(("plain",)).get_content(),
        mail.get_body(("html",)).get_content(),
    )


def _own_link(app, a, text: str) -> None:
    """``text`` holds the seat's own sign-in link, and it signs in that seat."""
    found = re.search(rf"/g/{a.game_id}/m/([A-Za-z0-9._-]+)", text)
    assert found, text
    with app.app_context():
        assert _verify("seat-link", a.game_id, found.group(1)).seat_index == a.seat


def _has_footer(app, a, lang: str, mail: EmailMessage) -> None:
    says = SAYS[lang]
    plain, html = _texts(mail)
    for text in (plain, html):
        assert says["footer"] in text and says["stop"].rstrip(":：") in text
        assert f"/u/{a.game_id}/" in text
        _own_link(app, a, text)
    assert says["open"] in plain
    assert str(mail["List-Unsubscribe"]).startswith("<") and "/u/" in str(mail["List-Unsubscribe"])
    if lang != "en":
        assert not ENGLISH.search(plain), plain
        assert not ENGLISH.search(re.sub(r"<[^>]+>", " ", html)), html


@pytest.mark.parametrize("lang", list(SAYS))
def test_the_confirmation_says_the_move_with_the_seat_s_link_and_footer(app, lang) -> None:
    a = _asked(app, lang)
    assert _reply(app, a, "place 3") == "done"
    mail = _answer(app)
    plain, html = _texts(mail)
    assert SAYS[lang]["placed"] in plain and SAYS[lang]["placed"] in html
    _has_footer(app, a, lang, mail)
    # the next decision (the roll) ends at a time written in the seat's zone
    assert OFFSET[lang] in plain


@pytest.mark.parametrize("lang", list(SAYS))
@pytest.mark.parametrize("line", ["maybe later", "roll"])
def test_an_answer_that_did_nothing_has_the_link_and_footer_too(app, lang, line) -> None:
    a = _asked(app, lang)
    assert _reply(app, a, line) == "answered"
    mail = _answer(app)
    if line == "maybe later":
        assert SAYS[lang]["unclear"] in _texts(mail)[0]
    _has_footer(app, a, lang, mail)


@pytest.mark.parametrize("lang", list(SAYS))
def test_a_refusal_of_a_paused_game_is_in_the_seat_s_language(app, lang) -> None:
    a = _asked(app, lang)
    with app.app_context():
        set_status(a.game_id, "paused")
    assert _reply(app, a, "place 3") == "answered"
    mail = _answer(app)
    assert SAYS[lang]["paused"] in _texts(mail)[0]
    _has_footer(app, a, lang, mail)


@pytest.mark.parametrize("lang", list(SAYS))
def test_a_chat_too_long_for_a_mail_is_cut_and_the_answer_says_so(app, lang) -> None:
    a = _asked(app, lang)
    words = "word " * 140  # 700 characters
    assert _reply(app, a, "chat: " + words) == "done"
    with app.app_context():
        [chat] = [e for e in load_events(a.game_id) if e.type == "chat"]
    assert len(chat.data["text"]) <= MAX_CHAT and words.startswith(chat.data["text"])
    plain, html = _texts(_answer(app))
    assert SAYS[lang]["cut"] in plain and SAYS[lang]["cut"] in html


def test_a_chat_within_the_limit_is_not_said_to_be_cut(app) -> None:
    a = _asked(app, "en")
    assert _reply(app, a, "chat: " + "x" * MAX_CHAT) == "done"
    plain, _html = _texts(_answer(app))
    assert "was cut" not in plain and "You wrote in the chat" in plain


@pytest.mark.parametrize(
    ("lang", "says"), [("en", "has not started yet"), ("zh_Hant", "還沒有開始")]
)
def test_a_reply_to_a_game_not_started_is_refused_in_the_seat_s_language(app, lang, says) -> None:
    a = _asked(app, lang)
    with app.app_context():  # as if it were waiting for its organiser again
        db.session.get(Game, a.game_id).status = "unconfirmed"
        db.session.commit()
    assert _reply(app, a, "place 3") == "answered"
    plain = _texts(_answer(app))[0]
    assert says in plain and (lang == "en" or not ENGLISH.search(plain)), plain


@pytest.mark.parametrize("lang", ["zh_Hans", "zh_Hant"])
def test_a_seat_with_no_language_is_answered_in_its_address_s_default(app, lang) -> None:
    """As every other mail: a seat that chose no language reads its address's default
    (/me/settings), here a Chinese mail replied ``接受。``-style in Chinese."""
    from imtheboss.web.players.people import player_row

    a = asked(app, "")
    with app.app_context():
        player_row(a.email.lower(), create=True).locale = lang
        db.session.commit()
    assert _reply(app, a, "place 3") == "done"
    mail = _answer(app)
    plain, html = _texts(mail)
    assert SAYS[lang]["placed"] in plain and SAYS[lang]["placed"] in html
    assert not ENGLISH.search(plain), plain


FACTS = {"en": "It pays", "zh_Hans": "可得", "zh_Hant": "可得"}
WAITS = {
    "en": "what waits for you now is the first turn",
    "zh_Hans": "现在等你处理的是",
    "zh_Hant": "現在等你處理的是",
}


@pytest.mark.parametrize("lang", list(SAYS))
def test_a_move_that_leaves_the_turn_open_says_what_the_space_needs_and_pays(app, lang) -> None:
    """After placing (or rolling), the turn goes on (roll, draw or deal): the answer says what
    a deal on the marker's space needs and pays, as the turn's own mail does."""
    a = _asked(app, lang)
    assert _reply(app, a, "place 3") == "done"
    plain, html = _texts(_answer(app))
    assert FACTS[lang] in plain and FACTS[lang] in html, plain


@pytest.mark.parametrize("lang", list(SAYS))
def test_a_move_not_open_now_is_refused_naming_what_waits(app, lang) -> None:
    a = _asked(app, lang)
    assert _reply(app, a, "roll") == "answered"
    plain, _html = _texts(_answer(app))
    assert WAITS[lang] in plain, plain
