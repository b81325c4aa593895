"""Each negotiation's range of events (``imtheboss.web.store.negotiations``, the ``negotiations``
table), against what splitting the whole log says (``timeline.negotiations`` over every event,
as the pages did before the table).

A whole 4-seat game (variant V3, the away proxy) is played through ``submit`` by bots that make
every kind of ending: deals closed (some followed by an end roll, the last by the game's end),
declared failed, collapsed when the negotiation deadline passed, opened and failed at once at a
turn deadline and by the proxy; seat 0 chats and sets its standing orders while deals run.

- after every command the table holds exactly the ranges of the whole log;
- the migration fills the same rows for games played before it (PostgreSQL and SQLite);
- the deals list, every negotiation's page and the game page's chat panel built from the table
  are the objects the whole log gave, for several seats and the organiser;
- a negotiation's page reads only the events of its range, the deals list one event per ended
  negotiation, the game page a bounded tail (rows read, counted on the database cursor).
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask_migrate import downgrade, upgrade
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.state import GameState, state_to_json
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.web.games import server_moves
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import db
from imtheboss.web.pages.game import CHAT, RECENT
from imtheboss.web.say import timeline
from imtheboss.web.store import negotiations
from sqlalchemy import event, text
from support.app import make_app
from support.postgres import own_database

MIGRATIONS = str(Path(__file__).resolve().parents[2] / "web" / "migrations")
BEFORE = "5c3e1f7a9b2d"  # the revision before the ranges table
SEED = 13  # a game with every ending of ENDINGS, deals failing as they open, end rolls
OPTIONS = {"variants": ["V3"], "proxy_hours": 48}
PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla", "Dan")]
ENDINGS = {"closed", "declared", "deadline", "turn_deadline", "proxy"}
COLUMNS = ("number", "first_seq", "last_seq", "end_seq", "space", "boss", "opened_at", "outcome")


# -- the game ----------------------------------------------------------------------------------


class Decliner(SensibleBot):
    """As boss, declares its deal failed at once (R6.5)."""

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: Any):
        if any(c["do"] == "fail" for c in legal):
            return {"do": "fail"}
        return super().choose(state, seat, legal, rng)


class Stubborn(SensibleBot):
    """As boss, never closes nor fails: its deals run out of time (A1)."""

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: Any):
        kept = [c for c in legal if c["do"] not in ("close", "fail")]
        return super().choose(state, seat, kept, rng)


class Sleeper:
    """Never acts: its turns time out (V3 then makes it open a deal, which fails at once), and
    after ``proxy_hours`` the server plays for it (A11)."""

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: Any):
        return None


def play(
    gid: str, clock: Any, stop: Callable[[GameState, int], bool] | None = None
) -> Iterator[tuple[GameState, list]]:
    """Play the game to its end (or until ``stop(state, commands)``), yielding the state and the
    appended ``[(seq, event)]`` after every command. Seat 0 chats every fifth command while a deal
    runs, and sets its standing orders in the third deal."""
    rng = random.Random(SEED)
    bots = [SensibleBot(), Stubborn(), Decliner(), Sleeper()]
    state = load_state(get_game(gid))
    commands = 0
    while state.phase != "game_over" and not (stop and stop(state, commands)):
        assert commands < 3000, "the game did not end"
        seat, command = _next(state, clock, rng, bots, commands)
        if command is None:
            continue
        try:
            result = submit(gid, seat, command, f"k{commands}", clock.now)
        except ServiceError as exc:
            assert exc.status == 409, exc.to_dict()
            clock.advance(minutes=1)
            continue
        commands += 1
        state = result.state
        if command["do"] != "chat":
            clock.advance(minutes=rng.randint(1, 45))
        yield state, result.events


def _next(state: GameState, clock: Any, rng: random.Random, bots: list, commands: int):
    """The next ``(seat, command)``: a timeout when one is due, seat 0's chat or orders, a bot's
    move; ``(None, None)`` after moving the clock when everyone waits."""
    due = next_deadline(state)
    if due is not None and due <= clock.now:
        return None, {"do": "timeout"}
    if state.deal is not None and commands % 5 == 4:
        return 0, {"do": "chat", "text": f"chat {commands}"}
    if state.deal is not None and state.deals_closed == 2 and not state.orders[0].prices:
        return 0, {"do": "orders", "orders": {"prices": {"C": {"cash": 3}}}}
    for seat in rng.sample(range(state.n), state.n):
        legal = legal_commands(state, seat)
        choice = bots[seat].choose(state, seat, legal, rng) if legal else None
        if choice is not None:
            return seat, choice
    clock.now = max(clock.now, due) if due else clock.now + timedelta(hours=1)
    return None, None


def new_game() -> str:
    return create_game("ranges", PLAYERS, OPTIONS, seed=SEED).game_id


# -- the whole log's answer ----------------------------------------------------------------------


def split_log(gid: str, seat: int | None) -> list[timeline.Negotiation]:
    """The negotiations as the pages made them before the table: the whole log, split."""
    players = [name for name, _email in PLAYERS]
    return timeline.negotiations(negotiations.records(gid), players, seat)


def expected_rows(gid: str) -> list[tuple]:
    """The table's rows as the whole log says they are."""
    out = []
    for neg in split_log(gid, None):
        ended = neg.end is not None
        out.append(
            (
                neg.number,
                neg.rows[0].seq,
                neg.rows[-1].seq if ended else None,
                neg.end.seq if ended else None,
                neg.space,
                neg.opener,
                neg.opened_at,
                neg.outcome,
            )
        )
    return out


