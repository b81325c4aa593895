"""The sign-in mail (``imtheboss.web.players.signin``), as web/ writes it: whether an address
gets one (``has_seat``: a seat in a game that has started) and the message in the row's
language (``compose_sign_in``). The worker sends it (``imtheboss.worker.signin_mail``).
"""

from __future__ import annotations

from email.message import EmailMessage

from flask import current_app, g
from flask_babel import gettext as _
from imtheboss.web.mail.compose import LOCALES, add_parts, new_message
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.players.addresses import of_address
from imtheboss.web.players.people import SignInLink
from imtheboss.web.players.signin import sign_in_link
from sqlalchemy import select


def has_seat(email: str) -> bool:
    """Whether ``email`` has a seat in a game that has started."""
    return (
        db.session.execute(
            select(Seat.id)
            .join(Game, Game.id == Seat.game_id)
            .where(of_address(Seat.email, email), Game.status != "unconfirmed")
            .limit(1)
        ).first()
        is not None
    )


def compose_sign_in(row: SignInLink) -> EmailMessage:
    """The sign-in mail of ``row``, in its language: the link and how long it lasts. Raises
    ``MailFailure`` (``bad_address``)."""
    g.locale = row.locale if row.locale in LOCALES else "en"
    minutes = max(1, int(float(current_app.config["SIGN_IN_LINK_SECONDS"]) // 60))
    msg = new_message(_("[I'm the Boss!] your sign-in link"), row.email)
    context = {
        "link": sign_in_link(row),
        "minutes": minutes,
        "base": current_app.config["BASE_URL"].rstrip("/"),
    }
    add_parts(msg, "email/sign_in", context)
    return msg
