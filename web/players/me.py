"""My games: every seat of the signed-in address across games (``/me``, ``/api/me``).

The seats that wait for the player come first, the soonest deadline first; then the running
games that wait for others (by their next deadline), then the finished ones with their result.
Each entry says what is asked (``imtheboss.web.say.decisions.asked_of`` of the seat's own
``view``, A8: nothing another seat may not see, no hand, no money but at the end, when R7.1
shows every total) and opens the seat: ``POST /me/open/<gid>/<seat>`` (CSRF) signs this browser
in as that seat (the seat session its pages need) when the seat is the signed-in address's, and
goes on to the game page.

``/api/me`` answers the same list as JSON, for the browser's session (signed in by email) or
an address's API token (``Authorization: Bearer``, made on ``/me/settings``); it only reads, so
it needs no CSRF token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from babel.lists import format_list
from flask import (
    Blueprint,
    Flask,
    has_request_context,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.engine.views import view
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.load import load_state
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.players import people as players
from imtheboss.web.players.addresses import of_address
from imtheboss.web.players.auth import remember_seat
from imtheboss.web.say import decisions, display
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from werkzeug.wrappers import Response

bp = Blueprint("me", __name__)
LATER = datetime.max.replace(tzinfo=None)  # sorts entries without a deadline last


@dataclass
class Entry:
    """One seat of the address: its game, what it is asked (``asked``: ``decisions.Asked``),
    its soonest deadline (``deadline``: aware UTC, ``None`` without one), the game's next
    deadline whoever it waits for (``next_deadline``), and at the end the ``result``."""

    game: Game
    seat: Seat
    phase: str
    asked: list[decisions.Asked] = field(default_factory=list)
    deadline: datetime | None = None
    next_deadline: datetime | None = None
    result: str = ""

    @property
    def waiting(self) -> bool:
        return bool(self.asked) and self.game.status == "active"

    @property
    def over(self) -> bool:
        return self.phase == "game_over"


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _result(v: dict[str, Any], seat: int, players_: list[str]) -> str:
    """A finished game's result for ``seat``: who won, with how much, and the seat's money
    (R7.1: every total is shown at the end)."""
    money = {s["seat"]: s["money"] for s in v["seats"]}
    winners = v.get("winners") or []
    own = money.get(seat) or 0
    if seat in winners and len(winners) == 1:
        return _("You won with %(money)d M.", money=own)
    names = format_list([players_[w] for w in winners if w != seat], locale=get_locale())
    best = max((money.get(w) or 0) for w in winners) if winners else 0
    if seat in winners:
        return _("You shared the win with %(names)s: %(money)d M.", names=names, money=own)
    return _(
        "%(names)s won with %(best)d M; you finished with %(money)d M.",
        names=names,
        best=best,
        money=own,
    )


def entry_of(game: Game, seat: Seat) -> Entry:
    """What ``/me`` says of ``seat`` in ``game``, from that seat's own view (A8)."""
    state = load_state(game)
    v = view(state, seat.seat_index)
    v["you"] = {**v["you"], "hand": None}  # /me says nothing of any hand, the seat's own too
    names = display.shown_names(state)
    entry = Entry(game, seat, v["phase"])
    entry.asked = decisions.asked_of(v, seat.seat_index, names)
    dues = [d for d in (_when(a.until) for a in entry.asked) if d is not None]
    entry.deadline = min(dues, default=None)
    every = [d for d in (_when(a["until"]) for a in v["awaiting"]) if d is not None]
    entry.next_deadline = min(every, default=None)
    if entry.over:
        entry.result = _result(v, seat.seat_index, names)
    return entry


def _key(entry: Entry) -> tuple:
    group = 0 if entry.waiting else 2 if entry.over else 1
    due = entry.deadline if entry.waiting else entry.next_deadline
    stamp = due.replace(tzinfo=None) if due is not None else LATER
    return (group, stamp, entry.game.created_at.replace(tzinfo=None), entry.seat.seat_index)


def entries(email: str) -> list[Entry]:
    """Every seat of ``email`` in a game that has started, in ``/me``'s order."""
    rows = db.session.execute(
        select(Game, Seat)
        .join(Seat, Seat.game_id == Game.id)
        .where(of_address(Seat.email, email), Game.status != "unconfirmed")
    ).all()
    return sorted((entry_of(game, seat) for game, seat in rows), key=_key)


