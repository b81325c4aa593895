"""Deadlines with a real Celery worker and beat, Redis and PostgreSQL (A4-A6).

Windows are seconds long: the worker runs on the real clock in another process. Nobody acts in
these games, so every window ends by its deadline (A5: the server plays the silent player's
turn) and each window must time out exactly once.
"""

from __future__ import annotations

import importlib
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from imtheboss.web.app import tasks_out
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import set_status
from imtheboss.web.models import CommandRecord, Deadline, EventRecord, Notification, db
from sqlalchemy import select, text
from support.worker import (
    flush_redis,
    players,
    timed_out_windows,
    wait_for,
)

FAST = {"windows": {"turn": 3, "stop": 3, "last_call": 3, "negotiation": 4}}
SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def deadline_rows(game_id: str) -> dict[str, Deadline]:
    rows = db.session.execute(select(Deadline).where(Deadline.game_id == game_id)).scalars()
    out = {r.window_id: r for r in rows}
    db.session.rollback()
    return out


def timeouts(game_id: str) -> list[EventRecord]:
    rows = (
        db.session.execute(
            select(EventRecord)
            .where(EventRecord.game_id == game_id, EventRecord.type == "timed_out")
            .order_by(EventRecord.seq)
        )
        .scalars()
        .all()
    )
    db.session.rollback()
    return rows


def assert_each_window_once(game_id: str, before: datetime) -> None:
    """No window timed out twice, none before its deadline; every deadline due before
    ``before`` is ``done`` and timed out."""
    events = timeouts(game_id)
    counts = Counter(e.body["window"] for e in events)
    twice = {w: n for w, n in counts.items() if n > 1}
    assert not twice, f"windows timed out more than once: {twice}"
    rows = deadline_rows(game_id)
    for event in events:
        row = rows[event.body["window"]]
        assert event.created_at >= row.due_at, f"{row.window_id} timed out before its deadline"
    for row in rows.values():
        if row.due_at < before:
            assert row.state == "done", f"{row.window_id} due {row.due_at} is {row.state}"
            assert counts[row.window_id] == 1, f"{row.window_id} never timed out"


def test_deadlines_fire_and_the_game_moves_on(app, worker):
    with app.app_context():
        gid = create_game("Fast", players("fast"), FAST, seed=1).game_id
        # A5: the silent active player's turn is played for them, window after window.
        wait_for(lambda: len(timed_out_windows(gid)) >= 3, 30, what="3 turn timeouts")
        set_status(gid, "paused")
        paused = datetime.now(UTC)
        assert_each_window_once(gid, paused - timedelta(seconds=1))
        windows = timed_out_windows(gid)
        assert windows[:3] == ["w0", "w1", "w2"]
        # Fired when due, not at the next sweep: the firing threads look every quarter second.
        rows = deadline_rows(gid)
        lateness = [
            (e.created_at - rows[e.body["window"]].due_at).total_seconds() for e in timeouts(gid)
        ]
        assert max(lateness) < 1.5, lateness
        # ... and the next seat hears at once that it is their turn: not when the sweep next
        # has a reason to look at the game (the reminder at 80% of the window, 2.4 s).
        asked = db.session.execute(
            select(Notification.created_at, Notification.emailed_at).where(
                Notification.game_id == gid, Notification.kind == "your_turn"
            )
        ).all()
        db.session.rollback()
        waited = [(sent - made).total_seconds() for made, sent in asked if sent is not None]
        assert len(waited) >= 2 and max(waited) < 1.5, waited


def test_a_deadline_task_delivered_twice_appends_one_event(quiet_app, worker):
    """The same ``fire_deadline`` sent twice by name (and found once more by the sweep) for a
    window falling due: one ``timed_out`` event, one ``timeout`` command."""
    with quiet_app.app_context():  # nothing enqueued after commit: the tasks are ours
        gid = create_game("Twice", players("twice"), {"windows": {"turn": 2}}, seed=2).game_id
        due = deadline_rows(gid)["w0"].due_at
        for _ in range(2):
            tasks_out.send("imtheboss.worker.tasks.fire_deadline", gid, "w0", eta=due)
        wait_for(lambda: "w0" in timed_out_windows(gid), 20, what="w0 to time out")
        set_status(gid, "paused")
        assert timed_out_windows(gid).count("w0") == 1
        keys = db.session.execute(
            select(CommandRecord.idempotency_key).where(CommandRecord.game_id == gid)
        ).scalars()
        assert list(keys).count("timeout:w0") == 1


@pytest.fixture
def later(quiet_app, pg_url, worker):
    """The app on the same database with its clock an hour and a minute ahead: a ``SLOW``
    game's first window is due for it, and not for the real worker's. Worker code run in this
    process (``fire_deadline.run``) enqueues to the tests' Redis database."""
    importlib.import_module("imtheboss.worker.celery_app")  # the current Celery app
    from imtheboss.web import create_app

    application = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": pg_url,
            "SECRET_KEY": quiet_app.config["SECRET_KEY"],
            "AUTO_MIGRATE": False,
            "TASKS": False,
            "BASE_URL": quiet_app.config["BASE_URL"],
            "CLOCK": lambda: datetime.now(UTC) + timedelta(hours=1, minutes=1),
        }
    )
    yield application
    with application.app_context():
        db.session.remove()
        db.engine.dispose()


