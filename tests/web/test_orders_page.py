"""Standing orders (A10) and nights (A12) on the pages and in the API, on PostgreSQL: a seat sets
and sees its orders in a few taps; nobody else sees them; games made on the pages and the API
start with the default pace's orders and the away proxy (A11)."""

from __future__ import annotations

import re

import pytest
from imtheboss.engine.orders import DEFAULT_PACE, pace_orders
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.models import EventRecord, db
from sqlalchemy import select
from support.organiser import csrf_of

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]
ORDERS_FORM = {
    "stop": "allow",
    "last_call": "unless_involved",
    "price_D": "3",
    "limit": "2",
    "close": "y",
    "turn": "premove",
    "in_place": "needs_mine",
    "after_roll": "fill2",
}


def _game(app, **kw) -> tuple[str, list[str]]:
    with app.app_context():
        created = create_game("Orders", PLAYERS, seed=5, **kw)
    return created.game_id, created.seat_tokens


def _signed_in(app, gid: str, token: str):
    client = app.test_client()
    assert client.get(f"/g/{gid}/s/{token}").status_code == 303
    return client


def _checked(html: str, name: str, value: str) -> bool:
    """The radio button ``name`` = ``value`` is the checked one."""
    return re.search(rf'<input checked[^>]*name="{name}"[^>]*value="{value}"', html) is not None


def _state(app, gid: str):
    with app.app_context():
        return load_state(get_game(gid))


def test_a10_a_seat_sets_its_orders_on_its_page(app):
    """A10: the orders page shows the seat's orders as a form; posting it sends one ``orders``
    command; the game page then says in plain words which decisions the orders take."""
    gid, tokens = _game(app)
    bill = _signed_in(app, gid, tokens[1])
    page = bill.get(f"/g/{gid}/orders")
    assert page.status_code == 200 and _checked(page.get_data(as_text=True), "stop", "ask")
    answer = bill.post(
        f"/g/{gid}/orders", data={**ORDERS_FORM, "csrf_token": csrf_of(page.get_data(as_text=True))}
    )
    assert answer.status_code == 303
    orders = _state(app, gid).orders[1].to_json()
    assert orders == {
        "stop": "allow",
        "last_call": "unless_involved",
        "prices": {"D": {"cash": 3}},
        "boss": {"limits": {"*": 2}, "close": True},
        "turn": {"in_place": {"when": "needs_mine"}, "after_roll": {"when": "fill", "k": 2}},
    }
    game_page = bill.get(f"/g/{gid}").get_data(as_text=True)
    assert "Your orders let every card happen." in game_page
    assert "Your orders play your turns for you." in game_page
    again = bill.get(f"/g/{gid}/orders").get_data(as_text=True)
    assert _checked(again, "stop", "allow") and 'value="3"' in again


def test_a10_orders_are_seen_by_their_seat_only(app):
    """A10, A8: after Bill sets orders, Amy's game page, history, API view and event feed show
    nothing of them (the feed says only that something private happened)."""
    gid, tokens = _game(app)
    bill = _signed_in(app, gid, tokens[1])
    page = bill.get(f"/g/{gid}/orders").get_data(as_text=True)
    bill.post(f"/g/{gid}/orders", data={**ORDERS_FORM, "csrf_token": csrf_of(page)})
    amy = _signed_in(app, gid, tokens[0])
    for path in (f"/g/{gid}", f"/g/{gid}/history", f"/g/{gid}/fragment"):
        text = amy.get(path).get_data(as_text=True)
        assert "standing orders changed" not in text.lower() and "play your turns" not in text
    bearer = {"Authorization": f"Bearer {tokens[0]}"}
    viewed = amy.get(f"/api/games/{gid}", headers=bearer).get_json()
    assert viewed["view"]["you"]["orders"]["stop"] == "ask"  # Amy's own, untouched
    assert "orders" not in str(viewed["view"]["seats"])
    feed = amy.get(f"/api/games/{gid}/events", headers=bearer).get_json()["events"]
    private = [e for e in feed if e["type"] == "private"]
    assert private and all(set(e) == {"seq", "at", "type", "by"} for e in private)
    own = app.test_client().get(
        f"/api/games/{gid}/events", headers={"Authorization": f"Bearer {tokens[1]}"}
    )
    assert any(e["type"] == "orders_set" for e in own.get_json()["events"])


