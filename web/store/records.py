"""A finished game's record (docs/export.md) from the database.

The record holds every hand and the seed, so ``game_export`` refuses (409) until the game is
over: the end reveals the seed (A9) and every total (R7.1).
"""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _
from imtheboss.engine.events import Event
from imtheboss.engine.record import game_record
from imtheboss.engine.state import format_time
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.models import EventRecord, Game, db
from sqlalchemy import select


def game_export(game: Game) -> dict[str, Any]:
    """The record of ``game``: its whole log with each event's time, its id, title and creation
    time. Raises ``ServiceError`` 409 before the game is over (the record reveals every hand
    and the seed)."""
    if game.status != "over":
        raise ServiceError(
            409,
            "not_over",
            _(
                "The record of a game can be downloaded once the game is over: it shows every"
                " hand and the seed."
            ),
        )
    rows = db.session.execute(
        select(EventRecord.type, EventRecord.body, EventRecord.seat, EventRecord.created_at)
        .where(EventRecord.game_id == game.id)
        .order_by(EventRecord.seq)
    ).all()
    events = [Event.from_json({**body, "type": type_, "by": by}) for type_, body, by, _at in rows]
    about = {"id": game.id, "title": game.title, "created_at": format_time(game.created_at)}
    return game_record(events, [at for *_rest, at in rows], about)


def export_filename(game: Game) -> str:
    """The download's file name: ``imtheboss-<game id>.json``."""
    return f"imtheboss-{game.id}.json"
