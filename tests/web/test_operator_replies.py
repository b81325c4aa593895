"""The embedded default's way in for replies: the outbox page (``/operator/mail``) shows a form
under each kept mail that asks something; a reply pasted there is applied like one sent by
mail (the move by mail, its answer kept in the outbox too). Only the operator may post it."""

from __future__ import annotations

import re

import pytest
from imtheboss.web.games.load import load_events
from imtheboss.web.models import OutboxMail, db
from support.organiser import csrf_of
from support.reply_game import REPLY_CONFIG, answers, asked

TOKEN = "operator-token-of-the-tests-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def app_config():
    return {**REPLY_CONFIG, "OPERATOR_TOKEN": TOKEN}


def _kept(app, a) -> int:
    with app.app_context():
        mail = OutboxMail(
            to=a.email,
            subject=str(a.mail["Subject"]),
            message=a.mail.as_string(),
            created_at=app.config["CLOCK"](),
        )
        db.session.add(mail)
        db.session.commit()
        return mail.id


def test_a_reply_pasted_on_the_outbox_page_is_the_move(app, client) -> None:
    a = asked(app)
    mail_id = _kept(app, a)
    page = client.get("/operator/mail", headers=BEARER)
    assert page.status_code == 200 and f"/operator/mail/{mail_id}/reply" in page.text
    posted = client.post(
        f"/operator/mail/{mail_id}/reply",
        data={"csrf_token": csrf_of(page.text), "body": "place 9"},
        headers=BEARER,
    )
    assert posted.status_code == 303 and "replied=done" in posted.headers["Location"]
    with app.app_context():
        placed = [e for e in load_events(a.game_id) if e.type == "marker_placed"]
    assert [(e.data["space"], e.data["via"]) for e in placed] == [(8, "mail")]  # space 9 as read
    [row] = answers(app)
    assert str(a.mail["Message-ID"]) in row.body["references"]  # threaded on the pasted reply
    shown = client.get(posted.headers["Location"], headers=BEARER)
    assert "The pasted reply: the move was made." in shown.text


def test_the_same_form_posted_twice_acts_once(app, client) -> None:
    """A double click: the form's one-time value makes both posts one mail (one move, one
    answer); the page's next form is another reply."""
    a = asked(app)
    mail_id = _kept(app, a)
    page = client.get("/operator/mail", headers=BEARER)
    once = re.search(r'name="once" value="([0-9a-f]{16})"', page.text).group(1)
    data = {"csrf_token": csrf_of(page.text), "body": "place 9", "once": once}
    for _ in range(2):
        posted = client.post(f"/operator/mail/{mail_id}/reply", data=data, headers=BEARER)
        assert posted.status_code == 303
    with app.app_context():
        placed = [e for e in load_events(a.game_id) if e.type == "marker_placed"]
    assert len(placed) == 1 and len(answers(app)) == 1
    again = client.get("/operator/mail", headers=BEARER).text
    assert once not in again and re.search(r'name="once" value="[0-9a-f]{16}"', again)


def test_only_the_operator_may_paste_a_reply(app, client) -> None:
    a = asked(app)
    mail_id = _kept(app, a)
    page = client.get("/operator/mail", headers=BEARER)
    other = app.test_client()
    refused = other.post(
        f"/operator/mail/{mail_id}/reply",
        data={"csrf_token": csrf_of(page.text), "body": "place 9"},
    )
    assert refused.status_code in (400, 403)
    with app.app_context():
        assert not [e for e in load_events(a.game_id) if e.type == "marker_placed"]


def test_mail_that_asks_nothing_has_no_form(app, client) -> None:
    with app.app_context():
        db.session.add(
            OutboxMail(
                to="amy@example.org",
                subject="invited",
                message="Subject: invited\n\nhello\n",
                created_at=app.config["CLOCK"](),
            )
        )
        db.session.commit()
    page = client.get("/operator/mail", headers=BEARER)
    assert page.status_code == 200 and "/reply" not in page.text
