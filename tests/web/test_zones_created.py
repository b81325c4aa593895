"""Time zones from a game's creation: the create form and the API give each player a zone (and
the organiser one for their mail), every zone box offers the server's list of zones, and the
organiser's mail names the game by its title only when the creator's browser signed in as
that address (else by what the server chose); its admin link is a button and wraps."""

from __future__ import annotations

import re

from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.say.display import page_time
from sqlalchemy import select
from support.deal import PLAYERS
from support.organiser import mail_text, new_game_form
from support.sign_in import signed_in_client

ORGANISER = "org@example.org"
TITLE = "Friday deals"


def _zones(gid: str) -> list[str]:
    return list(
        db.session.execute(
            select(Seat.timezone).where(Seat.game_id == gid).order_by(Seat.seat_index)
        ).scalars()
    )


def _organiser_mail(gid: str):
    row = db.session.execute(
        select(Notification).where(Notification.game_id == gid, Notification.kind == "organiser")
    ).scalar_one()
    return compose(get_game(gid), None, [row])


def _only_game() -> str:
    return db.session.execute(select(Game.id)).scalar_one()


def test_the_form_gives_each_player_and_the_organiser_a_zone(app, client) -> None:
    page = client.get("/new")
    assert 'id="zone-list"' in page.text
    assert re.search(r'<option value="Asia/Taipei" label="UTC\+8, Taipei">', page.text)
    chinese = client.get("/new", query_string={"lang": "zh_Hant"}).text
    assert re.search(r'<option value="Asia/Taipei" label="UTC\+8 [^"]*北">', chinese)
    assert page.text.count('list="zone-list"') == 7  # the organiser's and one per player row
    data = new_game_form(
        client,
        PLAYERS,
        title=TITLE,
        creator_email=ORGANISER,
        creator_timezone="Asia/Taipei",
        **{"players-0-timezone": "Asia/Taipei", "players-1-timezone": "America/New_York"},
    )
    created = client.post("/new", data=data)
    assert created.status_code == 303, created.text[:2000]
    with app.app_context():
        gid = _only_game()
        assert _zones(gid) == ["Asia/Taipei", "America/New_York", "UTC"]
        msg = _organiser_mail(gid)
        made = page_time(get_game(gid).created_at, "Asia/Taipei")
    assert "UTC+8" in made and made in str(msg["Subject"]) and made in mail_text(msg)
    assert TITLE not in mail_text(msg)  # the address is nobody's confirmed one


def test_an_unknown_zone_is_refused_and_nothing_made(app, client) -> None:
    for field in ("creator_timezone", "players-1-timezone"):
        data = new_game_form(client, PLAYERS, creator_email=ORGANISER, **{field: "Mars/Olympus"})
        refused = client.post("/new", data=data)
        assert refused.status_code == 400 and "unknown time zone" in refused.text
    answer = client.post(
        "/api/games",
        json={
            "players": [{"name": n, "email": e, "timezone": "Mars/Olympus"} for n, e in PLAYERS],
            "creator_email": ORGANISER,
        },
    )
    assert answer.status_code == 400 and "unknown time zone" in answer.text
    with app.app_context():
        assert db.session.execute(select(Game.id)).first() is None


def test_the_api_takes_a_zone_per_player_and_for_the_organiser(app, client) -> None:
    players = [{"name": n, "email": e} for n, e in PLAYERS]
    players[2]["timezone"] = "Europe/Berlin"
    body = {"players": players, "creator_email": ORGANISER, "creator_timezone": "Asia/Taipei"}
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 201, answer.get_json()
    gid = answer.get_json()["game_id"]
    with app.app_context():
        assert _zones(gid) == ["UTC", "UTC", "Europe/Berlin"]
        assert "UTC+8" in str(_organiser_mail(gid)["Subject"])


def test_a_player_s_own_default_zone_wins_over_the_organiser_s_guess(app, client) -> None:
    own = signed_in_client(app, PLAYERS[0][1])
    page = own.get("/me/settings")
    assert 'list="zone-list"' in page.text and 'id="zone-list"' in page.text
    with app.app_context():
        from imtheboss.web.players.people import Player

        row = db.session.get(Player, PLAYERS[0][1].lower())
        row.timezone = "Asia/Tokyo"
        db.session.commit()
    players = [{"name": n, "email": e, "timezone": "Europe/Berlin"} for n, e in PLAYERS]
    answer = client.post("/api/games", json={"players": players, "creator_email": ORGANISER})
    with app.app_context():
        assert _zones(answer.get_json()["game_id"]) == [
            "Asia/Tokyo",
            "Europe/Berlin",
            "Europe/Berlin",
        ]


def test_a_signed_in_organiser_s_mail_names_the_title_and_its_admin_link_wraps(app) -> None:
    browser = signed_in_client(app, ORGANISER)
    data = new_game_form(browser, PLAYERS, title=TITLE, creator_email=ORGANISER)
    assert browser.post("/new", data=data).status_code == 303
    with app.app_context():
        msg = _organiser_mail(_only_game())
    assert TITLE in str(msg["Subject"]) and f"This game is “{TITLE}”" in mail_text(msg)
    html = msg.get_body(("html",)).get_content()
    assert "Open your admin page" in html
    shown = re.search(r"<p style=\"([^\"]*)\">https?://[^<]*/admin/", html)
    assert shown and "overflow-wrap:anywhere" in shown.group(1)
