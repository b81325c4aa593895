"""A game whose first mail asks for the marker, and replies to it (the reply tests)."""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from imtheboss.web.say.display import space_number
from sqlalchemy import select

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]
REPLY_CONFIG = {"MAIL_REPLIES": True, "MAIL_DOMAIN": "boss.example.org"}


@dataclass
class Asked:
    game_id: str
    seat: int
    email: str
    mail: EmailMessage  # the mail that asked (place the marker)
    window: str = ""  # the window it asked about
    created: Any = None  # create.CreatedGame: the seats' tokens
    first_space: int = 0  # the space (1-16) the mail suggests first: its "place N" example

    @property
    def address(self) -> str:
        return str(self.mail["Reply-To"])


def asked(app, locale: str = "") -> Asked:
    """A new game and the composed mail asking its first player to place the marker."""
    with app.app_context():
        created = create_game("Friday", PLAYERS)
        row = db.session.execute(
            select(Notification).where(Notification.kind == "place_marker")
        ).scalar_one()
        seat = db.session.execute(
            select(Seat).where(Seat.seat_index == row.seat_index)
        ).scalar_one()
        seat.locale = locale
        db.session.commit()
        mail = compose(get_game(created.game_id), seat, [row])
        window = row.body["window"]
        first = space_number(row.body["best"][0]["space"])
        return Asked(created.game_id, row.seat_index, seat.email, mail, window, created, first)


def answers(app) -> list[Notification]:
    """The answer rows written to replies, oldest first."""
    with app.app_context():
        rows = (
            db.session.execute(
                select(Notification)
                .where(Notification.kind == "reply_answer")
                .order_by(Notification.id)
            )
            .scalars()
            .all()
        )
        db.session.expunge_all()
        return list(rows)