def signed_in_address() -> str:
    """The signed-in address. Raises ``ServiceError`` 403 (``not_signed_in``)."""
    email = players.signed_in()
    if email is None:
        raise ServiceError(
            403, "not_signed_in", _("Sign in with your email address to see your games.")
        )
    return email


@bp.get("/me")
def my_games() -> str | Response:
    """The signed-in address's games (the sign-in form when no address is signed in), every
    time in one zone, said on the page: the address's default (``/me/settings``), else the
    browser's own (``static/app.js`` rewrites the ``<time>`` elements), else UTC; with a link
    to choose one."""
    email = players.signed_in()
    if email is None:
        return redirect(url_for("signin.sign_in_form"), 303)
    found = entries(email)
    row = players.player_row(email)
    chosen = row.timezone if row is not None else ""  # every row in one zone: the player's
    tz = chosen or "UTC"
    return render_template(
        "me.html",
        email=email,
        entries=found,
        waiting=sum(1 for e in found if e.waiting),
        tz=tz,
        zone_chosen=bool(chosen),
        now=now_utc(),
        time_left=display.time_left,
    )


@bp.post("/me/open/<gid>/<int:index>")
def open_seat(gid: str, index: int) -> Response:
    """Sign this browser in as seat ``index`` of ``gid`` when it is the signed-in address's,
    and open the game page. Raises ``ServiceError`` 403 (not signed in, or not this address's
    seat: the same answer whether the seat exists or not)."""
    email = signed_in_address()
    seat = db.session.execute(
        select(Seat)
        .join(Game, Game.id == Seat.game_id)
        .where(
            Seat.game_id == gid,
            Seat.seat_index == index,
            of_address(Seat.email, email),
            Game.status != "unconfirmed",
        )
    ).scalar_one_or_none()
    if seat is None:
        raise ServiceError(403, "not_your_seat", _("This seat is not one of yours."))
    remember_seat(gid, seat, player=email)
    session.pop("landing", None)  # a click of the player's own, not a scanner's prefetch
    return redirect(url_for("pages.game_page", gid=gid), 303)


def entry_json(entry: Entry) -> dict[str, Any]:
    """One entry of ``/api/me`` (times ISO 8601 UTC)."""
    return {
        "game": entry.game.id,
        "title": entry.game.title,
        "seat": entry.seat.seat_index,
        "name": entry.seat.name,
        "status": entry.game.status,
        "phase": entry.phase,
        "waiting": entry.waiting,
        "asked": [{"text": a.text, "until": a.until, "window": a.window} for a in entry.asked],
        "deadline": entry.deadline.isoformat() if entry.deadline else None,
        "next_deadline": entry.next_deadline.isoformat() if entry.next_deadline else None,
        "result": entry.result or None,
        "open": url_for("me.open_seat", gid=entry.game.id, index=entry.seat.seat_index),
        "page": url_for("pages.game_page", gid=entry.game.id),
    }


@bp.get("/api/me")
def api_me() -> Response:
    """The signed-in address's games as JSON: ``{"email", "waiting", "games": [entry_json]}``.
    Raises ``ServiceError`` 401 without a session or a token, 403 for a wrong token."""
    if request.headers.get("Authorization", "").lower().startswith("bearer "):
        email = players.bearer_player()
        if email is None:
            raise ServiceError(403, "bad_token", _("This API token is not valid (any more)."))
    else:
        email = players.signed_in()
    if email is None:
        raise ServiceError(
            401, "not_signed_in", _("Sign in by email, or send your API token as a bearer token.")
        )
    found = entries(email)
    return jsonify(
        {
            "email": email,
            "waiting": sum(1 for e in found if e.waiting),
            "games": [entry_json(e) for e in found],
        }
    )


@bp.app_context_processor
def _signed_in_address() -> dict[str, Any]:
    """The signed-in address for the header of every page (none outside a request: mail), and
    ``seat_game``: the id of the game whose seat this browser last opened by its link (``None``
    without one), for a way back to it from a page outside the game (the rules)."""
    if not has_request_context():
        return {"player_email": None, "seat_game": None}
    seats = session.get("seats") or {}
    landing = session.get("landing")
    seat_game = landing if landing in seats else next(iter(seats), None)
    try:
        return {"player_email": players.signed_in(), "seat_game": seat_game}
    except SQLAlchemyError:  # the error page of a database that is down
        db.session.rollback()
        return {"player_email": None, "seat_game": seat_game}


def register(app: Flask) -> None:
    """Add the ``/me`` routes to ``app``."""
    app.register_blueprint(bp)
