"""Presence: which seat is looking at its game page right now, so its mail does not repeat what
the page shows it.

A seat is *present* at a moment when its browser asked for the live part of its game page
(``GET /g/<gid>/fragment``, which htmx polls every 15 s while the page is open, or an htmx
move, ``POST /g/<gid>/act``, answered with it) at most ``PRESENCE_SECONDS`` before it (or after
it: it has looked since). Only a page that updates itself counts: a page loaded once (no
script, a mail scanner, a tab left open without polling) shows an old state, so its seat still
gets its mail. The look is kept in ``seats.present_at`` (the database: every process, web and
worker, the embedded default included, reads the same), written after the answer by
``record_look`` at most once every ``WRITE_EVERY`` seconds per seat. Only that very game's
part counts, and only a seat's own answered request: not a ``HEAD``, not an error, not the
organiser's or a spectator's view, not another page of the game.

A look is also *presence* to the rules (A6, A11): ``note_presence`` sends the engine's
``present`` command for the seat when that changes what the engine does
(``presence_matters``: the seat is away, proxied, or its last recorded presence is old), so the
away proxy hands a seat back the moment it looks and never starts within the proxy hours of its
last look. A look that changes nothing stays out of the game's log.

The worker asks ``present(seat, at)``: news made while the seat was present is not mailed (it
saw it on the page); what needs an answer waits while the seat is present, and is mailed once it
has left without answering (``imtheboss.worker.tasks``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flask import Flask, current_app, request
from flask.wrappers import Response
from imtheboss.engine.windows import presence_matters
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Seat, db
from imtheboss.web.players.auth import current_seat
from sqlalchemy import or_, update

WRITE_EVERY = timedelta(seconds=5)  # a seat's look is written at most this often


def window(config: dict | None = None) -> timedelta:
    """How long after its last look a seat counts as present (``PRESENCE_SECONDS``)."""
    config = config if config is not None else current_app.config
    return timedelta(seconds=float(config["PRESENCE_SECONDS"]))


def present(seat: Seat, at: datetime, config: dict | None = None) -> bool:
    """Whether ``seat`` was looking at its game at ``at`` (aware UTC): its last look is no
    more than ``PRESENCE_SECONDS`` before ``at`` (a look at or after ``at`` counts too)."""
    return seat.present_at is not None and seat.present_at >= at - window(config)


def present_until(seat: Seat, config: dict | None = None) -> datetime | None:
    """When ``seat`` stops being present if it looks no more (``None``: it never looked)."""
    return seat.present_at + window(config) if seat.present_at is not None else None


def _is_look() -> bool:
    if request.endpoint == "pages.fragment":
        return request.method == "GET"
    return request.endpoint == "pages.act" and request.headers.get("HX-Request") == "true"


def _after(response: Response) -> Response:
    """Record the look of a seat at its game page (see the module docstring)."""
    if response.status_code != 200 or not _is_look():
        return response
    gid = (request.view_args or {}).get("gid")
    try:
        seat = current_seat(gid) if isinstance(gid, str) else None
        if seat is not None:
            at = now_utc()
            record_look(gid, seat, at)
            note_presence(gid, seat, at)
    except Exception:  # a look not recorded only means mail that may repeat the page
        db.session.rollback()
        current_app.logger.warning("the look of a seat at %s was not recorded", gid)
    return response


def record_look(game_id: str, seat: int, at: datetime) -> None:
    """Remember that ``seat`` of ``game_id`` looked at its game at ``at`` (one ``UPDATE``,
    none when it was written less than ``WRITE_EVERY`` ago), and commit."""
    db.session.execute(
        update(Seat)
        .where(
            Seat.game_id == game_id,
            Seat.seat_index == seat,
            or_(Seat.present_at.is_(None), Seat.present_at < at - WRITE_EVERY),
        )
        .values(present_at=at)
    )
    db.session.commit()


def note_presence(game_id: str, seat: int, at: datetime) -> bool:
    """A6, A11: ``seat`` of ``game_id`` showed up at ``at`` (aware UTC): its page, a poll of
    it, a mail link opened in a browser. Sends the engine's ``present`` command when it matters
    (``presence_matters``), at most once a minute per seat (its idempotency key); returns
    whether it did. A game that is not running, or a refusal, records nothing (no error: a
    look never fails a page)."""
    game = get_game(game_id)
    if game.status != "active":
        return False
    state = load_state(game)
    if state.phase == "game_over" or not presence_matters(state, seat, at):
        return False
    try:
        submit(game_id, seat, {"do": "present"}, "present:" + at.strftime("%Y-%m-%dT%H:%M"), at)
    except ServiceError:
        return False
    return True


def register(app: Flask) -> None:
    """Record the looks at game pages of ``app``."""
    app.after_request(_after)
