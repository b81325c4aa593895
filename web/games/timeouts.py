"""Timeouts of several games in one transaction: a batch of the firing threads
(``imtheboss.worker.firing``; this module is their door into web/: ``batched``,
``submit_timeouts``, ``bots_after_timeouts``).

``submit_timeouts`` does for each claimed window what ``submit.submit`` does for one server
``timeout`` with the key ``timeout:<window id>`` in the server's scope (the same decision,
events, snapshot, deadline rows, outbox rows, negotiation ranges and command row), for all of
them together: the game rows locked in one statement (``store_many.lock_games``, in the order of
their ids), each state loaded and decided in memory, then one statement for the commands, their
events and the game rows, one for the deadline rows, one for the outbox rows, and one commit. A
batch of ten costs a handful of round trips where ten submits cost some sixty.

A game whose state cannot be loaded or decided is only left out (``failed``: its claim is taken
again once stale), so one game's bad state never holds up the others. A write the database
refuses (a key used meanwhile: a lock was waited for; a row that breaks a constraint) raises
``BatchRefused`` or the database's error, with nothing written: the caller rolls back and fires
the claims one by one through ``submit.submit``, where each game's fault is its own.

A game's turn in the batch does not depend on its state: the claim orders by due time alone,
and every game of a batch commits at the same moment.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide_state
from imtheboss.engine.state import GameState
from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.bots import play_after
from imtheboss.web.games.deadlines import deadline_changes
from imtheboss.web.games.load import locked_state
from imtheboss.web.games.submit import advance_game, command_row, submit
from imtheboss.web.mail.notify import notifications_for
from imtheboss.web.models import SERVER_SCOPE, db
from imtheboss.web.store.many import lock_games, write_commands, write_deadlines
from imtheboss.web.store.negotiations import record as record_negotiations
from imtheboss.web.store.rows import (
    STATES,
    Held,
    LockedGame,
    checkpoint_due,
    event_rows,
    insert_returning,
    postgres,
)

logger = logging.getLogger(__name__)
QUIET = ("not_due", "game_over", "paused")  # a timeout with nothing to do: no event, no log
MAIL_COLUMNS = ("id", "game_id", "urgent", "seat_index")  # of the outbox rows written


def batched() -> bool:
    """Whether the timeouts of several games go in one transaction (``submit_timeouts``): on
    PostgreSQL; elsewhere each goes through ``service.submit`` on its own."""
    return postgres()


def bots_after_timeouts(claims: list[tuple[str, str]]) -> None:
    """A13: the bot seats of the games whose windows ran out act (``bots.play_after``): a
    timeout may hand a bot seat its turn. Only games this process knows to have bot seats
    (``store.STATES``) or does not know at all are loaded."""
    ids = sorted({game_id for game_id, _window in claims})
    held = {game_id: STATES.get(game_id) for game_id in ids}
    play_after([g for g in ids if held[g] is None or any(held[g].state.bots)], submit=submit)


class BatchRefused(Exception):
    """The database refused part of a batch (nothing of it is kept once rolled back)."""


@dataclass
class Decided:
    """One game's timeout, decided: its locked row (changed as the command changes it), the
    row as read, the state before and after, the events appended from ``first``."""

    game: LockedGame
    read: LockedGame
    before: GameState
    state: GameState
    events: list[Event]
    first: int
    key: str


def timeout_key(window_id: str) -> str:
    """The idempotency key, in the server's scope, of the timeout of ``window_id``."""
    return f"timeout:{window_id}"


