"""Links in email: signed with itsdangerous, so mail can carry a seat's way in without storing
its secret token. A link names the game and seat and a fingerprint of the seat's current token:
rotating the token (admin "resend") invalidates every older link.

Routes: ``GET /g/<gid>/m/<signed>`` signs the seat in and opens the game (a GET changes no game
state: mail scanners may prefetch it); ``GET/POST /u/<signed>`` one-click unsubscribe
(RFC 8058: the POST needs no session or CSRF token); ``GET /operator/mail`` the local outbox.
"""

from __future__ import annotations

import ipaddress
from email import message_from_string
from email.policy import default as default_policy

from flask import Blueprint, Flask, abort, current_app, redirect, render_template, request
from imtheboss.web.auth import remember_seat
from imtheboss.web.models import OutboxMail, Seat, db
from imtheboss.web.service import ServiceError, get_game
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import select

LINK_MAX_AGE = 90 * 86400  # seconds

bp = Blueprint("links", __name__)


def _serializer(salt: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt=salt)


def _sign(salt: str, game_id: str, seat: Seat) -> str:
    return _serializer(salt).dumps({"g": game_id, "s": seat.seat_index, "h": seat.token_hash[:16]})


def seat_link(game_id: str, seat: Seat, target: str = "") -> str:
    """An absolute link that signs ``seat`` in and opens its game (``target``: ``#anchor``)."""
    base = current_app.config["BASE_URL"].rstrip("/")
    return f"{base}/g/{game_id}/m/{_sign('seat-link', game_id, seat)}{target}"


def unsubscribe_link(game_id: str, seat: Seat) -> str:
    """The one-click unsubscribe link of ``seat`` in ``game_id``."""
    base = current_app.config["BASE_URL"].rstrip("/")
    return f"{base}/u/{game_id}/{_sign('unsubscribe', game_id, seat)}"


def _verify(salt: str, game_id: str, signed: str) -> Seat:
    """The seat a signed link names. Raises ``ServiceError`` 403 (bad, expired, other game's or
    outdated link) or 404 (unknown game)."""
    get_game(game_id)
    try:
        data = _serializer(salt).loads(signed, max_age=LINK_MAX_AGE)
    except BadSignature:
        raise ServiceError(403, "bad_link", "this link is not valid (or has expired)") from None
    if not isinstance(data, dict) or data.get("g") != game_id:
        raise ServiceError(403, "bad_link", "this link is not valid for this game")
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == data.get("s"))
    ).scalar_one_or_none()
    if seat is None or seat.token_hash[:16] != data.get("h"):
        raise ServiceError(403, "bad_link", "this link was replaced by a newer invitation")
    return seat


@bp.get("/g/<game_id>/m/<signed>")
def mail_sign_in(game_id: str, signed: str):
    """Sign in from an email link and open the game."""
    seat = _verify("seat-link", game_id, signed)
    remember_seat(game_id, seat)
    return redirect(f"/g/{game_id}", code=303)


@bp.route("/u/<game_id>/<signed>", methods=["GET", "POST"])
def unsubscribe(game_id: str, signed: str):
    """GET shows a confirmation button; POST (one click, RFC 8058) stops email for this seat."""
    seat = _verify("unsubscribe", game_id, signed)
    if request.method == "POST":
        seat.notify = "off"
        db.session.commit()
        return render_template("unsubscribed.html", seat=seat, done=True)
    return render_template("unsubscribed.html", seat=seat, done=False)


def _operator_allowed() -> bool:
    token = current_app.config["OPERATOR_TOKEN"]
    if token and request.args.get("token") == token:
        return True
    try:
        return (
            not current_app.config["SMTP_HOST"]
            and ipaddress.ip_address(request.remote_addr or "").is_loopback
        )
    except ValueError:
        return False


@bp.get("/operator/mail")
def operator_mail():
    """The local outbox (no SMTP configured): for the operator on this machine only."""
    if not _operator_allowed():
        abort(403, "the mail outbox is for the operator on this machine")
    mails = (
        db.session.execute(select(OutboxMail).order_by(OutboxMail.id.desc()).limit(200))
        .scalars()
        .all()
    )
    shown = []
    for mail in mails:
        message = message_from_string(mail.message, policy=default_policy)
        body = message.get_body(("plain",))
        shown.append((mail, body.get_content() if body is not None else mail.message))
    return render_template("operator_mail.html", mails=shown)


def register(app: Flask) -> None:
    """Add the mail-link routes; the unsubscribe POST is exempt from CSRF (one click)."""
    from imtheboss.web import csrf

    csrf.exempt(unsubscribe)
    app.register_blueprint(bp)
