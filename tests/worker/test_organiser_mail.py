"""Mail to an address rather than a seat, sent by the real worker over SMTP: the organiser's
confirmation (then, and only then, the players' invitations) and the notice to a seat's old
address when the organiser changes it."""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import set_seat_email
from imtheboss.web.models import Notification, db
from sqlalchemy import select
from support.organiser import confirm, confirm_link, mail_text
from support.worker import players, wait_for

ORGANISER = "organiser@example.net"
SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def _rows(game_id: str) -> list[Notification]:
    out = list(
        db.session.execute(
            select(Notification).where(Notification.game_id == game_id).order_by(Notification.id)
        ).scalars()
    )
    db.session.rollback()
    return out


def test_the_players_are_invited_once_the_organiser_confirms(app, smtp, worker) -> None:
    seats = players("confirm")
    client = app.test_client()
    answer = client.post(
        "/api/games",
        json={
            "title": "Club night",
            "players": [{"name": n, "email": e} for n, e in seats],
            "creator_email": ORGANISER,
            "options": SLOW,
        },
    )
    assert answer.status_code == 201, answer.get_json()
    gid = answer.get_json()["game_id"]
    (mail,) = wait_for(lambda: smtp.to(ORGANISER), 30, what="the organiser's mail")
    text = mail_text(mail)
    assert "Club night" not in str(mail["Subject"]) and "Club night" not in text
    assert answer.get_json()["admin_token"] in text
    with app.app_context():  # the worker marks the row sent just after the SMTP server has it
        (row,) = wait_for(
            lambda: [r for r in _rows(gid) if r.email_state == "sent"], 10, what="the row sent"
        )
        assert row.kind == "organiser" and len(_rows(gid)) == 1
        assert "link" not in row.body  # the admin link left the database once mailed
    assert not any(smtp.to(e) for _, e in seats)  # nobody was invited: no row was written

    confirm(client, confirm_link(text, gid))

    def invitations() -> list:
        found = [[m for m in smtp.to(e) if "invited" in str(m["Subject"])] for _, e in seats]
        return all(found) and [mails[0] for mails in found]  # the first player also gets a turn

    for msg in wait_for(invitations, 30, what="the three invitations"):
        assert str(msg["Subject"]).endswith("Club night: you are invited")
        assert ORGANISER in mail_text(msg)  # who sent it, to write to with questions
    assert len(smtp.to(ORGANISER)) == 1


def test_the_old_address_hears_of_an_email_change(app, smtp, worker) -> None:
    seats = players("moved")
    with app.app_context():
        gid = create_game("Moved", seats, SLOW, creator_email=ORGANISER, seed=3).game_id
        wait_for(lambda: all(smtp.to(e) for _, e in seats), 30, what="the invitations")
        set_seat_email(gid, 2, "new.address@example.net")
    (notice,) = wait_for(
        lambda: [m for m in smtp.to(seats[2][1]) if "address was changed" in str(m["Subject"])],
        30,
        what="the notice to the old address",
    )
    text = mail_text(notice)
    assert seats[2][0] in text and ORGANISER in text and "Moved" in str(notice["Subject"])
    assert "/g/" not in text  # no link into the seat
    (invited,) = wait_for(lambda: smtp.to("new.address@example.net"), 30, what="the invitation")
    assert f"/g/{gid}/s/" in mail_text(invited)  # the seat's new link, to the new address only
