"""The organiser's tools on the admin page, and the rematch's pages (blueprint ``organiser``).

For the organiser only (the admin link's session, ``organiser_only``): ``POST
/g/<gid>/admin/extend`` (more time for a window or a seat's windows, with a reason), ``POST
/g/<gid>/admin/seat/<n>/replace`` (the seat passes to a new player; in a rematch still waiting,
the seat goes to another player before the start), ``POST /g/<gid>/admin/rematch`` (a finished
game's next game), ``POST /g/<gid>/admin/start`` (a rematch every seat said yes to) and ``GET
/g/<gid>/admin/rematch-sign-in`` (the finished game's organiser signs in to its rematch).
For a seat of a rematch: ``GET/POST /g/<gid>/join/<signed>`` ("do you play?": the ``GET``
shows the question and changes nothing, so a mail scanner answers nothing).

Every form post carries a CSRF token; a refusal is the app's error page (4xx, nothing changed).
The admin and game templates include ``partials/organiser_tools.html`` and
``partials/successor.html``, which read ``organiser_tools(game)`` and ``successor(game)``.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, Flask, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from imtheboss.web.app.inputs import whole_number
from imtheboss.web.app.limits import client_address, spending
from imtheboss.web.games import organiser, rematch
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import Game
from imtheboss.web.players.auth import current_seat, is_admin, remember_admin
from imtheboss.web.say import display, timeline
from werkzeug.wrappers import Response

bp = Blueprint("organiser", __name__)


def register(app: Flask) -> None:
    """Add the blueprint and the templates' helpers."""
    app.register_blueprint(bp)


@bp.app_context_processor
def _helpers() -> dict[str, Any]:
    return {"organiser_tools": tools, "successor": rematch.successor}


def organiser_only(gid: str) -> Game:
    """The game, when the request is its organiser's. Raises ``ServiceError`` 404, 403."""
    game = get_game(gid)
    if not is_admin(gid):
        raise ServiceError(
            403, "not_admin", _("Only the organiser can do this: open the admin link.")
        )
    return game


def tools(game: Game) -> dict[str, Any]:
    """What ``partials/organiser_tools.html`` shows of ``game``: a running game's open windows
    and the seats that have some; a finished game's rematch; a pending rematch's answers."""
    out: dict[str, Any] = {"key": uuid.uuid4().hex, "seats": seats_of(game.id)}
    if game.status in ("active", "paused"):
        state = load_state(game)
        out.update(
            windows=organiser.open_windows(state),
            waiting=organiser.waiting_seats(state),
            players=display.shown_names(state),
            wait_reasons=timeline.WAIT_REASONS,
        )
    elif game.status == "over":
        out["next"] = rematch.successor(game)
    out["pending"] = rematch.pending(game)
    return out


def _back(gid: str) -> Response:
    return redirect(url_for("pages.admin_page", gid=gid), 303)


@bp.post("/g/<gid>/admin/extend")
def extend(gid: str) -> Response:
    """More time: ``target`` is ``window:<id>`` or ``seat:<n>``, ``hours`` 1 to 168, ``reason``
    the table reads, ``key`` the form's idempotency key."""
    organiser_only(gid)
    kind, _sep, value = request.form.get("target", "").partition(":")
    minutes = organiser.checked_minutes(request.form.get("hours"))
    reason, key = request.form.get("reason", ""), request.form.get("key", "")
    seat = whole_number(value) if kind == "seat" else None
    if seat is not None:
        organiser.extend(gid, key, minutes, reason, seat=seat)
    elif kind == "window" and value:
        organiser.extend(gid, key, minutes, reason, window=value)
    else:
        raise ServiceError(400, "bad_target", _("Choose what gets more time."))
    flash(_("The deadline moved; the table reads why in the history."))
    return _back(gid)


