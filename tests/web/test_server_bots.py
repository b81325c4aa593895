"""Bot seats on the server (A13): a game of two people and three bots made by the service,
played to its end through ``submit.submit`` (the people by ``SensibleBot``, the bot seats by
the server itself, at once after each commit), with no mail, invitation nor link for a bot
seat; the bot reads only its seat's view; a game of bots only is refused; the log, the replay
and the export hold the bot seats and mark the bot's acts. Real PostgreSQL, the test clock."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.orders import NO_ORDERS, RECOMMENDED
from imtheboss.engine.record import read_record
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.verify import verify
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.web.games import bots, rematch
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import confirm_game, create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.seats import resend_invitation, seats_of, set_seat_email
from imtheboss.web.games.submit import submit
from imtheboss.web.models import CommandRecord, EventRecord, Notification, Seat, db
from imtheboss.web.store import negotiations
from imtheboss.web.store.records import game_export
from sqlalchemy import func, select
from support.api_client import signed_in
from support.organiser import new_game_form

NAMES = ["Ann", "Ben", "Cleo", "Dan", "Eve"]
PEOPLE = [(n, f"{n.lower()}@example.org") for n in NAMES[:2]]
BOT_SEATS = [2, 3, 4]


def _players() -> list[tuple[str, str]]:
    return [*PEOPLE, *[(n, "") for n in NAMES[2:]]]


def _state(app: Any, gid: str) -> GameState:
    with app.app_context():
        state = load_state(get_game(gid))
        db.session.rollback()
        return state


def _people_play(app: Any, clock: Any, gid: str, seen: list[GameState]) -> GameState:
    """The two people play by ``SensibleBot`` until the end; the clock jumps to the next
    deadline when nobody acts (a ``timeout``, as the worker submits it). Each state met is
    kept in ``seen``."""
    rng, now, n = random.Random(3), clock.now, 0
    state = _state(app, gid)
    people = [SensibleBot(), SensibleBot()]
    while state.phase != "game_over":
        assert n < 3000, "the game did not end"
        seen.append(state)
        due = next_deadline(state)
        seat, command = None, None
        if due is not None and due <= now:
            command = {"do": "timeout"}
        else:
            for s in (0, 1):
                legal = legal_commands(state, s)
                choice = people[s].choose(state, s, legal, rng) if legal else None
                if choice is not None and choice["do"] != "chat":
                    seat, command = s, choice
                    break
        if command is None:
            now = max(now, due) if due else now + timedelta(hours=1)
            continue
        clock.now = now
        try:
            with app.app_context():
                submit(gid, seat, command, f"p-{n}", now)
        except ServiceError as exc:
            assert exc.status == 409, exc.to_dict()
        n += 1
        now += timedelta(minutes=rng.randint(1, 30))
        state = _state(app, gid)
    return state


def _scrambled(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with what is hidden from ``seat`` changed: other hands (sizes kept) and the
    draw pile dealt anew, the seed, others' money and standing orders."""
    other = state.clone()
    pool = list(other.draw_pile)
    for s in range(other.n):
        if s != seat:
            pool += other.hands[s]
    rng.shuffle(pool)
    for s in range(other.n):
        if s != seat:
            size = len(other.hands[s])
            other.hands[s], pool = pool[:size], pool[size:]
    other.draw_pile = pool
    other.seed = f"scrambled-{rng.random()}"
    if not state.options.open_money:
        other.money = [m if s == seat else m + 7 for s, m in enumerate(other.money)]
    other.orders = [
        o if s == seat else (RECOMMENDED if o == NO_ORDERS else NO_ORDERS)
        for s, o in enumerate(other.orders)
    ]
    return other


