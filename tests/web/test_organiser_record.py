"""Every organiser act is an event in the game's history (A13, real PostgreSQL): a pause, a
resume, a seat's new address and a new invitation are lines the table reads (never the
address); the acts through the JSON API with the admin token; a replace whose key was used
before answers as the first time or refuses, never drops silently; the story's headings name
each seat as it was then."""

from __future__ import annotations

import html
import re
from datetime import timedelta

from imtheboss.web.games import organiser
from imtheboss.web.games.load import get_game, load_events
from imtheboss.web.models import Seat, db
from sqlalchemy import select
from support.api_client import signed_in, stored
from support.organiser import open_deadlines

NEW = "bill.new@players.imtheboss.net"
ZOE = "zoe@players.imtheboss.net"


def _types(app, gid: str) -> list[str]:
    with app.app_context():
        types = [e.type for e in load_events(gid)]
        db.session.rollback()
        return types


def test_every_organiser_act_is_a_line_of_the_history(app, game, clock) -> None:
    created, setup, clients = game
    gid = created.game_id
    admin, csrf = signed_in(app, gid, created.admin_token, admin=True)
    before = open_deadlines(app, gid)
    url = f"/g/{gid}/admin"
    assert admin.post(f"{url}/pause", data={"csrf_token": csrf}).status_code == 303
    assert admin.post(f"{url}/pause", data={"csrf_token": csrf}).status_code == 303  # no 2nd
    # while paused the organiser still fixes an address and sends a new invitation
    email = {"csrf_token": csrf, "email": NEW}
    assert admin.post(f"{url}/seat/1/email", data=email).status_code == 303
    assert admin.post(f"{url}/seat/0/resend", data={"csrf_token": csrf}).status_code == 200
    clock.advance(hours=3)
    assert admin.post(f"{url}/resume", data={"csrf_token": csrf}).status_code == 303
    assert _types(app, gid)[1:] == [
        "game_paused",
        "seat_email_changed",
        "invitation_resent",
        "game_resumed",
        "deadlines_extended",  # the paused time does not count against anyone (A1)
    ]
    assert open_deadlines(app, gid) == {k: v + timedelta(hours=3) for k, v in before.items()}
    with app.app_context():
        assert get_game(gid).status == "active"
        bill = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 1)
        ).scalar_one()
        assert bill.email == NEW
        db.session.rollback()
    # the table reads each act in plain words; no address reaches another seat
    history = html.unescape(clients[2].get(f"/g/{gid}/history?lang=en").text)
    for line in (
        "The organiser paused the game",
        "The organiser resumed the game",
        "The organiser changed the email address of Bill",
        "The organiser sent Amy a new invitation with a new secret link",
        "Every open deadline moves 3 hours later (the game was paused)",
    ):
        assert line in history, line
    # a pause of a few seconds: said in plain words, not "0 minutes"
    assert admin.post(f"{url}/pause", data={"csrf_token": csrf}).status_code == 303
    clock.advance(seconds=5)
    assert admin.post(f"{url}/resume", data={"csrf_token": csrf}).status_code == 303
    assert _types(app, gid)[-1] == "deadlines_extended"
    history = html.unescape(clients[2].get(f"/g/{gid}/history?lang=en").text)
    assert "Every open deadline moves less than a minute later (the game was paused)" in history
    assert "0 minutes" not in history
    bearer = {"Authorization": f"Bearer {created.seat_tokens[2]}"}
    events = app.test_client().get(f"/api/games/{gid}/events", headers=bearer)
    story = clients[2].get(f"/g/{gid}/story").text
    for text in (history, events.get_data(as_text=True), story):
        assert NEW not in text and "bill@example.org" not in text
    assert "The organiser changed the email address of Bill" in html.unescape(story)


