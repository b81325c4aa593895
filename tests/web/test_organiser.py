"""The organiser: a game made through the pages or the API sends no invitation until the
organiser confirms their own address by the link mailed to it (with the admin link); windows
have a least length; the organiser cannot take a seat over silently (a resend mails the new
link to the seat's address only, and the old address hears of an email change)."""

from __future__ import annotations

import re
from datetime import timedelta
from email.message import EmailMessage
from urllib.parse import urlsplit

import pytest
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import CommandRecord, Deadline, EventRecord, Game, Notification, Seat, db
from imtheboss.web.say.display import page_time
from sqlalchemy import func, select
from support.deal import PLAYERS
from support.organiser import ADMIN, confirm, confirm_link, csrf_of, mail_text, new_game_form

ORGANISER = "org@example.org"
API_PLAYERS = [{"name": n, "email": e} for n, e in PLAYERS]
SPAM = "BUY CHEAP PILLS at spam.example"


def _count(model, **where) -> int:
    query = select(func.count()).select_from(model)
    for name, value in where.items():
        query = query.where(getattr(model, name) == value)
    return db.session.execute(query).scalar_one()


def _rows(gid: str, kind: str) -> list[Notification]:
    return list(
        db.session.execute(
            select(Notification)
            .where(Notification.game_id == gid, Notification.kind == kind)
            .order_by(Notification.id)
        ).scalars()
    )


def _mail(gid: str, kind: str) -> EmailMessage:
    """The mail the worker would send for the game's one row of ``kind`` (to an address)."""
    (row,) = _rows(gid, kind)
    return compose(get_game(gid), None, [row])


def _snapshot(gid: str) -> tuple:
    game = get_game(gid)
    db.session.refresh(game)
    return (
        game.status,
        game.last_seq,
        _count(EventRecord, game_id=gid),
        _count(Notification, game_id=gid),
        _count(Deadline, game_id=gid),
        tuple(s.token_hash for s in db.session.execute(select(Seat)).scalars()),
    )


def _create_by_api(client, **fields) -> dict:
    body = {"title": SPAM, "players": API_PLAYERS, "creator_email": ORGANISER, **fields}
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


# -- confirming the organiser's address ------------------------------------------------------


def test_the_api_needs_the_organisers_address(app, client) -> None:
    for creator in (None, "", "nope"):
        body = {"title": "t", "players": API_PLAYERS}
        if creator is not None:
            body["creator_email"] = creator
        response = client.post("/api/games", json=body)
        assert response.status_code == 400, response.get_json()
        assert "organiser" in response.get_json()["error"]["message"]
    with app.app_context():
        assert _count(Game) == 0 and _count(Notification) == 0


