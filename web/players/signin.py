"""Signing in by email, without a password: a player types their address and gets a link.

Routes (blueprint ``signin``):

- ``GET/POST /sign-in``: the form. Its ``POST`` (CSRF) checks the address (email-validator,
  ``names.normal_email``), writes a ``sign_in_links`` row and queues its mail
  (``imtheboss.worker.signin_mail.send_sign_in``, by name) for every well-formed address, and
  answers the same page: whether the address has games is decided by the worker, which mails
  only an address with a seat. The web does the same work either way, so neither the answer
  nor its time says it. Limits (``imtheboss.web.app.limits``), the address counted as its player
  (``addresses.key``: ``EVE@…`` and ``eve@…`` are one): ``RATELIMIT_SIGN_IN`` per client address,
  ``RATELIMIT_SIGN_IN_ADDRESS`` per address and client address (a stranger's asks spend only
  their own; past either, the asker gets a 429), and ``RATELIMIT_SIGN_IN_MAILBOX`` per address
  from every client (a flood of one mailbox from many clients), which a browser that has signed
  in as the address before (the session's ``mailboxes``, set by a used link: it proved it reads
  the mail) skips.

  Strangers can spend the mailbox's limit (they need only the address), so it never refuses:
  past it no new mail is sent, and the answer (200, the same for every address) says to open
  the newest sign-in mail in the mailbox. The ask renews the address's newest link
  (``renewed_at``): it works ``SIGN_IN_LINK_SECONDS`` from that moment, so the owner asking
  from anywhere always holds a working link, however long the limit's window (a day) holds
  new mails back. Only a newest link already used, which only the mailbox's reader can have
  done, or none, gets one more link mailed instead: strangers' asks alone never mail the
  mailbox more than the limit, and each mail past it follows a sign-in by its owner. The
  signature bounds a link's age by ``signature_max_age``: ``SIGN_IN_LINK_SECONDS`` plus the
  limit's longest window, for the newest link is younger than that window while the limit
  is full (each mail sent counts in it), so a renewed one is never too old to work.
- ``GET /sign-in/<signed>``: the mailed link. It checks the signature and keeps the link in the
  session, then sends the browser to ``/sign-in/confirm`` (so the secret leaves the URL, as a
  seat link does). It changes nothing in the database: mail scanners fetch links (``GET``,
  ``HEAD``) and must neither sign anyone in nor use the link up.
- ``GET /sign-in/confirm`` shows the address and a button; only its ``POST`` (CSRF) signs in:
  the link's row is used up (``used_at``), bound to this browser; a second ``POST`` from the
  same browser within ``SIGN_IN_GRACE_SECONDS`` (a double click) signs in again, anything else
  is refused. A link used up or expired gets, on ``GET`` as on ``POST``, the form to ask for a
  new one, the address filled in, saying which (403). Links last ``SIGN_IN_LINK_SECONDS`` from
  when they were made or last renewed, and name their address: the signature covers it and the
  row must agree.
- ``POST /sign-out``: signs the address out of every session (``players.sign_out``: a copy of
  the cookie too); seats opened through ``/me`` end with it, a seat link's session stays.

The link is ``{"i": row id, "e": address}`` signed by itsdangerous with ``SECRET_KEY`` (salt
``sign-in``); the row id alone opens nothing.
"""

from __future__ import annotations

import hashlib
import secrets
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, timedelta
from typing import Any

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
from flask_babel import get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from imtheboss.web.app.limits import TooMany, client_address, spending
from imtheboss.web.app.tasks_out import send
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.names import normal_email
from imtheboss.web.models import db
from imtheboss.web.players import people as players
from imtheboss.web.players.addresses import key, of_address
from imtheboss.web.players.people import SignInLink
from itsdangerous import BadSignature, URLSafeTimedSerializer
from limits import parse_many
from sqlalchemy import select
from werkzeug.wrappers import Response
from wtforms import EmailField
from wtforms.validators import InputRequired, Length

bp = Blueprint("signin", __name__)
SALT = "sign-in"
TASK = "imtheboss.worker.signin_mail.send_sign_in"


class SignInForm(FlaskForm):
    """The address to mail a sign-in link to."""

    email = EmailField(_l("Your email address"), [InputRequired(), Length(max=254)])


