"""A submit at the minimum: what it sends to PostgreSQL, counted with SQLAlchemy's events (a count,
not a timing), and what it writes.

A chat is four round trips: ``BEGIN``, the game row locked together with the events after its
snapshot, one statement writing the command (its idempotency key checked by the unique
constraint, no read before it), its events and the game row, ``COMMIT``. No statement reads the
deadline rows (they are diffed from the windows before and after), no ORM object is added (Core
and one ``WITH`` statement), and no connection is pinged before use: a dead pooled connection is
retried once at the start of the transaction instead (``web/store/retry.py``)."""

from __future__ import annotations

import copy
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.game import Command, decide
from imtheboss.engine.state import replay
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.engine.windows import due_windows
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import SNAPSHOT_EVERY, get_game, load_events, load_state
from imtheboss.web.games.seats import set_status
from imtheboss.web.games.submit import submit
from imtheboss.web.models import CommandRecord, Deadline, EventRecord, db
from imtheboss.web.store.rows import STATES, Held
from psycopg.types.json import Jsonb
from sqlalchemy import event, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from support.api_client import Api
from support.postgres import end_connections
from support.wait import wait_for

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


@contextmanager
def round_trips() -> Iterator[list[str]]:
    """The round trips the app's engine makes while the block runs: ``BEGIN``, each statement's
    first line, ``COMMIT``, ``ROLLBACK``, and ``PING`` for a pool's pre-ping."""
    engine = db.engine
    seen: list[str] = []

    def statement(conn, cursor, sql, params, context, many) -> None:
        seen.append(sql.strip().splitlines()[0])

    listeners = {
        "begin": lambda conn: seen.append("BEGIN"),
        "commit": lambda conn: seen.append("COMMIT"),
        "rollback": lambda conn: seen.append("ROLLBACK"),
        "before_cursor_execute": statement,
    }
    ping = engine.dialect.do_ping

    def counted_ping(dbapi_connection: Any) -> bool:
        seen.append("PING")
        return ping(dbapi_connection)

    for name, fn in listeners.items():
        event.listen(engine, name, fn)
    engine.dialect.do_ping = counted_ping  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        engine.dialect.do_ping = ping  # type: ignore[method-assign]
        for name, fn in listeners.items():
            event.remove(engine, name, fn)


def _chat(gid: str, seat: int, key: str) -> Any:
    return submit(gid, seat, {"do": "chat", "text": f"message {key}"}, key)


def _count(model) -> int:
    return db.session.execute(select(func.count()).select_from(model)).scalar_one()


def test_a_chat_takes_four_round_trips_early_and_late(app) -> None:
    with app.app_context():
        gid = create_game("trips", PLAYERS).game_id
        for when in ("early", "after snapshots"):
            with round_trips() as trips:
                result = _chat(gid, 1, f"{when}-1")
            assert not result.duplicate and not result.deadlines_changed
            assert len(trips) == 4, trips
            assert trips[0] == "BEGIN" and trips[-1] == "COMMIT"
            assert [t.split()[0] for t in trips[1:-1]] == ["SELECT", "WITH"]
            assert not any("deadlines" in t for t in trips)
            for i in range(3 * SNAPSHOT_EVERY):
                _chat(gid, i % 3, f"{when}-fill-{i}")
        game = get_game(gid)
        assert game.snapshot_seq > 2 * SNAPSHOT_EVERY
        assert load_state(game) == load_state(game, [])  # the tail read again when short


def test_a_command_of_several_events_inserts_them_in_one_statement(app, clock) -> None:
    """A timeout appends the window's end and the next turn: one insert, no ORM object."""
    added: list[Any] = []

    def flushing(session, context, instances) -> None:
        added.extend(session.new)

    with app.app_context():
        gid = create_game("many", PLAYERS, {"windows": {"turn": 3600}}).game_id
        clock.advance(hours=2)
        event.listen(db.session, "before_flush", flushing)
        try:
            with round_trips() as trips:
                result = submit(gid, None, {"do": "timeout"}, "timeout:w0")
        finally:
            event.remove(db.session, "before_flush", flushing)
        assert len(result.events) >= 2 and result.deadlines_changed
        written = [t for t in trips if t.split()[0] in ("WITH", "INSERT", "UPDATE")]
        assert written[0] == "WITH command AS (" and len(written) <= 4, written  # then deadlines
        assert added == []  # no ORM object: the events, command and deadlines are Core inserts
        assert not any(t.startswith("SELECT") and "deadlines" in t for t in trips)


