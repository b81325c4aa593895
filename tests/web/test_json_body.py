"""The request's JSON body is read once per request, never carried over to the next one: an app
context (a script's, a test's) may stay pushed while many requests run in it."""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import load_events
from support.api_client import Api

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


def test_each_request_in_one_app_context_reads_its_own_body(app, client) -> None:
    with app.app_context():
        created = create_game("bodies", PLAYERS)
        api = Api(client, created.game_id)
        token = created.seat_tokens[0]
        first = api.send(token, {"do": "chat", "text": "one"}, "key-1")
        second = api.send(token, {"do": "chat", "text": "two"}, "key-2")
        assert first.status_code == 201 and second.status_code == 201, second.get_json()
        assert second.get_json()["duplicate"] is False
        texts = [e.data["text"] for e in load_events(created.game_id) if e.type == "chat"]
        assert texts == ["one", "two"]
