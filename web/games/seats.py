"""Seats and the organiser's acts on them: a seat by its secret link (``seat_by_token``), the
admin link (``is_admin_token``), the seats of a game (``seats_of``), what a seat has seen
(``mark_seen``), and the admin's pause and resume (``set_status``), new invitation
(``resend_invitation``) and address fix (``set_seat_email``), each an event in the history
(A13).
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from flask import current_app
from flask_babel import gettext as _
from imtheboss.web.games.basics import TOKEN, ServiceError, hash_token, new_token, now_utc
from imtheboss.web.games.commit_hooks import run_after_commit
from imtheboss.web.games.load import get_game, require_confirmed
from imtheboss.web.games.names import already_plays, normal_email, plays_here
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.notify import email_changed, invitation
from imtheboss.web.models import Game, Notification, Seat, db
from sqlalchemy import select, update


def seat_by_token(game_id: str, token: str) -> Seat:
    """The seat whose secret link token is ``token`` in game ``game_id``. Raises
    ``ServiceError`` 404 (unknown game) or 403 (a wrong token, or one of another game)."""
    get_game(game_id)
    if not isinstance(token, str) or not TOKEN.fullmatch(token):
        raise ServiceError(403, "bad_token", "this link is not valid for this game")
    seat = db.session.execute(
        select(Seat).where(Seat.token_hash == hash_token(token))
    ).scalar_one_or_none()
    if seat is None or seat.game_id != game_id:
        raise ServiceError(403, "bad_token", "this link is not valid for this game")
    return seat


def is_admin_token(game_id: str, token: str) -> bool:
    """True when ``token`` is the admin link token of ``game_id`` (constant-time compare)."""
    game = get_game(game_id)
    return (
        isinstance(token, str)
        and TOKEN.fullmatch(token) is not None
        and secrets.compare_digest(game.admin_token_hash, hash_token(token))
    )


def seats_of(game_id: str) -> list[Seat]:
    """The game's seats in seat order."""
    return list(
        db.session.execute(
            select(Seat).where(Seat.game_id == game_id).order_by(Seat.seat_index)
        ).scalars()
    )


def set_status(game_id: str, status: str) -> None:
    """Pause or resume a game (admin). While paused nothing is taken and no window times out;
    on resume every open deadline moves later by the time the game was paused (an ``extend``
    command in the log). The pause and the resume are events in the history (``game_paused``,
    ``game_resumed``, A13), written with the status in one transaction; the same status again
    changes nothing. Raises ``ServiceError`` 409 for a game that is over or not confirmed
    yet, 400 for a bad status."""
    game = get_game(game_id, lock=True)
    require_confirmed(game)
    if game.status == "over":
        db.session.rollback()
        raise ServiceError(409, "game_over", "the game is over")
    if status not in ("active", "paused"):
        db.session.rollback()
        raise ServiceError(400, "bad_status", "status is active or paused")
    if game.status == status:
        db.session.rollback()
        return
    now = now_utc()
    settings = dict(game.settings)
    paused_at = settings.pop("paused_at", None)
    if status == "paused":
        settings["paused_at"] = now.isoformat()
    game.settings = settings
    _organiser_act(game, "pause_game" if status == "paused" else "resume_game", {}, now)
    if status == "active" and paused_at:
        seconds = int((now - datetime.fromisoformat(paused_at)).total_seconds())
        if seconds >= 1:
            try:
                submit(
                    game_id, None, {"do": "extend", "seconds": seconds}, f"resume:{paused_at}", now
                )
            except ServiceError as exc:
                if exc.code != "not_due":  # no window open: nothing to move
                    raise


def _organiser_act(game: Game, do: str, args: dict[str, Any], now: datetime) -> None:
    """Commit what the caller changed for the organiser's act ``do`` (``args``: its command's
    arguments) with the act's event in the history (A13), in one transaction under the game's
    lock; a game that is over takes no more events: then the change alone. The act's key is
    its own (each call is a new act)."""
    if game.status == "over":
        db.session.commit()
        return
    db.session.flush()
    key = f"organiser:{do}:{secrets.token_hex(8)}"
    submit(game.id, None, {"do": do, **args}, key, now)