def test_a10_the_api_sets_orders_and_refuses_bad_ones(app):
    """A10: the ``orders`` command through the API; bad orders are a 400-family refusal in
    plain words that changes nothing."""
    gid, tokens = _game(app)
    client = app.test_client()
    bearer = {"Authorization": f"Bearer {tokens[2]}"}
    ok = client.post(
        f"/api/games/{gid}/commands",
        json={"command": {"do": "orders", "orders": {"stop": "allow"}}, "idempotency_key": "o1"},
        headers=bearer,
    )
    assert ok.status_code == 201
    with app.app_context():
        before = db.session.scalar(select(db.func.count()).select_from(EventRecord))
    bad = client.post(
        f"/api/games/{gid}/commands",
        json={"command": {"do": "orders", "orders": {"stop": "maybe"}}, "idempotency_key": "o2"},
        headers=bearer,
    )
    assert bad.status_code == 400 and "stop" in bad.get_json()["error"]["message"]
    with app.app_context():
        assert db.session.scalar(select(db.func.count()).select_from(EventRecord)) == before
    assert _state(app, gid).orders[2].stop == "allow"


def test_a11_games_made_on_the_pages_and_the_api_start_with_the_server_defaults(app):
    """A10, A11: a game made through the API starts every seat with the default pace's orders and
    has the away proxy at 48 hours, unless the creator says otherwise."""
    from support.organiser import confirm, confirm_link

    client = app.test_client()
    body = {
        "title": "Defaults",
        "players": [{"name": n, "email": e} for n, e in PLAYERS],
        "creator_email": "org@example.org",
    }
    made = client.post("/api/games", json=body)
    assert made.status_code == 201, made.get_json()
    gid = made.get_json()["game_id"]
    confirm(client, confirm_link(_organiser_mail(app, gid), gid))
    state = _state(app, gid)
    assert state.options.proxy_hours == 48
    assert state.orders == [pace_orders(DEFAULT_PACE)] * 3
    plain = client.post(
        "/api/games",
        json={**body, "orders": "none", "options": {"proxy_hours": 0}},
    )
    gid2 = plain.get_json()["game_id"]
    confirm(client, confirm_link(_organiser_mail(app, gid2), gid2))
    state = _state(app, gid2)
    assert state.options.proxy_hours == 0 and state.orders[0].stop == "ask"
    refused = client.post("/api/games", json={**body, "orders": "all of them"})
    assert refused.status_code == 400


def _organiser_mail(app, gid: str) -> str:
    from imtheboss.web.models import Notification

    with app.app_context():
        row = db.session.scalars(
            select(Notification).where(
                Notification.game_id == gid, Notification.kind == "organiser"
            )
        ).one()
        from imtheboss.web.mail.compose import compose

        message = compose(get_game(gid), None, [row])
        return message.get_body(("plain",)).get_content()


def test_a12_a_seat_names_its_night_when_the_game_has_quiet_hours(app):
    """A12: with quiet hours on, the orders page asks for the seat's night (in its time zone)
    and sends a ``night`` command; without them it does not ask."""
    gid, tokens = _game(app, options={"quiet_hours": True})
    bill = _signed_in(app, gid, tokens[1])
    page = bill.get(f"/g/{gid}/orders").get_data(as_text=True)
    assert 'name="night_start"' in page
    form = {
        "stop": "ask",
        "last_call": "ask",
        "turn": "ask",
        "in_place": "never",
        "after_roll": "never",
        "night_start": "23:00",
        "night_end": "07:00",
        "csrf_token": csrf_of(page),
    }
    assert bill.post(f"/g/{gid}/orders", data=form).status_code == 303
    assert _state(app, gid).nights[1] == {"start": "23:00", "end": "07:00", "zone": "UTC"}
    gid2, tokens2 = _game(app)
    plain = _signed_in(app, gid2, tokens2[1]).get(f"/g/{gid2}/orders").get_data(as_text=True)
    assert 'name="night_start"' not in plain


def test_a11_an_away_seat_says_it_is_back_in_one_tap(app):
    """A6, A11: a seat marked away sees so on its game page, with one button that brings it
    back (the server stops playing for it); the other seats see no button of its."""
    from imtheboss.web.games.submit import submit

    gid, tokens = _game(app, options={"proxy_hours": 48})
    with app.app_context():
        submit(gid, 1, {"do": "away", "away": True}, "away-1")
    bill = _signed_in(app, gid, tokens[1])
    page = bill.get(f"/g/{gid}").get_data(as_text=True)
    assert "You are marked away" in page and "I&#39;m back" in page
    form = re.search(r'<section class="card banner away".*?</section>', page, re.S).group(0)
    assert '"do": "away"' in form.replace("&#34;", '"')
    answer = bill.post(
        f"/g/{gid}/act",
        data={"csrf_token": csrf_of(form), "cmd": '{"do": "away", "away": false}', "key": "b1"},
    )
    assert answer.status_code == 303
    assert not _state(app, gid).away[1]
    amy = _signed_in(app, gid, tokens[0]).get(f"/g/{gid}").get_data(as_text=True)
    assert "You are marked away" not in amy