def test_nothing_goes_to_the_players_before_the_organiser_confirms(app, client, clock) -> None:
    created = _create_by_api(client, options={"windows": {"turn": 3600}})
    gid = created["game_id"]
    assert created["status"] == "unconfirmed"
    with app.app_context():
        # one mail, to the organiser; no invitation, no event, no window running
        rows = list(db.session.execute(select(Notification)).scalars())
        assert [(r.kind, r.to_email, r.seat_index) for r in rows] == [("organiser", ORGANISER, -1)]
        assert _count(EventRecord) == 0 and _count(Deadline) == 0
        msg = _mail(gid, "organiser")
        text = mail_text(msg)
    assert msg["To"] == ORGANISER
    # sender-chosen text stays out of mail to an address nobody has confirmed yet
    for chosen in (SPAM, *(name for name, _ in PLAYERS)):
        assert chosen not in str(msg["Subject"]) and chosen not in text
    assert "3 players" in text
    link = confirm_link(text, gid)
    admin = ADMIN.search(text)
    assert admin and admin.group(0).endswith(created["admin_token"])
    # until it is confirmed the game takes no command and shows nothing
    api = {"Authorization": f"Bearer {created['admin_token']}"}
    answer = client.get(f"/api/games/{gid}", headers=api)
    assert answer.status_code == 409 and answer.get_json()["error"]["code"] == "unconfirmed"
    organiser = app.test_client()
    assert organiser.get(urlsplit(admin.group(0)).path).status_code == 303
    page = organiser.get(f"/g/{gid}/admin")
    assert page.status_code == 200 and ORGANISER in page.text and "<form" not in page.text
    token = csrf_of(organiser.get("/new").text)  # the session's token
    for action in ("pause", "resume", "seat/0/resend"):
        assert (
            organiser.post(f"/g/{gid}/admin/{action}", data={"csrf_token": token}).status_code
            == 409
        )
    answer = organiser.post(
        f"/g/{gid}/admin/seat/0/email", data={"csrf_token": token, "email": "x@example.org"}
    )
    assert answer.status_code == 409
    assert organiser.get(f"/g/{gid}").status_code == 409
    with app.app_context():
        before = _snapshot(gid)
    # a mail scanner opens the link: GET and HEAD confirm nothing
    scanner = app.test_client()
    assert scanner.get(link).status_code == 200 and scanner.head(link).status_code == 200
    assert scanner.post(link).status_code == 400  # no CSRF token: refused
    assert app.test_client().get(link[:-3] + "abc").status_code == 403
    with app.app_context():
        assert _snapshot(gid) == before

    # two days later the organiser confirms: the game starts now, the invitations go out
    clock.advance(days=2)
    answer = confirm(app.test_client(), link)
    assert "3" in answer.text
    with app.app_context():
        game = get_game(gid)
        assert game.status == "active" and game.last_seq >= 1
        invited = _rows(gid, "invited")
        assert sorted(r.seat_index for r in invited) == [0, 1, 2]
        assert all(r.body["link"].startswith(f"http://testserver/g/{gid}/s/") for r in invited)
        (deadline,) = db.session.execute(select(Deadline)).scalars()
        assert deadline.due_at == clock.now + timedelta(hours=1)  # the window runs from now
        invitation = compose(
            game, db.session.get(Seat, _seat_id(gid, 1)), [r for r in invited if r.seat_index == 1]
        )
        assert ORGANISER in mail_text(invitation)  # the invitation says who sent it
        after = _snapshot(gid)
    # each seat's link works; confirming again changes nothing
    seat_link = invited[0].body["link"]
    assert app.test_client().get(seat_link).status_code == 303
    again = app.test_client()
    page = again.get(link)
    assert page.status_code == 200 and "confirmed already" in page.text and "<form" not in page.text
    token = csrf_of(again.get("http://testserver/new").text)
    assert again.post(link, data={"csrf_token": token}).status_code == 200
    with app.app_context():
        assert _snapshot(gid) == after and len(_rows(gid, "invited")) == 3
    assert client.get(f"/api/games/{gid}", headers=api).status_code == 200


def _seat_id(gid: str, index: int) -> int:
    return db.session.execute(
        select(Seat.id).where(Seat.game_id == gid, Seat.seat_index == index)
    ).scalar_one()


def test_the_form_needs_the_organisers_address_and_mails_the_admin_link(app, client) -> None:
    data = new_game_form(client, PLAYERS, title="Friday deals")
    refused = client.post("/new", data=data)
    assert refused.status_code == 400
    assert "email address is needed" in refused.text
    with app.app_context():
        assert _count(Game) == 0
    created = client.post("/new", data={**data, "creator_email": ORGANISER})
    assert created.status_code == 303, created.text[:2000]
    created = client.get(created.headers["Location"])
    assert created.status_code == 200, created.text[:2000]
    assert ORGANISER in created.text
    assert "/admin/" not in created.text and "/s/" not in created.text  # both go by mail only
    with app.app_context():
        gid = db.session.execute(select(Game.id)).scalar_one()
        assert _rows(gid, "invited") == []
        text = mail_text(_mail(gid, "organiser"))
    assert client.get(f"/g/{gid}/admin").status_code == 200  # this browser is the organiser
    confirm(client, confirm_link(text, gid))
    with app.app_context():
        assert len(_rows(gid, "invited")) == 3


