"""My games (``/me``, ``/api/me``): every seat of the signed-in address, those that wait for it
first by the soonest deadline, each with what is asked and the way into the seat; finished
games with their result; and nothing another seat may not see (the scramble)."""

from __future__ import annotations

import random
import re

from imtheboss.engine.bots import SensibleBot
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.models import Seat, db
from sqlalchemy import select
from support.home_games import make_home_games
from support.organiser import csrf_of
from support.page_forms import act
from support.play import play_to_end
from support.sign_in import signed_in_client

EMAIL = "player@example.org"
ENTRY = re.compile(r'<li class="my-game[^"]*" data-game="([^"]+)"')


def _order(page: str) -> list[str]:
    return ENTRY.findall(page)


def _open(client, gid: str, seat: int, page: str):
    return client.post(f"/me/open/{gid}/{seat}", data={"csrf_token": csrf_of(page)})


def test_the_games_that_wait_come_first_by_deadline_and_the_list_follows_a_move(app):
    games = make_home_games(app, EMAIL)
    with app.app_context():
        create_game("Not mine", [("Xi", "xi@example.org"), ("Yu", "yu@example.org")])
    client = signed_in_client(app, EMAIL)
    page = client.get("/me")
    assert page.status_code == 200
    assert _order(page.text) == games.order
    assert "<title>(3) My games" in page.text
    assert "stop it or let it happen" in page.text
    assert page.text.count("Place the marker on a space to start the game") == 2
    assert "Not mine" not in page.text
    listed = client.get("/api/me").get_json()
    assert [g["game"] for g in listed["games"]] == games.order
    assert listed["waiting"] == 3 and all(g["waiting"] for g in listed["games"])
    deadlines = [g["deadline"] for g in listed["games"]]
    assert deadlines == sorted(deadlines)
    # into the stop game's seat from the list, and let the travel card happen there
    opened = _open(client, games.stop, games.seats[games.stop], page.text)
    assert opened.status_code == 303 and opened.headers["Location"].endswith(f"/g/{games.stop}")
    act(client, games.stop, {"do": "allow"})
    page = client.get("/me")
    assert _order(page.text) == [games.soon, games.late, games.stop]
    assert "<title>(2) My games" in page.text
    listed = client.get("/api/me").get_json()
    assert [g["waiting"] for g in listed["games"]] == [True, True, False]


def test_a_seat_of_another_address_does_not_open(app):
    games = make_home_games(app, EMAIL)
    client = signed_in_client(app, "someone@example.org")
    page = client.get("/me")
    assert _order(page.text) == []
    for gid, seat in games.seats.items():
        assert _open(client, gid, seat, page.text).status_code == 403
        assert client.get(f"/g/{gid}").status_code == 403
    assert _open(client, "no-such-game", 0, page.text).status_code == 403
    anonymous = app.test_client()
    assert anonymous.post(f"/me/open/{games.stop}/0").status_code in (400, 403)
    assert anonymous.get("/me").status_code == 303
    assert anonymous.get("/api/me").status_code == 401


def test_the_api_takes_the_address_token_and_refuses_a_wrong_one(app):
    games = make_home_games(app, EMAIL)
    client = signed_in_client(app, EMAIL)
    settings = client.get("/me/settings")
    made = client.post("/me/token", data={"csrf_token": csrf_of(settings.text)})
    assert made.status_code == 200
    token = re.search(r'<code class="token">([^<]+)</code>', made.text).group(1)
    api = app.test_client()  # no cookie
    answer = api.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200
    assert [g["game"] for g in answer.get_json()["games"]] == games.order
    assert api.get("/api/me", headers={"Authorization": "Bearer wrong-token"}).status_code == 403
    again = client.post("/me/token", data={"csrf_token": csrf_of(settings.text)})
    assert again.status_code == 200
    old = api.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert old.status_code == 403  # the new token replaced it
    newest = re.search(r'<code class="token">([^<]+)</code>', again.text).group(1)
    assert api.get("/api/me", headers={"Authorization": f"Bearer {newest}"}).status_code == 200
    client.post("/sign-out", data={"csrf_token": csrf_of(client.get("/me").text)})
    revoked = api.get("/api/me", headers={"Authorization": f"Bearer {newest}"})
    assert revoked.status_code == 403  # signing out revokes the API token too


def test_a_finished_game_shows_its_result(app, clock):
    players = [("Ann", EMAIL), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]
    with app.app_context():
        gid = create_game("Over", players, seed=5).game_id
        state = load_state(get_game(gid))
        rng = random.Random(5)
        final = play_to_end(app, clock, gid, state, [SensibleBot()] * 3, rng)
    client = signed_in_client(app, EMAIL)
    page = client.get("/me").text
    assert "The game is over." in page
    money = final.money[0]
    if final.winners == [0]:
        assert f"You won with {money} M." in page
    else:
        assert f"you finished with {money} M." in page or f"{money} M." in page
    entry = client.get("/api/me").get_json()["games"][0]
    assert entry["phase"] == "game_over" and entry["result"] and not entry["waiting"]


def test_a_signed_in_player_opening_the_game_page_directly_gets_their_seat(app):
    games = make_home_games(app, EMAIL)
    client = signed_in_client(app, EMAIL)
    for gid, seat in games.seats.items():
        page = client.get(f"/g/{gid}")  # no seat link, no "open" from /me
        assert page.status_code == 200, page.text[:300]
        assert "Open the link from your invitation" not in page.text
        with app.app_context():  # the page was this seat's: it marked the game seen for it
            row = db.session.execute(
                select(Seat).where(Seat.game_id == gid, Seat.seat_index == seat)
            ).scalar_one()
            assert row.last_seen_at is not None
    stranger = signed_in_client(app, "someone@players.imtheboss.net")
    answer = stranger.get(f"/g/{games.stop}")
    assert answer.status_code == 403 and "Open the link from your invitation" in answer.text


def _zones(page: str) -> set[str]:
    """The zones the page's times are written in (``… 14:00 UTC+8``)."""
    return set(re.findall(r"\d\d:\d\d (UTC[+-]?[\d:]*)", page))


def test_every_game_s_times_are_in_the_player_s_one_zone(app):
    """Seats in different zones (one Asia/Shanghai, the others UTC): /me writes every time in
    the player's zone (its defaults), said once on the page; without one, UTC, and a way to
    choose."""
    from imtheboss.web.players.people import player_row

    games = make_home_games(app, EMAIL)
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == games.soon, Seat.email == EMAIL)
        ).scalar_one()
        seat.timezone = "Asia/Shanghai"
        db.session.commit()
    client = signed_in_client(app, EMAIL)
    page = client.get("/me").text
    assert _zones(page) == {"UTC"}, page
    assert "Times are in UTC." in page and "Choose your time zone" in page
    with app.app_context():
        player_row(EMAIL, create=True).timezone = "America/Lima"
        db.session.commit()
    page = client.get("/me").text
    assert _zones(page) == {"UTC-5"}, page
    assert "Times are in UTC-5, Lima." in page and "Choose your time zone" not in page
