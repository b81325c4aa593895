"""Links in email: signed with itsdangerous, so mail can carry a seat's way in without storing
its secret token. A link names the game and seat and a fingerprint of the seat's current token:
rotating the token (admin "resend") invalidates every older link.

Routes: ``GET /g/<gid>/m/<signed>`` signs the seat in and opens the game (a GET changes no game
state: mail scanners may prefetch it); ``GET/POST /u/<signed>`` one-click unsubscribe
(RFC 8058: the POST needs no session or CSRF token); ``GET/POST /g/<gid>/confirm/<signed>`` the
organiser confirms their address (the POST starts the game); ``GET /operator/mail`` the local
outbox and ``/operator/sign-in`` the operator's sign-in.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from email import message_from_string
from email.policy import default as default_policy
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    current_app,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import force_locale
from flask_babel import gettext as _
from imtheboss.web.app.security import csrf
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import confirm_game
from imtheboss.web.games.load import get_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import Game, OutboxMail, Seat, db
from imtheboss.web.players import people as players
from imtheboss.web.players.auth import open_seat
from imtheboss.web.say.display import LANGUAGES
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


@bp.route("/g/<game_id>/m/<signed>", methods=["GET", "POST"])
def mail_sign_in(game_id: str, signed: str):
    """Sign in from an email link and open the game (a browser that is someone else here is
    asked first: ``auth.open_seat``)."""
    seat = _verify("seat-link", game_id, signed)
    return open_seat(game_id, seat, f"/g/{game_id}")


@bp.route("/u/<game_id>/<signed>", methods=["GET", "POST"])
def unsubscribe(game_id: str, signed: str):
    """GET shows a confirmation button; POST (one click, RFC 8058) stops email for this seat.
    In the seat's language (``players.seat_language``: the mail's), else the browser's; a
    language chosen on the page (``?lang=``) wins."""
    seat = _verify("unsubscribe", game_id, signed)
    done = request.method == "POST"
    if done:
        seat.notify = "off"
        db.session.commit()
    game = get_game(game_id)
    own = players.seat_language(seat)
    if own and request.args.get("lang", session.get("lang")) not in LANGUAGES:
        with force_locale(own):
            return render_template("unsubscribed.html", game=game, seat=seat, done=done)
    return render_template("unsubscribed.html", game=game, seat=seat, done=done)


def confirm_link(game: Game) -> str:
    """The absolute link by which the organiser of ``game`` confirms their address (signed: no
    secret is stored; it names the game and a fingerprint of its admin token)."""
    base = current_app.config["BASE_URL"].rstrip("/")
    signed = _serializer("confirm").dumps({"g": game.id, "h": game.admin_token_hash[:16]})
    return f"{base}/g/{game.id}/confirm/{signed}"


@bp.route("/g/<game_id>/confirm/<signed>", methods=["GET", "POST"])
def confirm(game_id: str, signed: str):
    """The organiser's confirm link: ``GET`` shows what confirming does and a button (a mail
    scanner's prefetch confirms nothing); its ``POST`` (CSRF) starts the game and writes the
    invitations (``confirm_game``). Raises ``ServiceError`` 403 for a bad link, 404."""
    game = get_game(game_id)
    try:
        data = _serializer("confirm").loads(signed, max_age=LINK_MAX_AGE)
    except BadSignature:
        raise ServiceError(403, "bad_link", _("this link is not valid (or has expired)")) from None
    if not isinstance(data, dict) or data != {"g": game_id, "h": game.admin_token_hash[:16]}:
        raise ServiceError(403, "bad_link", _("this link is not valid for this game"))
    invited = confirm_game(game_id) if request.method == "POST" else 0
    game = get_game(game_id)
    players = len(seats_of(game_id))
    return render_template("confirm.html", game=game, players=players, invited=invited)


def _fingerprint(token: str) -> str:
    """What an operator's session keeps of the operator token (never the token)."""
    return hashlib.sha256(f"operator:{token}".encode()).hexdigest()


def operator_allowed() -> bool:
    """The operator token in ``Authorization: Bearer`` or in a signed-in session (compared in
    constant time); without it, only the embedded default serving on loopback with no proxy
    trusted (behind a proxy on the same host every request comes from loopback), asked for by
    a loopback or the site's own name (``_own_host``)."""
    config = current_app.config
    token = config["OPERATOR_TOKEN"]
    if token:
        scheme, _space, presented = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(
            presented.strip().encode(), token.encode()
        ):
            return True
        kept = session.get("operator")
        if isinstance(kept, str) and hmac.compare_digest(
            kept.encode(), _fingerprint(token).encode()
        ):
            return True
    if not config.get("EMBEDDED") or config.get("TRUSTED_PROXIES"):
        return False
    return _is_loopback(request.remote_addr or "") and _own_host(request.host)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def _own_host(host: str) -> bool:
    """Whether the request's ``Host`` (``name[:port]``) names this machine: ``localhost``, a
    loopback address or ``BASE_URL``'s host. A page of another site that a browser reaches
    through DNS rebinding sends its own name, and gets no operator page."""
    name = urlsplit(f"//{host}").hostname or ""
    own = urlsplit(current_app.config.get("BASE_URL") or "").hostname or ""
    return name in ("localhost", own.lower()) or _is_loopback(name)


def require_operator() -> None:
    """Raises ``ServiceError`` 403 unless the request is the operator's (``operator_allowed``)."""
    if not operator_allowed():
        raise ServiceError(
            403,
            "not_operator",
            _(
                "The mail outbox is for the operator of this server: sign in with the operator"
                " token at %(url)s.",
                url=url_for("links.operator_sign_in"),
            ),
        )


@bp.get("/operator/mail")
def operator_mail():
    """The local outbox (mail kept while no SMTP server is configured; with ``SMTP_HOST`` the page
    says mail goes out there, and lists what was kept before): for the operator only
    (``require_operator``);
    a mail that asks something has a form to paste a reply (``imtheboss.web.replies.operator``).
    Raises ``ServiceError`` 403."""
    require_operator()
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
    smtp = current_app.config.get("SMTP_HOST") or ""
    return render_template("operator_mail.html", mails=shown, smtp=smtp)


@bp.route("/operator/sign-in", methods=["GET", "POST"])
def operator_sign_in():
    """A form that posts the operator token (``OPERATOR_TOKEN``); right, the session is the
    operator's until the token changes. Raises ``ServiceError`` 403 for a wrong token."""
    if request.method == "POST":
        token = current_app.config["OPERATOR_TOKEN"]
        given = request.form.get("token", "")
        if not token or not hmac.compare_digest(given.encode(), token.encode()):
            raise ServiceError(403, "bad_token", _("That is not the operator token."))
        session["operator"] = _fingerprint(token)
        return redirect(url_for("links.operator_mail"), code=303)
    return render_template("operator_sign_in.html")


def register(app: Flask) -> None:
    """Add the mail-link routes; the unsubscribe POST is exempt from CSRF (one click)."""
    csrf.exempt(unsubscribe)
    app.register_blueprint(bp)
