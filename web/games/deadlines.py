"""A game's deadline rows follow its windows (docs/architecture.md, deadlines): what a command
changed of them (``deadline_changes``: ended, moved, opened; computed without reading a row,
also for the batched timeouts of ``games.timeouts``) and writing it (``sync_deadlines``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from imtheboss.engine.game import due_windows
from imtheboss.engine.state import GameState, Window
from imtheboss.web.games.basics import now_utc
from imtheboss.web.mail.notify import remind_time
from imtheboss.web.models import Deadline, db
from imtheboss.web.store.rows import insert_new
from sqlalchemy import update


def _deadline_windows(state: GameState | None) -> dict[str, Window]:
    """The windows of ``state`` that have a deadline row (none before a game, none once over)."""
    if state is None or state.phase == "game_over":
        return {}
    return {w.id: w for w in due_windows(state)}


@dataclass
class DeadlineChanges:
    """What a command changed of a game's deadline rows: the windows that ``ended`` (ids), the
    windows whose deadline ``moved`` (A1, a resume), the rows of the windows ``opened``."""

    ended: list[str]
    moved: list[Window]
    opened: list[dict[str, Any]]

    def __bool__(self) -> bool:
        return bool(self.ended or self.moved or self.opened)


def deadline_changes(
    game_id: str, before: GameState | None, state: GameState, opened_at: datetime
) -> DeadlineChanges:
    """The deadline rows to change from the windows ``before`` the command and after it
    (``state``), without reading a row: one ``open`` row per window with a deadline (its
    ``deadlines`` columns, opened at ``opened_at``, its reminder due at ``remind_time``), the
    windows that ended ``done``."""
    old, new = _deadline_windows(before), _deadline_windows(state)
    opened = [
        {
            "game_id": game_id,
            "window_id": w.id,
            "kind": w.kind,
            "due_at": w.deadline,
            "opened_at": opened_at,
            "remind_at": remind_time(opened_at, w.deadline),
        }
        for wid, w in new.items()
        if wid not in old
    ]
    return DeadlineChanges(
        [wid for wid in old if wid not in new],
        [w for wid, w in new.items() if wid in old and old[wid].deadline != w.deadline],
        opened,
    )


def sync_deadlines(game_id: str, before: GameState | None, state: GameState) -> bool:
    """Write ``deadline_changes``. Returns whether a row changed."""
    changes = deadline_changes(game_id, before, state, now_utc())
    table = Deadline.__table__
    if changes.ended:
        db.session.execute(
            update(table)
            .where(table.c.game_id == game_id, table.c.window_id.in_(changes.ended))
            .where(table.c.state == "open")
            .values(state="done")
        )
    for window in changes.moved:  # A1, a resume
        db.session.execute(
            update(table)
            .where(table.c.game_id == game_id, table.c.window_id == window.id)
            .where(table.c.state == "open")
            .values(due_at=window.deadline, scheduled_at=None)
        )
    if changes.opened:
        statement = insert_new("deadlines", ("game_id", "window_id"))
        db.session.connection().execute(statement, changes.opened)
    return bool(changes)
