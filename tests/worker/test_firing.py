"""Deadlines claimed in batches from the database, reminders found by their stored time and mail
queued again by the sweep (``imtheboss.worker.firing``, ``imtheboss.web.mail.reminders``,
``imtheboss.worker.tasks``), run in this process on the real PostgreSQL with a clock of the
test's own.

The games have hour-long windows, so the running worker (on the real clock) leaves them alone;
the test's clock is set past their deadlines. Two threads stand for two worker processes: each
has its own database connection, and ``FOR UPDATE SKIP LOCKED`` is PostgreSQL's.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Deadline, Notification, db
from sqlalchemy import func, select, update
from support.worker import slow_games, timed_out_windows

STALE = 30  # DEADLINE_STALE_SECONDS of the apps here (the default)


def test_two_workers_claim_due_deadlines_in_batches_and_fire_each_once(quiet_app, ahead):
    """24 deadlines due; two workers claim batches of 5 at the same moment, round after
    round, and fire what they claimed: no deadline is claimed by both or twice, both share the
    work, and each window times out once."""
    from imtheboss.worker.firing import claim_due
    from imtheboss.worker.tasks import fire

    app, _clock = ahead
    games = slow_games(quiet_app, 24, "batch")
    claims: dict[int, list[list[tuple[str, str]]]] = {0: [], 1: []}
    gate = threading.Barrier(2)

    def work(worker: int) -> None:
        with app.app_context():
            for _round in range(4):
                gate.wait(30)  # both claim at once
                got = claim_due(now_utc(), 5)
                claims[worker].append(got)
                for game_id, window_id in got:
                    assert fire(game_id, window_id)[0] == "fired"
            db.session.remove()

    threads = [threading.Thread(target=work, args=(n,)) for n in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    taken = [claim for worker in claims.values() for batch in worker for claim in batch]
    assert sorted(taken) == sorted((g, "w0") for g in games)  # each once, none missed
    assert all(len(batch) <= 5 for worker in claims.values() for batch in worker)
    assert len(claims[0][0]) == len(claims[1][0]) == 5  # the first round: a batch each
    with quiet_app.app_context():
        assert all(timed_out_windows(g) == ["w0"] for g in games)


def test_a_dead_workers_claims_are_taken_again_once_stale(quiet_app, ahead):
    """A worker claims three due deadlines and dies before firing them: nobody can take them
    while the claim is fresh; once it is ``DEADLINE_STALE_SECONDS`` old the next round claims
    and fires each, once."""
    from imtheboss.worker.firing import claim_due, fire_round

    app, clock = ahead
    games = slow_games(quiet_app, 3, "lost")
    with app.app_context():
        lost = claim_due(now_utc(), 10)
        assert sorted(lost) == sorted((g, "w0") for g in games)
        clock.advance(seconds=STALE - 1)
        assert fire_round(10) == {}  # still claimed
        clock.advance(seconds=2)
        assert fire_round(10) == {"fired": 3}
        assert fire_round(10) == {}
        assert all(timed_out_windows(g) == ["w0"] for g in games)


def test_paused_games_deadlines_are_not_claimed(quiet_app, ahead):
    """A paused game's due deadline waits: it is claimed once the game goes on (the resume
    moves it by the time paused, A1: it was a minute overdue, and is again)."""
    from imtheboss.web.games.seats import set_status
    from imtheboss.worker.firing import claim_due

    app, clock = ahead
    (paused,) = slow_games(quiet_app, 1, "paused")
    with app.app_context():
        due = db.session.execute(select(Deadline.due_at)).scalar_one()
        set_status(paused, "paused")
        assert claim_due(now_utc(), 10) == []
        clock.advance(seconds=3600)
        set_status(paused, "active")  # moved an hour on
        assert claim_due(now_utc(), 10) == [(paused, "w0")]
        assert db.session.execute(select(Deadline.due_at)).scalar_one() == due + timedelta(hours=1)
        db.session.rollback()


def reminder_rows(game_id: str) -> list[Notification]:
    rows = list(
        db.session.execute(
            select(Notification).where(
                Notification.game_id == game_id, Notification.kind == "reminder"
            )
        ).scalars()
    )
    db.session.rollback()
    return rows


def test_reminders_are_found_by_their_time_and_a_lost_batch_is_claimed_again(quiet_app, ahead):
    """Each open deadline gets its reminder time (80% of the window); the sweep's claim takes
    the due ones; a batch whose mail task was lost is claimed again once its lease has run, and
    then written: one reminder for the seat that owes the answer, none twice. A deadline moved
    later meanwhile gets its new time and no reminder yet."""
    from imtheboss.web.mail.reminders import claim_reminders, plan_reminders, write_reminders

    app, clock = ahead
    games = slow_games(quiet_app, 3, "remind")
    clock.now = datetime.now(UTC) + timedelta(minutes=50)  # past 80% of the hour, not due
    with app.app_context():
        plan_reminders()  # the running worker's sweep may have planned them first: the same
        rows = db.session.execute(select(Deadline).where(Deadline.game_id.in_(games))).scalars()
        for row in rows:
            assert row.remind_at == row.opened_at + (row.due_at - row.opened_at) * 0.8
        db.session.rollback()
        lost = claim_reminders(now_utc(), 10)
        assert sorted(g for _, g in lost) == sorted(games)
        assert claim_reminders(now_utc(), 10) == []  # leased to the lost task
        moved = games[2]
        submit(moved, None, {"do": "extend", "seconds": 3600}, "extend:1")
        clock.advance(seconds=STALE + 1)
        again = claim_reminders(now_utc(), 10)
        assert sorted(again) == sorted(lost)
        made = write_reminders(again, now_utc())
        assert len(made) == 2
        for gid in games[:2]:
            (row,) = reminder_rows(gid)
            assert row.urgent and row.body["window"] == "w0" and row.id in made
        assert reminder_rows(moved) == []
        row = db.session.execute(select(Deadline).where(Deadline.game_id == moved)).scalar_one()
        assert (
            not row.reminded and row.remind_at == row.opened_at + (row.due_at - row.opened_at) * 0.8
        )
        db.session.rollback()
        assert write_reminders(again, now_utc()) == []  # a task delivered twice writes nothing
        assert claim_reminders(now_utc(), 10) == []


def test_mail_the_queue_lost_is_queued_again_once_not_at_every_sweep(quiet_app, ahead):
    """Pending rows whose retry is due (for the test's clock; the running worker, on the real
    clock, finds them in their backoff and leaves them pending): the mail sweep queues each
    again, then not at the next sweeps while that task may still be on its way, and again once
    ``QUEUED_AGAIN`` has run."""
    from imtheboss.worker.tasks import QUEUED_AGAIN, _requeue_mail

    app, clock = ahead
    (gid,) = slow_games(quiet_app, 1, "requeue")
    with quiet_app.app_context():
        db.session.execute(
            update(Notification)
            .where(Notification.game_id == gid)
            .values(attempts=1, emailed_at=datetime.now(UTC))
        )
        db.session.commit()
        urgent = db.session.execute(
            select(func.count()).where(Notification.game_id == gid, Notification.urgent)
        ).scalar_one()
        db.session.rollback()
    assert urgent >= 3

    def still_pending() -> int:
        # a deliver task already on its way when the rows were set back may still send one:
        # the sweep queues what is pending when it runs
        with quiet_app.app_context():
            found = db.session.execute(
                select(func.count()).where(
                    Notification.game_id == gid,
                    Notification.urgent,
                    Notification.email_state == "pending",
                )
            ).scalar_one()
            db.session.rollback()
            return found

    with app.app_context():
        first = _requeue_mail(now_utc())  # one deliver task each
        assert first >= 2 and first == still_pending()
        clock.advance(seconds=1)
        assert _requeue_mail(now_utc()) == 0
        clock.advance(seconds=QUEUED_AGAIN.total_seconds() - 2)
        assert _requeue_mail(now_utc()) == 0
        clock.advance(seconds=2)
        again = _requeue_mail(now_utc())
        assert again >= 2 and again == still_pending()
