"""The one way in: the only code that appends a command's events (docs/architecture.md, web).

``submit(game_id, seat, command, idempotency_key)`` runs in one transaction: lock the game row,
rebuild the state from the snapshot plus the tail of the log (``games.load``), ``engine.decide``,
append the events with the next sequence numbers, update the game's deadlines
(``games.deadlines``), write the notification rows (outbox, ``write_outbox``), remember the
idempotency key. After a commit that wrote notification rows it calls the registered
``after_commit`` hooks (``games.commit_hooks``: the worker's delivery); deadlines need no hook,
the deadlines workers find them in the database. Then the bot seats act (``play_bots``, A13).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from flask import current_app
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import COMMANDS, Command, decide_state
from imtheboss.engine.state import GameState, snapshot_is_current, state_to_json
from imtheboss.web.app.metrics import timed_submit
from imtheboss.web.games import bots
from imtheboss.web.games.basics import CONTROL, ServiceError, now_utc
from imtheboss.web.games.commit_hooks import run_after_commit
from imtheboss.web.games.deadlines import sync_deadlines
from imtheboss.web.games.load import SNAPSHOT_EVERY, check_game_id, load_events, locked_state
from imtheboss.web.mail.notify import notifications_for
from imtheboss.web.models import SERVER_SCOPE, CommandRecord, Game, db
from imtheboss.web.store.negotiations import record as record_negotiations
from imtheboss.web.store.rows import (
    STATES,
    Held,
    LockedGame,
    event_rows,
    insert_rows,
    lock_game,
    write_command,
)
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

MAX_KEY = 100


@dataclass
class SubmitResult:
    """``events``: ``[(seq, Event)]`` the command appended; ``duplicate``: the key was seen
    before and nothing was appended (A7); ``state``: the state after (this process keeps it for
    the game's next submit, ``store.STATES``: read it, never change it); ``notified``: the seats
    that got outbox rows."""

    events: list[tuple[int, Event]]
    duplicate: bool
    state: GameState | None = None
    notified: list[int] = field(default_factory=list)
    deadlines_changed: bool = False  # a deadline row was opened, moved or ended


def parse_command(seat: int | None, body: dict[str, Any], at: datetime) -> Command:
    """A command from JSON-like input ``{"do": ..., **args}``. Raises ``ServiceError`` 400."""
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("do"), str)
        or body["do"] not in COMMANDS
    ):
        raise ServiceError(400, "bad_command", 'a command is {"do": NAME, ...arguments}')
    args = {k: v for k, v in body.items() if k not in NOT_ARGUMENTS}
    return Command(body["do"], seat, args, at)


NOT_ARGUMENTS = ("do", "by", "at")  # the seat and the time are the server's, never the body's


# The organiser's acts a paused game takes, and the game's status after a pause or a resume.
WHILE_PAUSED = frozenset({"resume_game", "change_email", "resend_invitation"})


STATUS_AFTER = {"pause_game": "paused", "resume_game": "active"}


def _while_paused(command: Any) -> bool:
    """Whether ``command`` (a body) is one a paused game takes (``WHILE_PAUSED``)."""
    return isinstance(command, dict) and command.get("do") in WHILE_PAUSED


@timed_submit
def submit(
    game_id: str,
    seat: int | None,
    command: dict[str, Any],
    idempotency_key: str,
    now: datetime | None = None,
    via: str = "",
) -> SubmitResult:
    """Decide and store one command of ``seat`` (``None``: the server's own, ``timeout`` and
    ``extend``); ``via`` ``"mail"`` marks it as sent by a reply to a mail (``Command.via``).

    One transaction with the game row locked. Raises ``ServiceError``: 404 unknown game, 400
    malformed command or key, 409 the game is paused or over, or the rules refused it (the
    engine's code: ``window_closed``, ``terms_changed``, ...); a refused command changes
    nothing. Keys are scoped (A7): a seat's keys are its own, the server's live in
    ``SERVER_SCOPE``, where no seat can write; a key repeated in its scope returns the first
    result (``duplicate=True``). After the commit the bot seats act (A13, ``web.bots.play``;
    not after a bot's own command, ``via="bot"``: that loop is ``play``'s)."""
    if (
        not isinstance(idempotency_key, str)
        or not 1 <= len(idempotency_key) <= MAX_KEY
        or CONTROL.search(idempotency_key)
    ):
        raise ServiceError(
            400,
            "bad_key",
            f"an idempotency key is 1 to {MAX_KEY} characters, with no control characters",
        )
    try:
        result = _submit(game_id, seat, command, idempotency_key, now, via)
    except ServiceError:
        db.session.rollback()
        raise
    except IntegrityError:  # a concurrent duplicate key on a database without row locks
        db.session.rollback()
        result = _submit(game_id, seat, command, idempotency_key, now, via)
    except BaseException:
        db.session.rollback()
        raise
    if result.notified:  # a commit that made no mail tells nobody
        run_after_commit(game_id)
    if via != "bot" and result.state is not None and any(result.state.bots):
        play_bots(game_id, result.state)  # A13: the bot seats act at once
    return result


def _submit(game_id, seat, command, key, now, via="") -> SubmitResult:
    """One try of ``submit``. The key is checked by the unique constraint of the command's own
    insert (``store.write_command``), not by a read before it; a command refused before that
    insert is looked up as a repeat first (``_repeated``: a repeat is answered as such, even
    when the game has moved on so far that the rules would refuse the command now)."""
    held = STATES.get(game_id)
    game, tail = _lock(game_id, held)
    scope = SERVER_SCOPE if seat is None else seat
    try:
        if game.status == "paused" and not _while_paused(command):
            raise ServiceError(409, "paused", "the game is paused by its organiser")
        at = now or now_utc()
        cmd = replace(parse_command(seat, command, at), via=via)
        before = locked_state(game, tail, held)
        try:
            events, state = decide_state(before, cmd)
        except RuleError as exc:
            raise ServiceError(409, exc.code, exc.message, exc.rule) from None
    except ServiceError:
        repeated = _repeated(game_id, scope, key, command)
        if repeated is not None:
            return repeated
        raise
    read, first = replace(game), game.last_seq + 1
    game.status = STATUS_AFTER.get(cmd.do, game.status)  # a pause or a resume (A13)
    advance_game(game, state, game.last_seq + len(events))
    row = command_row(game_id, cmd, scope, key, first, game.last_seq)
    if write_command(game, read, row, event_rows(game_id, first, events, at, None)) is None:
        db.session.rollback()  # the key was used before: nothing of this try is kept
        repeated = _repeated(game_id, scope, key, command)
        if repeated is None:  # pragma: no cover - a row that conflicts was just there
            raise IntegrityError("commands", None, Exception("idempotency key"))
        return repeated
    record_negotiations(game_id, first, events, at)  # a statement only when a deal opens, ends
    deadlines_changed = sync_deadlines(game_id, before, state)
    notified = write_outbox(game_id, before, events, state, first, at)
    db.session.commit()
    if events:
        STATES.put(game_id, Held(game.last_seq, at, state))
    appended = list(zip(range(first, first + len(events)), events, strict=True))
    return SubmitResult(appended, False, state, notified, deadlines_changed)


def _body_of(command: Any) -> dict[str, Any] | None:
    """What the ``commands`` row stores of a command body (``{"do", ...arguments}``)."""
    if not isinstance(command, dict):
        return None
    return {"do": command.get("do"), **{k: v for k, v in command.items() if k not in NOT_ARGUMENTS}}


def command_row(
    game_id: str, cmd: Command, scope: int, key: str, first: int, last: int
) -> dict[str, Any]:
    """The ``commands`` row of ``cmd``, which appended the events ``first`` to ``last``."""
    return {
        "game_id": game_id,
        "seat": cmd.by,
        "scope": scope,
        "idempotency_key": key,
        "body": {"do": cmd.do, **cmd.args},
        "first_seq": first,
        "last_seq": last,
        "created_at": cmd.at,
    }


def stored_command(game_id: str, scope: int, key: str) -> Any:
    """``(first_seq, last_seq, body)`` of the command stored with ``key`` in ``scope`` (a seat,
    or ``SERVER_SCOPE``), or ``None``; the transaction is left open."""
    return db.session.execute(
        select(CommandRecord.first_seq, CommandRecord.last_seq, CommandRecord.body).where(
            CommandRecord.game_id == game_id,
            CommandRecord.scope == scope,
            CommandRecord.idempotency_key == key,
        )
    ).one_or_none()


def _repeated(game_id: str, scope: int, key: str, command: Any) -> SubmitResult | None:
    """The first result of ``key`` in ``scope`` (A7: a repeat appends nothing), the transaction
    ended; ``None`` when the key was not used. Raises ``ServiceError`` 409 ``key_reused`` when
    the key was used for another command (a client bug, or a form changed and sent again)."""
    db.session.rollback()
    seen = stored_command(game_id, scope, key)
    db.session.rollback()
    if seen is None:
        return None
    first_seq, last_seq, body = seen
    if body != _body_of(command):
        raise ServiceError(
            409, "key_reused", "this idempotency key was used for another command", "A7"
        )
    events = load_events(game_id, first_seq - 1, last_seq)
    db.session.commit()
    return SubmitResult(list(zip(range(first_seq, last_seq + 1), events, strict=True)), True)


def _lock(game_id: str, held: Held | None) -> tuple[LockedGame, list[Any] | None]:
    """The game row locked, with the events after its snapshot, or after ``held`` (the state
    this process holds), on PostgreSQL (``store.lock_game``). Raises ``ServiceError`` 404."""
    check_game_id(game_id)
    game, tail = lock_game(game_id, held)
    if game is None:
        raise ServiceError(404, "no_game", "there is no such game")
    return game, tail


def advance_game(game: Game | LockedGame, state: GameState, seq: int) -> None:
    """The game row after its events up to ``seq`` (``state``): ``last_seq``, ``over`` at the
    end, the snapshot moved every ``SNAPSHOT_EVERY`` events (and when it is stale)."""
    game.last_seq = seq
    if state.phase == "game_over":
        game.status = "over"
    stale = game.snapshot is not None and not snapshot_is_current(game.snapshot)
    if stale or seq - game.snapshot_seq >= SNAPSHOT_EVERY or state.phase == "game_over":
        game.snapshot = state_to_json(state)
        game.snapshot_seq = seq


def write_outbox(
    game_id: str,
    before: GameState | None,
    events: list[Event],
    state: GameState,
    first: int,
    at: datetime,
    links: list[str] | None = None,
) -> list[int]:
    """Write the notification rows of ``events`` appended at ``first`` (one statement); the
    seats notified."""
    notes = notifications_for(game_id, before, events, state, first, at, links)
    insert_rows("notifications", notes)
    for writer in current_app.extensions.get("imtheboss.outbox_writers", ()):
        writer(game_id, first, events, notes, at)
    return sorted({r["seat_index"] for r in notes})


def play_bots(game_id: str, state: GameState | None = None) -> None:
    """Let the bot seats act (``imtheboss.web.games.bots.play``; ``state``: the one just
    committed)."""
    bots.play(game_id, state, submit=submit)
