"""The web pages: home, new game, seat and admin sign-in, the game page
and its live fragment, the action endpoint, negotiations, history, inbox, settings, admin.

Every page shows a seat only what ``imtheboss.engine.views.view`` and ``redact_event`` give that
seat (A8). A ``GET`` never changes game state (sign-in links only set the session cookie); every
action is a ``POST`` with a CSRF token that goes through ``imtheboss.web.games.submit.submit``.
Tokens are never logged nor shown again after sign-in; no page shows a seat's link, not even to the
organiser (a resent invitation goes to the seat's address only). Abuse limits:
``imtheboss.web.app.limits``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from flask import (
    Blueprint,
    request,
    url_for,
)
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.engine.state import GameState
from imtheboss.web.app.security import local_path
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.load import get_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.players.auth import current_seat, is_admin, seat_of_address
from imtheboss.web.say import display
from imtheboss.web.say.display import LANGUAGES
from sqlalchemy import func, select

bp = Blueprint("pages", __name__)


# -- every page ------------------------------------------------------------------------------


@bp.app_context_processor
def _page_globals() -> dict[str, Any]:
    """The language switch and helpers every template (error pages too) can use."""
    return {
        "languages": LANGUAGES,
        "current_lang": str(get_locale() or "en"),
        "lang_url": _lang_url,
        "local_time": display.page_time,  # with the zone: pages are read in many zones
        "datetime_attr": display.datetime_attr,  # <time datetime>, whole seconds
        "card_text": display.card_text,
        "price_text": display.price_text,
        "space_number": display.space_number,  # players count spaces from 1, the engine from 0
        "zone_text": display.zone_text,  # a zone as players read it, never its raw name
        "zone_choices": display.zone_choices,  # what a zone picker offers
    }


def _lang_url(code: str) -> str:
    """This page in another language (``?lang=``; ``select_locale`` keeps it in the session).
    After a POST the link leads to the game's page (or home), never back to the action URL."""
    if request.method == "GET":
        path = local_path(request.path)
        args = {k: v for k, v in request.args.items() if k != "lang"}
    else:
        gid = (request.view_args or {}).get("gid")
        path = url_for("pages.game_page", gid=gid) if gid else url_for("pages.home")
        args = {}
    args["lang"] = code
    return f"{path}?{urlencode(args)}"


def htmx() -> bool:
    return request.headers.get("HX-Request") == "true"


@bp.before_app_request
def _remember_language() -> None:
    """A seat that picks a language in the header (``?lang=``) reads its mail in it too: the
    choice is the seat's language from then on (its settings page shows it); a link followed
    from another site (``Sec-Fetch-Site``) changes nothing stored."""
    lang = request.args.get("lang")
    gid = (request.view_args or {}).get("gid")
    if lang not in LANGUAGES or not isinstance(gid, str) or request.method != "GET":
        return
    if request.headers.get("Sec-Fetch-Site") in ("cross-site", "same-site"):
        return  # a link on another site may show the page in a language, not change the seat's
    row = seat_row(gid, current_seat(gid))
    if row is not None and row.locale != lang:
        row.locale = lang
        db.session.commit()


# -- who is looking --------------------------------------------------------------------------


def viewer(gid: str) -> tuple[Game, int | None, bool]:
    """The game, the session's seat (or ``None``) and whether it is the organiser; 404 for an
    unknown game, 403 for a browser that is neither. A browser signed in by email as the
    address of a seat of the game is that seat (``auth.seat_of_address``)."""
    game = get_game(gid)
    seat = current_seat(gid)
    admin = is_admin(gid)
    if seat is None and "Authorization" not in request.headers:
        seat = seat_of_address(gid)
    if seat is None and not admin:
        raise ServiceError(
            403, "not_signed_in", _("Open the link from your invitation to see this game.")
        )
    return game, seat, admin


def seat_only(gid: str) -> tuple[Game, int, bool]:
    game, seat, admin = viewer(gid)
    if seat is None:
        raise ServiceError(
            403, "not_a_seat", _("Only a player of this game can do this: open your invitation.")
        )
    return game, seat, admin


def seat_row(gid: str, seat: int | None) -> Seat | None:
    if seat is None:
        return None
    return db.session.execute(
        select(Seat).where(Seat.game_id == gid, Seat.seat_index == seat)
    ).scalar_one_or_none()


def unread(gid: str, seat: int | None) -> int:
    if seat is None:
        return 0
    return db.session.execute(
        select(func.count())
        .select_from(Notification)
        .where(
            Notification.game_id == gid,
            Notification.seat_index == seat,
            Notification.read_at.is_(None),
        )
    ).scalar_one()


def frame(game: Game, seat: int | None, admin: bool, state: GameState | None = None) -> dict:
    """What every game page's frame needs: the game, who is looking, their zone, the nav."""
    row = seat_row(game.id, seat)
    if state is not None:
        players = display.shown_names(state)
    else:
        rows = seats_of(game.id)
        players = display.seat_names([s.name for s in rows], [not s.email for s in rows])
    return {
        "game": game,
        "gid": game.id,
        "seat": seat,
        "admin": admin,
        "players": players,
        "me": players[seat] if seat is not None else None,
        "tz": (row.timezone if row is not None else "UTC") or "UTC",
        "now": now_utc(),
        "unread": unread(game.id, seat),
        "time_left": display.time_left,
        "is_past": display.is_past,
    }


def admin_only(gid: str) -> Game:
    game = get_game(gid)
    if not is_admin(gid):
        raise ServiceError(
            403, "not_admin", _("Only the organiser can do this: open the admin link.")
        )
    return game
