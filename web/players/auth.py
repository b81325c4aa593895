"""Signing in by secret link, and who the current request is (seat, admin).

A seat's link ``/g/<game>/s/<token>`` (or ``Authorization: Bearer <token>`` for the API) signs
the player in: the session (a signed cookie) remembers ``{game_id: seat}``. The admin link
does the same for ``admin``. Tokens of one game never work in another (``seat_by_token``).
"""

from __future__ import annotations

from flask import abort, redirect, render_template, request, session
from imtheboss.engine import languages
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.seats import is_admin_token, seat_by_token
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.players import people as players
from imtheboss.web.players.addresses import key, of_address
from imtheboss.web.players.csrf import renew_csrf
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from werkzeug.wrappers import Response


def remember_seat(game_id: str, seat: Seat, *, player: str | None = None) -> None:
    """Sign the browser in as ``seat`` of ``game_id``. The session keeps a fingerprint of the
    seat's token: when the organiser replaces the token ("resend invitation"), the session ends
    with the old link. A seat opened through the signed-in address ``player`` (``/me``: not the
    seat's own link) holds only while that address stays signed in (``players.signed_in``) and
    the seat is still its.

    The game page the link redirects to does not count as seen (``landing``): mail scanners
    prefetch links and follow the redirect, and a seat marked seen gets no news by mail."""
    seats = dict(session.get("seats", {}))
    entry = [seat.seat_index, seat.token_hash[:16]]
    seats[game_id] = entry + [player] if player is not None else entry
    session["seats"] = seats
    session["landing"] = game_id
    session.permanent = True


def holder_other_than(game_id: str, seat: Seat) -> str | None:
    """Who this browser already is, when opening ``seat`` would switch it to someone else: the
    name of another seat of ``game_id`` it holds, or the address it signed in as when
    ``seat`` is not that address's; else ``None`` (no seat yet, or the same one)."""
    held = current_seat(game_id)
    if held is not None and held != seat.seat_index:
        name = db.session.execute(
            select(Seat.name).where(Seat.game_id == game_id, Seat.seat_index == held)
        ).scalar_one_or_none()
        return name
    player = players.signed_in()
    if held is None and player is not None and key(seat.email) != player:
        return player
    return None


def open_seat(game_id: str, seat: Seat, page: str) -> Response | str:
    """A seat's link (``GET`` from a mail or chat; ``POST`` from the question it may ask):
    sign the browser in as ``seat`` and go to ``page``, at once on the first open or the
    same seat; when the browser is someone else here (``holder_other_than``), a ``GET`` only
    asks "You are signed in as X; open as Y?" and changes nothing, its ``POST`` (CSRF)
    switches, with a new CSRF secret."""
    current = holder_other_than(game_id, seat)
    if current is not None and request.method != "POST":
        return render_template("seat_switch.html", current=current, seat=seat, page=page)
    remember_seat(game_id, seat)
    if current is not None:
        renew_csrf()
    return redirect(page, 303)


def remember_admin(game_id: str) -> None:
    """Sign the browser in as the organiser of ``game_id``."""
    admins = list(session.get("admin", []))
    if game_id not in admins:
        admins.append(game_id)
    session["admin"] = admins
    session.permanent = True


def current_seat(game_id: str) -> int | None:
    """The seat the request acts as in ``game_id``: a bearer token (API) or the session."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        try:
            return seat_by_token(game_id, header[7:].strip()).seat_index
        except ServiceError as exc:
            abort(exc.status, exc.message)
    entry = session.get("seats", {}).get(game_id)
    if not (isinstance(entry, list) and len(entry) in (2, 3) and isinstance(entry[0], int)):
        return None
    row = db.session.execute(
        select(Seat.token_hash, Seat.email).where(
            Seat.game_id == game_id, Seat.seat_index == entry[0]
        )
    ).one_or_none()
    if row is None or row.token_hash[:16] != entry[1]:
        return None  # the seat's link was replaced since this browser signed in
    if len(entry) == 3 and not _still_signed_in(entry[2], row.email):
        return None  # opened through an address that signed out (or lost the seat)
    return entry[0]


def _still_signed_in(player: object, email: str) -> bool:
    return players.signed_in() == player and key(email) == player


def seat_of_address(game_id: str) -> int | None:
    """The seat of ``game_id`` (a started game) that the signed-in address holds, given to this
    browser as ``/me``'s "open" does (``remember_seat`` through the address), or ``None``: not
    signed in, or no seat of the address there. A player who signed in by email and opens the
    game's page directly is taken to their seat, without their seat's link."""
    email = players.signed_in()
    if email is None:
        return None
    seat = db.session.execute(
        select(Seat)
        .join(Game, Game.id == Seat.game_id)
        .where(
            Seat.game_id == game_id,
            of_address(Seat.email, email),
            Game.status != "unconfirmed",
        )
        .order_by(Seat.seat_index)
        .limit(1)
    ).scalar_one_or_none()
    if seat is None:
        return None
    remember_seat(game_id, seat, player=email)
    session.pop("landing", None)  # the player's own browser, not a scanner's prefetch
    return seat.seat_index


def is_admin(game_id: str) -> bool:
    """True when the request is the organiser of ``game_id`` (session or bearer admin token)."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer ") and is_admin_token(game_id, header[7:].strip()):
        return True
    return game_id in session.get("admin", [])


def page_language() -> str:
    """The language of a page whose browser chose none (``select_locale``): on a game's pages,
    the language of the browser's seat there (``people.seat_language``); elsewhere the signed-in
    address's default. ``""`` when there is none (or the database cannot say)."""
    gid = (request.view_args or {}).get("gid")
    try:
        if isinstance(gid, str) and "Authorization" not in request.headers:
            index = current_seat(gid)
            if index is not None:
                seat = db.session.execute(
                    select(Seat).where(Seat.game_id == gid, Seat.seat_index == index)
                ).scalar_one_or_none()
                return players.seat_language(seat) if seat is not None else ""
        email = players.signed_in()
        row = db.session.get(players.Player, email) if email is not None else None
        return row.locale if row is not None and row.locale in languages.CODES else ""
    except SQLAlchemyError:  # the error page of a database that is down
        db.session.rollback()
        return ""