def test_two_people_and_three_bots_play_to_the_end(app, clock) -> None:
    with app.app_context():
        created = create_game("bots", _players(), {}, bots=BOT_SEATS)
        gid = created.game_id
        assert [bool(t) for t in created.seat_tokens] == [True, True, False, False, False]
        emails = db.session.execute(
            select(Seat.email).where(Seat.game_id == gid).order_by(Seat.seat_index)
        ).scalars()
        assert list(emails) == ["ann@example.org", "ben@example.org", "", "", ""]
    seen: list[GameState] = []
    final = _people_play(app, clock, gid, seen)
    assert final.phase == "game_over" and final.bots == [False, False, True, True, True]
    with app.app_context():
        to_bots = db.session.execute(
            select(func.count())
            .select_from(Notification)
            .where(Notification.game_id == gid, Notification.seat_index.in_(BOT_SEATS))
        ).scalar_one()
        to_people = db.session.execute(
            select(func.count()).select_from(Notification).where(Notification.game_id == gid)
        ).scalar_one()
        assert to_bots == 0 and to_people > 0  # no invitation, mail nor push to a bot
        moves = db.session.execute(
            select(CommandRecord.seat, CommandRecord.idempotency_key).where(
                CommandRecord.game_id == gid, CommandRecord.seat.in_(BOT_SEATS)
            )
        ).all()
        assert len(moves) > 10 and all(key.startswith("bot:") for _seat, key in moves)
        events = load_events(gid)
        bodies = db.session.execute(
            select(EventRecord.type, EventRecord.seat, EventRecord.body).where(
                EventRecord.game_id == gid
            )
        ).all()
    by_bots = [(t, b) for t, seat, b in bodies if seat in BOT_SEATS]
    assert not any(t == "chat" for t, _b in by_bots)  # a bot never chats
    marked = [seat for _t, seat, b in bodies if b.get("via") == "bot"]
    assert len(marked) > 10 and set(marked) <= set(BOT_SEATS)  # the bot's acts are marked
    assert replay(events).money == final.money  # the log replays to the game exactly
    assert events[0].data["bots"] == BOT_SEATS
    # the bot's choices never depend on what is hidden from its seat: at every event of the
    # game (so also just before each of its moves), for each bot seat
    rng, checked, running = random.Random(9), 0, replay(events[:1])
    for event in events[1:]:
        if running.phase != "game_over":
            for seat in BOT_SEATS:
                key = f"k:{running.seq}"
                mine = bots.choose(running, seat, key)
                assert bots.choose(_scrambled(running, seat, rng), seat, key) == mine
                checked += mine is not None
        apply_in_place(running, event)
    assert checked > 20


def test_bots_only_is_refused_and_bad_bot_seats_too(app) -> None:
    with app.app_context():
        every = [(n, "") for n in NAMES[:3]]
        with pytest.raises(ServiceError) as refused:
            create_game("bots only", every, {}, bots=[0, 1, 2])
        assert refused.value.status == 400 and refused.value.code == "bots_only"
        for bad in ([0, 0], [5], ["1"], [True]):
            with pytest.raises(ServiceError) as wrong:
                create_game("bad", _players(), {}, bots=bad)
            assert wrong.value.status == 400
        assert db.session.execute(select(func.count()).select_from(Seat)).scalar_one() == 0


def test_the_export_of_a_bot_game_verifies(app, clock) -> None:
    with app.app_context():
        created = create_game("bots", _players(), {}, bots=BOT_SEATS)
    gid = created.game_id
    _people_play(app, clock, gid, [])
    with app.app_context():
        record = game_export(get_game(gid))
    assert record["events"][0]["event"]["bots"] == BOT_SEATS
    assert any(e["event"].get("via") == "bot" for e in record["events"])
    assert verify(read_record(record)).ok
    # the rematch keeps the bot seats: no mail to them, their yes given, bots again
    with app.app_context():
        next_id = rematch.make_rematch(gid).game_id
        asked = {seat for seat, kind in _notified(app, next_id)}
        assert asked == {0, 1}
        for seat in seats_of(next_id)[:2]:
            started = rematch.answer(next_id, seat, True)
        assert started
        assert load_state(get_game(next_id)).bots == [False, False, True, True, True]


# -- creation by the form and the API, passing a seat to a bot and back ------------------------


def _notified(app: Any, gid: str) -> list[tuple[int, str]]:
    with app.app_context():
        rows = db.session.execute(
            select(Notification.seat_index, Notification.kind).where(Notification.game_id == gid)
        ).all()
        db.session.rollback()
        return [tuple(r) for r in rows]


@pytest.fixture
def app_config():
    return {"RATELIMIT_ENABLED": False}


def test_the_new_game_form_takes_bot_seats(app, client) -> None:
    data = new_game_form(client, PEOPLE, creator_email="org@example.org")
    data["players-2-name"], data["players-2-bot"] = "Cleo", "y"
    answer = client.post("/new", data=data)
    assert answer.status_code in (200, 303), answer.text[:500]
    with app.app_context():
        gid = db.session.execute(select(Seat.game_id)).scalars().first()
        assert confirm_game(gid) == 2  # two invitations: the bot seat gets none
        state = load_state(get_game(gid))
        db.session.rollback()
    assert state.bots == [False, False, True] and state.players[2] == "Cleo"
    assert {seat for seat, kind in _notified(app, gid) if kind == "invited"} == {0, 1}
    page = client.get("/new")
    assert "Bot" in page.text


def test_the_api_takes_bot_seats_and_refuses_bots_only(app, client) -> None:
    players = [
        {"name": "Ann", "email": "ann@example.org"},
        {"name": "Cleo", "bot": True},
        {"name": "Dan", "bot": True},
    ]
    body = {"title": "with bots", "players": players, "creator_email": "org@example.org"}
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 201, answer.get_json()
    gid = answer.get_json()["game_id"]
    with app.app_context():
        emails = db.session.execute(
            select(Seat.email).where(Seat.game_id == gid).order_by(Seat.seat_index)
        ).scalars()
        assert list(emails) == ["ann@example.org", "", ""]
        seats_before = db.session.execute(select(func.count()).select_from(Seat)).scalar_one()
    only = [{"name": n, "bot": True} for n in NAMES[:3]]
    refused = client.post("/api/games", json={**body, "players": only})
    assert refused.status_code == 400 and refused.get_json()["error"]["code"] == "bots_only"
    bad = client.post("/api/games", json={**body, "players": [*players[:2], {"name": "X"}]})
    assert bad.status_code == 400
    with app.app_context():
        assert db.session.execute(select(func.count()).select_from(Seat)).scalar_one() == (
            seats_before
        )


