"""A seat's settings: mail, time zone, language and away (A6), and the one-click zone the game
page offers when the browser's zone is not the seat's."""

from __future__ import annotations

import uuid
from typing import Any

from flask import (
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import refresh
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import db
from imtheboss.web.pages.common import bp, frame, seat_only, seat_row
from imtheboss.web.say import display
from imtheboss.web.say.forms import SettingsForm
from werkzeug.wrappers import Response


@bp.route("/g/<gid>/settings", methods=["GET", "POST"])
def settings(gid: str) -> Any:
    """The seat's settings: email preference, time zone, language, and away (A6: an ``away``
    command through ``submit``, so windows stop waiting for the seat)."""
    game, seat, admin = seat_only(gid)
    row = seat_row(gid, seat)
    state = load_state(game)
    away_now = state.away[seat]
    form = SettingsForm(
        data=None
        if request.method == "POST"
        else {
            "notify": row.notify,
            "timezone": row.timezone or "UTC",
            "language": row.locale,
            "away": away_now,
        }
    )
    if request.method == "POST":
        if form.validate_on_submit():
            if bool(form.away.data) != away_now and state.phase != "game_over":
                key = request.form.get("key") or uuid.uuid4().hex
                submit(gid, seat, {"do": "away", "away": bool(form.away.data)}, key[:100])
            row.notify = form.notify.data
            row.timezone = form.timezone.data.strip()
            row.locale = form.language.data or ""
            db.session.commit()
            if row.locale:
                session["lang"] = row.locale
            else:
                session.pop("lang", None)
            refresh()  # the notice in the language just chosen
            flash(_("Settings saved."))
            return redirect(url_for("pages.settings", gid=gid), 303)
        ctx = frame(game, seat, admin)
        ctx.update(form=form, notices=[], **_settings_extras(state))
        return render_template("settings.html", **ctx), 400
    ctx = frame(game, seat, admin)
    ctx.update(form=form, notices=get_flashed_messages(), **_settings_extras(state))
    return render_template("settings.html", **ctx)


@bp.post("/g/<gid>/zone")
def zone(gid: str) -> Response:
    """Show the seat's times in the zone its browser is in (the game page offers it when the
    browser's zone is not the seat's). Raises ``ServiceError`` 400 for a zone this server does
    not know; nothing is changed then."""
    _game, seat, _admin = seat_only(gid)
    name = (request.form.get("timezone") or "").strip()
    if not display.valid_timezone(name):
        message = _("unknown time zone: use a name like Europe/Berlin or UTC")
        raise ServiceError(400, "bad_zone", message)
    seat_row(gid, seat).timezone = name
    db.session.commit()
    flash(_("Times are now shown in %(zone)s.", zone=display.zone_text(name)))
    return redirect(url_for("pages.game_page", gid=gid), 303)


def _settings_extras(state: Any) -> dict[str, Any]:
    return {"key": uuid.uuid4().hex, "game_over": state.phase == "game_over"}