def submit_timeouts(
    claims: list[tuple[str, str]], at: datetime
) -> tuple[dict[tuple[str, str], str], list[tuple[int, str, bool, int]]]:
    """Submit ``timeout`` at ``at`` (aware UTC) for each ``(game_id, window_id)`` of
    ``claims`` (each game at most once) in one transaction, committed. Returns the outcome of
    each claim: ``fired``, ``duplicate`` (its key was used: fired before), ``not_due``,
    ``game_over``, ``paused``, ``failed`` (no such game, or its state could not be loaded or
    decided: logged); and the outbox rows written, ``MAIL_COLUMNS`` (for the mail queue).
    PostgreSQL only. Raises ``BatchRefused`` and the database's errors with the transaction
    not committed (the caller rolls back)."""
    keys = {game_id: timeout_key(window_id) for game_id, window_id in claims}
    if len(keys) != len(claims):
        raise ValueError("a batch fires each game at most once")
    held = {game_id: STATES.get(game_id) for game_id in keys}
    locked = lock_games([(g, keys[g], held[g]) for g in sorted(keys)])
    outcomes: dict[str, str] = {}
    decided: list[Decided] = []
    for game_id in sorted(keys):
        found = _decide(game_id, keys[game_id], locked.get(game_id), held[game_id], at)
        if isinstance(found, str):
            outcomes[game_id] = found
        else:
            decided.append(found)
    mail = _write(decided, at)
    db.session.commit()
    for one in decided:
        STATES.put(one.game.id, Held(one.game.last_seq, at, one.state))
        outcomes[one.game.id] = "fired"
    return {(g, w): outcomes[g] for g, w in claims}, [tuple(row) for row in mail]


def _decide(game_id: str, key: str, found: Any, held: Held | None, at: datetime) -> Decided | str:
    """The game's timeout decided, or the outcome when there is nothing to write."""
    if found is None:
        logger.warning("deadline of game %s: there is no such game", game_id)
        return "failed"
    game, tail, used = found
    if used:
        return "duplicate"
    if game.status in ("paused", "unconfirmed"):
        return "paused" if game.status == "paused" else "failed"
    try:
        before = locked_state(game, tail, held)
        events, state = decide_state(before, Command("timeout", None, {}, at))
    except RuleError as exc:
        if exc.code in QUIET:
            return exc.code
        logger.warning("deadline of game %s refused: %s", game_id, exc.code)
        return "failed"
    except Exception:  # one game's bad state must not stop the others
        logger.exception("deadline of game %s failed to fire", game_id)
        return "failed"
    read, first = replace(game), game.last_seq + 1
    advance_game(game, state, game.last_seq + len(events))
    return Decided(game, read, before, state, events, first, key)


def _write(decided: list[Decided], at: datetime) -> list[Any]:
    """Write the decided timeouts (see the module). Returns the outbox rows' ``MAIL_COLUMNS``.
    Raises ``BatchRefused`` when a command's key was used meanwhile."""
    if not decided:
        return []
    commands, notes = [], []
    ended, moved, opened = [], [], []
    opened_at = now_utc()
    for one in decided:
        game = one.game
        row = command_row(
            game.id,
            Command("timeout", None, {}, at),
            SERVER_SCOPE,
            one.key,
            one.first,
            game.last_seq,
        )
        moved_snapshot = game.snapshot is not one.read.snapshot
        commands.append(
            {
                **row,
                "events": event_rows(game.id, one.first, one.events, at, None),
                "status": game.status,
                "moved": moved_snapshot,
                "snapshot": game.snapshot if moved_snapshot else None,
                "snapshot_seq": game.snapshot_seq,
                "checkpoint": checkpoint_due(game, one.read),
            }
        )
        changes = deadline_changes(game.id, one.before, one.state, opened_at)
        ended += [(game.id, wid) for wid in changes.ended]
        moved += [(game.id, w.id, w.deadline) for w in changes.moved]
        opened += changes.opened
        notes += notifications_for(game.id, one.before, one.events, one.state, one.first, at)
    inserted = write_commands(commands)
    if inserted != {one.game.id for one in decided}:
        raise BatchRefused("a timeout's key was used meanwhile")
    for one in decided:  # a statement only when a deal opens or ends
        record_negotiations(one.game.id, one.first, one.events, at)
    write_deadlines(ended, moved, opened)
    return insert_returning("notifications", notes, MAIL_COLUMNS)
