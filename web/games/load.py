"""Reading a game: its row (``get_game``, locked ``FOR UPDATE`` on request), its events
(``load_events``), its state now (``load_state``: the snapshot plus at most ``SNAPSHOT_EVERY``
events after it; ``locked_state`` for ``submit``, which may hold it already) and after any
event (``state_after``: from the snapshot or the last ``Checkpoint``). A game that waits for its
organiser has no state yet (``require_confirmed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flask import current_app
from flask_babel import gettext as _
from imtheboss.engine.events import Event, take_record
from imtheboss.engine.state import GameState, SnapshotError, fold, replay_json, state_from_json
from imtheboss.web.games.basics import GAME_ID, ServiceError
from imtheboss.web.models import Checkpoint, EventRecord, Game, db
from imtheboss.web.store.rows import Held, LockedGame
from sqlalchemy import select

SNAPSHOT_EVERY = 32  # events: loading reads at most this many past the snapshot


def require_confirmed(game: Game) -> None:
    """Raises ``ServiceError`` 409 while ``game`` waits for its organiser's confirmation (the
    transaction rolled back)."""
    if game.status == "unconfirmed" and (game.settings or {}).get("rematch"):
        db.session.rollback()
        raise ServiceError(
            409,
            "unconfirmed",
            _(
                "This rematch starts once each player has said by the link in their mail that"
                " they play."
            ),
        )
    if game.status == "unconfirmed":
        db.session.rollback()
        raise ServiceError(
            409,
            "unconfirmed",
            _(
                "This game starts once its organiser confirms their email address, by the link"
                " in the mail sent to it."
            ),
        )


def load_events(game_id: str, after: int = 0, upto: int | None = None) -> list[Event]:
    """The game's events with ``after < seq <= upto``, in order."""
    return [Event.take_json(record) for record in _records(_event_rows(game_id, after, upto))]


def _event_rows(game_id: str, after: int, upto: int | None) -> list[Any]:
    """``(type, body, seat)`` of the stored events with ``after < seq <= upto``, in order."""
    query = select(EventRecord.type, EventRecord.body, EventRecord.seat).where(
        EventRecord.game_id == game_id, EventRecord.seq > after
    )
    if upto is not None:
        query = query.where(EventRecord.seq <= upto)
    return list(db.session.execute(query.order_by(EventRecord.seq)).all())


def _records(rows: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """Stored ``(type, body, seat)`` rows as ``Event.to_json`` records: each fresh body from the
    database becomes its record (taken over, not copied)."""
    for type_, body, seat in rows:
        body["type"] = type_
        body["by"] = seat
        yield body


def load_state(game: Game, tail: list[Any] | None = None) -> GameState:
    """The game's state after exactly ``game.last_seq`` events, so it agrees with the row even
    while others commit: the snapshot plus the events after it (at most ``SNAPSHOT_EVERY``), so
    loading does not slow down as a game grows. ``tail``: those events' ``(type, body, seat)``
    rows when the caller read them already (``submit``'s lock); they are used only when they are
    all of them. A snapshot this engine refuses (``SnapshotError``: written before a format
    change or by other engine code) is ignored and the whole log replayed; the next write
    (``submit``) stores a current one. Raises ``ServiceError`` 409 for a game that waits for
    its organiser (it has no state yet)."""
    require_confirmed(game)
    if tail is None or len(tail) != game.last_seq - game.snapshot_seq:
        tail = _event_rows(game.id, game.snapshot_seq, game.last_seq)
    return _folded(game.id, game.snapshot, game.snapshot_seq, tail, game.last_seq)


def state_after(game: Game, seq: int) -> GameState:
    """The game's state after its first ``seq`` events (1 <= ``seq`` <= ``game.last_seq``):
    from the latest stored state at or before ``seq`` (the game's snapshot, else its last
    ``Checkpoint``) and the events after it, so the cost does not grow with the game; a stored
    state this engine refuses is passed over (the events from the start are folded instead).
    Raises ``ServiceError`` 409 for a game that waits for its organiser."""
    require_confirmed(game)
    base_seq, stored = 0, None
    if game.snapshot is not None and game.snapshot_seq <= seq:
        base_seq, stored = game.snapshot_seq, game.snapshot
    else:
        found = db.session.execute(
            select(Checkpoint.seq, Checkpoint.state)
            .where(Checkpoint.game_id == game.id, Checkpoint.seq <= seq)
            .order_by(Checkpoint.seq.desc())
            .limit(1)
        ).first()
        if found is not None:
            base_seq, stored = found
    return _folded(game.id, stored, base_seq, _event_rows(game.id, base_seq, seq), seq)


def _folded(game_id: str, stored: Any, base_seq: int, tail: list[Any], upto: int) -> GameState:
    """The state ``stored`` (the snapshot's format, after ``base_seq`` events; ``None``: none)
    with the stored event rows ``tail`` (``base_seq < seq <= upto``) folded in; the events
    ``1..upto`` replayed when there is no stored state or this engine refuses it."""
    state = None
    if stored is not None:
        try:
            state = state_from_json(stored)
        except SnapshotError as exc:
            current_app.logger.debug("stored state of game %s ignored: %s", game_id, exc)
    if state is None:
        rows = tail if base_seq == 0 else _event_rows(game_id, 0, upto)
        return replay_json(_records(rows))
    for kind, data, by, _v in map(take_record, _records(tail)):
        fold(state, kind, data, by)
    return state


def get_game(game_id: str, *, lock: bool = False) -> Game:
    """The game row (locked ``FOR UPDATE`` when ``lock``, and then read afresh even if the
    session holds it). Raises ``ServiceError`` 404, also for an id no game can have
    (``GAME_ID``)."""
    check_game_id(game_id)
    query = select(Game).where(Game.id == game_id)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    game = db.session.execute(query).scalar_one_or_none()
    if game is None:
        raise ServiceError(404, "no_game", "there is no such game")
    return game


def check_game_id(game_id: Any) -> None:
    if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
        raise ServiceError(404, "no_game", "there is no such game")


def locked_state(game: LockedGame, tail: list[Any] | None, held: Held | None) -> GameState:
    """The state of the locked ``game``: ``held`` plus the events after it when the lock read
    those (``base_seq`` is its seq), else ``load_state``. May be ``held``'s own state: read it,
    never change it."""
    if held is None or game.base_seq != held.seq:
        return load_state(game, tail)
    require_confirmed(game)
    if tail is None or len(tail) != game.last_seq - game.base_seq:
        tail = _event_rows(game.id, game.base_seq, game.last_seq)
    if not tail:
        return held.state
    state = held.state.clone()
    for kind, data, by, _v in map(take_record, _records(tail)):
        fold(state, kind, data, by)
    return state
