"""What a player replying from a phone trips over: the subject their mail app wrote (回复：,
RE[2]:, Re: Re:), a reply holding only a signature or a phone footer, a chat broken over
lines, the space written with its counter word (第3格, 5号), and words in the other Chinese
script than the seat's: the answer threads with one ``Re:``, reads nothing it should not, and
answers in the seat's own script."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from imtheboss.web.games.load import load_events
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, db
from imtheboss.web.replies.answer import thread_of
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.read import line_of
from imtheboss.web.replies.words import understand
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail

ASKED = "[I'm the Boss!] Friday: Place the marker"


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


@pytest.mark.parametrize(
    "subject",
    [
        f"Re: {ASKED}",
        f"RE: Re: {ASKED}",
        f"Re[2]: {ASKED}",
        f"回复：{ASKED}",
        f"回覆: {ASKED}",
        f"答复： RE: {ASKED}",
        f"AW: {ASKED}",
        ASKED,
    ],
)
def test_the_answer_s_subject_has_one_re_whatever_the_app_wrote(subject) -> None:
    message = EmailMessage()
    message["Subject"] = subject
    assert thread_of(message)["subject"] == f"Re: {ASKED}"


def test_a_reply_without_subject_lets_the_mail_write_its_own() -> None:
    assert thread_of(EmailMessage())["subject"] == ""


@pytest.mark.parametrize(
    "body",
    [
        "\n\n-- \nAmy Li\n+1 555 0100",
        "Sent from Mail for Windows",
        "Sent with Proton Mail secure email.",
        "Envoyé de mon iPhone",
        "来自华为手机",
        "使用 iPhone 傳送",
    ],
)
def test_a_reply_of_only_a_signature_or_footer_reads_no_line(body) -> None:
    assert line_of(body + "\n\n" + quoted()) is None


def test_a_chat_broken_over_lines_on_a_phone_is_sent_whole(app) -> None:
    a = asked(app)
    body = "chat: who wants\nCashman for 3?\n\nOn Tue, 1 Dec 2026, Boss wrote:\n" + quoted()
    raw = raw_mail(body, to=a.address, sender=a.email)
    with app.app_context():
        assert apply_reply(raw).status == "done"
        [chat] = [e for e in load_events(a.game_id) if e.type == "chat"]
    assert chat.data["text"] == "who wants Cashman for 3?"


def test_a_chat_by_mail_loses_its_bidi_controls() -> None:
    reading = understand("chat: I pay \u202e5 M\u202c, \u2067fine\u2069")
    assert reading is not None and reading.text == "I pay 5 M, fine"
    assert understand("chat: \u202e") is None  # nothing left to say


@pytest.mark.parametrize("line", ["放置第3格", "放置 3 号", "放置３號", "place space 3"])
def test_the_space_may_be_written_with_its_counter_word(line) -> None:
    reading = understand(line)
    assert reading is not None and reading.space == 3


def test_words_in_the_other_script_are_understood_and_answered_in_the_seat_s(app) -> None:
    a = asked(app, "zh_Hant")
    raw = raw_mail("放置第3格\n\n" + quoted(), to=a.address, sender=a.email)
    with app.app_context():
        assert apply_reply(raw).status == "done"
    [row] = answers(app)
    with app.app_context():
        mail = compose(db.session.get(Game, row.game_id), None, [row])
    text = mail.get_body(("plain",)).get_content()
    assert "擲骰" in text and "掷骰" not in text  # the next words, in the seat's script
    roll = raw_mail("掷骰\n", to=str(mail["Reply-To"]), sender=a.email)  # 简体, from a 繁體 seat
    with app.app_context():
        assert apply_reply(roll).status == "done"
        assert [e.data["seat"] for e in load_events(a.game_id) if e.type == "die_rolled"] == [
            a.seat
        ]


def test_a_chat_keeps_its_full_width_punctuation_as_written(app) -> None:
    """Only the word ``聊天`` is read normalised: the chat text is sent as the player wrote it."""
    a = asked(app, "zh_Hant")
    raw = raw_mail("聊天：大家好，今天誰當老闆？\n\n" + quoted(), to=a.address, sender=a.email)
    with app.app_context():
        assert apply_reply(raw).status == "done"
        [chat] = [e for e in load_events(a.game_id) if e.type == "chat"]
    assert chat.data["text"] == "大家好，今天誰當老闆？"


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ("ｃｈａｔ：ＯＫ！３", "ＯＫ！３"),
        ("Chat : 100%，好", "100%，好"),
        ("chat: a\x07b\x1bc\x85d", "a b c d"),
    ],
)
def test_a_chat_s_word_is_read_normalised_and_its_text_kept(line, text) -> None:
    reading = understand(line)
    assert reading is not None and reading.verb == "chat" and reading.text == text
