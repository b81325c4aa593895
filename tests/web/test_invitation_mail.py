"""An invitation tells its player what they join: the other players by name, how long each
window lasts, and the organiser, by their name too when they play in the game."""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from sqlalchemy import select
from support.deal import PLAYERS
from support.organiser import mail_text

WINDOWS = {"turn": 24 * 3600, "stop": 6 * 3600, "last_call": 12 * 3600, "negotiation": 2 * 86400}


def _invitation(gid: str, seat_index: int) -> str:
    row = db.session.execute(
        select(Notification).where(
            Notification.game_id == gid,
            Notification.kind == "invited",
            Notification.seat_index == seat_index,
        )
    ).scalar_one()
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == gid, Seat.seat_index == seat_index)
    ).scalar_one()
    return mail_text(compose(get_game(gid), seat, [row]))


def test_the_invitation_names_the_others_the_windows_and_the_organiser(app) -> None:
    with app.app_context():
        gid = create_game("t", PLAYERS, {"windows": WINDOWS}, creator_email=PLAYERS[0][1]).game_id
        text = _invitation(gid, 1)
        assert f"You play with {PLAYERS[0][0]} and {PLAYERS[2][0]}." in text
        assert PLAYERS[1][0] not in text.split("You play with")[1].split(".")[0]
        for line in (
            "your turn to play: 24 hours",
            "answering a card played in a deal (stop it or let it happen): 6 hours",
            "the last call: 12 hours",
            "a negotiation: 2 days",
        ):
            assert line in text, text
        assert f"{PLAYERS[0][0]} ({PLAYERS[0][1]}) organises this game" in text
        other = create_game("t", PLAYERS, creator_email="org@example.org").game_id
        text = _invitation(other, 0)
        assert "The organiser of this game is org@example.org" in text
        assert "organises this game" not in text
