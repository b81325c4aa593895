"""At most once: a mail is never sent twice, whatever dies around the send.

- The worker's database connections are killed (``pg_terminate_backend``) again and again while
  100 mails go out through a slow SMTP server: no mail arrives twice.
- A worker killed in the middle of sends leaves its rows ``sending``: they are never sent
  again; the sweep marks them ``unknown`` once they are long past any send, and the organiser
  sees that they may not have gone out.
"""

from __future__ import annotations

import threading
from collections import Counter

from helpers_db import admin_conn
from helpers_worker import WORKER_DB_NAME, admin_page, players, rows_of, undelivered_block, wait_for
from imtheboss.web import queue
from imtheboss.web.models import db
from imtheboss.web.service import create_game
from sqlalchemy import text

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
DB_ERRORS = (
    r"OperationalError|terminating connection|server closed the connection|consuming input failed"
    r"|connection is (closed|lost)|connection.*(reset|broken)"
)


def backdate(game_id: str, column: str, minutes: int) -> None:
    """Move the game's notification times ``column`` back: the worker runs on the real clock."""
    db.session.execute(
        text(
            f"UPDATE notifications SET {column} = {column} - make_interval(mins => :m)"
            " WHERE game_id = :g"
        ),
        {"m": minutes, "g": game_id},
    )
    db.session.commit()


def mail_key(to: str, subject: str) -> tuple[str, str]:
    kind = "invited" if subject.endswith(": you are invited") else "place_marker"
    return to, kind


class Killer(threading.Thread):
    """Terminates every database connection of the worker, every ``every`` seconds."""

    def __init__(self, every: float) -> None:
        super().__init__(name="pg-killer", daemon=True)
        self.every = every
        self.killed = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        with admin_conn() as conn:
            while not self.stopping.wait(self.every):
                (count,) = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE application_name = %s",
                    (WORKER_DB_NAME,),
                ).fetchone()
                self.killed += count

    def stop(self) -> None:
        self.stopping.set()
        self.join(10)


def test_killed_database_connections_never_send_a_mail_twice(quiet_app, smtp, worker):
    worker.tolerate(DB_ERRORS)
    smtp.delay = 0.05  # a slow server: the kills land in the middle of sends too
    with quiet_app.app_context():
        games = [
            create_game(f"Once {i}", players(f"once{i}", 4), SLOW, seed=20 + i).game_id
            for i in range(20)
        ]
        expected = Counter()
        for gid in games:
            for row in rows_of(gid):
                address = players(f"once{games.index(gid)}", 4)[row.seat_index][1]
                expected[(address, row.kind)] += 1
        assert sum(expected.values()) == 100 and max(expected.values()) == 1
        killer = Killer(every=0.15)
        killer.start()
        try:
            for gid in games:
                queue.send("imtheboss.worker.tasks.game_changed", gid)

            def settled() -> bool:
                rows = [r for gid in games for r in rows_of(gid)]
                return all(r.email_state in ("sent", "sending") for r in rows)

            wait_for(settled, 150, every=0.5, what="every mail to be sent")
        finally:
            killer.stop()
        rows = [(gid, r) for gid in games for r in rows_of(gid)]
    assert killer.killed > 0
    received = Counter(mail_key(str(m["To"]), str(m["Subject"])) for m in smtp.messages)
    twice = {key: n for key, n in received.items() if n > 1}
    assert not twice, f"{sum(twice.values())} mails arrived more than once: {twice}"
    assert set(received) <= set(expected)
    for gid, row in rows:
        address = players(f"once{games.index(gid)}", 4)[row.seat_index][1]
        if row.email_state == "sent":
            assert received[(address, row.kind)] == 1, (address, row.kind)


def test_mail_left_sending_by_a_killed_worker_is_never_sent_again(quiet_app, smtp, worker):
    """The worker is killed while its sends hang: those rows stay ``sending`` and are not sent
    again after a restart (the sweep re-queues nothing of theirs, even once they look long
    lost); past the stale time they become ``unknown`` and the admin page says they may not
    have gone out."""
    with quiet_app.app_context():
        created = create_game("Lost", players("lost"), SLOW, seed=30)
        gid = created.game_id
        with smtp.hang() as silent:
            queue.send("imtheboss.worker.tasks.game_changed", gid)

            def hanging() -> bool:
                rows = rows_of(gid)
                return silent.accepted >= len(rows) and all(
                    r.email_state == "sending" for r in rows
                )

            wait_for(hanging, 20, what="every send to hang")
            worker.kill()
        count = len(rows_of(gid))
        backdate(
            gid, "created_at", 5
        )  # as if the kill was long ago: a pending row would be re-sent
        restarted = worker.mark()
        worker.start()
        control = create_game("Alive", players("alive"), SLOW, seed=31).game_id
        queue.send("imtheboss.worker.tasks.game_changed", control)
        wait_for(lambda: len(smtp.about("Alive")) == 4, 30, what="mail from the restarted worker")
        wait_for(
            lambda: worker.log_since(restarted, "deadlines").count("tasks.sweep[") >= 6,
            20,
            what="three sweeps since the restart (each logged when received and done)",
        )
        assert {r.email_state for r in rows_of(gid)} == {"sending"}
        backdate(
            gid, "emailed_at", 11
        )  # long past any send (the stale time is 10 minutes at least)
        wait_for(
            lambda: {r.email_state for r in rows_of(gid)} == {"unknown"},
            20,
            what="the sweep to mark the lost sends unknown",
        )
        page = admin_page(quiet_app, gid, created.admin_token)
    assert smtp.about("Lost") == []
    block = undelivered_block(page)
    assert block.count("may not have gone out") == count
    assert "you are invited" in block and "place the marker to start" in block
