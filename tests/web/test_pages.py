"""The web pages on PostgreSQL with CSRF on: creating a game, signing in
by seat links, playing one deal through the pages' own forms (marker, deal, offer, counter,
accept, a travel card answered by a stop, a last call everyone passes), payouts on the game and
negotiation pages, inbox, settings, admin pause, language switch, and refusals that change
nothing."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
from imtheboss.engine.board import default_board
from imtheboss.engine.views import awaiting, view
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import CommandRecord, EventRecord, Notification, Seat, db
from imtheboss.web.players.links import seat_link
from imtheboss.web.say.display import card_text, page_time
from sqlalchemy import func, select
from support.deal import NAMES, PLAYERS
from support.organiser import confirm, confirm_link, csrf_of, mail_text, new_game_form
from support.page_forms import act, commands_on, count, form_for, forms_of, post

# -- tests -----------------------------------------------------------------------------------


def test_create_a_game_through_the_form(app, client) -> None:
    data = new_game_form(
        client,
        PLAYERS,
        title="Friday deals",
        creator_email="org@example.org",
        turn_hours="0.02",
        variants=["V4", "V6"],
        open_money="y",
    )
    response = client.post("/new", data=data)
    assert response.status_code == 303, response.text[:3000]  # a GET after the POST
    created_at = response.headers["Location"]
    response = client.get(created_at)
    assert response.status_code == 200, response.text[:3000]
    assert "/s/" not in response.text and "/admin/" not in response.text  # links go by mail
    assert client.get(created_at).status_code == 200  # a reload shows it again...
    assert app.test_client().get(created_at).status_code == 403  # to the organiser only
    assert "bill@example.org" in response.text and "org@example.org" in response.text
    assert 'class="game-nav"' not in response.text  # the game's pages open once confirmed
    with app.app_context():
        seats = db.session.execute(select(Seat).order_by(Seat.seat_index)).scalars().all()
        assert [s.name for s in seats] == NAMES  # ...and made no second game
        gid = seats[0].game_id
        assert created_at == f"/g/{gid}/created"
        settings = get_game(gid).settings["options"]
        assert settings["windows"]["turn"] == 72 and settings["variants"] == ["V4", "V6"]
        assert settings["open_money"] is True
        (mail,) = db.session.execute(select(Notification)).scalars()
        text = mail_text(compose(get_game(gid), None, [mail]))
    link = re.search(r"http://testserver(/g/([\w-]+)/admin/[\w-]+)", text)
    assert link and link.group(2) == gid, "the admin link is mailed to the organiser"
    waiting = client.get(f"/g/{gid}")  # before the confirmation: no link that loops back
    assert waiting.status_code == 409 and "Back to the game" not in waiting.text
    assert "Nothing was changed" not in waiting.text  # a page asked for changes nothing
    confirm(client, confirm_link(text, gid))
    with app.app_context():
        invited = db.session.execute(
            select(func.count()).where(Notification.kind == "invited")
        ).scalar_one()
        assert invited == 3
    # The creator's browser is the organiser now; the admin link works in another browser too.
    assert client.get(f"/g/{link.group(2)}/admin").status_code == 200
    other = app.test_client()
    assert other.get(f"/g/{link.group(2)}/admin").status_code == 403
    assert other.get(link.group(1)).status_code == 303
    assert other.get(f"/g/{link.group(2)}/admin").status_code == 200


def test_new_game_form_errors_are_400_with_the_message(app, client) -> None:
    base = new_game_form(client, PLAYERS, creator_email="org@example.org")
    del base["board_choice"]
    bad_board = {**base, "board_choice": "upload"}
    bad_board["board_file"] = (__import__("io").BytesIO(b'{"spaces": [1, 2]}'), "board.json")
    response = client.post("/new", data=bad_board, content_type="multipart/form-data")
    assert response.status_code == 400 and "16" in response.text
    not_json = {**base, "board_choice": "upload"}
    not_json["board_file"] = (__import__("io").BytesIO(b"{nope"), "board.json")
    response = client.post("/new", data=not_json, content_type="multipart/form-data")
    assert response.status_code == 400 and "not valid JSON" in response.text
    zero = {**base, "turn_hours": "0", "board_choice": "default"}
    assert client.post("/new", data=zero).status_code == 400
    with app.app_context():
        assert count(EventRecord) == 0
    two = {**base, "players-2-name": "", "players-2-email": "", "board_choice": "default"}
    response = client.post("/new", data=two, follow_redirects=True)  # R2.1: two play by V9
    assert response.status_code == 200 and "two-player rules" in response.text
    assert "V9" not in response.text  # no rule ids on a page


def test_sign_in_links_and_access(app, game) -> None:
    created, _setup, clients = game
    gid = created.game_id
    stranger = app.test_client()
    response = stranger.get(f"/g/{gid}")
    assert response.status_code == 403 and "invitation" in response.text
    assert stranger.get(f"/g/{gid}/s/not-a-real-token-at-all").status_code == 403
    assert stranger.get(f"/g/nosuchgame/s/{created.seat_tokens[0]}").status_code == 404
    assert stranger.get(f"/g/{gid}/admin/not-a-real-token-at-all").status_code == 403
    assert stranger.get("/g/nosuchgame").status_code == 404
    with app.app_context():
        other = create_game("other", PLAYERS)
    assert stranger.get(f"/g/{other.game_id}/s/{created.seat_tokens[0]}").status_code == 403
    page = clients[1].get(f"/g/{gid}")
    assert page.status_code == 200 and "Bill" in page.text
    assert page.headers["Cache-Control"] == "no-store"


def test_the_page_an_emailed_link_lands_on_does_not_count_as_seen(app) -> None:
    """Mail scanners prefetch links and follow the redirect: neither the page a link lands on
    nor a ``HEAD`` marks the seat as having seen the game (its news would never be mailed);
    looking at the game again does."""
    with app.app_context():
        created = create_game("Seen", PLAYERS)
        gid = created.game_id
        mail_link = urlsplit(seat_link(gid, seats_of(gid)[0])).path

    def seen() -> int:
        with app.app_context():
            return db.session.execute(
                select(Seat.last_seen_seq).where(Seat.game_id == gid, Seat.seat_index == 0)
            ).scalar_one()

    for link in (f"/g/{gid}/s/{created.seat_tokens[0]}", mail_link):
        for method in ("GET", "HEAD"):
            scanner = app.test_client()
            answer = scanner.open(link, method=method, follow_redirects=True)
            assert answer.status_code == 200 and answer.request.path == f"/g/{gid}"
            assert scanner.head(f"/g/{gid}").status_code == 200
    assert seen() == 0
    assert scanner.get(f"/g/{gid}").status_code == 200  # a second look: a person reading
    assert seen() > 0


def test_play_a_deal_through_the_pages(app, game) -> None:
    """Marker, deal, offer, counter, accept, travel answered by a stop, close with a last call
    everyone passes; payouts on the game page and the negotiation page."""
    created, s, clients = game
    gid = created.game_id
    boss, provider = clients[s.boss], clients[s.provider]
    traveller, stopper = clients[s.traveller], clients[s.stopper]
    investor = f"investor:{s.letter}"

    assert {"do": "place_marker", "space": s.space} in commands_on(boss, gid)
    assert commands_on(provider, gid) == [{"do": "chat"}]  # not their turn: only talk
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    page = provider.get(f"/g/{gid}").text
    assert f"Negotiation on space {s.space + 1}" in page  # players count spaces from 1

    act(provider, gid, {"do": "offer", "card": investor}, price="3", price_kind="cash")
    counter = {"do": "propose", "to": s.provider, "card": investor}
    act(boss, gid, counter, price="2", price_kind="cash")
    # The provider sees the counter and accepts exactly those terms (A7: the price is named).
    act(provider, gid, {"do": "accept", "with": s.boss, "letter": s.letter, "price": {"cash": 2}})
    page = boss.get(f"/g/{gid}").text
    proceeds = default_board().spaces[s.space].shares * 2
    assert f"committed 2 of {proceeds} M" in page

    act(traveller, gid, {"do": "travel", "card": s.travel_card, "target": investor})
    page = stopper.get(f"/g/{gid}").text
    assert "Card waiting" in page and "Still to answer" in page
    assert "Stop " in page
    act(stopper, gid, {"do": "stop"})

    act(boss, gid, {"do": "close"})
    page = provider.get(f"/g/{gid}").text
    assert "Last call" in page and "Pass (let the deal close)" in page
    act(provider, gid, {"do": "pass"})
    response = act(traveller, gid, {"do": "pass"})
    follow = traveller.get(response.headers["Location"]).text
    assert "Deal closed on space" in follow  # the flashed result

    page = boss.get(f"/g/{gid}").text
    assert f"+{proceeds - 2} M" in page and "Deal closed" in page
    assert "Your money:" in page and f"{proceeds - 2} M" in page
    other = provider.get(f"/g/{gid}").text
    assert "hidden" in other  # R7.1: other seats' money stays hidden (A8)

    deals = provider.get(f"/g/{gid}/deals")
    assert deals.status_code == 200 and "#1" in deals.text
    timeline = provider.get(f"/g/{gid}/deals/1")
    text = timeline.text
    assert timeline.status_code == 200
    for expected in ("Payouts", "stopped it", "passed", "Agreement", "The boss proposes", "offers"):
        assert expected in text, expected
    assert f'{NAMES[s.provider]}</td><td class="num">+2 M' in text
    assert provider.get(f"/g/{gid}/deals/2").status_code == 404
    history = provider.get(f"/g/{gid}/history")
    assert history.status_code == 200 and "Deal closed on space" in history.text


def test_inbox_shows_the_seats_own_rows_and_clears_when_seen(app, game) -> None:
    """Each seat's inbox holds its own rows, each a link to what it names; showing the rows
    marks them read (a HEAD does not), rows written later stay new."""
    created, s, clients = game
    gid = created.game_id
    boss, provider = clients[s.boss], clients[s.provider]

    def unread() -> set[int]:
        with app.app_context():
            query = select(Notification.seat_index).where(Notification.read_at.is_(None))
            return set(db.session.execute(query).scalars())

    assert boss.head(f"/g/{gid}/inbox").status_code == 200 and s.boss in unread()
    first = boss.get(f"/g/{gid}/inbox").text
    assert "Place the marker to start the game" in first  # only the first player's row
    assert 'class="note unread' in first and "new since you last looked" in first
    with app.app_context():
        (mine,) = [a for a in awaiting(load_state(get_game(gid))) if a["seat"] == s.boss]
    assert f'href="/g/{gid}#window-{mine["window"]}">Place the marker' in first
    assert s.boss not in unread() and s.provider in unread()
    other = provider.get(f"/g/{gid}/inbox").text
    assert "Place the marker" not in other and "You are invited" in other
    assert f'<a href="/g/{gid}">You are invited' in other
    assert s.provider not in unread()
    again = provider.get(f"/g/{gid}/inbox").text
    assert 'class="note unread' not in again and "new since you last looked" not in again

    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    page = boss.get(f"/g/{gid}/inbox").text  # the window answered: its event in the history
    assert re.search(rf'href="/g/{gid}/history\?page=1#ev-\d+">Place the marker', page)
    page = provider.get(f"/g/{gid}/inbox").text  # news of the deal: its negotiation's timeline
    (seq,) = re.findall(rf'href="/g/{gid}/deals/1#ev-(\d+)"', page)
    assert f'id="ev-{seq}"' in provider.get(f"/g/{gid}/deals/1").text
    assert page.count('class="note unread') == 1  # only the row written since


def test_settings_save(app, game) -> None:
    created, _s, clients = game
    gid = created.game_id
    page = clients[0].get(f"/g/{gid}/settings")
    assert page.status_code == 200
    data = {"notify": "must_act", "timezone": "Asia/Shanghai", "language": ""}
    assert post(clients[0], f"/g/{gid}/settings", csrf_of(page.text), **data).status_code == 303
    bad = {**data, "timezone": "Mars/Olympus"}
    response = post(clients[0], f"/g/{gid}/settings", csrf_of(page.text), **bad)
    assert response.status_code == 400 and "unknown time zone" in response.text
    with app.app_context():
        seat = db.session.execute(select(Seat).where(Seat.seat_index == 0)).scalar_one()
        assert (seat.notify, seat.timezone) == ("must_act", "Asia/Shanghai")
    # Times now show in that zone, which they name: the game started 09:00 UTC = 17:00 in
    # Shanghai.
    assert "17:00 UTC+8</time>" in clients[0].get(f"/g/{gid}/history").text
    assert "09:00 UTC</time>" in clients[1].get(f"/g/{gid}/history").text
    assert "Settings saved." in clients[0].get(f"/g/{gid}/settings").text  # the first save's
    chinese = {**data, "language": "zh_Hans"}  # the notice speaks the language just chosen
    saved = post(clients[0], f"/g/{gid}/settings", csrf_of(page.text), **chinese)
    assert saved.status_code == 303
    shown = clients[0].get(saved.headers["Location"]).text
    assert "设置已保存。" in shown and "Settings saved." not in shown


def test_the_browsers_zone_is_taken_in_one_step(app, game) -> None:
    """The game page holds the offer (shown by static/app.js when the browser's zone differs);
    its POST sets the seat's zone, a zone this server does not know is a 400."""
    created, _s, clients = game
    gid = created.game_id
    page = clients[0].get(f"/g/{gid}").text
    assert f'id="zone-guess" method="post" action="/g/{gid}/zone" data-zone="UTC"' in page
    token = csrf_of(page)
    for bad in ("Mars/Olympus", "", "../../etc/passwd", "x" * 5000):
        response = post(clients[0], f"/g/{gid}/zone", token, timezone=bad)
        assert response.status_code == 400 and "unknown time zone" in response.text
    assert post(app.test_client(), f"/g/{gid}/zone", token, timezone="UTC").status_code in (
        400,  # no session: no CSRF token of its own
        403,
    )
    response = post(clients[0], f"/g/{gid}/zone", token, timezone="Asia/Taipei")
    assert response.status_code == 303 and response.headers["Location"] == f"/g/{gid}"
    with app.app_context():
        seat = db.session.execute(select(Seat).where(Seat.seat_index == 0)).scalar_one()
        assert seat.timezone == "Asia/Taipei"
    page = clients[0].get(f"/g/{gid}").text
    assert "Times are now shown in UTC+8, Taipei." in page and 'data-zone="Asia/Taipei"' in page
    assert "Keep UTC+8, Taipei" in page and "Asia/Taipei" not in page.replace('"Asia/Taipei"', "")


def test_page_times_name_their_zone(app) -> None:
    at = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    with app.test_request_context():
        assert page_time(at, "UTC") == "Sun 2026-03-01 09:00 UTC"
        assert page_time(at, "Asia/Kolkata") == "Sun 2026-03-01 14:30 UTC+5:30"
        assert page_time(at.isoformat(), "America/St_Johns") == "Sun 2026-03-01 05:30 UTC-3:30"
        assert page_time(None, "UTC") == ""


def test_admin_pause_makes_act_refuse(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    admin = app.test_client()
    assert admin.get(f"/g/{gid}/admin/{created.admin_token}").status_code == 303
    page = admin.get(f"/g/{gid}/admin")
    assert page.status_code == 200 and "bill@example.org" in page.text
    form = form_for(clients[s.boss], gid, do="place_marker", space=s.space)
    response = admin.post(f"/g/{gid}/admin/pause", data={"csrf_token": csrf_of(page.text)})
    assert response.status_code == 303
    data = {k: v for k, v in form["fields"].items() if not k.endswith("[]")}
    response = clients[s.boss].post(form["action"], data=data)
    assert response.status_code == 409 and "paused" in response.text
    assert "paused" in clients[s.boss].get(f"/g/{gid}").text
    # A seat is not the organiser.
    token = csrf_of(clients[s.boss].get(f"/g/{gid}/settings").text)
    assert post(clients[s.boss], f"/g/{gid}/admin/resume", token).status_code == 403
    admin_token = csrf_of(admin.get(f"/g/{gid}/admin").text)
    assert post(admin, f"/g/{gid}/admin/resume", admin_token).status_code == 303
    assert clients[s.boss].post(form["action"], data=data).status_code == 303
    # Fix an email; resend an invitation (the new link goes to the seat's address, never to
    # the organiser's page; the old one stops working).
    url = f"/g/{gid}/admin/seat/1"
    assert post(admin, f"{url}/email", admin_token, email="b2@example.org").status_code == 303
    assert post(admin, f"{url}/email", admin_token, email="nope").status_code == 400
    resent = post(admin, f"{url}/resend", admin_token)
    assert resent.status_code == 200
    assert f"/g/{gid}/s/" not in resent.text and "b2@example.org" in resent.text
    assert app.test_client().get(f"/g/{gid}/s/{created.seat_tokens[1]}").status_code == 403
    # the browser that signed in with the old link is signed out too
    assert clients[1].get(f"/g/{gid}").status_code == 403
    with app.app_context():
        newest = (
            db.session.execute(
                select(Notification)
                .where(Notification.kind == "invited", Notification.seat_index == 1)
                .order_by(Notification.id.desc())
            )
            .scalars()
            .first()
        )
        link = urlsplit(newest.body["link"]).path
    assert app.test_client().get(link).status_code == 303


def test_language_switch_renders_chinese(app, game) -> None:
    created, _s, clients = game
    gid = created.game_id
    hans = clients[0].get(f"/g/{gid}?lang=zh_Hans").text
    assert "你的手牌" in hans and "简体中文" in hans
    again = clients[0].get(f"/g/{gid}").text  # the choice stays in the session
    assert "你的手牌" in again
    hant = clients[0].get(f"/g/{gid}/deals?lang=zh_Hant").text
    assert "<h1>交易</h1>" in hant and "談判" not in hant  # the nav's word is the title
    assert "Create a game" in app.test_client().get("/?lang=en").text
    assert "创建游戏" in app.test_client().get("/?lang=zh_Hans").text


def test_act_is_post_only_and_needs_csrf(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    assert clients[0].get(f"/g/{gid}/act").status_code == 405
    assert clients[0].head(f"/g/{gid}/act").status_code == 405
    form = form_for(clients[s.boss], gid, do="place_marker", space=s.space)
    data = {k: v for k, v in form["fields"].items() if k != "csrf_token"}
    with app.app_context():
        before = (count(EventRecord), count(CommandRecord))
    response = clients[s.boss].post(form["action"], data=data)
    assert response.status_code == 400 and "The form has expired" in response.text
    with app.app_context():
        assert (count(EventRecord), count(CommandRecord)) == before


def test_bad_input_is_4xx_and_changes_nothing(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss = clients[s.boss]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    provider = clients[s.provider]
    form = form_for(provider, gid, do="offer", card=f"investor:{s.letter}")
    base = {k: v for k, v in form["fields"].items() if not k.endswith("[]")}
    with app.app_context():
        before = count(EventRecord)
    for price in ("-1", "2.5", "1e3", "99999999", "", "abc"):
        response = provider.post(form["action"], data={**base, "price": price})
        assert response.status_code == 400 and "whole number" in response.text, price
    response = provider.post(form["action"], data={**base, "price": "1", "price_kind": "gold"})
    assert response.status_code == 400
    response = provider.post(form["action"], data={**base, "cmd": "{not json"})
    assert response.status_code == 400 and "could not be read" in response.text
    bare = {k: v for k, v in base.items() if not k.startswith("price")}
    response = provider.post(form["action"], data={**bare, "cmd": json.dumps({"do": "close"})})
    assert response.status_code == 409 and "Only the boss can do that." in response.text
    said = response.text.split("<main", 1)[1]  # what the player reads (not the page's head)
    assert "not_boss" not in said and "409" not in said and "R4" not in said, said
    stranger = app.test_client()
    token = csrf_of(stranger.get("/new").text)
    response = stranger.post(form["action"], data={**base, "csrf_token": token, "price": "1"})
    assert response.status_code == 403
    with app.app_context():
        assert count(EventRecord) == before
    # A double click sends the same idempotency key: one offer, the second is "already done".
    data = {**base, "price": "3", "price_kind": "cash"}
    assert provider.post(form["action"], data=data).status_code == 303
    assert provider.post(form["action"], data=data).status_code == 303
    with app.app_context():
        assert count(EventRecord) == before + 1


def test_htmx_requests_get_the_fragment(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    fragment = clients[0].get(f"/g/{gid}/fragment")
    assert fragment.status_code == 200
    assert fragment.text.lstrip().startswith('<div id="live"') and "<html" not in fragment.text
    form = form_for(clients[s.boss], gid, do="place_marker", space=s.space)
    data = {k: v for k, v in form["fields"].items() if not k.endswith("[]")}
    response = clients[s.boss].post(form["action"], data=data, headers={"HX-Request": "true"})
    assert response.status_code == 200 and 'id="live"' in response.text
    assert "places the marker" in response.text
    again = clients[s.boss].post(
        form["action"], data={**data, "key": "another-key"}, headers={"HX-Request": "true"}
    )
    assert again.status_code == 409 and 'id="live"' in again.text and "error-box" in again.text
    assert app.test_client().get(f"/g/{gid}/fragment").status_code == 403


def test_pages_show_no_hidden_information(app, game) -> None:
    """A8: at the start (nothing played yet) no page of a seat names a card that only other
    seats hold; the seed and other seats' money never show."""
    created, _s, clients = game
    gid = created.game_id
    with app.app_context():
        state = load_state(get_game(gid))
        hands = [set(view(state, seat)["you"]["hand"]) for seat in range(3)]
        with app.test_request_context():
            texts = {n: card_text(n) for h in hands for n in h}
    for seat, client in enumerate(clients):
        others = set().union(*(h for i, h in enumerate(hands) if i != seat)) - hands[seat]
        for path in ("", "/fragment", "/history", "/deals", "/inbox"):
            page = client.get(f"/g/{gid}{path}").text
            for name in others:
                assert texts[name] not in page, (seat, path, name)
            assert "Seed:" not in page  # the seed shows only after the end (A9)
        page = client.get(f"/g/{gid}").text
        assert page.count("hidden until the game ends") == 2  # the two other seats' money


def test_every_page_renders_over_a_simulated_game(app, clock) -> None:
    """Bots play a whole 4-player game (decided by the engine, events written to the game's
    log); whenever a new kind of event appears, every seat's game page offers exactly the forms
    of legal_commands and shows no other seat's money, and the other pages render."""
    import random
    from datetime import timedelta

    from imtheboss.engine.bots import RandomBot, SensibleBot
    from imtheboss.engine.errors import RuleError
    from imtheboss.engine.game import Command, decide
    from imtheboss.engine.state import apply_in_place, state_to_json
    from imtheboss.engine.views import legal_commands, next_deadline
    from imtheboss.web.games.load import get_game
    from imtheboss.web.say.command_forms import public_command

    players = [*PLAYERS, ("Dan", "dan@example.org")]
    with app.app_context():
        created = create_game("sim", players, seed=11)
        gid = created.game_id
        state = load_state(get_game(gid))
    clients = []
    for token in created.seat_tokens:
        client = app.test_client()
        client.get(f"/g/{gid}/s/{token}")
        clients.append(client)
    rng = random.Random(3)
    bots = [SensibleBot(), RandomBot(), SensibleBot(), RandomBot()]
    now = clock.now
    pending: list[tuple[Any, Any]] = []
    seen: set[str] = set()
    seq = 1

    def flush_and_check(turn: int) -> None:
        nonlocal seq
        with app.app_context():
            for event, at in pending:
                seq += 1
                body = {k: v for k, v in event.to_json().items() if k not in ("type", "by")}
                db.session.add(
                    EventRecord(
                        game_id=gid,
                        seq=seq,
                        type=event.type,
                        body=body,
                        seat=event.by,
                        created_at=at,
                    )
                )
            game_row = get_game(gid)
            game_row.last_seq = seq
            game_row.snapshot, game_row.snapshot_seq = state_to_json(state), seq  # as submit does
            db.session.commit()
        pending.clear()
        clock.now = now
        over = state.phase == "game_over"
        for seat, client in enumerate(clients):
            page = client.get(f"/g/{gid}")
            assert page.status_code == 200, (seat, page.text[:500])
            offered = sorted(
                json.dumps(f["cmd"], sort_keys=True) for f in forms_of(page.text) if f["cmd"]
            )
            legal = sorted(
                json.dumps(public_command(c), sort_keys=True) for c in legal_commands(state, seat)
            )
            assert offered == legal, seat
            assert page.text.count("hidden until the game ends") == (0 if over else 3)
        if turn % 3 and not over:
            return
        client = clients[turn % 4]
        for path in ("/fragment", "/history", "/deals", "/inbox"):
            assert client.get(f"/g/{gid}{path}").status_code == 200, path
        deals = client.get(f"/g/{gid}/deals").text.count('class="deal-item')
        if deals:
            assert client.get(f"/g/{gid}/deals/{deals}").status_code == 200

    checks = 0
    for _ in range(5000):
        if state.phase == "game_over":
            break
        due = next_deadline(state)
        command = None
        if due is not None and due <= now:
            command = Command("timeout", None, {}, now)
        else:
            for seat in rng.sample(range(4), 4):
                legal = legal_commands(state, seat)
                choice = bots[seat].choose(state, seat, legal, rng) if legal else None
                if choice is not None:
                    args = {k: v for k, v in choice.items() if k != "do"}
                    command = Command(choice["do"], seat, args, now)
                    break
        if command is None:
            now = max(now, due) if due else now + timedelta(hours=1)
            continue
        try:
            events = decide(state, command)
        except RuleError:
            now += timedelta(minutes=1)
            continue
        for event in events:
            apply_in_place(state, event)
            pending.append((event, now))
        if {e.type for e in events} - seen:
            seen |= {e.type for e in events}
            flush_and_check(checks)
            checks += 1
        now += timedelta(minutes=rng.randint(1, 45))
    flush_and_check(checks)
    assert state.phase == "game_over"
    page = clients[0].get(f"/g/{gid}").text
    assert "Game over" in page and "Seed:" in page


def test_settings_away_goes_through_submit(app, game) -> None:
    """A6: ticking "I am away" submits an ``away`` command (an event in the log), so windows
    stop waiting for the seat; unticking brings it back."""
    created, _s, clients = game
    gid = created.game_id
    data = {"notify": "every", "timezone": "UTC", "language": "", "away": "y"}
    page = clients[1].get(f"/g/{gid}/settings")
    assert 'name="away"' in page.text
    assert post(clients[1], f"/g/{gid}/settings", csrf_of(page.text), **data).status_code == 303
    with app.app_context():
        assert load_state(get_game(gid)).away[1]
        kinds = [e.type for e in load_events(gid)]
    assert kinds[-1] == "seat_away"
    page = clients[1].get(f"/g/{gid}/settings")
    assert (
        "checked"
        in page.text.split('name="away"')[0][-200:] + page.text.split('name="away"')[1][:80]
    )
    del data["away"]
    assert post(clients[1], f"/g/{gid}/settings", csrf_of(page.text), **data).status_code == 303
    with app.app_context():
        assert not load_state(get_game(gid)).away[1]


def test_emailed_window_anchor_exists_on_the_game_page(app, game) -> None:
    """Mail links end in ``#window-<id>``: the seat's own waiting line carries that id."""
    created, s, clients = game
    gid = created.game_id
    with app.app_context():
        state = load_state(get_game(gid))
    from imtheboss.engine.views import awaiting

    (mine,) = [a for a in awaiting(state) if a["seat"] == s.boss]
    assert f'id="window-{mine["window"]}"' in clients[s.boss].get(f"/g/{gid}").text


@pytest.mark.parametrize(
    ("lang", "word"), [("zh_Hans", "聊天软件通知"), ("zh_Hant", "聊天軟體通知")]
)
def test_the_admin_page_s_webhooks_are_said_in_chinese(app, game, lang, word) -> None:
    created, _s, _clients = game
    gid = created.game_id
    admin = app.test_client()
    assert admin.get(f"/g/{gid}/admin/{created.admin_token}").status_code == 303
    page = admin.get(f"/g/{gid}/admin?lang={lang}").text
    assert f"<h2>{word}</h2>" in page and f">{word}</a>" in page
    assert "Webhook" not in page
    hooks = admin.get(f"/g/{gid}/admin/hooks?lang={lang}")
    assert hooks.status_code == 200 and "Webhook" not in hooks.text and word in hooks.text
