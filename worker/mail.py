"""Composing and sending email: plain-text and HTML parts, a subject that says what
is needed and by when (in the player's time zone), the link to the exact decision, ``Date``,
``Message-ID``, ``List-Unsubscribe`` and one-click ``List-Unsubscribe-Post``.

Sending uses smtplib with the app's mail settings (``SMTP_HOST``, ``SMTP_PORT``, ``SMTP_USER``,
``SMTP_PASSWORD``, ``SMTP_STARTTLS``, ``MAIL_FROM``); without ``SMTP_HOST`` mail goes to the
local outbox table that the operator reads at ``/operator/mail``.
"""

from __future__ import annotations

import email.policy
import smtplib
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from zoneinfo import ZoneInfo

from flask import current_app, g, render_template
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import ngettext
from imtheboss.web.links import confirm_link, seat_link, unsubscribe_link
from imtheboss.web.models import Game, Notification, OutboxMail, Seat, db
from imtheboss.web.service import now_utc

# Fold headers only past RFC 5322's 998-character limit: a folded subject read back by some
# clients (and by Python's parser) starts with a space.
HEADER_POLICY = email.policy.SMTP.clone(max_line_length=998)
LOCALES = ("en", "zh_Hans", "zh_Hant")

SUBJECTS = {
    "invited": _l("you are invited"),
    "your_turn": _l("your turn"),
    "place_marker": _l("place the marker to start"),
    "discard": _l("discard down to your hand limit"),
    "stop": _l("a card waits for your answer"),
    "last_call": _l("last call before the deal closes"),
    "offer": _l("terms for you"),
    "reminder": _l("reminder: your answer is due"),
    "deal_opened": _l("a deal was opened"),
    "agreement": _l("an agreement was made"),
    "boss_changed": _l("the boss changed"),
    "deal_closed": _l("a deal closed"),
    "deal_failed": _l("a deal failed"),
    "game_over": _l("the game is over"),
}


def local_time(at: datetime, zone: str) -> str:
    """``at`` in the seat's zone, e.g. ``Tue 3 Mar 14:00 CET``."""
    try:
        tz = ZoneInfo(zone)
    except Exception:
        tz = ZoneInfo("UTC")
    local = at.astimezone(tz)
    return local.strftime("%a %-d %b %H:%M ") + (local.tzname() or "")


def compose(game: Game, seat: Seat | None, rows: list[Notification]) -> EmailMessage:
    """One email to ``seat`` about ``rows`` (one urgent row, or a batch of news), in the seat's
    language (its settings; event lines from the engine stay English). A row to an explicit
    address (``to_email``; ``seat`` is ``None`` then) is mailed alone: ``compose_addressed``."""
    if rows[0].to_email:
        return compose_addressed(game, rows[0])
    assert seat is not None
    g.locale = seat.locale if seat.locale in LOCALES else "en"
    base = current_app.config["BASE_URL"].rstrip("/")
    first = rows[0]
    until = None
    if len(rows) == 1 and first.body.get("until"):
        until = local_time(datetime.fromisoformat(first.body["until"]), seat.timezone)
    if len(rows) == 1:
        what = str(SUBJECTS.get(first.kind, first.kind))
    else:
        what = ngettext("%(num)d thing happened", "%(num)d things happened", len(rows))
    subject = _("[I'm the Boss!] %(title)s: %(what)s", title=game.title, what=what)
    if until:
        subject += " " + _("(by %(time)s)", time=until)
    if first.kind == "invited" and first.body.get("link"):
        link = first.body["link"]
    else:
        target = f"#window-{first.body['window']}" if first.body.get("window") else ""
        link = seat_link(game.id, seat, target)
    unsubscribe = unsubscribe_link(game.id, seat)
    context = {
        "game": game,
        "seat": seat,
        "rows": rows,
        "link": link,
        "until": until,
        "unsubscribe": unsubscribe,
        "base": base,
    }
    msg = _message(subject, seat.email)
    msg["List-Unsubscribe"] = f"<{unsubscribe}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    _parts(msg, "email/notification", context)
    return msg


def _message(subject: str, to: str) -> EmailMessage:
    """A message with the headers every email has: Subject, From, To, Date, Message-ID."""
    msg = EmailMessage(policy=HEADER_POLICY)
    msg["Subject"] = subject
    msg["From"] = current_app.config["MAIL_FROM"]
    msg["To"] = to
    msg["Date"] = format_datetime(now_utc())
    msg["Message-ID"] = make_msgid(domain=current_app.config["MAIL_DOMAIN"])
    return msg


def _parts(msg: EmailMessage, template: str, context: dict) -> None:
    """The plain-text and HTML parts from ``template`` + ``.txt`` / ``.html``."""
    msg.set_content(render_template(f"{template}.txt", **context))
    msg.add_alternative(render_template(f"{template}.html", **context), subtype="html")


def compose_addressed(game: Game, row: Notification) -> EmailMessage:
    """The email of a row to an explicit address (``row.to_email``), in the row's language:
    ``organiser``: the confirm link and the admin link; nothing the creator chose (not the
    title, not the names), since nobody has confirmed that address yet. ``email_changed``: the
    notice to a seat's old address (what changed, whom to ask), with no way into the seat.
    Raises ``ValueError`` for another kind."""
    g.locale = row.body.get("locale") if row.body.get("locale") in LOCALES else "en"
    base = current_app.config["BASE_URL"].rstrip("/")
    if row.kind == "organiser":
        subject = _("[I'm the Boss!] confirm your game to send its invitations")
        context = {
            "confirm": confirm_link(game),
            "admin": row.body.get("link", ""),
            "players": int(row.body.get("players", 0)),
            "base": base,
        }
    elif row.kind == "email_changed":
        subject = _(
            "[I'm the Boss!] %(title)s: your seat's email address was changed", title=game.title
        )
        context = {"game": game, "name": row.body.get("name", ""), "base": base}
    else:
        raise ValueError(f"no mail for a {row.kind!r} row to an address")
    msg = _message(subject, row.to_email or "")
    _parts(msg, f"email/{row.kind}", context)
    return msg


def send(msg: EmailMessage) -> None:
    """Send over SMTP, or keep in the local outbox when no ``SMTP_HOST`` is set. Raises
    ``OSError``/``smtplib.SMTPException`` when the server cannot take it (the task retries)."""
    config = current_app.config
    if not config["SMTP_HOST"]:
        db.session.add(
            OutboxMail(
                to=msg["To"], subject=msg["Subject"], message=msg.as_string(), created_at=now_utc()
            )
        )
        return
    with smtplib.SMTP(config["SMTP_HOST"], config["SMTP_PORT"], timeout=20) as smtp:
        if config["SMTP_STARTTLS"]:
            smtp.starttls()
        if config["SMTP_USER"]:
            smtp.login(config["SMTP_USER"], config["SMTP_PASSWORD"])
        smtp.send_message(msg)
