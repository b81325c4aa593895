"""The embedded default runs on SQLite: there the submit's reads and writes are the portable
statements (``store``: the lock, then the events; three writes), with the same answers."""

from __future__ import annotations

from imtheboss.engine.state import replay
from imtheboss.engine.windows import due_windows
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Deadline, db
from sqlalchemy import select

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


def test_a_game_plays_on_sqlite_as_on_postgresql(sqlite_app, clock) -> None:
    with sqlite_app.app_context():
        gid = create_game("sqlite", PLAYERS, {"windows": {"turn": 3600}}).game_id
        first = submit(gid, 0, {"do": "chat", "text": "hi"}, "k1")
        again = submit(gid, 0, {"do": "chat", "text": "hi"}, "k1")
        assert again.duplicate and again.events == first.events
        for i in range(2 * 32):  # timeouts and chat, past two snapshots
            clock.advance(hours=2)
            submit(gid, None, {"do": "timeout"}, f"t{i}")
            submit(gid, i % 3, {"do": "chat", "text": f"c{i}"}, f"c{i}")
        game = get_game(gid)
        assert game.snapshot_seq > 32
        assert load_state(game) == replay(load_events(gid))
        open_rows = db.session.execute(
            select(Deadline.window_id, Deadline.due_at).where(Deadline.state == "open")
        ).all()
        assert dict(open_rows) == {w.id: w.deadline for w in due_windows(load_state(game))}
