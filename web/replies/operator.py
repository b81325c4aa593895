"""Replies pasted on the operator's outbox page (``/operator/mail``): the embedded default's way
in for replies, so playing by mail needs no mail server. Each kept mail that has a reply
address gets a form; its post is made into the mail a client would send (from the mail's
recipient, to its ``Reply-To``, threaded on it, the original quoted) and applied like any
other reply (``imtheboss.web.replies.apply``).

Route: ``POST /operator/mail/<id>/reply`` (the operator only, CSRF), then 303 back to the
outbox with the outcome. Each form carries a one-time value that makes the reply's
``Message-ID``: a form posted twice is one reply (the second is seen as delivered twice).
"""

from __future__ import annotations

import re
import secrets
from email import message_from_string
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import format_datetime

from flask import Blueprint, Flask, abort, current_app, redirect, request, url_for
from flask_babel import lazy_gettext as _l
from imtheboss.web.games.basics import now_utc
from imtheboss.web.models import OutboxMail, db
from imtheboss.web.players.links import require_operator
from imtheboss.web.replies.apply import apply_reply

bp = Blueprint("operator_replies", __name__)
MAX_BODY = 20_000  # characters of a pasted reply
ONCE = re.compile(r"[0-9a-f]{16}")  # the form's one-time value (``reply_once``)

# what became of a pasted reply (``replies.apply.Outcome``), in words: its status, then its reason
OUTCOMES = {
    "done": _l("the move was made"),
    "answered": _l("nothing was done, and the player was told why"),
    "duplicate": _l("it was seen before, so nothing was done"),
    "ignored": _l("it was ignored"),
    "refused": _l("it was refused"),
}
REASONS = {
    "confirm_fail": _l("the player is asked to confirm the fail"),
    "unclear": _l("the reply was not clear"),
    "not_now": _l("its word is not a move the player may make now"),
    "no_stop_card": _l("the player has no stop card"),
    "several": _l("it named more than one move"),
    "terms_changed": _l("the terms changed after the mail was sent"),
    "already_answered": _l("the player had already answered"),
    "window_ended": _l("the window had already ended"),
    "newer": _l("a newer mail asks something else"),
    "outdated": _l("the mail is out of date"),
    "unreadable": _l("the reply could not be read"),
    "over": _l("the game is over"),
    "refused": _l("the game does not allow that move"),
    "automatic": _l("it is an automatic mail"),
    "rate_limited": _l("too many replies came at once"),
    "not_ours": _l("it answers no mail of this server"),
    "bad_token": _l("its reply address is not valid"),
    "other_address": _l("it came from another address than the player's"),
    "auth_failed": _l("its sender could not be verified"),
}


def outcome_text(status: str, reason: str = "") -> str:
    """What became of a pasted reply, in the page's language: ``the move was made``, ``nothing
    was done, and the player was told why: the reply was not clear``; an unknown status or
    reason is shown as it is."""
    said = str(OUTCOMES.get(status, status))
    if not reason:
        return said
    return str(_l("%(what)s: %(why)s", what=said, why=REASONS.get(reason, reason)))


def reply_to_of(mail: OutboxMail) -> str:
    """The ``Reply-To`` of a kept mail (``""``: it asks nothing)."""
    return str(message_from_string(mail.message, policy=default_policy).get("Reply-To", ""))


def pasted_reply(mail: OutboxMail, text: str, once: str) -> bytes:
    """The mail a client would send answering ``mail`` with ``text`` above the quoted
    original; its ``Message-ID`` is made of the mail's id and the form's ``once`` (so the same
    form posted twice, a double click, is the same mail and acts once)."""
    original = message_from_string(mail.message, policy=default_policy)
    plain = original.get_body(("plain",))
    quoted = "\n".join("> " + line for line in (plain.get_content() if plain else "").splitlines())
    reply = EmailMessage(policy=default_policy)
    reply["From"] = mail.to
    reply["To"] = str(original.get("Reply-To", ""))
    reply["Subject"] = "Re: " + str(original.get("Subject", ""))
    reply["Date"] = format_datetime(now_utc())
    reply["Message-ID"] = f"<pasted-{mail.id}-{once}@operator.local>"
    msgid = str(original.get("Message-ID", ""))
    if msgid:
        reply["In-Reply-To"] = msgid
        reply["References"] = msgid
    reply.set_content(f"{text}\n\n{quoted}\n")
    return bytes(reply)


@bp.post("/operator/mail/<int:mail_id>/reply")
def reply(mail_id: int):
    """Apply the pasted reply to kept mail ``mail_id``. Raises ``ServiceError`` 403 for anyone
    but the operator; 404 for an unknown mail or one without a reply address."""
    require_operator()
    mail = db.session.get(OutboxMail, mail_id)
    if mail is None or not reply_to_of(mail):
        abort(404)
    text = request.form.get("body", "").strip()[:MAX_BODY]
    once = request.form.get("once", "")
    if not ONCE.fullmatch(once):  # a form from before the field: a mail of its own
        once = secrets.token_hex(8)
    outcome = apply_reply(pasted_reply(mail, text, once))
    current_app.logger.info(
        "pasted reply to mail %s: %s %s", mail_id, outcome.status, outcome.reason
    )
    return redirect(
        url_for("links.operator_mail", replied=outcome.status, why=outcome.reason), code=303
    )


def register(app: Flask) -> None:
    """Add the route, and ``reply_to_of``, ``reply_outcome`` for the outbox template."""
    app.jinja_env.globals["reply_to_of"] = reply_to_of
    app.jinja_env.globals["reply_once"] = lambda: secrets.token_hex(8)
    app.jinja_env.globals["reply_outcome"] = outcome_text
    app.register_blueprint(bp)