def test_direct_callers_of_create_game_need_no_confirmation(app) -> None:
    with app.app_context():
        created = create_game("Direct", PLAYERS)
        assert get_game(created.game_id).status == "active"
        assert len(_rows(created.game_id, "invited")) == 3
        with pytest.raises(ServiceError) as refused:
            create_game("No organiser", PLAYERS, confirmed=False)
        assert refused.value.status == 400


# -- the least window length ------------------------------------------------------------------


def test_windows_shorter_than_the_least_are_refused(app, client) -> None:
    with app.app_context():
        for windows in ({"turn": 1}, {"stop": 59}, {"negotiation": 30}):
            with pytest.raises(ServiceError) as refused:
                create_game("Fast", PLAYERS, {"windows": windows})
            assert refused.value.status == 400 and "60 seconds" in refused.value.message
        create_game("Minute", PLAYERS, {"windows": {"turn": 60}})
        before = (_count(Game), _count(Notification))
        assert before[0] == 1
    answer = client.post(
        "/api/games",
        json={
            "players": API_PLAYERS,
            "creator_email": ORGANISER,
            "options": {"windows": {"turn": 1}},
        },
    )
    assert answer.status_code == 400 and "60 seconds" in answer.get_json()["error"]["message"]
    # a third of a second: the form makes it 1 second
    data = new_game_form(client, PLAYERS, creator_email=ORGANISER, turn_hours="0.0001")
    answer = client.post("/new", data=data)
    assert answer.status_code == 400 and "60 seconds" in answer.text
    with app.app_context():
        assert (_count(Game), _count(Notification)) == before


@pytest.mark.parametrize("app_config", [{"MIN_WINDOW_SECONDS": 1}])
def test_a_setting_lowers_the_least_window_for_tests(app) -> None:
    with app.app_context():
        create_game("Fast", PLAYERS, {"windows": {"turn": 1}})
        assert _count(Game) == 1


# -- the organiser cannot take a seat over silently ------------------------------------------


def test_the_organiser_never_sees_a_seat_link_and_the_old_address_hears(app, client) -> None:
    with app.app_context():
        created = create_game("Takeover", PLAYERS, creator_email=ORGANISER)
    gid = created.game_id
    organiser = app.test_client()
    assert organiser.get(f"/g/{gid}/admin/{created.admin_token}").status_code == 303
    token = csrf_of(organiser.get(f"/g/{gid}/admin").text)
    old = PLAYERS[1][1]
    # The organiser puts their own address on seat 1 and resends its invitation.
    url = f"/g/{gid}/admin/seat/1"
    answer = organiser.post(f"{url}/email", data={"csrf_token": token, "email": ORGANISER})
    assert answer.status_code == 303
    resent = organiser.post(f"{url}/resend", data={"csrf_token": token})
    assert resent.status_code == 200 and ORGANISER in resent.text
    with app.app_context():
        newest = _rows(gid, "invited")[-1]
        assert newest.seat_index == 1
        new_token = newest.body["link"].rsplit("/", 1)[1]
        notice = _mail(gid, "email_changed")
        seat = db.session.get(Seat, _seat_id(gid, 1))
        signed = re.escape(f"/g/{gid}/m/")
    # The new link went to the seat's address (the invitation row of seat 1), never to a page.
    pages = [resent.text]
    for path in ("/admin", "", "/history", "/deals", "/fragment"):
        answer = organiser.get(f"/g/{gid}{path}")
        assert answer.status_code == 200, path
        pages.append(answer.text)
    api = {"Authorization": f"Bearer {created.admin_token}"}
    for path in ("", "/events"):
        answer = client.get(f"/api/games/{gid}{path}", headers=api)
        assert answer.status_code == 200
        pages.append(answer.get_data(as_text=True))
    for text in pages:
        assert new_token not in text
        assert f"/g/{gid}/s/" not in text and not re.search(signed, text)
    assert seat.email == ORGANISER
    # The old address was told, in plain words: what changed and whom to ask.
    assert notice["To"] == old
    text = mail_text(notice)
    assert "Bill" in text and ORGANISER in text and "changed" in text
    assert "/s/" not in text and f"/g/{gid}/m/" not in text  # no way into the seat
    assert ORGANISER not in str(notice["Subject"])


