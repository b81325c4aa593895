"""``POST /api/games`` sets each player's language (``language``: ``en``, ``zh_Hans``,
``zh_Hant``), so a game made by a program invites a Chinese player in Chinese; a player
without one keeps their address's default; an unknown language is a 400 that makes nothing."""

from __future__ import annotations

import pytest
from imtheboss.web.models import Game, Seat, db
from sqlalchemy import func, select


@pytest.fixture
def app_config():
    return {"RATELIMIT_ENABLED": False}


def _body(*languages) -> dict:
    players = []
    for i, language in enumerate(languages):
        player = {"name": f"P{i}", "email": f"p{i}@example.org"}
        if language is not None:
            player["language"] = language
        players.append(player)
    return {"title": "By program", "players": players, "creator_email": "boss@example.org"}


def _games(app) -> int:
    with app.app_context():
        return db.session.execute(select(func.count()).select_from(Game)).scalar_one()


def test_each_players_language_is_their_seats(app, client) -> None:
    answer = client.post("/api/games", json=_body("zh_Hans", "zh_Hant", None))
    assert answer.status_code == 201, answer.get_json()
    gid = answer.get_json()["game_id"]
    with app.app_context():
        seats = db.session.execute(
            select(Seat).where(Seat.game_id == gid).order_by(Seat.seat_index)
        ).scalars()
        assert [s.locale for s in seats] == ["zh_Hans", "zh_Hant", ""]


@pytest.mark.parametrize("language", ["fr", "zh-Hans", "", 7, ["en"], None])
def test_a_language_the_server_does_not_have_is_refused(app, client, language) -> None:
    before = _games(app)
    body = _body("en", "en", "en")
    body["players"][1]["language"] = language
    answer = client.post("/api/games", json=body)
    if language == "":  # the same as leaving it out
        assert answer.status_code == 201
        return
    assert answer.status_code == 400, answer.get_json()
    error = answer.get_json()["error"]
    assert error["code"] == "bad_settings" and "language" in error["message"]
    assert _games(app) == before