def test_a10_a_seat_reads_which_events_its_orders_made(app):
    """A10: an event an order made says so in its seat's own history and notices; another
    seat reads the same line without the mark. A11: the proxy's acts say the server made them."""
    from imtheboss.engine.events import Event
    from imtheboss.web.say.messages import line

    names = ["Amy", "Bill", "Cy"]
    answered = Event(
        "window_answered", {"seat": 1, "window": "w3", "answer": "pass", "order": True}, 1
    )
    rolled = Event(
        "die_rolled", {"seat": 2, "purpose": "move", "value": 3, "space": 7, "proxy": True}
    )
    with app.test_request_context():
        own, other = line(answered, names, 1), line(answered, names, 0)
        assert own.endswith("by your standing orders") and own.startswith(other)
        assert "standing orders" not in other
        assert line(rolled, names, 0).endswith("for a player away too long")


@pytest.mark.parametrize("field", ["price_D", "limit"])
def test_a10_a_huge_number_on_the_orders_page_is_refused_plainly(app, field):
    """A 400-digit price or limit gets the form back with a message (400), not a server
    error, and the seat's orders stay as they were."""
    gid, tokens = _game(app)
    bill = _signed_in(app, gid, tokens[1])
    page = bill.get(f"/g/{gid}/orders").get_data(as_text=True)
    before = _state(app, gid).orders[1]
    data = {**ORDERS_FORM, field: "9" * 400, "csrf_token": csrf_of(page)}
    answer = bill.post(f"/g/{gid}/orders", data=data)
    assert answer.status_code == 400
    assert _state(app, gid).orders[1] == before


def test_a10_saving_the_orders_page_keeps_what_it_cannot_show(app):
    """A10: orders set through the API with a price in shares, a boss limit for one letter and
    pre-move conditions of k = 1 and 5 come back unchanged when the seat saves its orders page
    untouched."""
    from imtheboss.web.games.submit import submit

    gid, tokens = _game(app)
    orders = {
        "stop": "allow",
        "last_call": "pass",
        "prices": {"C": {"shares": 2}, "D": {"cash": 3}},
        "boss": {"limits": {"C": 5, "D": 1, "*": 2}, "close": True},
        "turn": {"in_place": {"when": "fill", "k": 1}, "after_roll": {"when": "fill", "k": 5}},
    }
    with app.app_context():
        submit(gid, 1, {"do": "orders", "orders": orders}, "api-orders")
    before = _state(app, gid).orders[1]
    bill = _signed_in(app, gid, tokens[1])
    page = bill.get(f"/g/{gid}/orders").get_data(as_text=True)
    fields = dict(re.findall(r'<input[^>]*name="(price_\w|limit)"[^>]*value="([^"]*)"', page))
    data = {"stop": "allow", "last_call": "pass", "close": "y", "turn": "premove"}
    data.update(in_place="fill1", after_roll="fill5", csrf_token=csrf_of(page), **fields)
    assert bill.post(f"/g/{gid}/orders", data=data).status_code == 303
    assert _state(app, gid).orders[1] == before


def test_a10_a_deal_that_orders_play_through_in_one_command_is_told_as_it_went(app):
    """A10: the boss opens a deal and the orders play it through in the same command (the
    provider's posted price, the boss's limit accepting it, the close, the last call passed).
    The outbox reads each event in the state it made: the boss hears of the terms and of the
    agreement, though the deal is over when the command ends."""
    from imtheboss.web.games.submit import submit
    from imtheboss.web.models import Notification
    from support.deal import PLAYERS as DEAL_PLAYERS
    from support.deal import find_setup

    s = find_setup()
    with app.app_context():
        created = create_game("Cascade", DEAL_PLAYERS, seed=s.seed, starting_orders="none")
        gid = created.game_id
        pass_all = {"last_call": "pass", "stop": "allow"}
        submit(
            gid,
            s.provider,
            {"do": "orders", "orders": {**pass_all, "prices": {s.letter: {"cash": 2}}}},
            "p",
        )
        submit(gid, s.traveller, {"do": "orders", "orders": pass_all}, "t")
        boss = {**pass_all, "boss": {"limits": {"*": 3}, "close": True}}
        submit(gid, s.boss, {"do": "orders", "orders": boss}, "b")
        submit(gid, s.boss, {"do": "place_marker", "space": s.space}, "m")
        result = submit(gid, s.boss, {"do": "open_deal"}, "d")
        types = [e.type for _seq, e in result.events]
        assert "terms_set" in types and "agreement_made" in types and "deal_closed" in types
        kinds = {
            (n.seat_index, n.kind)
            for n in db.session.execute(
                select(Notification).where(Notification.game_id == gid)
            ).scalars()
        }
    assert (s.boss, "offer") in kinds and (s.boss, "agreement") in kinds
    assert (s.provider, "agreement") in kinds
