"""At most once: a mail is never sent twice, whatever dies around the send.

- The worker's database connections are killed (``pg_terminate_backend``) again and again while
  over 100 mails (urgent ones and batches) go out through a slow SMTP server: no mail arrives
  twice.
- A worker killed in the middle of sends leaves its rows ``sending``: they are never sent
  again; the sweep marks them ``unknown`` once they are long past any send, and the organiser
  sees that they may not have gone out.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from email.message import EmailMessage

from celery import Celery
from imtheboss.web.app import tasks_out
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.mail.compose import as_true_now
from imtheboss.web.models import Notification, db
from imtheboss.web.say import messages
from sqlalchemy import text
from sqlalchemy.engine import make_url
from support.postgres import admin_conn
from support.worker import (
    WORKER_DB_NAME,
    act,
    admin_page,
    find_opening,
    open_deal_on,
    players,
    rows_of,
    undelivered_block,
    uninvolved,
    wait_for,
)

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


def carried(mail: EmailMessage, line: str) -> bool:
    """Whether ``mail`` tells ``line`` (its plain part lists each row's line)."""
    return f"- {line}" in mail.get_body(("plain",)).get_content().splitlines()


def said(app, row: Notification) -> str:
    """The line the mail gives ``row`` (English, as the players of this test read it: its first
    part, a sentence; the parts after it go on lines of their own), as it
    reads when sent (``as_true_now``: the games no longer change while they are mailed)."""
    with app.test_request_context():
        [now] = as_true_now(load_state(get_game(row.game_id)), [row])
        line = messages.row_parts(now, [seat.name for seat in seats_of(row.game_id)])[0]
        return messages.ended(line)


class Killer(threading.Thread):
    """Terminates every connection of the worker to ``database`` (this session's: other test
    sessions may run beside it), every ``every`` seconds."""

    def __init__(self, database: str, every: float) -> None:
        super().__init__(name="pg-killer", daemon=True)
        self.database = database
        self.every = every
        self.killed = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        with admin_conn() as conn:
            while not self.stopping.wait(self.every):
                (count,) = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE application_name = %s AND datname = %s",
                    (WORKER_DB_NAME, self.database),
                ).fetchone()
                self.killed += count

    def stop(self) -> None:
        self.stopping.set()
        self.join(10)


def test_killed_database_connections_never_send_a_mail_twice(quiet_app, pg_url, smtp, worker):
    """Over 100 mails (20 games' invitations and first moves; in five of them a deal opened and
    failed, so news goes out in batches too) go out through a slow SMTP server while every
    database connection of the worker is killed every 0.15 s, until every row is ``sent`` or
    ``sending`` (taken by a try) or a minute has passed; then the kills stop and the rest gets
    there. No row is told of in two mails, and every row marked ``sent`` in exactly one (a row
    left ``sending`` in at most one)."""
    worker.tolerate(DB_ERRORS)
    smtp.delay = 0.05  # a slow server: the kills land in the middle of sends too
    seed, space = find_opening(4, lambda state, space: len(uninvolved(state, space)) >= 1)
    with quiet_app.app_context():  # nothing is queued until the test says so
        games = {}
        for i in range(20):
            title = f"Once {i}"
            gid = create_game(title, players(f"once{i}", 4), SLOW, seed=seed).game_id
            if i < 5:
                boss = open_deal_on(gid, space, 4)
                act(gid, boss, {"do": "fail"}, "k3")
            games[gid] = title

        def rows() -> list[tuple[str, Notification]]:
            return [(title, row) for gid, title in games.items() for row in rows_of(gid)]

        def tried() -> bool:
            return all(row.email_state in ("sent", "sending") for _, row in rows())

        assert len(rows()) > 100
        assert any(not row.urgent for _, row in rows())
        killer = Killer(make_url(pg_url).database, every=0.15)
        killer.start()
        try:
            for gid in games:
                tasks_out.send("imtheboss.worker.tasks.game_changed", gid)
            end = time.monotonic() + 60
            wait_for(lambda: tried() or time.monotonic() > end, 70, every=0.5)
        finally:
            killer.stop()
        wait_for(tried, 120, every=0.5, what="every row to be tried once the kills stop")
        final = rows()
    assert killer.killed > 0
    told: Counter = Counter()
    for title, row in final:
        address = players(f"once{title.split()[1]}", 4)[row.seat_index][1]
        mails = [m for m in smtp.about(title) if str(m["To"]) == address]
        line = said(quiet_app, row)
        told[row.id] = sum(carried(m, line) for m in mails)
    twice = {row.id: told[row.id] for _, row in final if told[row.id] > 1}
    assert not twice, f"{len(twice)} of {len(final)} rows were mailed more than once: {twice}"
    unsent = [row.id for _, row in final if row.email_state == "sent" and told[row.id] != 1]
    assert not unsent, f"rows marked sent but never mailed: {unsent}"