def stored_rows(gid: str) -> list[tuple]:
    return [tuple(getattr(r, c) for c in COLUMNS) for r in negotiations.rows_of(gid)]


def endings(gid: str) -> set[str]:
    """How the game's negotiations ended: ``closed`` or the failure's reason."""
    out = set()
    for neg in split_log(gid, None):
        if neg.end is not None:
            out.add("closed" if neg.outcome == "closed" else neg.end.data["reason"])
    return out


# -- kept as events are appended -----------------------------------------------------------------


def test_the_ranges_follow_every_command_of_a_whole_game(app, clock) -> None:
    with app.app_context():
        gid = new_game()
        opened_at_once = tails = 0
        for state, appended in play(gid, clock):
            assert stored_rows(gid) == expected_rows(gid), (state.seq, appended)
            kinds = [e.type for _seq, e in appended]
            opened_at_once += "deal_opened" in kinds and "deal_failed" in kinds
            tails += "deal_closed" in kinds and any(timeline.is_tail(e) for _s, e in appended)
        assert endings(gid) == ENDINGS
        assert opened_at_once >= 2 and tails >= 2, (opened_at_once, tails)
        rows = negotiations.rows_of(gid)
        assert rows[-1].last_seq == get_game(gid).last_seq  # the game's end is the last deal's
        assert any(r.last_seq > r.end_seq for r in rows[:-1])  # an end roll that did not end it


# -- filled by the migration ---------------------------------------------------------------------


@pytest.fixture(params=["postgresql", "sqlite"])
def database(request, tmp_path: Path, worker_id: str) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ranges.sqlite3'}"
        return
    with own_database(f"imtheboss_ranges_{worker_id}_{os.getpid()}") as url:
        yield url


def test_the_migration_fills_the_ranges_of_games_played_before_it(database, clock) -> None:
    app = make_app(database, clock)
    with app.app_context():
        upgrade(directory=MIGRATIONS)
        finished, running = new_game(), new_game()
        for _ in play(finished, clock):
            pass
        for _ in play(running, clock, lambda state, n: n > 60 and state.deal is not None):
            pass
        kept = {gid: stored_rows(gid) for gid in (finished, running)}
        assert kept[running][-1][-1] == "running" and len(kept[finished]) > 20
        db.session.execute(text("DELETE FROM negotiations"))  # as if played before the table
        db.session.commit()
        downgrade(directory=MIGRATIONS, revision=BEFORE)
        upgrade(directory=MIGRATIONS)
        for gid, rows in kept.items():
            assert stored_rows(gid) == rows == expected_rows(gid), gid
        submit(running, 0, {"do": "chat", "text": "after the migration"}, "later")
        assert stored_rows(running) == expected_rows(running)
        db.session.remove()
        db.engine.dispose()