def test_a_repeated_key_is_found_by_the_constraint_and_answered_as_before(app) -> None:
    """A7, as docs/api.md says: a repeat answers the first result and appends nothing, even when
    the rules would refuse the command now, even while paused; the key with another command is
    refused (``key_reused``); a refused command does not use up its key."""
    with app.app_context():
        gid = create_game("repeat", PLAYERS).game_id
        boss = load_state(get_game(gid)).active
        other = (boss + 1) % 3
        first = submit(gid, boss, {"do": "place_marker", "space": 3}, "k1")
        again = submit(gid, boss, {"do": "place_marker", "space": 3}, "k1")
        assert again.duplicate and again.events == first.events
        with pytest.raises(ServiceError) as reused:
            submit(gid, boss, {"do": "chat", "text": "another command"}, "k1")
        assert reused.value.code == "key_reused" and reused.value.status == 409
        with pytest.raises(ServiceError) as refused:
            submit(gid, other, {"do": "roll"}, "k2")
        assert refused.value.code == "not_your_turn"
        taken = submit(gid, other, {"do": "chat", "text": "k2 is still free"}, "k2")
        assert not taken.duplicate
        set_status(gid, "paused")
        repeat = {"do": "chat", "text": "k2 is still free"}
        assert submit(gid, other, repeat, "k2").events == taken.events
        with pytest.raises(ServiceError, match="paused"):
            submit(gid, other, {"do": "chat", "text": "x"}, "k3")
        # the two seats' commands, and the pause (an event of the organiser's, A13)
        assert _count(CommandRecord) == 3 and _count(EventRecord) == 4


def _open_rows(gid: str) -> dict[str, Any]:
    rows = db.session.execute(
        select(Deadline.window_id, Deadline.due_at).where(
            Deadline.game_id == gid, Deadline.state == "open"
        )
    ).all()
    return dict(rows)


def test_deadline_rows_follow_the_windows_through_a_game(app, clock) -> None:
    """Bots play (moves, chat, timeouts when everyone waits, a pause and a resume); after each
    command the open rows are exactly the open windows with their deadlines."""
    rng = random.Random(5)
    bots = [SensibleBot() for _ in PLAYERS]
    with app.app_context():
        gid = create_game("rows", PLAYERS, {"windows": {"turn": 3600, "negotiation": 7200}}).game_id
        for n in range(120):
            state = load_state(get_game(gid))
            db.session.commit()
            if state.phase == "game_over":
                break
            assert _open_rows(gid) == {w.id: w.deadline for w in due_windows(state)}
            if n == 40:
                set_status(gid, "paused")
                clock.advance(hours=3)
                set_status(gid, "active")  # every open deadline moves (an extend)
                continue
            seat = rng.randrange(3)
            legal = legal_commands(state, seat)
            choice = bots[seat].choose(state, seat, legal, rng) if legal else None
            clock.advance(minutes=5)
            due = next_deadline(state)
            if choice is None and due is not None:
                clock.now = max(clock.now, due)
                seat, choice = None, {"do": "timeout"}
            with suppress(ServiceError):  # a bot's guess the rules refuse changes nothing
                submit(gid, seat, choice or {"do": "chat", "text": "hm"}, f"k{n}")
        extends = [e for e in load_events(gid) if e.type == "deadlines_extended"]
        assert extends, "the resume moved the deadlines"


def test_a_deadline_row_is_written_with_its_reminder_time(app, clock) -> None:
    """Each deadline row opened by a command comes with the time of its reminder (80% of the
    window from its opening), so no sweep has to plan it."""
    with app.app_context():
        gid = create_game("remind", PLAYERS, {"windows": {"turn": 3600}}).game_id
        clock.advance(hours=2)
        submit(gid, None, {"do": "timeout"}, "t1")
        rows = db.session.execute(
            select(Deadline.opened_at, Deadline.due_at, Deadline.remind_at).where(
                Deadline.game_id == gid
            )
        ).all()
        assert len(rows) == 2
        for opened_at, due_at, remind_at in rows:
            assert remind_at == opened_at + (due_at - opened_at) * 0.8
        db.session.rollback()


def _database(app) -> str:
    return make_url(app.config["SQLALCHEMY_DATABASE_URI"]).database


def test_a_dead_pooled_connection_is_retried_once_and_writes_once(app) -> None:
    """The server ends the app's pooled connections (``pg_terminate_backend``): the next submit
    still succeeds, with no ping before, its command and event written once."""
    with app.app_context():
        gid = create_game("killed", PLAYERS).game_id
        _chat(gid, 0, "before")
        db.session.remove()  # the connection goes back to the pool, alive
        assert end_connections(_database(app)) >= 1
        with round_trips() as trips:
            result = _chat(gid, 1, "after")
        assert not result.duplicate and "PING" not in trips
        assert trips.count("BEGIN") == 2  # the first try's statement failed; one retry
        texts = [e.data["text"] for e in load_events(gid) if e.type == "chat"]
        assert texts == ["message before", "message after"]
        assert _count(CommandRecord) == 2


def test_an_api_request_on_a_dead_pooled_connection_is_answered(app, client) -> None:
    with app.app_context():
        created = create_game("killed api", PLAYERS)
        db.session.remove()
    api = Api(client, created.game_id)
    token = created.seat_tokens[2]
    assert api.send(token, {"do": "chat", "text": "one"}, "a1").status_code == 201
    assert end_connections(_database(app)) >= 1
    answer = api.send(token, {"do": "chat", "text": "two"}, "a2")
    assert answer.status_code == 201, answer.get_json()
    with app.app_context():
        assert [e.data["text"] for e in load_events(created.game_id)[1:]] == ["one", "two"]