def mail_sweeps_run(redis_url: str) -> int:
    """How many mail sweeps the running workers have run since they started (Celery's worker
    stats over the broker: idle sweeps write no log line). Asked through a Celery client of
    the workers' own broker: this process's Celery app may be another test's."""
    probe = Celery(broker=redis_url)
    try:
        stats = probe.control.inspect(timeout=2.0).stats() or {}
    finally:
        probe.close()
    name = "imtheboss.worker.tasks.sweep_mail"
    return sum(worker.get("total", {}).get(name, 0) for worker in stats.values())


def test_mail_left_sending_by_a_killed_worker_is_never_sent_again(
    quiet_app, smtp, worker, redis_url
):
    """The worker is killed while its invitations hang: those rows stay ``sending`` and are not
    sent again after a restart (the sweep re-queues nothing of theirs, even once they look long
    lost), and the first turn mail that waits for its invitation stays held; past the stale
    time they become ``unknown``, the admin page says they may not have gone out, and the held
    turn mail goes out on its own."""
    with quiet_app.app_context():
        created = create_game("Lost", players("lost"), SLOW, seed=30)
        gid = created.game_id

        def invitations() -> list[Notification]:
            return [r for r in rows_of(gid) if r.kind == "invited"]

        def held() -> list[Notification]:
            return [r for r in rows_of(gid) if r.kind != "invited"]

        with smtp.hang() as silent:
            tasks_out.send("imtheboss.worker.tasks.game_changed", gid)

            def hanging() -> bool:
                rows = invitations()
                return silent.accepted >= len(rows) and all(
                    r.email_state == "sending" for r in rows
                )

            wait_for(hanging, 20, what="every invitation to hang")
            worker.kill()
        lost, waiting = invitations(), held()
        assert waiting and {r.email_state for r in waiting} == {"pending"}
        backdate(gid, "created_at", 5)  # as if the kill was long ago: a pending row is re-sent
        worker.start()
        control = create_game("Alive", players("alive"), SLOW, seed=31).game_id
        tasks_out.send("imtheboss.worker.tasks.game_changed", control)
        wait_for(lambda: len(smtp.about("Alive")) >= 4, 60, what="mail from the restarted worker")
        wait_for(
            lambda: mail_sweeps_run(redis_url) >= 3,
            60,
            what="three mail sweeps since the restart (the worker's own task counts)",
        )
        assert {r.email_state for r in invitations()} == {"sending"}
        assert {r.email_state for r in held()} == {"pending"}  # still after its invitation
        backdate(gid, "emailed_at", 11)  # long past any send (the stale time is 10 minutes)
        wait_for(
            lambda: {r.email_state for r in rows_of(gid)} == {"unknown", "sent"},
            60,
            what="the lost invitations marked unknown and the held turn mail sent",
        )
        assert {r.email_state for r in invitations()} == {"unknown"}
        page = admin_page(quiet_app, gid, created.admin_token)
        lines = [said(quiet_app, row) for row in lost]
    mails = smtp.about("Lost")
    assert len(mails) == len({r.seat_index for r in waiting})
    for mail in mails:
        body = mail.get_body(("plain",)).get_content()
        assert not any(line in body for line in lines), body
    block = undelivered_block(page)
    assert block.count("may not have gone out") == len(lost)
    assert "you are invited" in block