def _api(app, gid: str, token: str | None, act: str, body: dict | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"/api/games/{gid}/organiser/{act}"
    return app.test_client().post(url, json=body or {}, headers=headers)


def test_the_api_takes_the_organisers_acts_with_the_admin_token(app, world) -> None:
    w = world
    gid, admin = w.gid, w.admin
    unchanged = stored(app)
    turn = {"minutes": 90, "reason": "Bill is on a train", "seat": w.boss, "idempotency_key": "a"}
    # only the admin token: none, a seat's, another game's
    anonymous = _api(app, gid, None, "pause")
    assert (
        anonymous.status_code == 401 and "admin token" in anonymous.get_json()["error"]["message"]
    )
    for body in ({"x": 1}, [], "pause", 1):  # pause and resume take no field
        for act in ("pause", "resume"):
            answer = app.test_client().post(
                f"/api/games/{gid}/organiser/{act}",
                json=body,
                headers={"Authorization": f"Bearer {admin}"},
            )
            assert answer.status_code == 400, (act, body, answer.get_json())
    not_json = app.test_client().post(
        f"/api/games/{gid}/organiser/pause",
        data="x",
        headers={"Authorization": f"Bearer {admin}"},
    )
    assert not_json.status_code == 400
    for token in (w.tokens[0], w.other_tokens[0], "x" * 30):
        answer = _api(app, gid, token, "extend", turn)
        assert answer.status_code == 403, answer.get_json()
    assert _api(app, "nosuchgame", admin, "pause").status_code == 404
    # bad input: a clear 400, nothing changed
    for bad in (
        {**turn, "minutes": 0},
        {**turn, "minutes": "60"},
        {**turn, "minutes": 7 * 24 * 60 + 1},
        {**turn, "reason": ""},
        {**turn, "reason": "two\nlines"},
        {**turn, "window": "w0"},  # a window and a seat
        {k: v for k, v in turn.items() if k != "seat"},  # neither
        {**turn, "idempotency_key": ""},
        {**turn, "colour": "red"},
        {**turn, "seat": 7},
    ):
        answer = _api(app, gid, admin, "extend", bad)
        assert answer.status_code == 400, (bad, answer.get_json())
        assert set(answer.get_json()["error"]) == {"code", "message", "rule"}
    replace = {"seat": w.other, "name": "Zoe", "email": ZOE, "idempotency_key": "r"}
    for bad in (
        {**replace, "email": "not an address"},
        {**replace, "name": " "},
        {**replace, "seat": "1"},
        {k: v for k, v in replace.items() if k != "idempotency_key"},
    ):
        answer = _api(app, gid, admin, "replace", bad)
        assert answer.status_code == 400, (bad, answer.get_json())
    for act, body in (("extend", turn), ("replace", replace)):
        for bad_key in ("", "k" * 91, 5):
            answer = _api(app, gid, admin, act, {**body, "idempotency_key": bad_key})
            error = answer.get_json()["error"]
            assert answer.status_code == 400 and "form" not in error["message"], error
        absent = _api(app, gid, admin, act, {**body, "seat": 5})  # a 3-seat game: no seat 5
        assert absent.status_code == 404 and absent.get_json()["error"]["code"] == "no_seat"
    closed = {k: v for k, v in turn.items() if k != "seat"} | {"window": "w99"}
    answer = _api(app, gid, admin, "extend", closed)
    assert answer.status_code == 409 and answer.get_json()["error"]["code"] == "window_closed"
    assert stored(app) == unchanged
    # the acts
    due = open_deadlines(app, gid)
    answer = _api(app, gid, admin, "extend", turn)
    assert answer.status_code == 201, answer.get_json()
    (event,) = answer.get_json()["events"]
    assert event["type"] == "window_extended" and event["reason"] == "Bill is on a train"
    assert open_deadlines(app, gid) == {k: v + timedelta(minutes=90) for k, v in due.items()}
    again = _api(app, gid, admin, "extend", turn)
    assert again.status_code == 200 and again.get_json()["duplicate"] is True
    assert again.get_json()["events"] == answer.get_json()["events"]
    paused = _api(app, gid, admin, "pause")
    assert paused.status_code == 200 and paused.get_json()["status"] == "paused"
    refused = _api(app, gid, admin, "extend", {**turn, "idempotency_key": "b"})
    assert refused.status_code == 409 and refused.get_json()["error"]["code"] == "paused"
    assert _api(app, gid, admin, "replace", replace).status_code == 409
    assert _api(app, gid, admin, "resume").get_json()["status"] == "active"
    made = _api(app, gid, admin, "replace", replace)
    assert made.status_code == 201, made.get_json()
    assert made.get_json() == {"seat": w.other, "name": "Zoe", "duplicate": False}
    repeat = _api(app, gid, admin, "replace", replace)
    assert repeat.status_code == 200 and repeat.get_json()["duplicate"] is True
    other = _api(app, gid, admin, "replace", {**replace, "email": "zed@players.imtheboss.net"})
    assert other.status_code == 409 and other.get_json()["error"]["code"] == "key_reused"
    assert _types(app, gid)[-4:] == [
        "window_extended",
        "game_paused",
        "game_resumed",
        "seat_replaced",
    ]
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == w.other)
        ).scalar_one()
        assert (seat.name, seat.email) == ("Zoe", ZOE)
        db.session.rollback()
    # the old seat token no longer reads the game
    assert _api(app, gid, w.tokens[w.other], "pause").status_code == 403


