"""The database goes away under the running workers and comes back: every process stays up and
mail goes out again.

The session's database stops taking connections and its open ones are ended
(``support.postgres.refuse_connections``: what the workers see of a PostgreSQL restart, without
stopping the shared server) until the workers have failed on it; then it takes connections
again and a new game's invitations must arrive.
"""

from __future__ import annotations

from typing import Any

from imtheboss.web.games.create import create_game
from sqlalchemy.engine import make_url
from support.postgres import allow_connections, refuse_connections
from support.worker import players, wait_for

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
DOWN = (
    r"OperationalError|terminating connection|server closed the connection|consuming input failed"
    r"|connection is (closed|lost)|connection.*(reset|broken)|not currently accepting connections"
    r"|database unreachable"
)


def test_the_workers_outlive_a_database_outage_and_mail_goes_out(
    app: Any, pg_url: str, smtp: Any, worker: Any
) -> None:
    worker.tolerate(DOWN)
    name = make_url(pg_url).database
    mark = worker.mark()
    refuse_connections(name)
    try:
        wait_for(
            lambda: "not currently accepting connections" in worker.log_since(mark),
            60,
            what="the workers to fail on the database",
        )
        assert worker.running, worker.tail()
    finally:
        allow_connections(name)
    with app.app_context():
        create_game("Back", players("back"), SLOW)
    wait_for(lambda: smtp.to(players("back")[0][1]), 90, what="the invitation after the outage")
    assert worker.running, worker.tail()
    assert "Unrecoverable error" not in worker.log_since(mark)
