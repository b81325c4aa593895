"""What every mail carries so that providers trust it and a player's mail app files it well:
``Auto-Submitted: auto-generated`` (RFC 3834), a ``List-Id`` and a ``Reply-To`` on each mail
to a seat (news included: a reply to it is answered, never bounced), the ``From`` name and the
HTML's ``lang`` in the seat's language, a ``<head>`` with its charset, the ``-- `` signature
separator, a footer that says "unsubscribe", and the reply words as separate items."""

from __future__ import annotations

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.replies.apply import apply_reply
from sqlalchemy import select
from support.reply_game import PLAYERS, REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


def _invitation(app, locale: str = ""):
    """A new game's invitation to its second seat, whose language is ``locale``."""
    with app.app_context():
        created = create_game("Friday", PLAYERS)
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == created.game_id, Seat.seat_index == 1)
        ).scalar_one()
        seat.locale = locale
        db.session.commit()
        row = db.session.execute(
            select(Notification).where(
                Notification.game_id == created.game_id,
                Notification.seat_index == 1,
                Notification.kind == "invited",
            )
        ).scalar_one()
        return created.game_id, compose(get_game(created.game_id), seat, [row])


def test_a_seat_mail_carries_auto_submitted_list_id_and_reply_to(app) -> None:
    gid, msg = _invitation(app)
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg["List-Id"] == f'"Friday" <{gid.lower()}.boss.example.org>'
    assert str(msg["Reply-To"]).startswith("play+") and "@boss.example.org" in msg["Reply-To"]
    assert str(msg["From"]) == "I'm the Boss! <boss@localhost>"


@pytest.mark.parametrize(
    ("locale", "lang", "name"),
    [
        ("", "en", "I'm the Boss!"),
        ("zh_Hans", "zh-Hans", "我是大老板！"),
        ("zh_Hant", "zh-Hant", "我是大老闆！"),
    ],
)
def test_the_html_has_a_head_charset_and_the_seats_language(app, locale, lang, name) -> None:
    _gid, msg = _invitation(app, locale)
    html = msg.get_body(("html",)).get_content()
    assert f'<html lang="{lang}"><head><meta charset="utf-8">' in html and "</head>" in html
    assert msg["From"].addresses[0].display_name == name
    assert msg["From"].addresses[0].addr_spec == "boss@localhost"


def test_the_footer_says_unsubscribe_after_a_signature_separator(app) -> None:
    _gid, msg = _invitation(app)
    text = msg.get_body(("plain",)).get_content()
    assert "\n-- \n" in text and "\n--\n" not in text
    assert "Unsubscribe from this game: http://" in text
    for part in (text, msg.get_body(("html",)).get_content()):
        assert "Stop these emails" not in part


def test_reply_words_are_separate_items_in_html(app) -> None:
    a = asked(app)
    html = a.mail.get_body(("html",)).get_content()
    assert "</code><code" not in html and "<li><code>" in html
    assert a.mail["Auto-Submitted"] == "auto-generated" and a.mail["List-Id"]


def test_a_reply_to_a_news_mail_is_answered_with_what_works_now(app) -> None:
    """An invitation asks nothing, yet a reply to it reaches the game: it is answered (in the
    mail's thread) with the words that work now, and nothing is bounced."""
    gid, msg = _invitation(app)
    reply = raw_mail(
        "Thanks, see you there!\n\n" + quoted(),
        sender="bill@example.org",
        to=str(msg["Reply-To"]),
        in_reply_to=str(msg["Message-ID"]),
    )
    with app.app_context():
        outcome = apply_reply(reply)
    assert outcome.status != "refused", outcome
    [row] = answers(app)
    assert row.to_email == "bill@example.org"
    with app.app_context():
        answer = compose(db.session.get(Game, gid), None, [row])
    assert str(msg["Message-ID"]) in str(answer["References"])
    assert answer["Auto-Submitted"] == "auto-replied"
    assert answer["List-Id"] == msg["List-Id"] and str(answer["Reply-To"]).startswith("play+")
    text = answer.get_body(("plain",)).get_content()
    assert "We could not read a move in your reply" in text and "Thanks, see you there!" in text


def test_a_word_in_a_reply_to_an_invitation_acts_on_what_was_open_then(app) -> None:
    """The first player's invitation asks nothing itself (its own mail asks for the marker),
    yet ``place 5`` in a reply to it places the marker: the address names the newest window
    open when the invitation was made (A7)."""
    with app.app_context():
        gid = create_game("Friday", PLAYERS).game_id
        first = db.session.execute(
            select(Notification.seat_index).where(
                Notification.game_id == gid, Notification.kind == "place_marker"
            )
        ).scalar_one()
        row = db.session.execute(
            select(Notification).where(
                Notification.game_id == gid,
                Notification.kind == "invited",
                Notification.seat_index == first,
            )
        ).scalar_one()
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == first)
        ).scalar_one()
        msg, email = compose(get_game(gid), seat, [row]), seat.email
    reply = raw_mail("place 5\n\n" + quoted(), sender=email, to=str(msg["Reply-To"]))
    with app.app_context():
        assert apply_reply(reply).status == "done"
        assert get_game(gid).last_seq > 1