@bp.post("/g/<gid>/admin/seat/<int:index>/replace")
def replace(gid: str, index: int) -> Response:
    """The seat passes to a new player (``name``, ``email``): mail to the new address with the
    seat's new link (counted as an invitation by the abuse limits)."""
    game = organiser_only(gid)
    name, email = request.form.get("name", ""), request.form.get("email", "")
    with spending("invitations", client_address()):
        if rematch.pending(game) is not None:
            rematch.give_seat(gid, index, name, email)
        else:
            organiser.replace_player(gid, index, name, email, request.form.get("key", ""))
    flash(_("Seat %(n)d passed to %(name)s; the invitation is on its way.", n=index + 1, name=name))
    return _back(gid)


@bp.post("/g/<gid>/admin/seat/<int:index>/bot")
def to_bot(gid: str, index: int) -> Response:
    """The seat passes to the server's bot (A13): it plays at once; the old player is told."""
    organiser_only(gid)
    organiser.pass_to_bot(gid, index, request.form.get("key", ""))
    flash(_("Seat %(n)d passed to a bot: it plays from now on.", n=index + 1))
    return _back(gid)


@bp.post("/g/<gid>/admin/rematch")
def make_rematch(gid: str) -> Response:
    """The finished game's next game: every seat is mailed a link to say it plays."""
    organiser_only(gid)
    with spending("invitations", client_address(), cost=len(seats_of(gid))):
        made = rematch.make_rematch(gid)
    remember_admin(made.game_id)
    flash(_("The rematch is made: each player is asked by mail whether they play."))
    return _back(made.game_id)


@bp.post("/g/<gid>/admin/start")
def start(gid: str) -> Response:
    """Start a rematch every seat has said yes to."""
    organiser_only(gid)
    rematch.start_now(gid)
    flash(_("The game has started: every player is invited with their own link."))
    return _back(gid)


@bp.get("/g/<gid>/admin/rematch-sign-in")
def rematch_sign_in(gid: str) -> Response:
    """The organiser of a finished game signs in as the organiser of its rematch (a browser
    signed in to the finished game's admin page only). Raises ``ServiceError`` 403, 404."""
    game = get_game(gid)
    of = (game.settings or {}).get("rematch", {}).get("of")
    if not of or not is_admin(of):
        raise ServiceError(
            403, "not_admin", _("Only the organiser can do this: open the admin link.")
        )
    remember_admin(gid)
    return _back(gid)


def rematch_waiting(gid: str) -> str | None:
    """The game page of a rematch that waits for its players (``None`` for any other game):
    the new game starts once each player has said by the link in their mail that they play,
    and who has. For the organiser of either game and the finished game's players. Raises
    ``ServiceError`` 403 for another browser, 404."""
    game = get_game(gid)
    found = rematch.pending(game)
    if found is None:
        return None
    of = found["of"]
    admin = is_admin(gid) or is_admin(of)
    if not admin and current_seat(gid) is None and current_seat(of) is None:
        raise ServiceError(
            403, "not_signed_in", _("Open the link from your invitation to see this game.")
        )
    context = {
        "game": game,
        "finished": get_game(of),
        "seats": seats_of(gid),
        "answers": found["answers"],
        "admin": is_admin(gid),
    }
    return render_template("rematch_waiting.html", **context)


@bp.route("/g/<gid>/join/<signed>", methods=["GET", "POST"])
def join(gid: str, signed: str) -> str:
    """A rematch's seat says whether it plays: ``GET`` asks, ``POST`` (``plays=yes|no``)
    answers. Raises ``ServiceError`` 403 (a bad or replaced link), 404, 409 (started)."""
    seat = rematch.seat_of_join(gid, signed)
    game = get_game(gid)
    started = False
    if request.method == "POST":
        plays = request.form.get("plays")
        if plays not in ("yes", "no"):
            raise ServiceError(400, "bad_answer", _("Say whether you play."))
        started = rematch.answer(gid, seat, plays == "yes")
        game = get_game(gid)
    found = rematch.pending(game)
    finished = get_game(found["of"]) if found else None
    context = {
        "game": game,
        "seat": seat,
        "seats": seats_of(gid),
        "answers": found["answers"] if found else {},
        "finished": finished,
        "started": started or found is None,
        "windows": (game.settings.get("options") or {}).get("windows", {}),
    }
    return render_template("rematch_join.html", **context)
