"""Mail that did not go out, as the organiser sees it on the admin page: which seat, what the
mail was about, when it was last tried, and why, in plain words.

A row counts when its ``email_state`` is ``failed`` (refused for good, or given up after
``MAIL_MAX_ATTEMPTS`` tries) or ``unknown`` (the worker stopped in the middle of sending it).
The worker stores why as a code in ``Notification.email_error`` (``REASONS`` says each in
plain words) and the mail server's own words in ``email_error_detail``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from flask_babel import lazy_gettext as _l
from imtheboss.web.mail.kinds import subject
from imtheboss.web.models import Notification, Seat, db
from sqlalchemy import select

REASONS = {
    "refused": _l("The mail server refused this address."),
    "rejected": _l("The mail server refused this mail."),
    "deferred": _l("The mail server kept asking us to try again later."),
    "bad_address": _l("This address cannot take mail."),
    "no_smtputf8": _l(
        "This address has non-Latin letters before the @, and our mail server cannot send to"
        " such addresses."
    ),
    "cannot_compose": _l("The mail could not be written."),
    "tls": _l("The mail server's certificate could not be checked, so nothing was sent."),
    "timeout": _l("The mail server did not answer in time."),
    "unreachable": _l("The mail server could not be reached."),
    "login": _l("The mail server did not accept our sign-in."),
    "smtp": _l("The mail server answered in a way we did not understand."),
}
UNKNOWN = _l("Sending stopped half-way: this mail may not have gone out.")


@dataclass(frozen=True)
class Undelivered:
    """One mail that did not go out: the seat's name, what it was about, when it was last
    tried (aware UTC, or ``None``), the reason in plain words, the server's words (or ``""``),
    and how many times it was tried."""

    seat: str
    about: str
    at: datetime | None
    reason: str
    detail: str
    attempts: int


def undelivered_mail(game_id: str, limit: int = 50) -> list[Undelivered]:
    """The game's mail that did not go out, the latest first (at most ``limit``)."""
    rows = db.session.execute(
        select(Notification, Seat.name)
        .join(
            Seat,
            (Seat.game_id == Notification.game_id) & (Seat.seat_index == Notification.seat_index),
        )
        .where(
            Notification.game_id == game_id,
            Notification.email_state.in_(("failed", "unknown")),
        )
        .order_by(Notification.id.desc())
        .limit(limit)
    ).all()
    return [
        Undelivered(
            seat=name,
            about=subject(row.kind),
            at=row.emailed_at,
            reason=str(
                UNKNOWN
                if row.email_state == "unknown"
                else REASONS.get(row.email_error or "", REASONS["smtp"])
            ),
            detail="" if row.email_state == "unknown" else row.email_error_detail or "",
            attempts=row.attempts,
        )
        for row, name in rows
    ]
