"""Signing in by email (imtheboss.web.players.signin): the form answers the same whatever the
address, the mailed link's GET and HEAD change nothing, only the POST of its page signs in, once,
with a grace for a double click from the same browser; links expire and are bound to their address;
the sign-in mail goes to an address with seats only (the worker's task, run here)."""

from __future__ import annotations

import importlib
import re

from imtheboss.web.games.create import create_game
from imtheboss.web.models import OutboxMail, Seat, db
from imtheboss.web.players.people import Player, SignInLink
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import select
from support.organiser import csrf_of
from support.sign_in import ask_link, newest_link, press

PLAYER = "amy@example.org"
STRANGER = "nobody@example.org"
PLAYERS = [("Amy", PLAYER), ("Bill", "bill@example.org")]
_CSRF = re.compile(r'name="csrf_token"[^>]*value="[^"]+"')


def _rows(app) -> list[tuple]:
    with app.app_context():
        return [
            (r.email, r.mail_state, r.used_at, r.used_by)
            for r in db.session.execute(select(SignInLink).order_by(SignInLink.email)).scalars()
        ]


def test_the_answer_is_the_same_whether_the_address_has_games(app, client):
    with app.app_context():
        create_game("A game", PLAYERS)
    known = ask_link(client, PLAYER)
    unknown = ask_link(app.test_client(), STRANGER)
    assert known.status_code == unknown.status_code == 200
    assert _CSRF.sub("", known.text) == _CSRF.sub("", unknown.text)
    assert "sign-in link is on its way" in known.text
    # the web did the same work for both: one row each, nothing decided yet
    assert [(e, s) for e, s, _u, _b in _rows(app)] == [(PLAYER, "pending"), (STRANGER, "pending")]


def test_a_malformed_address_is_refused_and_nothing_is_written(app, client):
    for bad in ("not-an-address", "a@b", "amy@example..org", "x" * 300 + "@example.org"):
        answer = ask_link(client, bad)
        assert answer.status_code == 400, bad
    no_token = client.post("/sign-in", data={"email": PLAYER})
    assert no_token.status_code == 400  # the CSRF token
    assert _rows(app) == []


def test_get_and_head_of_the_link_change_nothing_only_the_post_signs_in(app, client):
    with app.app_context():
        create_game("A game", PLAYERS)
    ask_link(client, PLAYER)
    link = newest_link(app, PLAYER)
    scanner = app.test_client()
    assert scanner.head(link).status_code == 303
    opened = scanner.get(link)
    assert opened.status_code == 303 and opened.headers["Location"].endswith("/sign-in/confirm")
    page = scanner.get("/sign-in/confirm")
    assert page.status_code == 200 and PLAYER in page.text and 'method="post"' in page.text
    assert scanner.head("/sign-in/confirm").status_code == 200
    assert [u for _e, _s, u, _b in _rows(app)] == [None]  # not used up
    assert scanner.get("/me").status_code == 303  # nor signed in
    # the player's own click, later, still works
    answer = press(client, link)
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/me")
    assert client.get("/me").status_code == 200
    assert [u is not None for _e, _s, u, _b in _rows(app)] == [True]


def test_single_use_with_a_grace_for_a_double_click_from_the_same_browser(app, client, clock):
    ask_link(client, PLAYER)
    link = newest_link(app, PLAYER)
    assert press(client, link).status_code == 303
    clock.advance(seconds=59)
    token = csrf_of(client.get("/sign-in").text)
    assert client.post("/sign-in/confirm", data={"csrf_token": token}).status_code == 303
    other = app.test_client()  # another browser with the same link, within the grace
    assert other.get(link).status_code == 303
    page = other.get("/sign-in/confirm")  # says so at once, and offers a new link
    assert page.status_code == 403 and "already used" in page.text
    assert 'action="/sign-in"' in page.text and f'value="{PLAYER}"' in page.text
    assert "Sign in as" not in page.text
    refused = other.post("/sign-in/confirm", data={"csrf_token": csrf_of(page.text)})
    assert refused.status_code == 403 and "already used" in refused.text
    assert other.get("/me").status_code == 303
    clock.advance(seconds=2)  # past the grace: the first browser too is refused
    again = client.get("/sign-in/confirm")
    assert again.status_code == 403 and "already used" in again.text
    token = csrf_of(client.get("/sign-in").text)  # signing in renewed the secret
    assert client.post("/sign-in/confirm", data={"csrf_token": token}).status_code == 403


def test_links_expire_and_are_bound_to_their_address(app, client, clock):
    ask_link(client, PLAYER)
    link = newest_link(app, PLAYER)
    signed = link.rsplit("/", 1)[1]
    serializer = URLSafeTimedSerializer(app.config["SECRET_KEY"], salt="sign-in")
    data = serializer.loads(signed)
    forged = serializer.dumps({**data, "e": STRANGER})  # signed right, for another address
    assert app.test_client().get(f"/sign-in/{forged}").status_code == 403
    assert app.test_client().get(f"/sign-in/{signed}x").status_code == 403
    other_key = URLSafeTimedSerializer("another key", salt="sign-in").dumps(data)
    assert app.test_client().get(f"/sign-in/{other_key}").status_code == 403
    opened = app.test_client()
    assert opened.get(link).status_code == 303  # kept, not pressed
    clock.advance(seconds=app.config["SIGN_IN_LINK_SECONDS"] + 1)
    late = client.get(link)
    assert late.status_code == 403 and "has expired" in late.text
    assert f'value="{PLAYER}"' in late.text and "Mail me a sign-in link" in late.text
    page = opened.get("/sign-in/confirm")
    assert page.status_code == 403 and "has expired" in page.text and "Sign in as" not in page.text
    assert app.test_client().post("/sign-in/confirm").status_code in (400, 403)
    assert [u for _e, _s, u, _b in _rows(app)] == [None]