def test_a_reused_key_for_a_new_player_answers_clearly(app, game) -> None:
    created, setup, clients = game
    gid = created.game_id
    admin, csrf = signed_in(app, gid, created.admin_token, admin=True)
    action = f"/g/{gid}/admin/seat/2/replace"
    form = {"csrf_token": csrf, "key": "same-key", "name": "Zoe", "email": ZOE}
    first = admin.post(action, data=form, follow_redirects=True)
    assert first.status_code == 200 and "Seat 3 passed to Zoe" in first.text
    after = stored(app)
    # the same form again: the same answer, nothing more
    again = admin.post(action, data=form, follow_redirects=True)
    assert again.status_code == 200 and "Seat 3 passed to Zoe" in again.text
    assert stored(app) == after
    # the same key for another player, or for another seat: refused in words, nothing changed
    for changed, path in (
        ({"email": "zed@players.imtheboss.net"}, action),
        ({"name": "Zed", "email": "zed@players.imtheboss.net"}, action),
        ({"name": "Zed", "email": "zed@players.imtheboss.net"}, f"/g/{gid}/admin/seat/1/replace"),
    ):
        answer = admin.post(path, data={**form, **changed})
        assert answer.status_code == 409, (changed, answer.status_code)
        assert "already used" in answer.text and "Nothing was changed" in answer.text
        assert stored(app) == after
    # a form without a key is refused too (it could not be told from another)
    answer = admin.post(action, data={**form, "key": "", "name": "Zed"})
    assert answer.status_code == 400 and stored(app) == after


def test_the_story_names_each_seat_as_it_was_then(app, world) -> None:
    w = world
    gid = w.gid
    assert w.offer({"cash": 2}).status_code == 201  # the provider's terms: a thread
    with app.app_context():
        was = db.session.execute(
            select(Seat.name).where(Seat.game_id == gid, Seat.seat_index == w.other)
        ).scalar_one()
        db.session.rollback()
    with app.test_request_context():
        assert organiser.replace_player(gid, w.other, "Zoe", ZOE, "z")
    browser, _csrf = signed_in(app, gid, w.tokens[w.boss])
    page = html.unescape(browser.get(f"/g/{gid}/story?lang=en").text)
    heading = re.search(r"<h3>(.*?) with the boss, for", page)
    assert heading and heading.group(1) == was, heading
    start = page[page.index('id="start"') : page.index("</section>", page.index('id="start"'))]
    assert f"<strong>{was}:</strong>" in start and "Zoe" not in start
    assert "has left the game: the organiser passed the seat to Zoe" in page
