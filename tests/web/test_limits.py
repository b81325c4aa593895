"""Abuse limits (Flask-Limiter): games made and invitations asked for per client address, chat
per seat, wrong secret links and tokens per address. A refusal is a 429 with ``Retry-After`` and
a message in plain words, in the reader's language; it changes nothing. With Redis the limits
hold across processes (two apps on one Redis database)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import EventRecord, Game, Notification, Seat, db
from imtheboss.web.players.links import seat_link
from sqlalchemy import func, select
from support.api_client import Api
from support.app import client_at, make_app
from support.deal import PLAYERS
from support.organiser import confirm, confirm_link, csrf_of, mail_text, new_game_form
from support.redis_db import own_redis_db
from support.wait import free_port

ORGANISER = "org@example.org"
REDIS_DB = 10  # this test's own Redis database number (support.redis_db.own_redis_db)


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {"RATELIMIT_ENABLED": True}


def _players(n: int, tag: str) -> list[dict[str, str]]:
    return [{"name": f"P{i}", "email": f"p{i}.{tag}@made-up.example"} for i in range(n)]


def _count(model, **where: Any) -> int:
    query = select(func.count()).select_from(model)
    for name, value in where.items():
        query = query.where(getattr(model, name) == value)
    return db.session.execute(query).scalar_one()


def _refused(answer: Any, words: str) -> None:
    """A 429 with a Retry-After in seconds and a message in plain words."""
    assert answer.status_code == 429, answer.get_data(as_text=True)[:500]
    assert int(answer.headers["Retry-After"]) >= 1
    text = answer.get_data(as_text=True)
    assert words in text, text[:2000]


def _confirm_all(app) -> None:
    """The organiser confirms every game made (by the link in their mail)."""
    with app.app_context():
        rows = list(
            db.session.execute(select(Notification).where(Notification.kind == "organiser"))
            .scalars()
            .all()
        )
        texts = [
            (row.game_id, mail_text(compose(get_game(row.game_id), None, [row]))) for row in rows
        ]
    for gid, text in texts:
        confirm(app.test_client(), confirm_link(text, gid))


def _form(client) -> dict[str, Any]:
    players = [(p["name"], p["email"]) for p in _players(6, "form")]
    return new_game_form(client, players, title="Friday", creator_email=ORGANISER)


def test_31_rapid_game_creations_from_one_address(app) -> None:
    """The default limits: some of 31 creations are refused; no more invitations are written
    than the limits allow. Form and API share the count, and one CSRF token does not help."""
    client = app.test_client()
    form = _form(client)  # one CSRF token for every form post
    answers = []
    for i in range(31):
        if i % 2:
            answers.append(client.post("/new", data=form))
        else:
            body = {"title": f"g{i}", "players": _players(6, str(i)), "creator_email": ORGANISER}
            answers.append(client.post("/api/games", json=body))
    made = [a for a in answers if a.status_code in (201, 303)]
    refused = [a for a in answers if a.status_code == 429]
    assert len(made) + len(refused) == 31
    assert len(made) == 10  # RATELIMIT_NEW_GAMES: 10 per hour
    for answer in refused:
        _refused(answer, "Too many new games")
    assert refused[0].mimetype == "application/json" or refused[1].mimetype == "application/json"
    assert any(a.mimetype == "text/html" for a in refused)  # the error page for the form
    with app.app_context():
        assert _count(Game) == 10
    _confirm_all(app)
    with app.app_context():
        invitations = _count(Notification, kind="invited")
    assert invitations == 60 <= 100  # RATELIMIT_INVITATIONS: 100 per day
    # another address is not held back by this one
    other = client_at(app, "198.51.100.7")
    body = {"title": "x", "players": _players(3, "other"), "creator_email": ORGANISER}
    assert other.post("/api/games", json=body).status_code == 201


@pytest.mark.parametrize(
    "app_config",
    [
        {
            "RATELIMIT_ENABLED": True,
            "RATELIMIT_NEW_GAMES": "100/hour",
            "RATELIMIT_INVITATIONS": "20/day",
        }
    ],
)
def test_invitations_per_address_count_every_player(app, client) -> None:
    answers = [
        client.post(
            "/api/games",
            json={"players": _players(3, str(i)), "creator_email": ORGANISER},
        )
        for i in range(8)
    ]
    assert [a.status_code for a in answers] == [201] * 6 + [429] * 2  # 6 x 3 = 18 <= 20 < 21
    _refused(answers[6], "invitations")
    # a game of two players still fits (18 + 2 = 20)
    two = {
        "players": _players(2, "two"),
        "creator_email": ORGANISER,
        "options": {"variants": ["V9"]},
    }
    assert client.post("/api/games", json=two).status_code == 201
    _confirm_all(app)
    with app.app_context():
        assert _count(Notification, kind="invited") == 20
        assert _count(Game) == 7


@pytest.mark.parametrize(
    "app_config", [{"RATELIMIT_ENABLED": True, "RATELIMIT_CHAT": "3 per minute; 5 per day"}]
)
def test_chat_per_seat(app, client) -> None:
    with app.app_context():
        created = create_game("Chat", PLAYERS)
    gid, tokens = created.game_id, created.seat_tokens
    api = Api(client, gid)
    text = "x" * 2000
    answers = [api.send(tokens[0], {"do": "chat", "text": text}, f"a{i}") for i in range(20)]
    assert [a.status_code for a in answers[:4]] == [201, 201, 201, 429]
    assert all(a.status_code == 429 for a in answers[3:])
    _refused(answers[3], "chat")
    assert answers[3].get_json()["error"]["code"] == "rate_limited"
    # another seat of the same game has its own count; the pages count with the API
    assert api.send(tokens[1], {"do": "chat", "text": "hi"}, "b0").status_code == 201
    page_seat = app.test_client()
    assert page_seat.get(f"/g/{gid}/s/{tokens[0]}").status_code == 303
    token = csrf_of(page_seat.get(f"/g/{gid}").text)
    answer = page_seat.post(
        f"/g/{gid}/act",
        data={"csrf_token": token, "cmd": json.dumps({"do": "chat"}), "text": "hi", "key": "p1"},
    )
    _refused(answer, "chat")
    # a refused chat or a rule refusal costs nothing: seat 2 sends one bad, then three good
    assert api.send(tokens[2], {"do": "chat", "text": " "}, "c0").status_code in (400, 409)
    assert [
        api.send(tokens[2], {"do": "chat", "text": "ok"}, f"c{i}").status_code for i in (1, 2, 3)
    ] == [201] * 3
    with app.app_context():
        chats = (
            db.session.execute(select(EventRecord.seat).where(EventRecord.type == "chat"))
            .scalars()
            .all()
        )
    assert sorted(chats) == [0, 0, 0, 1, 2, 2, 2]
    # a retry of a decision with its key is answered as a repeat, and costs nothing
    again = [api.send(tokens[1], {"do": "chat", "text": "hi"}, "b0") for _ in range(6)]
    assert {a.status_code for a in again} == {200}
    assert api.send(tokens[1], {"do": "chat", "text": "hi"}, "b1").status_code == 201


@pytest.mark.parametrize(
    "app_config", [{"RATELIMIT_ENABLED": True, "RATELIMIT_COMMANDS": "5 per minute"}]
)
def test_commands_per_seat(app, client) -> None:
    """Cheap commands (orders set again and again) are counted per seat too: past the limit
    a 429 in plain words, and nothing written; another seat keeps its own count."""
    with app.app_context():
        created = create_game("Flood", PLAYERS)
    gid, tokens = created.game_id, created.seat_tokens
    api = Api(client, gid)
    orders = {"do": "orders", "orders": {"stop": "allow"}}
    answers = [api.send(tokens[0], orders, f"o{i}").status_code for i in range(7)]
    assert answers == [201] * 5 + [429] * 2
    _refused(
        client.post(
            f"/api/games/{gid}/commands",
            json={"command": orders, "idempotency_key": "o9"},
            headers={"Authorization": f"Bearer {tokens[0]}"},
        ),
        "Too many moves",
    )
    with app.app_context():
        mine = db.session.execute(
            select(EventRecord.id).where(EventRecord.game_id == gid, EventRecord.seat == 0)
        ).all()
    assert len(mine) == 5
    assert api.send(tokens[1], orders, "b0").status_code == 201


@pytest.mark.parametrize(
    "app_config", [{"RATELIMIT_ENABLED": True, "RATELIMIT_BAD_SECRETS": "4 per hour"}]
)
@pytest.mark.parametrize("kind", ["seat link", "admin link", "mailed link", "bearer token"])
def test_wrong_secrets_per_address(app, kind) -> None:
    with app.app_context():
        created = create_game("Guess", PLAYERS)
        seat = db.session.execute(select(Seat).where(Seat.seat_index == 0)).scalar_one()
        mailed = seat_link(created.game_id, seat)
    gid = created.game_id
    right = {
        "seat link": f"/g/{gid}/s/{created.seat_tokens[0]}",
        "admin link": f"/g/{gid}/admin/{created.admin_token}",
        "mailed link": mailed,
        "bearer token": created.seat_tokens[0],
    }[kind]

    def attempt(client, value: str) -> Any:
        if kind == "bearer token":
            return client.get(f"/api/games/{gid}", headers={"Authorization": f"Bearer {value}"})
        return client.get(value)

    def wrong(value: str) -> str:
        return value[:-4] + ("aaaa" if not value.endswith("aaaa") else "bbbb")

    guesser = client_at(app, "203.0.113.9")
    for _ in range(6):  # the right secret does not count
        assert attempt(guesser, right).status_code in (200, 303)
    for _ in range(4):
        assert attempt(guesser, wrong(right)).status_code == 403
    _refused(attempt(guesser, wrong(right)), "wrong")
    _refused(attempt(guesser, wrong(right)), "wrong")  # still refused, still not counted
    assert attempt(guesser, right).status_code in (200, 303)  # the right one still opens
    someone_else = client_at(app, "203.0.113.10")
    assert attempt(someone_else, right).status_code in (200, 303)


@pytest.mark.parametrize(
    "app_config", [{"RATELIMIT_ENABLED": True, "RATELIMIT_BAD_SECRETS": "2 per hour"}]
)
def test_wrong_secrets_count_across_kinds_and_read_in_chinese(app) -> None:
    with app.app_context():
        created = create_game("Guess", PLAYERS)
    gid = created.game_id
    guesser = app.test_client()
    assert guesser.get(f"/g/{gid}/s/{'x' * 32}").status_code == 403
    assert guesser.get(f"/g/{gid}/admin/{'y' * 32}").status_code == 403
    answer = guesser.get(f"/api/games/{gid}", headers={"Authorization": "Bearer " + "z" * 32})
    _refused(answer, "wrong")
    answer = guesser.get(f"/g/{gid}/s/{'x' * 32}", headers={"Accept-Language": "zh-CN"})
    assert answer.status_code == 429 and "错误" in answer.text
    answer = guesser.get(f"/g/{gid}/s/{'x' * 32}", headers={"Accept-Language": "zh-TW"})
    assert answer.status_code == 429 and "錯誤" in answer.text


def test_limits_off_by_setting(app) -> None:
    """The shared fixtures turn the limits off; then nothing is counted."""
    off = make_app(app.config["SQLALCHEMY_DATABASE_URI"], app.config["CLOCK"])
    client = off.test_client()
    for i in range(12):
        body = {"players": _players(3, str(i)), "creator_email": ORGANISER}
        assert client.post("/api/games", json=body).status_code == 201
    with off.app_context():
        db.session.remove()
        db.engine.dispose()


def test_limits_hold_across_processes_with_redis(app, clock) -> None:
    """Two apps (two processes' worth: each its own limiter and storage) on one Redis database
    share the count; two apps on memory storage do not (so the first result means something)."""
    url = app.config["SQLALCHEMY_DATABASE_URI"]

    def made_by(apps: list, tries: int) -> int:
        made = 0
        for i in range(tries):
            client = apps[i % 2].test_client()
            body = {"players": _players(3, f"{id(apps)}-{i}"), "creator_email": ORGANISER}
            answer = client.post("/api/games", json=body)
            assert answer.status_code in (201, 429)
            made += answer.status_code == 201
        return made

    limits = {"RATELIMIT_ENABLED": True, "RATELIMIT_NEW_GAMES": "3 per hour"}
    with own_redis_db(REDIS_DB) as redis_url:
        shared = [make_app(url, clock, RATELIMIT_STORAGE_URI=redis_url, **limits) for _ in "ab"]
        assert made_by(shared, 8) == 3
    apart = [make_app(url, clock, RATELIMIT_STORAGE_URI="memory://", **limits) for _ in "ab"]
    assert made_by(apart, 8) == 6
    for each in shared + apart:
        with each.app_context():
            db.session.remove()
            db.engine.dispose()


def test_limits_never_stop_the_game_when_their_storage_is_down(app, clock) -> None:
    """Nobody listens on the storage's port: every request is served, uncounted (logged)."""
    down = make_app(
        app.config["SQLALCHEMY_DATABASE_URI"],
        clock,
        RATELIMIT_ENABLED=True,
        RATELIMIT_STORAGE_URI=f"redis://127.0.0.1:{free_port()}/0",
        RATELIMIT_NEW_GAMES="1 per hour",
    )
    client = down.test_client()
    for i in range(3):
        body = {"players": _players(3, f"down{i}"), "creator_email": ORGANISER}
        assert client.post("/api/games", json=body).status_code == 201
    with down.app_context():
        created = create_game("Down", PLAYERS)
    api = Api(client, created.game_id)
    assert api.send(created.seat_tokens[0], {"do": "chat", "text": "hi"}, "k").status_code == 201
    assert api.game("x" * 32).status_code == 403
    with down.app_context():
        db.session.remove()
        db.engine.dispose()
