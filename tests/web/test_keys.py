"""Idempotency keys have scopes (A7): a seat's key belongs to that seat, the server's own keys
(timeouts, the resume ``extend``) live where no seat can write. A repeated key returns the first
result only within its scope; nobody can pre-claim another's key."""

from __future__ import annotations

from datetime import timedelta

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import load_events
from imtheboss.web.games.seats import set_status
from imtheboss.web.games.submit import submit
from imtheboss.web.models import CommandRecord, Deadline, db
from sqlalchemy import select
from support.api_client import Api

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


def _chat(api: Api, token: str, text: str, key: str):
    return api.send(token, {"do": "chat", "text": text}, key)


def test_one_seats_key_does_not_block_anothers(app, client) -> None:
    """Two seats may use the same key; each repeat answers its own seat's first result."""
    with app.app_context():
        created = create_game("keys", PLAYERS)
    api = Api(client, created.game_id)
    first, second = created.seat_tokens[:2]
    mine = _chat(api, first, "from Amy", "same-key")
    assert mine.status_code == 201, mine.get_json()
    theirs = _chat(api, second, "from Bill", "same-key")
    assert theirs.status_code == 201, theirs.get_json()
    again = _chat(api, first, "from Amy", "same-key")
    assert again.status_code == 200 and again.get_json()["duplicate"] is True
    assert [e["text"] for e in again.get_json()["events"]] == ["from Amy"]
    again = _chat(api, second, "from Bill", "same-key")
    assert [e["text"] for e in again.get_json()["events"]] == ["from Bill"]
    reused = _chat(api, second, "Bill again", "same-key")  # the key, another command
    assert reused.status_code == 409 and reused.get_json()["error"]["code"] == "key_reused"
    with app.app_context():
        texts = [e.data["text"] for e in load_events(created.game_id) if e.type == "chat"]
        assert texts == ["from Amy", "from Bill"]


def test_a_seats_key_never_answers_for_the_server(app, client, clock) -> None:
    """A seat that used the key the scheduler will use (``timeout:w0``) does not stop the
    timeout: the server's key is in the server's scope."""
    with app.app_context():
        created = create_game("claimed timeout", PLAYERS, {"windows": {"turn": 3600}})
    gid = created.game_id
    api = Api(client, gid)
    for token in created.seat_tokens:
        assert _chat(api, token, "mine now", "timeout:w0").status_code == 201
    with app.app_context():
        clock.advance(hours=1, seconds=1)
        result = submit(gid, None, {"do": "timeout"}, "timeout:w0")
        assert not result.duplicate and result.events[0][1].type == "timed_out"
        scopes = db.session.execute(
            select(CommandRecord.scope).where(CommandRecord.idempotency_key == "timeout:w0")
        ).scalars()
        assert sorted(scopes) == [-1, 0, 1, 2]


def test_a_seat_cannot_block_the_resume_extend(app, client, clock) -> None:
    """The ``extend`` a resume submits uses a key of the server's; a seat that guessed it (the
    pause time) before the pause changes nothing: the deadline still moves by the paused time."""
    with app.app_context():
        created = create_game("claimed resume", PLAYERS, {"windows": {"turn": 3600}})
        gid = created.game_id
        due = db.session.execute(select(Deadline.due_at)).scalar_one()
    api = Api(client, gid)
    guessed = f"resume:{clock.now.isoformat()}"
    assert _chat(api, created.seat_tokens[1], "guess", guessed).status_code == 201
    with app.app_context():
        set_status(gid, "paused")
        clock.advance(hours=2)
        set_status(gid, "active")
        moved = db.session.execute(select(Deadline.due_at)).scalar_one()
        assert moved == due + timedelta(hours=2)
        assert load_events(gid)[-1].type == "deadlines_extended"
