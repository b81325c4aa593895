"""The JSON API on PostgreSQL: create -> invite -> every
seat joins -> a deal is opened, negotiated (offer, counter, accept), attacked with a travel,
stopped, closed with a last call -> payouts in the views and the events; A7 (repeated keys,
``window_closed``, ``terms_changed``) and A8 (what each seat may see)."""

from __future__ import annotations

from typing import Any

import pytest
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import EventRecord, Notification, Seat, db
from sqlalchemy import func, select
from support.api_client import NAMES, Api, fill, find_deal_plan
from support.organiser import confirm, confirm_link, mail_text

PLAYERS = [{"name": n, "email": f"{n.lower()}@example.org"} for n in NAMES[:3]]


def _count(app, model) -> int:
    with app.app_context():
        return db.session.execute(select(func.count()).select_from(model)).scalar_one()


def _ok(response, status: int = 201) -> dict[str, Any]:
    assert response.status_code == status, response.get_json()
    return response.get_json()


def _refused(response, status: int, code: str, rule: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == code and error["message"]
    if rule is not None:
        assert error["rule"] == rule
    return error


def _legal(api: Api, token: str) -> list[dict[str, Any]]:
    return _ok(api.game(token), 200)["legal"]


def _pick(legal: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    found = [c for c in legal if all(c.get(k) == v for k, v in match.items())]
    assert found, f"{match} not in {legal}"
    return found[0]


def _invitations(app, game_id: str) -> dict[int, str]:
    """Seat -> the secret link its invitation carries (the outbox row the worker mails)."""
    with app.app_context():
        rows = db.session.execute(
            select(Notification)
            .where(Notification.game_id == game_id, Notification.kind == "invited")
            .order_by(Notification.seat_index)
        ).scalars()
        return {row.seat_index: row.body.get("link", "") for row in rows}


def test_create_answers_only_the_game_and_the_admin_token(app, client) -> None:
    response = client.post(
        "/api/games",
        json={
            "title": "Friday",
            "players": PLAYERS,
            "options": {"variants": ["V4"]},
            "creator_email": "org@example.org",
        },
    )
    body = _ok(response)
    assert set(body) == {"game_id", "admin_token", "status"}
    assert body["status"] == "unconfirmed"
    gid = body["game_id"]
    assert _invitations(app, gid) == {}  # nobody is invited before the organiser confirms
    with app.app_context():
        (row,) = db.session.execute(select(Notification)).scalars()
        text = mail_text(compose(get_game(gid), None, [row]))
    confirm(app.test_client(), confirm_link(text, gid))
    links = _invitations(app, gid)
    assert sorted(links) == [0, 1, 2]
    assert all(link.startswith(f"http://testserver/g/{gid}/s/") for link in links.values())
    api = Api(client, gid)
    for seat, link in links.items():  # each seat's mail carries the token that signs it in
        token = link.rsplit("/", 1)[1]
        assert token not in response.get_data(as_text=True)
        assert _ok(api.join(token), 200)["seat"] == seat
    admin = _ok(api.game(body["admin_token"]), 200)
    assert admin["seat"] is None and admin["view"]["you"] is None and admin["legal"] == []
    assert admin["game"]["title"] == "Friday" and admin["game"]["last_seq"] == 1
    assert admin["view"]["options"]["variants"] == ["V4"]
    _refused(api.send(body["admin_token"], {"do": "chat", "text": "hi"}, "k"), 403, "not_a_seat")


@pytest.mark.parametrize("open_money", [False, True])
def test_acceptance_deal_through_the_api(app, client, clock, open_money) -> None:
    plan = find_deal_plan()
    with app.app_context():  # the seed is the test's choice, so the game is created directly
        created = create_game(
            "Acceptance",
            [(p["name"], p["email"]) for p in PLAYERS],
            {"open_money": open_money},
            seed=plan.seed,
        )
    gid, token = created.game_id, created.seat_tokens
    assert sorted(_invitations(app, gid)) == [0, 1, 2]
    api = Api(client, gid)
    boss, provider = plan.boss, plan.provider

    # Every seat joins with its own link and sees itself, and only its own hand (A8).
    for seat in range(3):
        assert _ok(api.join(token[seat]), 200)["seat"] == seat
        state = _ok(api.game(token[seat]), 200)
        assert state["seat"] == seat and state["view"]["you"]["seat"] == seat
        assert len(state["view"]["you"]["hand"]) == 5
        assert all("hand" not in s for s in state["view"]["seats"])
        assert state["game"] == {
            "id": gid,
            "title": "Acceptance",
            "status": "active",
            "last_seq": 1,
            "created_at": "2026-03-01T09:00:00+00:00",
        }
    with app.app_context():
        assert all(s.joined_at is not None for s in db.session.execute(select(Seat)).scalars())

    # The first player places the marker and opens a deal; the boss plays family cards.
    first = _ok(api.game(token[boss]), 200)
    assert first["awaiting"] == [
        {"seat": boss, "for": "place_marker", "window": "w0", "until": "2026-03-02T09:00:00+00:00"}
    ]
    _ok(api.send(token[boss], _pick(first["legal"], do="place_marker", space=plan.space), "m1"))
    clock.advance(minutes=5)
    opened = _ok(api.send(token[boss], _pick(_legal(api, token[boss]), do="open_deal"), "open"))
    assert "deal_opened" in [e["type"] for e in opened["events"]]
    assert all(e["at"] == "2026-03-01T09:05:00+00:00" for e in opened["events"])
    for cmd in plan.boss_family:
        _ok(api.send(token[boss], _pick(_legal(api, token[boss]), **cmd), f"fam-{cmd['card']}"))

    # Negotiation: an offer, a raise, a stale accept (A7 terms_changed), a counter, an accept.
    offer = _pick(_legal(api, token[provider]), do="offer", card=plan.offer_card)
    _ok(api.send(token[provider], fill(offer, price={"cash": 2}), "offer-2"))
    stale = _pick(_legal(api, token[boss]), do="accept", **{"with": provider})
    assert stale["price"] == {"cash": 2}
    _ok(api.send(token[provider], fill(offer, price={"cash": 3}), "offer-3"))
    events_before = _count(app, EventRecord)
    error = _refused(api.send(token[boss], stale, "stale-accept"), 409, "terms_changed", "A7")
    assert "3" in error["message"]
    assert _count(app, EventRecord) == events_before
    counter = _pick(_legal(api, token[boss]), do="propose", to=provider, card=plan.offer_card)
    _ok(api.send(token[boss], fill(counter, price={"cash": 1}), "counter-1"))
    accept = _pick(_legal(api, token[provider]), do="accept", **{"with": boss})
    assert accept["price"] == {"cash": 1}
    agreed = _ok(api.send(token[provider], accept, "accept-1"))
    assert [e["type"] for e in agreed["events"]][-1] == "agreement_made"
    assert agreed["duplicate"] is False and agreed["last_seq"] == agreed["events"][-1]["seq"]

    # A7: the same key again returns the first result and appends nothing.
    events_before = _count(app, EventRecord)
    again = _ok(api.send(token[provider], accept, "accept-1"), 200)
    assert again["duplicate"] is True and again["events"] == agreed["events"]
    assert again["last_seq"] == agreed["last_seq"]
    assert _count(app, EventRecord) == events_before

    deal = _ok(api.game(token[boss]), 200)["view"]["deal"]
    assert deal["requirements_met"] is True
    assert [(a["provider"], a["amount"]) for a in deal["agreements"]] == [(provider, 1)]
    proceeds = deal["proceeds"]

    # The attack: a travel opens a stop window; a stop cancels it; a late allow is refused.
    attack = _ok(api.send(token[plan.attacker], plan.travel, "attack"))
    (pending,) = [e for e in attack["events"] if e["type"] == "card_pending"]
    window = pending["window"]
    seen = _ok(api.game(token[plan.bystander]), 200)
    assert seen["view"]["deal"]["pending"]["window"] == window
    assert {"do": "allow", "window": window} in seen["legal"]
    assert {a["seat"] for a in seen["awaiting"] if a["for"] == "stop"} == {
        s for s in range(3) if s != plan.attacker
    }
    stop = _pick(_legal(api, token[plan.stopper]), do="stop", window=window)
    stopped = _ok(api.send(token[plan.stopper], stop, "stop"))
    assert [e["type"] for e in stopped["events"]] == ["card_stopped"]
    events_before = _count(app, EventRecord)
    late = {"do": "allow", "window": window}
    _refused(api.send(token[plan.bystander], late, "late-allow"), 409, "window_closed", "A7")
    assert _count(app, EventRecord) == events_before
    deal = _ok(api.game(token[boss]), 200)["view"]["deal"]
    assert deal["pending"] is None and deal["travel_on"] == {}

    # Closing: the last call, both others pass, the deal closes and pays.
    called = _ok(api.send(token[boss], {"do": "close"}, "close"))
    (call,) = [e for e in called["events"] if e["type"] == "close_called"]
    for seat in (s for s in range(3) if s != boss):
        answer = _pick(_legal(api, token[seat]), do="pass", window=call["window"])
        result = _ok(api.send(token[seat], answer, f"pass-{seat}"))
    closed = [e for e in result["events"] if e["type"] == "deal_closed"]
    assert len(closed) == 1
    paid = {boss: proceeds - 1, provider: 1}
    assert closed[0]["payments"] == {str(s): m for s, m in paid.items()}

    # Payouts in the views: each seat sees its own total; others' only under open_money (R7.1).
    for seat in range(3):
        state = _ok(api.game(token[seat]), 200)
        assert state["view"]["deals_closed"] == 1
        assert state["view"]["you"]["money"] == paid.get(seat, 0)
        for other in state["view"]["seats"]:
            expected = paid.get(other["seat"], 0)
            shown = expected if open_money or other["seat"] == seat else None
            assert other["money"] == shown

    # The events: numbered 1..N without gaps, each with its time, paged, redacted per seat.
    with app.app_context():
        last_seq = get_game(gid).last_seq
        hands = load_state(get_game(gid)).hands
    for seat in range(3):
        log = _ok(api.events(token[seat]), 200)
        assert [e["seq"] for e in log["events"]] == list(range(1, last_seq + 1))
        assert log["last_seq"] == last_seq and log["more"] is False
        assert all(e["at"].endswith("+00:00") for e in log["events"])
        started = log["events"][0]
        assert started["type"] == "game_started" and "seed" not in started
        assert [isinstance(h, list) for h in started["hands"]] == [s == seat for s in range(3)]
        assert isinstance(started["draw_pile"], int)
        types = [e["type"] for e in log["events"]]
        assert types.count("card_stopped") == 1 and types.count("deal_closed") == 1
        my_hand = _ok(api.game(token[seat]), 200)["view"]["you"]["hand"]
        assert sorted(my_hand) == sorted(CARD_NAMES[c] for c in hands[seat])
    page = _ok(api.events(token[0], after=2, limit=3), 200)
    assert [e["seq"] for e in page["events"]] == [3, 4, 5] and page["more"] is True


def test_events_after_the_end_of_the_log_are_empty(app, client) -> None:
    with app.app_context():
        created = create_game("t", [(p["name"], p["email"]) for p in PLAYERS])
    api = Api(client, created.game_id)
    log = _ok(api.events(created.seat_tokens[1], after=1), 200)
    assert log == {"events": [], "last_seq": 1, "more": False}


def test_a_seat_cannot_act_as_another_by_naming_it(app, client) -> None:
    """``by`` in a command is ignored: the token decides the seat."""
    with app.app_context():
        created = create_game("t", [(p["name"], p["email"]) for p in PLAYERS])
        active = load_state(get_game(created.game_id)).active
    api = Api(client, created.game_id)
    other = (active + 1) % 3
    spoof = {"do": "place_marker", "space": 0, "by": active}
    _refused(api.send(created.seat_tokens[other], spoof, "spoof"), 409, "not_your_turn", "R2.4")
    said = _ok(api.send(created.seat_tokens[other], {"do": "chat", "text": "hello"}, "c1"))
    assert said["events"][0]["by"] == other


def test_idempotency_key_from_the_header(app, client) -> None:
    with app.app_context():
        created = create_game("t", [(p["name"], p["email"]) for p in PLAYERS])
    url = f"/api/games/{created.game_id}/commands"
    headers = {"Authorization": f"Bearer {created.seat_tokens[0]}", "Idempotency-Key": "h-1"}
    first = _ok(client.post(url, json={"command": {"do": "chat", "text": "x"}}, headers=headers))
    second = client.post(url, json={"command": {"do": "chat", "text": "x"}}, headers=headers)
    assert _ok(second, 200)["events"] == first["events"]
    assert _count(app, EventRecord) == 2