def test_fire_deadline_run_twice_at_once_appends_one_event(quiet_app, later):
    """``fire_deadline`` run twice at the same moment in two threads (as two workers would),
    then once more: one event; the other runs find the window ended or the key used."""
    from imtheboss.worker.tasks import fire_deadline

    with quiet_app.app_context():
        gid = create_game("Threads", players("threads"), SLOW, seed=3).game_id
    results: list[str] = []
    gate = threading.Barrier(2)

    def run() -> None:
        with later.app_context():
            gate.wait()
            results.append(fire_deadline.run(gid, "w0"))
            db.session.remove()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    with later.app_context():
        results.append(fire_deadline.run(gid, "w0"))
        db.session.remove()
    assert sorted(results[:2]) in (["ended", "fired"], ["duplicate", "fired"]), results
    assert results[2] == "ended"
    with quiet_app.app_context():
        assert timed_out_windows(gid) == ["w0"]
        assert deadline_rows(gid)["w0"].state == "done"


def test_a_seat_cannot_switch_off_a_deadline_by_claiming_its_key(quiet_app, later):
    """A seat sends chats with the keys the scheduler uses for the first windows
    (``timeout:w0``, ``timeout:w1``: window ids are predictable): the deadline still fires,
    once (a seat's keys are the seat's own)."""
    from imtheboss.worker.tasks import fire_deadline

    with quiet_app.app_context():
        created = create_game("Claimed", players("claimed"), SLOW, seed=4)
    gid = created.game_id
    client = quiet_app.test_client()
    bearer = {"Authorization": f"Bearer {created.seat_tokens[1]}"}
    for window in ("w0", "w1"):
        response = client.post(
            f"/api/games/{gid}/commands",
            json={
                "command": {"do": "chat", "text": "mine"},
                "idempotency_key": f"timeout:{window}",
            },
            headers=bearer,
        )
        assert response.status_code == 201, response.get_json()
    with later.app_context():
        assert fire_deadline.run(gid, "w0") == "fired"
        assert fire_deadline.run(gid, "w0") == "ended"
        db.session.remove()
    with quiet_app.app_context():
        assert timed_out_windows(gid) == ["w0"]
        assert deadline_rows(gid)["w0"].state == "done"


def test_killed_worker_and_flushed_redis_every_deadline_fires_once(app, worker, redis_url):
    """The fault test: three games' first windows claimed by the deadlines worker, which is
    then killed with SIGKILL before it could fire them (the test holds the games' rows, so the
    fire waits on the lock), two more games created while it is down, and Redis flushed; after
    a restart every deadline fires exactly once (the lost claims are taken again once stale)
    and the games go on."""
    windows = {"windows": {"turn": 4, "stop": 4, "last_call": 4, "negotiation": 6}}
    with app.app_context():
        games = [
            create_game(f"Fault {i}", players(f"fault{i}"), windows, seed=10 + i).game_id
            for i in range(3)
        ]
        with db.engine.connect() as holder:  # the games' row locks, as a long submit holds them
            holder.execute(
                text("SELECT id FROM games WHERE id = ANY(:ids) FOR UPDATE"), {"ids": games}
            )

            def claimed() -> list[str]:
                rows = [deadline_rows(g).get("w0") for g in games]
                return [r.game_id for r in rows if r is not None and r.scheduled_at is not None]

            wait_for(claimed, 15, what="the deadlines to be claimed")
            worker.kill()
            lost = claimed()
            holder.rollback()
        assert all(deadline_rows(g)["w0"].state == "open" for g in lost)
        games += [
            create_game(f"Fault {i}", players(f"fault{i}"), windows, seed=10 + i).game_id
            for i in (3, 4)
        ]
        flush_redis(redis_url)
        pending = {(g, w) for g in games for w, r in deadline_rows(g).items() if r.state == "open"}
        assert len(pending) == 5
        worker.start()
        # The two games made while the worker was down fire when due; the claims of the killed
        # worker are taken again once they are STALE (5 s here).

        def went_on() -> bool:
            # every pending window timed out, and two windows opened after the restart too
            return all(("w0" in (seen := timed_out_windows(g))) and len(seen) >= 3 for g in games)

        wait_for(went_on, 75, every=0.5, what="the games to go on after the restart")
        for gid in games:
            set_status(gid, "paused")
        paused = datetime.now(UTC)
        for gid in games:
            assert_each_window_once(gid, paused - timedelta(seconds=2))
        for gid, window in pending:
            assert timed_out_windows(gid).count(window) == 1


def test_a_hanging_smtp_server_never_delays_a_deadline(app, smtp, worker):
    """The SMTP server accepts connections and never answers: every send of the game's mail
    hangs (more sends than the mail worker has threads). The first window still times out
    while all of them are hanging: deadlines run on a queue and in a worker of their own, which
    never runs a mail task."""
    mark = worker.mark()
    with smtp.hang() as silent, app.app_context():
        gid = create_game("Hang", players("hang", 4), {"windows": {"turn": 3}}, seed=1).game_id
        wait_for(lambda: silent.accepted >= 4, 10, what="the sends to reach the server")
        wait_for(lambda: "w0" in timed_out_windows(gid), 30, what="the first window to time out")
        given_up = silent.given_up  # sends that had stopped waiting when the deadline fired
        set_status(gid, "paused")
    assert given_up == 0, "the deadline waited for a send to give up"
    deadlines_log = worker.log_since(mark, "deadlines")
    assert "deadlines: {'fired'" in deadlines_log  # a firing thread of the deadlines worker
    for mail_task in ("deliver", "deliver_many", "send_batch", "game_changed", "remind"):
        assert f"tasks.{mail_task}[" not in deadlines_log
    assert "tasks.deliver[" in worker.log_since(mark, "worker")
    assert "firing thread" not in worker.log_since(None, "worker")  # -Q mail: none fires