def mark_seen(game_id: str, seat: int, seq: int) -> None:
    """Remember that ``seat`` has looked at the game up to ``seq`` (batched mail skips what was
    seen)."""
    db.session.execute(
        update(Seat)
        .where(Seat.game_id == game_id, Seat.seat_index == seat, Seat.last_seen_seq < seq)
        .values(last_seen_seq=seq, last_seen_at=now_utc())
    )
    db.session.commit()


def resend_invitation(game_id: str, seat_index: int) -> str:
    """Admin: give the seat a new secret link (the old one stops working) and queue a new
    invitation holding it to the seat's email address, and to nobody else: the organiser never
    sees it. The table reads it in the history (``invitation_resent``, A13: never the link).
    Returns that address. Raises ``ServiceError`` 404, or 409 before the game is confirmed."""
    game = get_game(game_id, lock=True)
    require_confirmed(game)
    seat = _person_seat_of(game_id, seat_index)
    now = now_utc()
    _invite_again(game, seat, now)
    email = seat.email
    _organiser_act(game, "resend_invitation", {"seat": seat_index}, now)
    run_after_commit(game_id)
    return email


def _invite_again(game: Game, seat: Seat, now: datetime) -> None:
    """Give ``seat`` a new secret link (its old link and the browsers it signed in stop working)
    and queue an invitation holding it to the seat's address (in the caller's transaction)."""
    token = new_token()
    seat.token_hash = hash_token(token)
    link = f"{current_app.config['BASE_URL'].rstrip('/')}/g/{game.id}/s/{token}"
    db.session.add(
        Notification(
            **invitation(
                game.id, seat.seat_index, seat.name, link, seat.token_hash[:16], now, game.last_seq
            )
        )
    )


def set_seat_email(game_id: str, seat_index: int, email: str) -> None:
    """Admin: fix a seat's email address. The old address is told (in plain words: what changed,
    whom to ask), so a seat is never moved to another address unheard; the seat gets a new
    secret link, invited to the new address (whoever held the old link or signed in with it
    holds the seat no more); the table reads that
    it changed in the history (``seat_email_changed``, A13: never the address). Raises
    ``ServiceError`` 400/404 (400 ``bad_email`` for an address that plays another seat of the
    game, in any case), or 409 before the game is confirmed."""
    try:
        email = normal_email(email or "")
    except ValueError as exc:
        raise ServiceError(400, "bad_email", str(exc)) from None
    game = get_game(game_id, lock=True)
    require_confirmed(game)
    seat = _person_seat_of(game_id, seat_index)
    old = seat.email
    if email == old:
        db.session.rollback()
        return
    others = [s.email for s in seats_of(game_id) if s.seat_index != seat_index]
    if plays_here(email, others):  # one address, one seat
        db.session.rollback()
        raise ServiceError(400, "bad_email", already_plays())
    seat.email = email
    now = now_utc()
    db.session.add(
        Notification(
            **email_changed(
                game_id, seat_index, seat.name, old, seat.locale or "en", now, game.last_seq
            )
        )
    )
    _invite_again(game, seat, now)  # the old address's link and browsers no longer hold it
    _organiser_act(game, "change_email", {"seat": seat_index}, now)  # the address stays out
    run_after_commit(game_id)


def _person_seat_of(game_id: str, seat_index: int) -> Seat:
    """``_seat_of`` for an act on a person's seat (its address, its invitation). Raises
    ``ServiceError`` 404, or 409 ``bot_seat`` for a bot seat (A13: it has no address; the
    transaction rolled back)."""
    seat = _seat_of(game_id, seat_index)
    if not seat.email:
        db.session.rollback()
        raise ServiceError(
            409,
            "bot_seat",
            _(
                "A bot plays this seat: it has no address. To give the seat to a person, pass it"
                " to a new player."
            ),
            "A13",
        )
    return seat


def _seat_of(game_id: str, seat_index: int) -> Seat:
    """The seat row (for a change). Raises ``ServiceError`` 404 (the transaction rolled back)."""
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index)
    ).scalar_one_or_none()
    if seat is None:
        db.session.rollback()
        raise ServiceError(404, "no_seat", "there is no such seat")
    return seat
