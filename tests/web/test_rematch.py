"""The rematch through the admin page (real PostgreSQL): a finished game makes its successor
with the same seats and settings in one step; each seat says by its own mailed link whether it
plays (a GET asks and changes nothing); a seat that says no is given to another player; the
game starts when every seat has said yes; no link of the finished game acts in the new one."""

from __future__ import annotations

import html
import random
import re

from imtheboss.engine.bots import SensibleBot
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, Notification, db
from sqlalchemy import select
from support.api_client import signed_in, stored, with_csrf
from support.deal import PLAYERS
from support.play import play_to_end

JOIN = re.compile(r"/g/([\w-]+)/join/[\w.-]+")


def _finished(app, clock):
    with app.app_context():
        created = create_game("Thursday group", PLAYERS, {"windows": {"turn": 7200}})
        for seat in seats_of(created.game_id):
            seat.locale, seat.timezone = (
                ("zh_Hant", "Asia/Taipei")
                if seat.seat_index == 1
                else (
                    seat.locale,
                    seat.timezone,
                )
            )
        db.session.commit()
        state = load_state(get_game(created.game_id))
    play_to_end(
        app, clock, created.game_id, state, [SensibleBot() for _ in PLAYERS], random.Random(5)
    )
    return created


def _invited(app, gid: str) -> dict[int, str]:
    """Each seat's latest invitation link (the mail's ``link``), by seat."""
    with app.app_context():
        rows = db.session.execute(
            select(Notification)
            .where(Notification.game_id == gid, Notification.kind == "invited")
            .order_by(Notification.id)
        ).scalars()
        links = {row.seat_index: row.body["link"] for row in rows}
        db.session.rollback()
        return links


def _path(link: str) -> str:
    return "/" + link.split("/", 3)[3]


def _answer(app, link: str, plays: str):
    browser = app.test_client()
    page = browser.get(_path(link))
    assert page.status_code == 200 and "Do you play?" in page.text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    return browser.post(_path(link), data={"csrf_token": token, "plays": plays})