def signature_max_age() -> int:
    """The signature's own bound on a link's age (seconds), beside the row's: a link's lifetime
    plus the longest window of ``RATELIMIT_SIGN_IN_MAILBOX``, since a link renewed while that
    limit holds mails back (``_hold``) is at most that window old when renewed."""
    windows = parse_many(current_app.config["RATELIMIT_SIGN_IN_MAILBOX"])
    longest = max((item.get_expiry() for item in windows), default=0)
    return int(float(current_app.config["SIGN_IN_LINK_SECONDS"])) + longest


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt=SALT)


def sign_in_link(row: SignInLink) -> str:
    """The absolute link that signs ``row.email`` in (signed; for the mail only)."""
    base = current_app.config["BASE_URL"].rstrip("/")
    return f"{base}/sign-in/{_serializer().dumps({'i': row.id, 'e': row.email})}"


def _bad_link() -> ServiceError:
    return ServiceError(
        403,
        "bad_link",
        _("This sign-in link is not valid, has expired or was used: ask for a new one."),
    )


def _found_row(signed: str, *, lock: bool = False) -> SignInLink:
    """The row ``signed`` names, if the link is genuine (whatever its age or use). Raises
    ``ServiceError`` 403 (``bad_link``) otherwise."""
    try:
        data = _serializer().loads(signed, max_age=signature_max_age())
    except BadSignature:
        raise _bad_link() from None
    if not (isinstance(data, dict) and isinstance(data.get("i"), str)):
        raise _bad_link()
    query = select(SignInLink).where(SignInLink.id == data["i"][:32])
    row = db.session.execute(query.with_for_update() if lock else query).scalar_one_or_none()
    if row is None or row.email != data.get("e"):
        raise _bad_link()
    return row


def _expired(row: SignInLink, now: datetime) -> bool:
    """Whether ``row`` was made, or last renewed (``_hold``), more than
    ``SIGN_IN_LINK_SECONDS`` before ``now``."""
    lifetime = timedelta(seconds=float(current_app.config["SIGN_IN_LINK_SECONDS"]))
    return now - (row.renewed_at or row.created_at) > lifetime


def _spent(row: SignInLink, now: datetime, browser: str) -> str | None:
    """Why ``row`` no longer signs this ``browser`` in: ``"expired"`` (older than
    ``SIGN_IN_LINK_SECONDS``), ``"used"`` (used by another browser, or by this one longer than
    ``SIGN_IN_GRACE_SECONDS`` ago), or ``None`` (it still does)."""
    if _expired(row, now):
        return "expired"
    grace = timedelta(seconds=float(current_app.config["SIGN_IN_GRACE_SECONDS"]))
    if row.used_at is not None and (row.used_by != browser or now - row.used_at > grace):
        return "used"
    return None


def _spent_page(reason: str, email: str) -> tuple[str, int]:
    """The sign-in form, filled in with ``email``, saying the link was used or expired
    (403)."""
    problem = (
        _("This sign-in link was already used: each link works once. Ask for a new one here.")
        if reason == "used"
        else _("This sign-in link has expired. Ask for a new one here.")
    )
    form = SignInForm(formdata=None, email=email)
    return render_template("signin.html", form=form, sent=False, problem=problem), 403