def test_a_seat_passes_to_a_bot_and_back(app, clock) -> None:
    three = [(n, f"{n.lower()}@example.org") for n in NAMES[:3]]
    with app.app_context():
        created = create_game("handed", three, {})
    gid = created.game_id
    admin, csrf = signed_in(app, gid, created.admin_token, admin=True)
    page = admin.get(f"/g/{gid}/admin")
    assert page.status_code == 200 and "Pass a seat to a bot" in page.text
    answer = admin.post(f"/g/{gid}/admin/seat/2/bot", data={"csrf_token": csrf, "key": "k1"})
    assert answer.status_code == 303
    state = _state(app, gid)
    assert state.bots == [False, False, True]
    assert app.test_client().get(f"/g/{gid}/s/{created.seat_tokens[2]}").status_code == 403
    with app.app_context():
        notice = db.session.execute(
            select(Notification.to_email).where(
                Notification.game_id == gid, Notification.kind == "seat_passed"
            )
        ).scalars()
        assert list(notice) == ["cleo@example.org"]
    bearer = {"Authorization": f"Bearer {created.admin_token}"}
    api = app.test_client()
    one = api.post(
        f"/api/games/{gid}/organiser/bot", json={"seat": 1, "idempotency_key": "b1"}, headers=bearer
    )
    assert one.status_code == 201, one.get_json()
    again = api.post(
        f"/api/games/{gid}/organiser/bot", json={"seat": 1, "idempotency_key": "b1"}, headers=bearer
    )
    assert one.status_code == 201 and again.status_code == 200 and again.get_json()["duplicate"]
    last = api.post(
        f"/api/games/{gid}/organiser/bot", json={"seat": 0, "idempotency_key": "b2"}, headers=bearer
    )
    assert last.status_code == 409 and last.get_json()["error"]["code"] == "bots_only"
    assert _state(app, gid).bots == [False, True, True]
    assert "Ben (bot)" in admin.get(f"/g/{gid}/history").text  # named as a bot on the pages
    assert "Ben (bot)" in admin.get(f"/g/{gid}").text
    with app.app_context():
        for act in (lambda: resend_invitation(gid, 1), lambda: set_seat_email(gid, 1, "b@x.org")):
            with pytest.raises(ServiceError) as no_address:
                act()
            assert no_address.value.status == 409 and no_address.value.code == "bot_seat"
    back = {"seat": 2, "name": "Fay", "email": "fay@example.org", "idempotency_key": "r1"}
    person = api.post(f"/api/games/{gid}/organiser/replace", json=back, headers=bearer)
    assert person.status_code == 201, person.get_json()
    state = _state(app, gid)
    assert state.bots == [False, True, False] and state.players[2] == "Fay"
    with app.app_context():
        events = load_events(gid)
    kinds = [e.type for e in events]
    assert kinds.count("seat_to_bot") == 2 and "seat_replaced" in kinds
    assert replay(events).bots == state.bots  # the replay knows who is a bot
    handed = next(i + 1 for i, e in enumerate(events) if e.type == "seat_replaced")
    with app.test_request_context():
        names = negotiations.names_by_seq(gid, state)  # each event's names as it met them
    assert names.current == ["Ann", "Ben (bot)", "Fay"]
    assert names.at(1) == ["Ann", "Ben", "Cleo"]
    assert names.at(handed - 1) == ["Ann", "Ben (bot)", "Cleo (bot)"]
    assert (2, "invited") in _notified(app, gid)  # Fay is invited: a person again


def test_a_mail_names_the_bot_seats_as_bots(app) -> None:
    """A13: a bot seat is named as a bot in the mail too (here a person's invitation)."""
    from imtheboss.web.mail.compose import compose

    with app.app_context():
        gid = create_game("bots", _players(), {}, bots=BOT_SEATS).game_id
        row = db.session.scalars(
            select(Notification).where(
                Notification.game_id == gid,
                Notification.kind == "invited",
                Notification.seat_index == 0,
            )
        ).one()
        mail = compose(get_game(gid), seats_of(gid)[0], [row])
        text = mail.get_body(("plain",)).get_content()
        html = mail.get_body(("html",)).get_content()
    for name in NAMES[2:]:
        assert f"{name} (bot)" in text and f"{name} (bot)" in html
    assert "Ben (bot)" not in text