def test_a_finished_game_starts_its_successor_and_old_links_do_not_act(app, clock) -> None:
    old = _finished(app, clock)
    gid = old.game_id
    organiser, csrf = signed_in(app, gid, old.admin_token, admin=True)
    players = [signed_in(app, gid, token)[0] for token in old.seat_tokens]
    page = organiser.get(f"/g/{gid}/admin").text
    assert "Make the rematch" in page
    with app.app_context():
        running = create_game("still running", PLAYERS)
    made = organiser.post(f"/g/{gid}/admin/rematch", data={"csrf_token": csrf})
    assert made.status_code == 303
    new = made.headers["Location"].split("/g/")[1].split("/")[0]
    assert new != gid
    with app.app_context():
        before, after = get_game(gid), get_game(new)
        assert before.settings["next_game"] == new
        assert after.status == "unconfirmed" and after.settings["rematch"]["of"] == gid
        first = load_events(gid, 0, 1)[0].data
        assert after.settings["options"] == first["options"]
        assert after.settings["start"]["board"]["spaces"] == first["board"]
        assert after.title == before.title and after.creator_email == before.creator_email
        old_seats, new_seats = seats_of(gid), seats_of(new)
        copied = ("seat_index", "name", "email", "locale", "timezone", "notify")
        assert [[getattr(s, k) for k in copied] for s in new_seats] == [
            [getattr(s, k) for k in copied] for s in old_seats
        ]
        assert not {s.token_hash for s in new_seats} & {s.token_hash for s in old_seats}
        mail = compose(
            after,
            new_seats[1],
            db.session.execute(
                select(Notification).where(
                    Notification.game_id == new, Notification.seat_index == 1
                )
            )
            .scalars()
            .all(),
        )
        assert mail["To"] == "bill@example.org"
        assert JOIN.search(mail.get_body(("plain",)).get_content())
    # the organiser is the new game's organiser; the finished game's pages link to it
    assert organiser.get(f"/g/{new}/admin").status_code == 200
    assert f'href="/g/{new}"' in players[0].get(f"/g/{gid}").text
    assert organiser.post(f"/g/{gid}/admin/rematch", data={"csrf_token": csrf}).status_code == 409
    busy, busy_csrf = signed_in(app, running.game_id, running.admin_token, admin=True)
    early = busy.post(f"/g/{running.game_id}/admin/rematch", data={"csrf_token": busy_csrf})
    assert early.status_code == 409 and "once the game is over" in early.text
    refused = players[0].post(
        f"/g/{gid}/admin/rematch", data={"csrf_token": with_csrf(app, players[0])}
    )
    assert refused.status_code == 403  # a player is not the organiser

    joins = _invited(app, new)
    assert sorted(joins) == [0, 1, 2] and all(JOIN.search(link) for link in joins.values())
    # a GET (a mail scanner) and a HEAD answer nothing
    unchanged = stored(app)
    assert app.test_client().get(_path(joins[0])).status_code == 200
    assert app.test_client().head(_path(joins[0])).status_code == 200
    assert stored(app) == unchanged
    # nothing of the finished game acts in the new one
    _old_links_refused(app, new, old.seat_tokens, players, waiting=True)

    # Carla says no; the organiser gives the seat to Zoe, whose own link asks her
    assert _answer(app, joins[2], "no").status_code == 200
    assert "does not play this time" in organiser.get(f"/g/{new}/admin").text
    admin_page = organiser.get(f"/g/{new}/admin").text
    give = {"csrf_token": with_csrf(app, organiser), "name": "Zoe", "email": "zoe@example.org"}
    assert organiser.post(f"/g/{new}/admin/seat/2/replace", data=give).status_code == 303
    assert "Give the seat" in admin_page
    assert app.test_client().get(_path(joins[2])).status_code == 403  # Carla's link died
    joins = _invited(app, new)
    assert _answer(app, joins[0], "yes").status_code == 200
    # the rematch's page says plainly what it waits for, and who is in
    waiting = organiser.get(f"/g/{new}")
    assert waiting.status_code == 200
    text = html.unescape(waiting.text)
    assert "each player has confirmed, by the link in the mail they were sent" in text
    assert "Amy: confirmed: plays" in text and "Bill: has not confirmed yet" in text
    assert "Zoe: has not confirmed yet" in text and "confirms their email address" not in text
    assert _answer(app, joins[1], "yes").status_code == 200
    with app.app_context():
        assert get_game(new).status == "unconfirmed"
    last = _answer(app, joins[2], "yes")
    assert last.status_code == 200 and "The game has started" in last.text

    with app.app_context():
        started = get_game(new)
        assert started.status == "active"
        state = load_state(started)
        assert state.players == ["Amy", "Bill", "Zoe"]
        assert state.options.to_json() == load_state(get_game(gid)).options.to_json()
        assert state.seed != load_state(get_game(gid)).seed
    invitations = _invited(app, new)
    assert all("/s/" in link for link in invitations.values())
    for link in joins.values():  # the join links open nothing any more
        assert app.test_client().get(_path(link)).status_code == 403
    _old_links_refused(app, new, old.seat_tokens, players)
    # the new links act in the new game; the old ones still in the finished game only
    fresh = app.test_client()
    assert fresh.get(_path(invitations[1])).status_code == 303
    bills = fresh.get(f"/g/{new}").text
    assert "Bill" in bills and 'lang="zh-Hant"' in bills  # the seat kept its language
    assert app.test_client().get(f"/g/{gid}/s/{old.seat_tokens[1]}").status_code == 303
    # a browser signed in to the finished game's admin page only may sign in to the rematch's
    other, _csrf = signed_in(app, gid, old.admin_token, admin=True)
    assert other.get(f"/g/{new}/admin").status_code == 403
    assert other.get(f"/g/{new}/admin/rematch-sign-in").status_code == 303
    assert other.get(f"/g/{new}/admin").status_code == 200
    assert players[0].get(f"/g/{new}/admin/rematch-sign-in").status_code == 403


def _old_links_refused(
    app, new: str, tokens: list[str], browsers: list, waiting: bool = False
) -> None:
    """The finished game's seat tokens, sessions and bearer tokens: none opens or acts in
    ``new``."""
    with app.app_context():
        seq = get_game(new).last_seq
    for seat, token in enumerate(tokens):
        assert app.test_client().get(f"/g/{new}/s/{token}").status_code == 403
        page = browsers[seat].get(f"/g/{new}?lang=en")
        if waiting:  # the finished game's players read who is in, and nothing to act on
            assert page.status_code == 200 and "waiting for the players" in page.text
            assert "<form" not in page.text and "/s/" not in page.text
        else:
            assert page.status_code == 403
        bearer = {"Authorization": f"Bearer {token}"}
        body = {"command": {"do": "roll"}, "idempotency_key": f"old-{seat}"}
        api = app.test_client().post(f"/api/games/{new}/commands", json=body, headers=bearer)
        assert api.status_code in (401, 403), api.get_json()
        act = browsers[seat].post(
            f"/g/{new}/act",
            data={
                "csrf_token": with_csrf(app, browsers[seat]),
                "cmd": '{"do": "roll"}',
                "key": "k",
            },
        )
        assert act.status_code == 403
    with app.app_context():
        assert get_game(new).last_seq == seq
        assert db.session.get(Game, new) is not None