def test_a_new_address_takes_the_seat_from_whoever_held_the_old_link(app) -> None:
    """Fixing an invitation sent to the wrong person: the seat gets a new link, mailed to the
    new address; the old link and the browser it signed in hold the seat no more."""
    with app.app_context():
        created = create_game("Wrong person", PLAYERS, creator_email=ORGANISER)
    gid = created.game_id
    wrong = app.test_client()  # whoever got the first invitation, signed in with its link
    assert wrong.get(f"/g/{gid}/s/{created.seat_tokens[2]}").status_code == 303
    assert "Carla" in wrong.get(f"/g/{gid}").text
    organiser = app.test_client()
    organiser.get(f"/g/{gid}/admin/{created.admin_token}")
    token = csrf_of(organiser.get(f"/g/{gid}/admin").text)
    answer = organiser.post(
        f"/g/{gid}/admin/seat/2/email", data={"csrf_token": token, "email": "right@example.org"}
    )
    assert answer.status_code == 303
    with app.app_context():
        invited = _rows(gid, "invited")[-1]
        assert invited.seat_index == 2 and invited.to_email in (None, "")
        link = invited.body["link"]
    assert app.test_client().get(f"/g/{gid}/s/{created.seat_tokens[2]}").status_code == 403
    assert wrong.get(f"/g/{gid}").status_code == 403
    right = app.test_client()
    assert right.get(urlsplit(link).path).status_code == 303
    assert right.get(f"/g/{gid}").status_code == 200


def test_fixing_an_email_to_the_same_address_tells_nobody(app) -> None:
    with app.app_context():
        created = create_game("Same", PLAYERS, creator_email=ORGANISER)
    organiser = app.test_client()
    gid = created.game_id
    organiser.get(f"/g/{gid}/admin/{created.admin_token}")
    token = csrf_of(organiser.get(f"/g/{gid}/admin").text)
    answer = organiser.post(
        f"/g/{gid}/admin/seat/1/email", data={"csrf_token": token, "email": PLAYERS[1][1]}
    )
    assert answer.status_code == 303
    with app.app_context():
        assert _rows(gid, "email_changed") == []
        assert _count(CommandRecord) == 0


def test_the_organiser_s_mails_of_two_games_are_told_apart(app, client, clock) -> None:
    """Two games made by one organiser: each confirmation mail names its game in the subject
    and body by what the server chose (its code, when it was made), never by the title."""
    first = _create_by_api(client)["game_id"]
    clock.advance(minutes=7)
    second = _create_by_api(client)["game_id"]
    with app.app_context():
        mails = [_mail(gid, "organiser") for gid in (first, second)]
        made = [page_time(get_game(gid).created_at, "UTC") for gid in (first, second)]
    assert made[0] != made[1] and all(
        m in str(msg["Subject"]) for m, msg in zip(made, mails, strict=True)
    )
    subjects = [str(m["Subject"]) for m in mails]
    assert subjects[0] != subjects[1]
    for gid, msg in zip((first, second), mails, strict=True):
        text = mail_text(msg)
        assert gid in str(msg["Subject"]) and f"This game's code is {gid};" in text
        assert SPAM not in str(msg["Subject"]) and SPAM not in text
