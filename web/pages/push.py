"""A seat's phones: the settings page's button (``templates/partials/push_settings.html``,
``static/push.js``) subscribes the browser and posts the subscription to
``POST /g/<gid>/push/subscribe`` (JSON, CSRF token in ``X-CSRFToken``); ``.../unsubscribe``
forgets it. ``/sw.js`` is the service worker (served from the root, so it may show the pages
of every game), ``static/manifest.webmanifest`` lets the game be added to the home screen."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, current_app, jsonify, send_from_directory
from flask_babel import gettext as _
from imtheboss.web.app import inputs
from imtheboss.web.app.errors import JSON_KEY
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import get_game
from imtheboss.web.outbound import push
from imtheboss.web.players.auth import current_seat
from werkzeug.wrappers import Response

bp = Blueprint("push", __name__)


JSON_ENDPOINTS = ("push.subscribe", "push.unsubscribe")  # their refusals are JSON too


def register(app: Flask) -> None:
    """Add the push routes to ``app`` (called by ``create_app``); their refusals are answered
    as JSON (``errors.wants_json``)."""
    app.register_blueprint(bp)
    app.extensions.setdefault(JSON_KEY, set()).update(JSON_ENDPOINTS)


@bp.app_context_processor
def _push_globals() -> dict[str, Any]:
    """``push_key()`` (the VAPID public key, or ``None``: no button) and ``push_phones(gid,
    seat)`` for the settings page's part."""
    return {"push_key": push.public_key, "push_phones": push.phones}


def _seat(gid: str) -> int:
    get_game(gid)
    seat = current_seat(gid)
    if seat is None:
        raise ServiceError(
            403, "not_a_seat", _("Only a player of this game can do this: open your invitation.")
        )
    return seat


@bp.post("/g/<gid>/push/subscribe")
def subscribe(gid: str) -> tuple[Response, int]:
    """Store this browser's push subscription for the seat (``push.subscribe``): 201."""
    seat = _seat(gid)
    push.subscribe(gid, seat, inputs.json_body())
    return jsonify({"ok": True, "message": _("Notifications are on for this phone.")}), 201


@bp.post("/g/<gid>/push/unsubscribe")
def unsubscribe(gid: str) -> tuple[Response, int]:
    """Forget this browser's subscription (``{"endpoint"}``) of the seat: 200; 400 without an
    endpoint, 404 when the seat has no such phone (``push.unsubscribe``)."""
    seat = _seat(gid)
    push.unsubscribe(gid, seat, inputs.json_body())
    return jsonify({"ok": True, "message": _("Notifications are off for this phone.")}), 200


@bp.get("/sw.js")
def service_worker() -> Response:
    """The service worker, from the root (its scope is every page of the server)."""
    response = send_from_directory(current_app.static_folder, "sw.js", max_age=0)
    response.headers["Content-Type"] = "text/javascript; charset=utf-8"
    response.headers["Cache-Control"] = "no-cache"
    return response
