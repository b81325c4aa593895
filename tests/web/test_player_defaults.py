"""A player's defaults (``/me/settings``): language, time zone, mail frequency, night and
standing orders given to the address's new seats (and to no other seat, nor to its seats made
before); a bad form saves nothing."""

from __future__ import annotations

from imtheboss.engine.orders import RECOMMENDED, Orders
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.models import Seat, db
from imtheboss.web.players.people import Player
from sqlalchemy import select, update
from support.organiser import csrf_of
from support.sign_in import signed_in_client

EMAIL = "player@example.org"
PLAYERS = [("Ann", EMAIL), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]
CHOICES = {
    "language": "zh_Hans",
    "timezone": "Asia/Shanghai",
    "notify": "must_act",
    "night_start": "23:00",
    "night_end": "07:00",
    "orders": "recommended",
}


def _seats(app, gid: str) -> list[tuple]:
    with app.app_context():
        return [
            (s.locale, s.timezone, s.notify)
            for s in db.session.execute(
                select(Seat).where(Seat.game_id == gid).order_by(Seat.seat_index)
            ).scalars()
        ]


def _save(client, **fields: str):
    page = client.get("/me/settings")
    assert page.status_code == 200
    return client.post("/me/settings", data={"csrf_token": csrf_of(page.text), **fields})


def test_new_seats_of_the_address_start_with_its_defaults(app):
    with app.app_context():
        before = create_game("Before", PLAYERS, {"quiet_hours": True}).game_id
    client = signed_in_client(app, EMAIL)
    assert _save(client, **CHOICES).status_code == 303
    page = client.get("/me/settings").text
    assert 'value="Asia/Shanghai"' in page and 'value="23:00"' in page
    assert "你的默认设置已保存" in page  # the notice speaks the language just chosen
    with app.app_context():
        after = create_game("After", PLAYERS, {"quiet_hours": True}).game_id
        state = load_state(get_game(after))
        old = load_state(get_game(before))
    assert _seats(app, after)[0] == ("zh_Hans", "Asia/Shanghai", "must_act")
    assert _seats(app, after)[1:] == [("", "UTC", "every")] * 2
    assert _seats(app, before) == [("", "UTC", "every")] * 3
    assert state.orders[0] == RECOMMENDED and state.orders[1] == Orders()
    assert state.nights[0] == {"start": "23:00", "end": "07:00", "zone": "Asia/Shanghai"}
    assert state.nights[1] is None and old.nights[0] is None


def test_orders_copied_from_one_of_the_address_seats(app):
    with app.app_context():
        gid = create_game("Mine", PLAYERS, starting_orders="recommended").game_id
    client = signed_in_client(app, EMAIL)
    assert _save(client, **{**CHOICES, "orders": f"copy:{gid}:0"}).status_code == 303
    with app.app_context():
        kept = db.session.get(Player, EMAIL).orders
        new = create_game("Next", PLAYERS).game_id
        state = load_state(get_game(new))
    assert kept["kind"] == "orders" and kept["from"] == f"copy:{gid}:0"
    assert state.orders[0] == RECOMMENDED and state.orders[1] == Orders()
    # another address's seat is not on offer
    assert _save(client, **{**CHOICES, "orders": f"copy:{gid}:1"}).status_code == 400


def test_a_bad_form_saves_nothing(app):
    client = signed_in_client(app, EMAIL)
    assert _save(client, **CHOICES).status_code == 303
    for bad in (
        {"timezone": "Mars/Olympus"},
        {"night_start": "23:00", "night_end": ""},
        {"night_start": "20:00", "night_end": "10:00"},
        {"night_start": "25:00", "night_end": "07:00"},
        {"notify": "sometimes"},
        {"language": "fr"},
        {"orders": "all of them"},
    ):
        answer = _save(client, **{**CHOICES, **bad})
        assert answer.status_code == 400, bad
    with app.app_context():
        row = db.session.get(Player, EMAIL)
        assert (row.locale, row.timezone, row.notify) == ("zh_Hans", "Asia/Shanghai", "must_act")
        assert row.night == {"start": "23:00", "end": "07:00"}
    assert app.test_client().get("/me/settings").status_code == 403


def test_a_seat_without_a_language_of_its_own_reads_its_game_in_the_default(app):
    with app.app_context():
        made = create_game("Before", PLAYERS)
        own = create_game("Own language", PLAYERS)
        mine = (Seat.game_id == own.game_id) & (Seat.seat_index == 0)
        db.session.execute(update(Seat).where(mine).values(locale="en"))
        db.session.commit()
    gid = made.game_id
    client = signed_in_client(app, EMAIL)
    assert _save(client, language="zh_Hant", notify="", orders="").status_code == 303
    assert '<html lang="zh-Hant">' in client.get("/me").text  # the signed-in address's pages
    browser = app.test_client()  # the seat's own link, no language chosen in the browser
    assert browser.get(f"/g/{gid}/s/{made.seat_tokens[0]}").status_code == 303
    assert '<html lang="zh-Hant">' in browser.get(f"/g/{gid}").text
    other = app.test_client()  # another seat of the game: its address chose nothing
    assert other.get(f"/g/{gid}/s/{made.seat_tokens[1]}").status_code == 303
    assert '<html lang="en">' in other.get(f"/g/{gid}").text
    mine = app.test_client()  # a seat with a language of its own keeps it
    assert mine.get(f"/g/{own.game_id}/s/{own.seat_tokens[0]}").status_code == 303
    assert '<html lang="en">' in mine.get(f"/g/{own.game_id}").text


def test_the_api_token_is_said_in_plain_words(app):
    """/me/settings in Chinese says what the token is for in plain words; the technical detail
    stays small (code), no English sentence."""
    client = signed_in_client(app, EMAIL)
    page = client.get("/me/settings?lang=zh_Hans").text
    assert "程序可以用这个令牌读取你的游戏列表。" in page
    assert "bearer" not in page and "发送到" not in page
    assert '<p class="meta">给程序员： <code>GET /api/me</code>' in page
