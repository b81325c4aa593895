"""The signed reply address of a decision: every mail that asks something carries it as its
``Reply-To`` and ends with the words that work, in the seat's language; the token names game,
seat, the seat token's fingerprint and the window, and a changed byte breaks it."""

from __future__ import annotations

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.games.seats import resend_invitation
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from imtheboss.web.replies.address import BadReplyAddress, read_address, reply_address
from sqlalchemy import select
from support.reply_game import asked

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


@pytest.fixture
def app_config():
    return {"MAIL_REPLIES": True, "MAIL_DOMAIN": "boss.example.org"}


def _first_mail(app, locale: str = ""):
    """The place-the-marker mail of the first player, composed: ``(created, seat, window,
    mail)``; ``SPACE`` holds the space it suggests first."""
    first = asked(app, locale)
    SPACE[:] = [first.first_space]
    return first.created, first.seat, first.window, first.mail


SPACE: list[int] = []


def test_an_asking_mail_has_a_signed_reply_to_naming_its_decision(app) -> None:
    created, seat, window, msg = _first_mail(app)
    address = str(msg["Reply-To"])
    local, _at, domain = address.partition("@")
    assert domain == "boss.example.org" and local.startswith("play+") and len(local) <= 64
    with app.app_context():
        ticket = read_address(address)
        assert (ticket.game_id, ticket.seat, ticket.window) == (created.game_id, seat, window)
        row = db.session.execute(select(Seat).where(Seat.seat_index == seat)).scalar_one()
        assert ticket.matches(row)
    text = msg.get_body(("plain",)).get_content()
    place = f"place {SPACE[0]}"  # the example names the space the mail suggests first
    assert "replying to this mail" in text and place in text and "chat: …" in text
    assert place in msg.get_body(("html",)).get_content()


def test_the_words_are_in_the_seats_language(app) -> None:
    _created, _seat, _window, msg = _first_mail(app, "zh_Hant")
    text = msg.get_body(("plain",)).get_content()
    assert f"放置 {SPACE[0]}" in text and "聊天：…" in text and "place " not in text


def test_a_tampered_or_foreign_token_is_refused(app) -> None:
    _created, _seat, _window, msg = _first_mail(app)
    address = str(msg["Reply-To"])
    local, _at, domain = address.partition("@")
    head, sig = local.rsplit(".", 1)
    # the signature's first character (its last may differ only in unused padding bits)
    flipped = f"{head}.{'A' if sig[0] != 'A' else 'B'}{sig[1:]}"
    with app.app_context():
        for bad in (f"{flipped}@{domain}", f"{local}@other.example.org", f"boss@{domain}"):
            with pytest.raises(BadReplyAddress):
                read_address(bad)
        # a window's id changed in the payload: the signature no longer holds
        other = "8" if head[-1] == "9" else "9"
        with pytest.raises(BadReplyAddress):
            read_address(f"{head[:-1]}{other}.{sig}@{domain}")


def test_a_rotated_seat_token_outdates_the_address(app) -> None:
    created, seat, window, _msg = _first_mail(app)
    with app.app_context():
        row = db.session.execute(select(Seat).where(Seat.seat_index == seat)).scalar_one()
        ticket = read_address(reply_address(created.game_id, row, window))
        resend_invitation(created.game_id, seat)
        row = db.session.execute(select(Seat).where(Seat.seat_index == seat)).scalar_one()
        assert not ticket.matches(row)


def test_news_and_invitations_carry_the_seats_address_and_no_words(app) -> None:
    """A mail that asks nothing still has the seat's ``Reply-To`` (a reply is answered, never
    bounced), but lists no reply words."""
    with app.app_context():
        create_game("Friday", PLAYERS)
        row = db.session.execute(
            select(Notification).where(Notification.kind == "invited", Notification.seat_index == 1)
        ).scalar_one()
        seat = db.session.execute(select(Seat).where(Seat.seat_index == 1)).scalar_one()
        msg = compose(get_game(row.game_id), seat, [row])
        assert read_address(str(msg["Reply-To"])).seat == 1
    assert "replying to this mail" not in msg.get_body(("plain",)).get_content()
