"""A reply whose database connection is lost after the reply was claimed (the claim committed,
the move not yet made): the claim is given back, so the same mail delivered again (the SMTP
sender's retry after a 451, the next IMAP round) is the move, once. The connection is lost for
real: the reply waits on the game's row, locked by another connection, and its backend is
ended (``pg_terminate_backend``, as a restart would). The row is held ``FOR NO KEY UPDATE``:
the claim's insert (its key share on the game) passes, the move's ``FOR UPDATE`` waits."""

from __future__ import annotations

import threading

import psycopg
import pytest
from imtheboss.web.games.load import load_events
from imtheboss.web.models import ReplyClaim, db
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.store import outage
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from support.postgres import admin_conn
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail
from support.wait import wait_for

WAITING = "SELECT pid FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'"


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


def _end_the_waiting_reply(name: str) -> None:
    """End the backend that waits for the game's lock."""
    with admin_conn() as conn:
        pids = wait_for(
            lambda: conn.execute(WAITING, (name,)).fetchall(),
            what="the reply to wait for the game's lock",
        )
        for (pid,) in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_a_connection_lost_after_the_claim_gives_the_claim_back(app, pg_url) -> None:
    a = asked(app)
    raw = raw_mail("place 6\n\n" + quoted(), to=a.address, sender=a.email, message_id="<l@c>")
    failed: list[BaseException] = []

    def deliver() -> None:
        with app.app_context():
            try:
                apply_reply(raw)
            except Exception as exc:
                failed.append(exc)
            db.session.remove()

    url = make_url(pg_url)
    with psycopg.connect(url.set(drivername="postgresql").render_as_string(False)) as holder:
        holder.execute("SELECT 1 FROM games WHERE id = %s FOR NO KEY UPDATE", (a.game_id,))
        thread = threading.Thread(target=deliver)
        thread.start()
        _end_the_waiting_reply(url.database)
        thread.join(60)
        holder.rollback()
    assert len(failed) == 1 and outage.transient(failed[0])
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(ReplyClaim)) == 0
        assert apply_reply(raw).status == "done"  # delivered again
        assert apply_reply(raw).status == "duplicate"  # and once more: it acts once
        placed = [e for e in load_events(a.game_id) if e.type == "marker_placed"]
    assert [e.data["space"] for e in placed] == [5]
    assert [row.body["answer"] for row in answers(app)] == ["done"]
