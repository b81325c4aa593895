"""A claimed batch of deadlines fired in one transaction (``imtheboss.web.games.timeouts``, through
``imtheboss.worker.firing.fire_round``), on the real PostgreSQL with a clock of the test's own:
it writes what a timeout submitted alone writes, one game's bad state or a row the database
refuses holds up no other game, and a timeout fired before (a doubled or stale claim, or one
whose key another transaction wrote while the batch waited for the game's lock) appends
nothing.

The games have hour-long windows (``support.worker.SLOW``), so the running worker (on the real
clock) leaves them alone; the test's clock is set past their first deadline.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import psycopg
from imtheboss.engine.game import Command, decide_state
from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.mail.notify import notifications_for
from imtheboss.web.models import (
    SERVER_SCOPE,
    CommandRecord,
    Deadline,
    EventRecord,
    Notification,
    db,
)
from imtheboss.web.store.rows import STATES
from sqlalchemy import event, select, update
from support.wait import wait_for
from support.worker import slow_games, timed_out_windows


def written(game_id: str) -> dict[str, Any]:
    """What the game's rows say, without ids or the game's id: its events, commands, deadline
    rows, outbox rows (but the invitations, each with its seat's own link) and game row."""
    events = db.session.execute(
        select(EventRecord.seq, EventRecord.type, EventRecord.body, EventRecord.seat)
        .where(EventRecord.game_id == game_id)
        .order_by(EventRecord.seq)
    ).all()
    commands = db.session.execute(
        select(
            CommandRecord.scope,
            CommandRecord.idempotency_key,
            CommandRecord.body,
            CommandRecord.first_seq,
            CommandRecord.last_seq,
        ).where(CommandRecord.game_id == game_id)
    ).all()
    deadlines = db.session.execute(
        select(
            Deadline.window_id, Deadline.kind, Deadline.due_at, Deadline.state, Deadline.remind_at
        )
        .where(Deadline.game_id == game_id)
        .order_by(Deadline.window_id)
    ).all()
    notes = db.session.execute(
        select(
            Notification.seat_index,
            Notification.kind,
            Notification.body,
            Notification.urgent,
            Notification.seq,
            Notification.dedupe_key,
        )
        .where(Notification.game_id == game_id, Notification.kind != "invited")
        .order_by(Notification.id)
    ).all()
    game = get_game(game_id)
    row = (game.status, game.last_seq, game.snapshot_seq, game.snapshot is None)
    db.session.rollback()
    return {
        "events": [tuple(e) for e in events],
        "commands": [tuple(c) for c in commands],
        "deadlines": [tuple(d) for d in deadlines],
        "notes": [(*n[:5], n[5].replace(game_id, "G")) for n in notes],
        "game": row,
    }


def test_a_batch_writes_what_each_timeout_alone_writes(quiet_app, ahead):
    """Twin games (the same seed and seats): the one fired alone through the service and the
    others fired together in one batch end with the same events, command, deadline rows,
    outbox rows and game row; the batch is one transaction (two commits in all, with the
    claim's); the process holds each game's state after it."""
    from imtheboss.worker.firing import fire_round
    from imtheboss.worker.tasks import fire

    app, clock = ahead
    alone = slow_games(app, 1, "alone")[0]  # made at the same moment of the test's clock
    together = [slow_games(app, 1, f"together{i}")[0] for i in range(3)]
    clock.advance(hours=1, minutes=1)
    with app.app_context():
        assert fire(alone, "w0") == ("fired", True)
        commits: list[object] = []
        count = commits.append
        event.listen(db.engine, "commit", count)
        try:
            assert fire_round(10) == {"fired": 3}
        finally:
            event.remove(db.engine, "commit", count)
        assert len(commits) == 2  # the claim's, the batch's
        expected = written(alone)
        assert expected["events"] and expected["notes"] and expected["commands"]
        for game_id in together:
            assert written(game_id) == expected
            held = STATES.get(game_id)
            assert held is not None and held.seq == expected["game"][1]
        assert fire_round(10) == {}


def test_one_games_bad_state_does_not_hold_up_the_others(quiet_app, ahead, caplog):
    """A game whose state cannot be loaded fails in the batch, logged; the others fire in the
    same round. Its deadline stays open, claimed: it is taken again once the claim is stale."""
    from imtheboss.worker.firing import fire_round

    app, _clock = ahead
    games = slow_games(quiet_app, 4, "bad")
    broken = games[1]
    with app.app_context():
        assert get_game(broken).snapshot is None  # loaded from its events: break the first
        db.session.execute(
            update(EventRecord)
            .where(EventRecord.game_id == broken, EventRecord.seq == 1)
            .values(body={"v": 1})
        )
        db.session.commit()
        STATES.drop(broken)
        with caplog.at_level(logging.ERROR, logger="imtheboss.web.games.timeouts"):
            assert fire_round(10) == {"fired": 3, "failed": 1}
        assert any(broken in r.getMessage() for r in caplog.records)
        for game_id in games:
            assert timed_out_windows(game_id) == ([] if game_id == broken else ["w0"])
        row = db.session.execute(select(Deadline).where(Deadline.game_id == broken)).scalar_one()
        assert row.state == "open" and row.scheduled_at is not None
        db.session.rollback()


def test_a_batch_the_database_refuses_is_fired_one_by_one(quiet_app, ahead, caplog):
    """One game's timeout would write an outbox row whose dedupe key is taken (a row the
    database refuses): the batch is rolled back and each claim fired alone, so only that game
    fails and the others fire once."""
    from imtheboss.worker.firing import fire_round

    app, _clock = ahead
    games = slow_games(quiet_app, 4, "refused")
    blocked = games[2]
    with app.app_context():
        before = load_state(get_game(blocked))
        events, state = decide_state(before, Command("timeout", None, {}, now_utc()))
        first = get_game(blocked).last_seq + 1
        (note, *_) = notifications_for(blocked, before, events, state, first, now_utc())
        db.session.add(Notification(**note))
        db.session.commit()
        with caplog.at_level(logging.WARNING, logger="imtheboss.worker.firing"):
            assert fire_round(10) == {"fired": 3, "failed": 1}
        assert any("one by one" in r.getMessage() for r in caplog.records)
        for game_id in games:
            assert timed_out_windows(game_id) == ([] if game_id == blocked else ["w0"])


def test_a_timeout_fired_before_appends_nothing_in_a_batch(quiet_app, ahead):
    """A claim of a deadline fired before (a doubled claim): the batch finds its key used and
    says ``duplicate``; the game's log does not change."""
    from imtheboss.web.games.timeouts import submit_timeouts
    from imtheboss.worker.firing import fire_round

    app, _clock = ahead
    first, second = slow_games(quiet_app, 2, "twice")
    with app.app_context():
        assert fire_round(10) == {"fired": 2}
        seq = get_game(first).last_seq
        db.session.rollback()
        results = submit_timeouts([(first, "w0"), (second, "w1")], now_utc())
        assert results == ({(first, "w0"): "duplicate", (second, "w1"): "not_due"}, [])
        assert get_game(first).last_seq == seq and timed_out_windows(first) == ["w0"]


def test_a_key_written_while_the_batch_waited_for_the_lock(quiet_app, ahead, pg_url):
    """Another transaction holds a game's row and writes its timeout's command meanwhile; the
    batch, waiting for that lock, read the key as unused: its write finds it used, and the
    claims are fired one by one: the other games fire, that one is a duplicate, and nothing
    is appended twice."""
    from imtheboss.worker.firing import claim_due, fire_claims

    app, _clock = ahead
    games = slow_games(quiet_app, 3, "race")
    taken = games[0]
    other = psycopg.connect(pg_url.replace("postgresql+psycopg://", "postgresql://"))
    other.execute("SELECT 1 FROM games WHERE id = %s FOR UPDATE", (taken,))
    with app.app_context():
        claims = claim_due(now_utc(), 10)
    results: list[Any] = []

    def fire_them() -> None:
        with app.app_context():
            results.append(fire_claims(claims, now_utc()))
            db.session.remove()

    thread = threading.Thread(target=fire_them)
    thread.start()
    waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    with psycopg.connect(pg_url.replace("postgresql+psycopg://", "postgresql://")) as probe:
        wait_for(lambda: probe.execute(waiting).fetchone()[0], what="the batch to wait")
    with app.app_context():
        seq = get_game(taken).last_seq
        db.session.rollback()
    other.execute(
        "INSERT INTO commands (game_id, seat, scope, idempotency_key, body, first_seq, last_seq,"
        " created_at) VALUES (%s, NULL, %s, 'timeout:w0', '{\"do\": \"timeout\"}', %s, %s, now())",
        (taken, SERVER_SCOPE, seq + 1, seq),
    )
    other.commit()
    other.close()
    thread.join(60)
    (outcomes,) = results
    assert outcomes == {"fired": 2, "duplicate": 1}
    with app.app_context():
        assert timed_out_windows(taken) == []
        assert all(timed_out_windows(g) == ["w0"] for g in games[1:])