def test_a_connection_lost_inside_a_transaction_is_not_retried(app) -> None:
    """Only the statement that begins a transaction is run again: later, what was done may or
    may not have been committed, so the error reaches the caller (a 503, a task's retry)."""
    with app.app_context():
        gid = create_game("midway", PLAYERS).game_id
        db.session.execute(text("SELECT 1"))  # the transaction has begun
        end_connections(_database(app))
        with pytest.raises(DBAPIError) as lost:
            _chat(gid, 0, "midway")
        assert lost.value.connection_invalidated
        db.session.rollback()
        assert [e.type for e in load_events(gid)] == ["game_started"]


def test_a_change_waiting_to_be_flushed_is_never_dropped_by_a_retry(app, clock) -> None:
    """A session holding a change would lose it in the retry's rollback: no retry then."""
    with app.app_context():
        gid = create_game("pending", PLAYERS).game_id
        db.session.remove()
        db.session.add(
            Deadline(game_id=gid, window_id="w99", kind="turn", due_at=clock.now + timedelta(1))
        )
        end_connections(_database(app))
        with pytest.raises(DBAPIError):  # the caller hears of it: nothing silently dropped
            db.session.execute(select(Deadline.id))  # the autoflush is the first statement
        db.session.rollback()
        assert "w99" not in _open_rows(gid)


def _other_process(app) -> Any:
    """A connection of its own to the app's database, as another server process has."""
    url = make_url(app.config["SQLALCHEMY_DATABASE_URI"]).set(drivername="postgresql")
    return psycopg.connect(url.render_as_string(hide_password=False))


def _append_chat(conn: Any, gid: str, state: Any, at: Any) -> None:
    """Append the chat of seat 0 after ``state`` as another process would (not committed)."""
    (chat,) = decide(state, Command("chat", 0, {"text": "elsewhere"}, at))
    conn.execute(
        "INSERT INTO events (game_id, seq, type, body, seat, created_at)"
        " VALUES (%s, %s, 'chat', %s, 0, now())",
        (gid, state.seq + 1, Jsonb({"v": chat.v, **chat.data})),
    )
    conn.execute("UPDATE games SET last_seq = %s WHERE id = %s", (state.seq + 1, gid))


def test_events_committed_while_a_submit_waits_for_the_lock_are_read(app, clock) -> None:
    """The events read with the lock are those of the statement's view: a submit that waited for
    the lock while another appended misses that one's events there, counts them short, and
    reads them again, so its state is the whole log's."""
    with app.app_context():
        gid = create_game("race", PLAYERS).game_id
        state = load_state(get_game(gid))
        db.session.remove()
    results: list[Any] = []

    def second() -> None:
        with app.app_context():
            results.append(_chat(gid, 1, "second"))
            db.session.remove()

    with _other_process(app) as other:
        other.execute("SELECT 1 FROM games WHERE id = %s FOR UPDATE", (gid,))
        waiting = threading.Thread(target=second)
        waiting.start()
        wait_for(lambda: _waits_for_a_lock(other), 10, every=0.01, what="the submit to wait")
        _append_chat(other, gid, state, clock.now)
        other.commit()
        waiting.join(10)
    (result,) = results
    assert [seq for seq, _ in result.events] == [3]
    with app.app_context():
        assert result.state == replay(load_events(gid)) == load_state(get_game(gid))


def _waits_for_a_lock(conn: Any) -> bool:
    (waiting,) = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND wait_event_type = 'Lock'"
    ).fetchone()
    return waiting > 0


def test_the_state_this_process_wrote_last_is_the_base_of_its_next_submit(app, clock) -> None:
    """After a submit the process holds the game's state (``STATES``); the next submit here
    reads only the events after it, also those another process appended meanwhile; the held
    state is never changed; one whose event is not the game's (a database restored from a
    backup: the event is missing, or another one was written at that seq) is not used."""
    with app.app_context():
        gid = create_game("held", PLAYERS).game_id
        neighbour = create_game("another game, its events at the same seqs", PLAYERS).game_id
        _chat(neighbour, 0, "one")
        first = _chat(gid, 1, "one")
        _chat(neighbour, 0, "two")
        held = STATES.get(gid)
        assert (held.seq, held.at) == (2, clock.now) and held.state is first.state
        kept = copy.deepcopy(held.state)
        with _other_process(app) as other:
            _append_chat(other, gid, held.state, clock.now)
            other.commit()
        second = _chat(gid, 2, "two")
        assert [s for s, _ in second.events] == [4]
        assert second.state == replay(load_events(gid)) and held.state == kept
        assert STATES.get(gid).seq == 4
        for seq, at in ((9, clock.now), (4, clock.now - timedelta(seconds=1))):
            never = copy.deepcopy(second.state)
            never.money[0] += 100  # a state this game never had
            STATES.put(gid, Held(seq, at, never))
            clock.advance(minutes=1)
            later = _chat(gid, 0, f"after {seq}")
            assert later.state == replay(load_events(gid)) and later.state.money[0] < 100