def test_the_worker_mails_a_link_to_an_address_with_seats_only(app, client):
    importlib.import_module("imtheboss.worker.celery_app")
    from imtheboss.worker.signin_mail import send_sign_in

    with app.app_context():
        create_game("A game", PLAYERS)
    ask_link(client, PLAYER)
    ask_link(client, STRANGER)
    with app.app_context():
        ids = {r.email: r.id for r in db.session.execute(select(SignInLink)).scalars()}
        assert send_sign_in.run(ids[PLAYER]) == "sent"
        assert send_sign_in.run(ids[PLAYER]) == "done"  # at most once
        assert send_sign_in.run(ids[STRANGER]) == "skipped"
        mails = db.session.execute(select(OutboxMail)).scalars().all()
    assert [m.to for m in mails] == [PLAYER]
    body = mails[0].message.replace("=\n", "")
    assert newest_link(app, PLAYER).split("/")[-1][:40] in body
    assert [s for _e, s, _u, _b in _rows(app)] == ["sent", "skipped"]


def test_sign_out_forgets_the_address(app, client):
    ask_link(client, PLAYER)
    press(client, newest_link(app, PLAYER))
    page = client.get("/me")
    assert page.status_code == 200
    answer = client.post("/sign-out", data={"csrf_token": csrf_of(page.text)})
    assert answer.status_code == 303
    assert client.get("/me").status_code == 303


def test_signing_out_ends_a_copy_of_the_cookie_too(app, client):
    with app.app_context():
        created = create_game("A game", PLAYERS)
    gid = created.game_id
    ask_link(client, PLAYER)
    press(client, newest_link(app, PLAYER))
    page = client.get("/me")
    token = csrf_of(page.text)
    assert client.post(f"/me/open/{gid}/0", data={"csrf_token": token}).status_code == 303
    assert client.get(f"/g/{gid}").status_code == 200
    copy = app.test_client()  # the same cookie in another browser
    copy.set_cookie("session", client.get_cookie("session").value)
    assert copy.get("/me").status_code == 200 and copy.get(f"/g/{gid}").status_code == 200
    assert client.post("/sign-out", data={"csrf_token": token}).status_code == 303
    assert copy.get("/me").status_code == 303  # to the sign-in form: not signed in
    assert copy.get("/api/me").status_code == 401
    assert copy.get(f"/g/{gid}").status_code == 403  # the seat opened through /me ended too
    # the seat's own link still signs in; signing in again works
    assert copy.get(f"/g/{gid}/s/{created.seat_tokens[0]}").status_code == 303
    assert copy.get(f"/g/{gid}").status_code == 200
    ask_link(client, PLAYER)
    press(client, newest_link(app, PLAYER))
    assert client.get("/me").status_code == 200


def test_the_case_of_the_local_part_does_not_matter(app, client):
    importlib.import_module("imtheboss.worker.celery_app")
    from imtheboss.worker.signin_mail import send_sign_in

    typed = "Dora.Lee@Players.ImTheBoss.net"
    with app.app_context():
        created = create_game("A game", [("Dora", typed), ("Bill", "bill@players.imtheboss.net")])
        stored = db.session.execute(select(Seat.email).where(Seat.seat_index == 0)).scalar_one()
    assert stored == "Dora.Lee@players.imtheboss.net"  # as normal_email keeps it
    ask_link(client, "dora.lee@players.imtheboss.net")
    with app.app_context():
        row = db.session.execute(select(SignInLink)).scalar_one()
        assert send_sign_in.run(row.id) == "sent"  # the address has a seat
    press(client, newest_link(app, "dora.lee@players.imtheboss.net"))
    page = client.get("/me")
    assert page.status_code == 200 and "A game" in page.text
    answer = client.post(f"/me/open/{created.game_id}/0", data={"csrf_token": csrf_of(page.text)})
    assert answer.status_code == 303
    other = app.test_client()
    ask_link(other, "DORA.LEE@players.imtheboss.net")
    press(other, newest_link(app, "DORA.LEE@players.imtheboss.net"))
    assert "A game" in other.get("/me").text
    with app.app_context():  # one player, whatever the case it signed in with
        assert db.session.execute(select(Player.email)).scalars().all() == [
            "dora.lee@players.imtheboss.net"
        ]


def test_signing_in_renews_the_csrf_secret(app, client):
    """A CSRF token read before the sign-in (by this browser, or planted in it) no longer passes
    after it; a token of the new secret does."""
    ask_link(client, PLAYER)
    before = csrf_of(client.get("/sign-in").text)
    assert press(client, newest_link(app, PLAYER)).status_code == 303
    stale = client.post("/sign-in", data={"csrf_token": before, "email": PLAYER})
    assert stale.status_code == 400
    fresh = csrf_of(client.get("/sign-in").text)
    assert fresh != before
    assert client.post("/sign-in", data={"csrf_token": fresh, "email": PLAYER}).status_code == 200
