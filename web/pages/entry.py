"""The front door: the home page, a new game and what its organiser reads next, and the
secret links that sign a browser in as a seat or as the organiser (the session cookie only: a
``GET`` changes no game state)."""

from __future__ import annotations

from typing import Any

from flask import (
    current_app,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.web.app import inputs
from imtheboss.web.app.limits import TooMany, client_address, spending
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import SERVER_PROXY_HOURS, create_game
from imtheboss.web.games.seats import is_admin_token, seat_by_token, seats_of
from imtheboss.web.pages.common import admin_only, bp
from imtheboss.web.players.auth import open_seat, remember_admin
from imtheboss.web.say.display import LANGUAGES
from imtheboss.web.say.forms import NewGameForm
from werkzeug.wrappers import Response


@bp.get("/")
def home() -> str:
    """What this is, and a link to create a game."""
    return render_template("home.html")


@bp.route("/new", methods=["GET", "POST"])
def new_game() -> Any:
    """Create a game: players, windows (A1), variants, R3.5, R7.1 and the board (R1.4). It
    waits for the organiser to confirm their address (``create_game(confirmed=False)``): the
    page says where the confirm link went; the admin link goes by mail only."""
    form = NewGameForm()
    form.default_languages(str(get_locale() or "en"))  # each player's: the organiser's own
    errors: list[str] = []
    if request.method == "POST":
        if form.validate_on_submit():
            try:
                players = form.player_rows()
                languages = form.player_languages()
                zones = form.player_zones()
                bots = form.player_bots()
                board = _board_from(form)
                with spending("invitations", client_address(), cost=len(players) - len(bots)):
                    created = create_game(
                        form.title.data or "",
                        players,
                        {
                            "variants": list(form.variants.data or []),
                            "must_roll_after_close": bool(form.must_roll_after_close.data),
                            "open_money": bool(form.open_money.data),
                            "windows": form.window_seconds(),
                            "proxy_hours": SERVER_PROXY_HOURS
                            if form.proxy_hours.data is None
                            else form.proxy_hours.data,
                            "quiet_hours": bool(form.quiet_hours.data),
                        },
                        board=board,
                        creator_email=form.creator_email.data or "",
                        confirmed=False,
                        starting_orders=form.pace.data,
                        languages=languages,
                        zones=zones,
                        creator_zone=form.creator_zone(),
                        bots=bots,
                    )
            except ValueError as exc:
                errors.append(str(exc))
            except TooMany:
                raise
            except ServiceError as exc:
                errors.append(exc.message)
            else:
                remember_admin(created.game_id)
                # after a POST, a GET: reloading the page cannot make a second game
                return redirect(url_for("pages.created_page", gid=created.game_id), 303)
        else:
            errors.append(_("Some fields need another look (see below)."))
        return render_template("new_game.html", form=form, errors=errors), 400
    return render_template("new_game.html", form=form, errors=errors)


@bp.get("/g/<gid>/created")
def created_page(gid: str) -> str:
    """What the organiser reads after creating a game: the confirm mail went to their address,
    and nobody is invited before they confirm. Only the organiser's browser sees it (403)."""
    game = admin_only(gid)
    players = [(seat.name, seat.email) for seat in seats_of(gid)]
    return render_template(  # no ``gid``: the game's pages open once it is confirmed
        "created.html",
        game_id=gid,
        outbox=bool(current_app.config.get("EMBEDDED")),
        title=game.title or "I'm the Boss!",
        organiser=game.creator_email,
        players=players,
    )


def _board_from(form: NewGameForm) -> Any:
    """``"default"`` or the uploaded board file's JSON (``load_board`` validates it inside
    ``create_game``). Raises ``ValueError`` with a message."""
    if form.board_choice.data != "upload":
        return "default"
    upload = form.board_file.data
    if upload is None or not getattr(upload, "filename", ""):
        raise ValueError(_("choose a board file to upload, or pick the default board"))
    raw = upload.read(1 << 20)
    try:
        return inputs.loads(raw.decode("utf-8"), "board_file")
    except RecursionError:
        raise ValueError(_("the board file is nested too deeply")) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(_("the board file is not valid JSON: %(error)s", error=str(exc))) from None


@bp.route("/g/<gid>/s/<token>", methods=["GET", "POST"])
def seat_link(gid: str, token: str) -> Response | str:
    """A seat's secret link: signs this browser in as that seat (the session cookie only; no
    game state changes) and goes on to the game page, so the token leaves the URL; a browser
    that is someone else here is asked first (``auth.open_seat``)."""
    seat = seat_by_token(gid, token)
    answer = open_seat(gid, seat, url_for("pages.game_page", gid=gid))
    if seat.locale in LANGUAGES and "lang" not in session and isinstance(answer, Response):
        session["lang"] = seat.locale
    return answer


@bp.get("/g/<gid>/admin/<token>")
def admin_link(gid: str, token: str) -> Response:
    """The organiser's secret link: signs this browser in as the game's admin."""
    if not is_admin_token(gid, token):
        raise ServiceError(403, "bad_token", _("this link is not valid for this game"))
    remember_admin(gid)
    return redirect(url_for("pages.admin_page", gid=gid), 303)
