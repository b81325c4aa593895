"""What a commit sends to the worker, read back from a real Redis broker nobody consumes: one
mail task after a commit that wrote notification rows, nothing after one that made no mail
(a chat, a deadline moved), since the deadlines workers find deadlines in the database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
import redis
from imtheboss.web.app.tasks_out import QUEUES
from imtheboss.web.games.create import create_game
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Deadline, db
from sqlalchemy import select
from support.app import make_app
from support.deal import PLAYERS
from support.redis_db import own_redis_db

REDIS_DB = 9  # this test's own Redis database number (support.redis_db.own_redis_db)
WINDOWS = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


@pytest.fixture
def broker() -> Iterator[str]:
    """The URL of the Redis database the app sends its tasks to."""
    with own_redis_db(REDIS_DB) as url:
        yield url


def sent(url: str) -> list[tuple[str, str]]:
    """The ``(queue, task name)`` of every message waiting in the broker, which it empties."""
    client = redis.Redis.from_url(url)
    out = []
    for queue in QUEUES:
        while (raw := client.lpop(queue)) is not None:
            out.append((queue, json.loads(raw)["headers"]["task"]))
    client.close()
    return out


def test_only_a_commit_that_made_mail_sends_a_task(app, clock, broker) -> None:
    database = app.config["SQLALCHEMY_DATABASE_URI"]
    tasks = make_app(database, clock, TASKS=True, REDIS_URL=broker)
    mail = [("mail", "imtheboss.worker.tasks.game_changed")]
    with tasks.app_context():
        gid = create_game("Tasks", PLAYERS, WINDOWS, seed=1).game_id
        assert sent(broker) == mail  # the invitations
        submit(gid, 1, {"do": "chat", "text": "hello"}, "c1")
        assert sent(broker) == []
        due = db.session.execute(select(Deadline.due_at)).scalar_one()
        submit(gid, None, {"do": "extend", "seconds": 600}, "extend:1")
        assert db.session.execute(select(Deadline.due_at)).scalar_one() == due + timedelta(
            seconds=600
        )
        db.session.rollback()
        assert sent(broker) == []  # a deadline moved, no mail: nothing to tell
        clock.advance(seconds=4300)
        submit(gid, None, {"do": "timeout"}, "timeout:w0")  # the next seat's turn: a mail
        assert sent(broker) == mail
        submit(gid, None, {"do": "timeout"}, "timeout:w0")  # the same key: nothing new
        assert sent(broker) == []
        db.session.remove()
        db.engine.dispose()
