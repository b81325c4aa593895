"""The organiser's webhooks page: ``/g/<gid>/admin/hooks`` lists the game's webhooks (their
address cut short, how their posts went), adds one (the secret is shown on the answer, once)
and removes one. Organiser only (the admin link's session, or its bearer token), CSRF as every
form. Registering this module also writes the outbox of webhooks and push with every commit
(``imtheboss.web.outbound.writer.init_outbound``)."""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    Flask,
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import get_game
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.outbound import webhooks
from imtheboss.web.outbound.writer import init_outbound
from imtheboss.web.players.auth import current_seat, is_admin
from imtheboss.web.say.display import LANGUAGES
from sqlalchemy import select
from werkzeug.wrappers import Response

bp = Blueprint("webhooks", __name__)


def register(app: Flask) -> None:
    """Add the webhooks pages to ``app`` and the outbox of posts (called by ``create_app``)."""
    app.register_blueprint(bp)
    init_outbound(app)


def _organiser(gid: str) -> Game:
    """The game, when the request is its organiser's. Raises ``ServiceError`` 404 or 403."""
    game = get_game(gid)
    if not is_admin(gid):
        raise ServiceError(
            403, "not_admin", _("Only the organiser can do this: open the admin link.")
        )
    return game


def _page(game: Game, status: int = 200, **extra: Any) -> tuple[str, int]:
    seat = current_seat(game.id)
    zone = "UTC"
    if seat is not None:
        row = db.session.execute(
            select(Seat.timezone).where(Seat.game_id == game.id, Seat.seat_index == seat)
        ).scalar_one_or_none()
        zone = row or "UTC"
    context = {
        "game": game,
        "gid": game.id,
        "seat": seat,
        "admin": True,
        "unread": 0,
        "hooks": webhooks.hooks_of(game.id),
        "counts": webhooks.delivery_counts(game.id),
        "failures": webhooks.last_failures(game.id),
        "zone": zone,
        "kinds": webhooks.HOOK_KINDS,
        "locales": LANGUAGES,
        "shown_url": webhooks.shown_url,
        "notices": get_flashed_messages(),
        "chosen": {"locale": str(get_locale() or "en"), "timezone": zone, "kind": "discord"},
        "secret": None,
        "error": None,
        **extra,
    }
    return render_template("webhooks.html", **context), status


@bp.get("/g/<gid>/admin/hooks")
def admin_hooks(gid: str) -> tuple[str, int]:
    """The game's webhooks and the form that adds one."""
    return _page(_organiser(gid))


@bp.post("/g/<gid>/admin/hooks")
def admin_add_hook(gid: str) -> tuple[str, int]:
    """Add a webhook; the answer shows its secret, once. A refused address (not https, a
    private network...) answers 400 with the form and why; nothing is added then."""
    game = _organiser(gid)
    form = request.form
    chosen = {
        "kind": form.get("kind", ""),
        "locale": form.get("locale", ""),
        "timezone": (form.get("timezone") or "UTC").strip(),
        "url": form.get("url", ""),
    }
    try:
        _id, secret = webhooks.add_hook(
            gid, chosen["kind"], chosen["url"], chosen["locale"], chosen["timezone"]
        )
    except ServiceError as exc:
        db.session.rollback()
        if exc.status != 400:
            raise
        return _page(game, 400, error=exc.message, chosen=chosen)
    return _page(game, secret=secret, notices=[_("Webhook added.")])


@bp.post("/g/<gid>/admin/hooks/<int:hook_id>/remove")
def admin_remove_hook(gid: str, hook_id: int) -> Response:
    """Remove a webhook: nothing more is posted to it."""
    _organiser(gid)
    if webhooks.remove_hook(gid, hook_id):
        flash(_("Webhook removed."))
    return redirect(url_for("webhooks.admin_hooks", gid=gid), 303)
