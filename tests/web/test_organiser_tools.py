"""The organiser's tools through the admin page (A13, real PostgreSQL): more time for one open
window or for every window of a seat, with a reason the table reads in the history in its
three languages; a seat passed to a new player (a fresh link mailed to the new address, the
old link and session dead, the old address told, no address in the event log); refusals that
change nothing."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from imtheboss.engine.history import message
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Deadline, EventRecord, Notification, Seat, db
from imtheboss.web.say import messages
from sqlalchemy import select
from support.api_client import stored, with_csrf
from support.organiser import csrf_of, mail_text, open_deadlines

REASON = "Bill is moving house this week"


def _admin(app, created):
    browser = app.test_client()
    assert browser.get(f"/g/{created.game_id}/admin/{created.admin_token}").status_code == 303
    return browser


def _form(page: str, action: str) -> dict[str, str]:
    """The hidden fields (CSRF token, key) of the form posting to ``action``."""
    start = page.index(f'action="{action}"')
    form = page[start : page.index("</form>", start)]
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
    assert "csrf_token" in fields
    return fields


def _rows(gid: str, kind: str) -> list[Notification]:
    return list(
        db.session.execute(
            select(Notification).where(Notification.game_id == gid, Notification.kind == kind)
        ).scalars()
    )


def _state(app, gid: str):
    with app.app_context():
        return load_state(get_game(gid))


def test_more_time_for_one_window_is_an_event_the_table_reads(app, game) -> None:
    created, setup, clients = game
    gid = created.game_id
    admin = _admin(app, created)
    page = admin.get(f"/g/{gid}/admin").text
    assert "More time" in page
    action = f"/g/{gid}/admin/extend"
    fields = _form(page, action)
    turn = _state(app, gid).turn.id
    before = open_deadlines(app, gid)
    form = {**fields, "target": f"window:{turn}", "hours": "30", "reason": f"  {REASON} "}
    answer = admin.post(action, data=form)
    assert answer.status_code == 303 and answer.headers["Location"].endswith(f"/g/{gid}/admin")
    after = open_deadlines(app, gid)
    assert after[turn] == before[turn] + timedelta(hours=30)
    with app.app_context():
        (row,) = db.session.execute(
            select(Deadline).where(Deadline.game_id == gid, Deadline.window_id == turn)
        ).scalars()
        assert row.remind_at is None and not row.reminded  # planned again for the new time
        last = load_events(gid)[-1]
    assert last.type == "window_extended" and last.data["reason"] == REASON
    # the same form again (a double click) appends nothing
    assert admin.post(action, data=form).status_code == 303
    assert open_deadlines(app, gid) == after
    # every seat reads it in its history, in its language
    players = _state(app, gid).players
    seen = {}
    for lang in ("en", "zh_Hans", "zh_Hant"):
        text = clients[1].get(f"/g/{gid}/history?lang={lang}").text
        with app.test_request_context(f"/?lang={lang}"), messages.speaking(lang):
            line = messages.render(message(last, 1), players, "UTC")
        assert html.escape(line, quote=False) in text, (lang, line)
        assert REASON in line
        seen[lang] = line
    for lang in ("zh_Hans", "zh_Hant"):  # the sentence in Chinese: no English word but the reason's
        assert not re.search(r"[A-Za-z]{2,}", seen[lang].replace(REASON, "").replace("UTC", ""))
    assert len(set(seen.values())) == 3, seen


def test_more_time_for_a_seat_moves_its_windows_only(app, game) -> None:
    created, setup, clients = game
    gid = created.game_id
    admin = _admin(app, created)
    action = f"/g/{gid}/admin/extend"
    fields = _form(admin.get(f"/g/{gid}/admin").text, action)
    active = _state(app, gid).active
    before = open_deadlines(app, gid)
    form = {**fields, "target": f"seat:{active}", "hours": "168", "reason": "holiday"}
    assert admin.post(action, data=form).status_code == 303
    after = open_deadlines(app, gid)
    assert after == {k: v + timedelta(days=7) for k, v in before.items()}
    assert _state(app, gid).turn.deadline == after[_state(app, gid).turn.id]
    history = clients[0].get(f"/g/{gid}/history").text
    assert "7 days more on everything that waits for" in history and "holiday" in history


def test_refusals_change_nothing(app, game) -> None:
    created, setup, clients = game
    gid = created.game_id
    admin = _admin(app, created)
    action = f"/g/{gid}/admin/extend"
    fields = _form(admin.get(f"/g/{gid}/admin").text, action)
    turn = _state(app, gid).turn.id
    good = {**fields, "target": f"window:{turn}", "hours": "2", "reason": "why"}
    before = stored(app)
    # not the organiser: a player's browser, and a browser signed in nowhere
    player = clients[0]
    refused = player.post(action, data={**good, "csrf_token": with_csrf(app, player)})
    assert refused.status_code == 403
    for bad, status in (
        ({"hours": "0"}, 400),
        ({"hours": "169"}, 400),
        ({"hours": "2.5"}, 400),
        ({"hours": "soon"}, 400),
        ({"hours": "9" * 4301}, 400),  # past int()'s 4,300 digits
        ({"hours": "፩"}, 400),  # a digit to str.isdigit(), not to int()
        ({"target": "seat:" + "9" * 4301}, 400),
        ({"reason": "   "}, 400),
        ({"reason": "x" * 201}, 400),
        ({"reason": "two\nlines"}, 400),
        ({"reason": "bell\x07"}, 400),
        ({"target": "window:w99"}, 409),
        ({"target": "seat:7"}, 409),
        ({"target": "nothing"}, 400),
    ):
        answer = admin.post(action, data={**good, **bad})
        assert answer.status_code == status, (bad, answer.status_code, answer.text[:300])
        assert "Internal" not in answer.text
    assert stored(app) == before
    # a paused game takes no organiser act either
    pause = {"csrf_token": fields["csrf_token"]}
    assert admin.post(f"/g/{gid}/admin/pause", data=pause).status_code == 303
    paused = stored(app)
    assert admin.post(action, data=good).status_code == 409
    assert stored(app) == paused
    # and no seat can send the organiser's commands itself
    assert admin.post(f"/g/{gid}/admin/resume", data=pause).status_code == 303
    mine = {"do": "extend_window", "window": turn, "minutes": 60, "reason": "me"}
    with app.app_context():
        with pytest.raises(ServiceError) as info:
            submit(gid, 0, mine, "k")
        assert (info.value.status, info.value.code) == (409, "bad_command")
    body = {"command": {"do": "replace_player", "seat": 0, "name": "Me"}, "idempotency_key": "k2"}
    bearer = {"Authorization": f"Bearer {created.seat_tokens[0]}"}
    api = app.test_client().post(f"/api/games/{gid}/commands", json=body, headers=bearer)
    assert api.status_code == 400 and api.get_json()["error"]["code"] == "bad_command"
    resumed = stored(app)
    assert _state(app, gid).players == ["Amy", "Bill", "Carla"] and stored(app) == resumed


def test_a_seat_passes_to_a_new_player(app, game) -> None:
    created, setup, clients = game
    gid = created.game_id
    admin = _admin(app, created)
    action = f"/g/{gid}/admin/seat/2/replace"
    fields = _form(admin.get(f"/g/{gid}/admin").text, action)
    old_token = created.seat_tokens[2]
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 2)
        ).scalar_one()
        seat.locale = "zh_Hant"
        db.session.commit()
    form = {**fields, "name": " Zoe ", "email": "Zoe@Example.ORG"}
    answer = admin.post(action, data=form)
    assert answer.status_code == 303, answer.text[:500]
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 2)
        ).scalar_one()
        assert (seat.name, seat.email) == ("Zoe", "Zoe@example.org")
        invited = (
            db.session.execute(
                select(Notification)
                .where(
                    Notification.game_id == gid,
                    Notification.seat_index == 2,
                    Notification.kind == "invited",
                )
                .order_by(Notification.id)
            )
            .scalars()
            .all()
        )
        link = invited[-1].body["link"]
        # the old player's unsent mail does not go to the new address
        earlier = db.session.execute(
            select(Notification.email_state).where(
                Notification.game_id == gid,
                Notification.seat_index == 2,
                Notification.id < invited[-1].id,
            )
        ).all()
        assert earlier and "pending" not in {state for (state,) in earlier}, earlier
        # the old player hears that the seat passed to someone else, not of an email change
        assert not _rows(gid, "email_changed")
        (notice,) = _rows(gid, "seat_passed")
        assert notice.to_email == "carla@example.org" and notice.body["name"] == "Carla"
        assert notice.body["locale"] == "zh_Hant"  # in Carla's language
        mail = compose(get_game(gid), None, [notice])
        assert mail["To"] == "carla@example.org" and "Zoe" not in mail_text(mail)
    with app.app_context():  # the same mail in English, to read it
        (notice,) = _rows(gid, "seat_passed")
        notice.body = {**notice.body, "locale": "en"}
        text = mail_text(compose(get_game(gid), None, [notice]))
        db.session.rollback()
    assert "passed your seat, Carla, to another player" in text
    assert "email address" not in text and "Zoe" not in text and "/s/" not in text
    with app.app_context():
        event = db.session.execute(
            select(EventRecord)
            .where(EventRecord.game_id == gid)
            .order_by(EventRecord.seq.desc())
            .limit(1)
        ).scalar_one()
        assert event.type == "seat_replaced"
        body = {k: v for k, v in event.body.items() if k != "v"}
        assert body == {"seat": 2, "name": "Zoe", "was": "Carla", "at": event.body["at"]}
        assert "@" not in str(event.body)
        assert load_state(get_game(gid)).players[2] == "Zoe"
    # the same form again: nothing more
    again = stored(app)
    assert admin.post(action, data=form).status_code == 303
    assert stored(app) == again
    # the old link and the old browser are out; the new link is in
    assert app.test_client().get(f"/g/{gid}/s/{old_token}").status_code == 403
    assert clients[2].get(f"/g/{gid}").status_code == 403
    api = app.test_client().get(
        f"/api/games/{gid}", headers={"Authorization": f"Bearer {old_token}"}
    )
    assert api.status_code in (401, 403)
    new = app.test_client()
    token = link.rsplit("/", 1)[1]
    assert new.get(f"/g/{gid}/s/{token}").status_code == 303
    page = new.get(f"/g/{gid}?lang=en").text  # the seat keeps its language (Carla's)
    assert "you are Zoe" in page
    history = clients[0].get(f"/g/{gid}/history").text
    assert "Carla has left the game: the organiser passed the seat to Zoe" in history
    # what happened before the hand-over keeps the player who made it
    start = html.unescape(history[history.index("The game starts") :]).split("\n", 1)[0]
    assert "Carla" in start and "Zoe" not in start, start
    assert "zoe@example.org" not in history.lower()
    # the other seats' pages name the new player; no page of theirs shows the address
    assert "Zoe" in clients[1].get(f"/g/{gid}").text
    assert "zoe@example.org" not in clients[1].get(f"/g/{gid}").text.lower()


def test_a_new_player_is_refused_without_a_name_or_address(app, game) -> None:
    created, setup, clients = game
    gid = created.game_id
    admin = _admin(app, created)
    action = f"/g/{gid}/admin/seat/1/replace"
    fields = _form(admin.get(f"/g/{gid}/admin").text, action)
    before = stored(app)
    for bad, status in (
        ({"name": "", "email": "zoe@example.org"}, 400),
        ({"name": "Zoe", "email": "not an address"}, 400),
        ({"name": "Amy", "email": "zoe@example.org"}, 400),  # seat 0's name
        ({"name": "Zoe", "email": "AMY@example.org"}, 400),  # seat 0's address
        ({"name": "x" * 41, "email": "zoe@example.org"}, 400),
        ({"name": "amy", "email": "zoe@example.org"}, 400),  # seat 0's name, in lower case
        ({"name": "AMY", "email": "zoe@example.org"}, 400),
        ({"name": "\uff21my", "email": "zoe@example.org"}, 400),  # a full-width A: NFKC
        ({"name": "Amy\u200b", "email": "zoe@example.org"}, 400),  # a zero-width space
        ({"name": "Zo\u200de", "email": "zoe@example.org"}, 400),  # a zero-width joiner
        ({"name": "\u200fZoe", "email": "zoe@example.org"}, 400),  # a direction mark
    ):
        answer = admin.post(action, data={**fields, **bad})
        assert answer.status_code == status, (bad, answer.status_code)
    assert (
        admin.post(
            f"/g/{gid}/admin/seat/9/replace",
            data={**fields, "name": "Zoe", "email": "zoe@example.org"},
        ).status_code
        == 404
    )
    player = clients[0]
    data = {
        **fields,
        "name": "Zoe",
        "email": "zoe@example.org",
        "csrf_token": csrf_of(player.get(f"/g/{gid}").text),
    }
    assert player.post(action, data=data).status_code == 403
    assert stored(app) == before


def test_no_new_player_while_paused(app, game) -> None:
    """A paused game takes nothing: the seat row, its token and the mails stay as they were."""
    created, setup, clients = game
    gid = created.game_id
    admin = _admin(app, created)
    action = f"/g/{gid}/admin/seat/1/replace"
    fields = _form(admin.get(f"/g/{gid}/admin").text, action)
    assert admin.post(f"/g/{gid}/admin/pause", data=fields).status_code == 303
    before = stored(app)
    answer = admin.post(action, data={**fields, "name": "Zoe", "email": "zoe@example.org"})
    assert answer.status_code == 409 and "paused" in answer.text
    assert stored(app) == before
    assert clients[1].get(f"/g/{gid}").status_code == 200  # Bill is still Bill
