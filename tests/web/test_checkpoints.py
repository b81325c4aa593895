"""Checkpoints: the engine's state kept each time a game's snapshot moves past a multiple of
``CHECKPOINT_EVERY`` events, by a player's submit and by a batch of timeouts alike (on
PostgreSQL and on SQLite); the state after any event N (``state_after``, what the replay page
shows) equals the engine's replay of events 1..N, starts from the last checkpoint at or before N,
and passes over one this engine no longer reads."""

from __future__ import annotations

import re
from typing import Any

from imtheboss.engine.state import replay
from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.create import CreatedGame, create_game
from imtheboss.web.games.load import get_game, load_events, state_after
from imtheboss.web.games.submit import submit
from imtheboss.web.games.timeouts import submit_timeouts
from imtheboss.web.models import Checkpoint, Deadline, db
from imtheboss.web.store.rows import CHECKPOINT_EVERY
from sqlalchemy import select
from support.api_client import signed_in
from support.deal import PLAYERS


def _chat_until(gid: str, seq: int) -> None:
    """Chat (seat by seat) until the game has at least ``seq`` events."""
    n = 0
    while get_game(gid).last_seq < seq:
        submit(gid, n % len(PLAYERS), {"do": "chat", "text": f"hello {n}"}, f"chat-{n}")
        n += 1


def _checkpoints(gid: str) -> dict[int, dict[str, Any]]:
    rows = db.session.execute(
        select(Checkpoint.seq, Checkpoint.state).where(Checkpoint.game_id == gid)
    )
    return dict(rows.all())


def _long_game(clock) -> CreatedGame:
    """A game past two checkpoints: chat to just under the first boundary, then timeouts fired
    as the deadlines workers fire them (a batch) until a snapshot moved past it, then chat past
    the second."""
    created = create_game("checkpoints", PLAYERS, {"windows": {"turn": 60}})
    gid = created.game_id
    _chat_until(gid, CHECKPOINT_EVERY - 8)
    n = 0
    while get_game(gid).snapshot_seq < CHECKPOINT_EVERY:
        window = next(iter(_open_windows(gid)))
        clock.advance(minutes=5)
        assert submit_timeouts([(gid, window)], now_utc())[0] == {(gid, window): "fired"}
        n += 1
        assert n < 100
    _chat_until(gid, 2 * CHECKPOINT_EVERY + 40)
    return created


def _open_windows(gid: str) -> list[str]:
    rows = db.session.execute(
        select(Deadline.window_id).where(Deadline.game_id == gid, Deadline.state == "open")
    )
    return [w for (w,) in rows]


def test_checkpoints_are_kept_and_the_state_after_any_event_is_the_replay(app, clock) -> None:
    with app.app_context():
        gid = _long_game(clock).game_id
        kept = _checkpoints(gid)
        game = get_game(gid)
        events = load_events(gid)
        assert sorted(seq // CHECKPOINT_EVERY for seq in kept) == [1, 2]  # one past each
        assert all(seq - CHECKPOINT_EVERY * (seq // CHECKPOINT_EVERY) < 40 for seq in kept)
        for seq in kept:
            assert state_after(game, seq) == replay(events[:seq])
        for at in [1, 2, *range(3, len(events) + 1, 11), *(s + d for s in kept for d in (-1, 1))]:
            assert state_after(game, at) == replay(events[:at]), at


def test_the_replay_starts_from_the_last_checkpoint_and_passes_over_a_stale_one(app, clock) -> None:
    """A checkpoint is read: one that says seat 0 had 999 M shows in the state after it (the
    events never gave it that), not before it; one of another engine is passed over."""
    with app.app_context():
        gid = _long_game(clock).game_id
        first = min(_checkpoints(gid))
        events = load_events(gid)
        row = db.session.get(Checkpoint, (gid, first))
        forged = dict(row.state, money=[999, *row.state["money"][1:]])
        row.state = forged
        db.session.commit()
        game = get_game(gid)
        assert state_after(game, first + 3).money[0] == 999
        assert state_after(game, first - 1) == replay(events[: first - 1])
        row = db.session.get(Checkpoint, (gid, first))
        row.state = dict(forged, engine="another engine")
        db.session.commit()
        assert state_after(get_game(gid), first + 3) == replay(events[: first + 3])


def test_the_replay_page_past_a_checkpoint_shows_that_moment(app, clock) -> None:
    """The page at event N, past the last checkpoint: the step is event N's, the running
    deal's chat ends at N (a later message is not shown)."""
    with app.app_context():
        created = _long_game(clock)
        gid = created.game_id
        at = max(_checkpoints(gid)) + 5
        events = load_events(gid)
    browser, _csrf = signed_in(app, gid, created.seat_tokens[0])
    text = browser.get(f"/g/{gid}/replay?at={at}").text
    assert f"event {at} of {len(events)}" in text
    shown = {int(n) for n in re.findall(r"hello (\d+)<", text)}
    said = [int(e.data["text"].split()[1]) for e in events if e.type == "chat"]
    before = said[: sum(1 for e in events[:at] if e.type == "chat")]
    assert events[at - 1].type == "chat" and max(shown) == before[-1]
    assert shown <= set(before) and not shown & set(said[len(before) :])


def test_sqlite_keeps_checkpoints_too(sqlite_app) -> None:
    with sqlite_app.app_context():
        gid = create_game("checkpoints", PLAYERS, {"windows": {"turn": 60}}).game_id
        _chat_until(gid, CHECKPOINT_EVERY + 40)
        (seq,) = _checkpoints(gid)
        assert CHECKPOINT_EVERY <= seq < CHECKPOINT_EVERY + 40
        events = load_events(gid)
        assert state_after(get_game(gid), seq + 7) == replay(events[: seq + 7])