# -- the pages' objects --------------------------------------------------------------------------


def test_pages_built_from_the_ranges_show_what_the_whole_log_showed(app, clock) -> None:
    players = [name for name, _email in PLAYERS]
    with app.app_context(), app.test_request_context():
        gid = new_game()
        compared = 0
        for state, _appended in play(gid, clock):
            deal_open = state.deal is not None
            if not (state.phase == "game_over" or (deal_open and state.seq % 7 == 0)):
                continue
            game = get_game(gid)
            for seat in (0, 2, None):
                whole = split_log(gid, seat)
                listed = negotiations.listed(gid, players, seat)
                assert [_summary(n) for n in listed] == [_summary(n) for n in whole]
                for neg in whole:
                    assert negotiations.one(game, neg.number, players, seat) == (neg, len(whole))
                assert negotiations.one(game, len(whole) + 1, players, seat) is None
                chat = [r for r in whole[-1].rows if r.type == "chat"][-CHAT:] if deal_open else []
                shown = negotiations.running_chat(gid, CHAT)
                assert [timeline.event_row(*r, players, seat) for r in shown] == chat
                compared += 1
        assert compared > 20, compared


def _summary(neg: timeline.Negotiation) -> tuple:
    """What the deals list shows of a negotiation."""
    return (
        neg.number,
        neg.space,
        neg.opener,
        neg.opened_at,
        neg.deals_closed_before,
        neg.outcome,
        neg.end,
    )


# -- what the pages read -------------------------------------------------------------------------


@contextmanager
def rows_read_from_events(app) -> Iterator[list[int]]:
    """The number of ``events`` rows each statement in the block read (the cursor's count);
    not the seats' own history (the start, seats passed on: their names as they were, a few
    rows whatever the game's length)."""
    counts: list[int] = []
    statement = re.compile(r"\bFROM events\b")
    seats_history = re.compile(r"\bevents\.type IN\b")

    def count(conn, cursor, sql, params, context, many) -> None:
        selecting = statement.search(sql) and sql.lstrip().upper().startswith("SELECT")
        if selecting and not seats_history.search(sql):
            counts.append(cursor.rowcount)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "after_cursor_execute", count)
    try:
        yield counts
    finally:
        event.remove(engine, "after_cursor_execute", count)


def test_a_negotiation_page_reads_only_its_range(app, clock) -> None:
    with app.app_context():
        created = create_game("ranges", PLAYERS, OPTIONS, seed=SEED)
        gid = created.game_id
        for _state, _appended in play(gid, clock, lambda state, n: n > 100 and state.deal):
            pass
        game = get_game(gid)  # the snapshot at the last event: loading the state reads no event
        game.snapshot, game.snapshot_seq = state_to_json(load_state(game)), game.last_seq
        last_seq = game.last_seq
        db.session.commit()
        rows = [(r.number, r.first_seq, r.last_seq, r.end_seq) for r in negotiations.rows_of(gid)]
    assert rows[-1][2] is None and len(rows) > 5  # a deal runs
    browser = app.test_client()
    assert browser.get(f"/g/{gid}/s/{created.seat_tokens[0]}").status_code == 303
    for number, first, last, _end in rows:
        with rows_read_from_events(app) as counts:
            assert browser.get(f"/g/{gid}/deals/{number}").status_code == 200
        assert sum(counts) == (last or last_seq) - first + 1 < last_seq / 4, (number, counts)
    with rows_read_from_events(app) as counts:
        assert browser.get(f"/g/{gid}/deals").status_code == 200
    assert sum(counts) == sum(end is not None for *_r, end in rows), counts
    with rows_read_from_events(app) as counts:
        assert browser.get(f"/g/{gid}").status_code == 200
    assert 0 < sum(counts) <= RECENT + CHAT + server_moves.LOOK_BACK, (
        counts
    )  # constants, not the log