@bp.route("/sign-in", methods=["GET", "POST"])
def sign_in_form() -> str | tuple[str, int]:
    """The form; its ``POST`` mails a link to the address, or, past the mailbox's limit, keeps
    the newest one working (see the module docstring). Raises ``TooMany`` (429) past the
    asker's own limits."""
    form = SignInForm()
    if request.method != "POST" or not form.validate_on_submit():
        status = 400 if request.method == "POST" else 200
        return render_template("signin.html", form=form, sent=False, problem=None), status
    try:
        email = normal_email(form.email.data or "")
    except ValueError as exc:
        return render_template("signin.html", form=form, sent=False, problem=str(exc)), 400
    player, client = key(email), client_address()
    with spending("sign_in", client), spending("sign_in_address", f"{player} {client}"):
        try:
            with _mailbox_spending(player):
                _new_link(email)
            held = False
        except TooMany:  # the mailbox's limit, which strangers may have spent: never a refusal
            _hold(email)
            held = True
    minutes = max(1, int(float(current_app.config["SIGN_IN_LINK_SECONDS"]) // 60))
    return render_template(
        "signin.html", form=form, sent=True, held=held, minutes=minutes, problem=None
    )


def _new_link(email: str) -> None:
    """Write a new link for ``email`` and queue its mail."""
    row = SignInLink(
        id=secrets.token_urlsafe(18),
        email=email,
        locale=str(get_locale() or "en"),
        created_at=now_utc(),
    )
    db.session.add(row)
    db.session.commit()
    _queue(row.id)


def _hold(email: str) -> None:
    """The mailbox's limit holds a new mail for ``email`` back: its newest link works
    ``SIGN_IN_LINK_SECONDS`` from now (``renewed_at``), so the owner's newest mail signs in.
    A newest link already used (only the mailbox's reader can have used it), or none, gets one
    more link mailed instead."""
    newest = db.session.execute(
        select(SignInLink)
        .where(of_address(SignInLink.email, email))
        .order_by(SignInLink.created_at.desc(), SignInLink.id)
        .limit(1)
        .with_for_update()
    ).scalar_one_or_none()
    if newest is None or newest.used_at is not None:
        db.session.rollback()
        _new_link(email)
        return
    newest.renewed_at = now_utc()
    db.session.commit()


BROWSER = "sign_in_browser"  # in the session: the secret of this browser's mark
MAILBOXES = "mailboxes"  # in the session: the players this browser signed in as by a link
KEPT_MAILBOXES = 5


def _mailbox_spending(player: str) -> AbstractContextManager[Any]:
    """The limit of the address ``player`` from every client (``RATELIMIT_SIGN_IN_MAILBOX``),
    unless this browser proved it reads the mailbox. Raises ``TooMany``."""
    if player in session.get(MAILBOXES, []):
        return nullcontext()
    return spending("sign_in_mailbox", player)


def _proved(player: str) -> None:
    """Remember that this browser signed in with a link mailed to ``player``."""
    kept = [p for p in session.get(MAILBOXES, []) if isinstance(p, str) and p != player]
    session[MAILBOXES] = [player, *kept][:KEPT_MAILBOXES]


def _queue(row_id: str) -> None:
    """Hand the link's mail to the worker (``TASKS`` off in tests: nothing is sent). A broker
    that cannot be reached is logged; the player may ask again."""
    if not current_app.config.get("TASKS", True):
        return
    try:
        send(TASK, row_id)
    except Exception:  # the broker is down: the answer stays the same
        current_app.logger.warning("the sign-in mail could not be queued")


@bp.get("/sign-in/<signed>")
def mailed_link(signed: str) -> Response | tuple[str, int]:
    """The link of the mail: kept in the session, then on to the page with the button (no
    change in the database); an expired link: the form to ask for a new one (403). Raises
    ``ServiceError`` 403 for a link that is not genuine."""
    row = _found_row(signed)
    db.session.rollback()
    if _expired(row, now_utc()):
        return _spent_page("expired", row.email)
    session["sign_in_link"] = signed
    return redirect(url_for("signin.confirm"), 303)


def _browser() -> str:
    """This browser's mark: a hash of a random secret its session keeps (made if missing; not
    the CSRF secret, which signing in renews)."""
    secret = session.get(BROWSER)
    if not isinstance(secret, str):
        secret = session[BROWSER] = secrets.token_urlsafe(18)
    return hashlib.sha256(f"sign-in:{secret}".encode()).hexdigest()


@bp.route("/sign-in/confirm", methods=["GET", "POST"])
def confirm() -> str | Response | tuple[str, int]:
    """``GET``: the address and the button; ``POST`` (CSRF): sign in, then ``/me``. A link
    used up (see ``_spent``) or expired: the form to ask for a new one (403), for both. Raises
    ``ServiceError`` 403 for a link that is not genuine."""
    signed = session.get("sign_in_link")
    if not isinstance(signed, str):
        raise _bad_link()
    now, browser = now_utc(), _browser()
    row = _found_row(signed, lock=request.method == "POST")
    reason = _spent(row, now, browser)
    if reason is not None:
        email = row.email
        db.session.rollback()
        return _spent_page(reason, email)
    if request.method != "POST":  # GET and HEAD: a page, nothing used
        return render_template("signin_confirm.html", email=row.email)
    if row.used_at is None:
        row.used_at, row.used_by = now, browser
    email = row.email
    db.session.commit()
    players.sign_in(email)
    _proved(key(email))
    return redirect(url_for("me.my_games"), 303)


@bp.post("/sign-out")
def sign_out() -> Response:
    """Sign the address out everywhere (``players.sign_out``); back to the home page."""
    players.sign_out()
    session.pop("sign_in_link", None)
    return redirect(url_for("pages.home"), 303)


def register(app: Flask) -> None:
    """Add the sign-in routes to ``app``."""
    app.register_blueprint(bp)
