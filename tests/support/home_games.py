"""Three games of one address, made through the service, each waiting for that address with a
deadline of its own (``/me``'s order): the web tests of ``/me`` and the end-to-end test of
signing in by email share them.

- ``stop``: the known deal of tests/support/deal.py up to the travel card: the address's seat
  (the provider) is asked to stop it or let it happen, in a stop window of ``STOP`` seconds;
- ``soon`` and ``late``: new games whose first player is the address's seat, asked to place the
  marker in a turn window of ``SOON`` and ``LATE`` seconds.

So the order is stop, soon, late; once the address lets the travel card happen, the stop game
waits for others and moves below the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Seat, db
from sqlalchemy import update

from support.deal import PLAYERS, find_setup

STOP, SOON, LATE = 1800, 3600, 7200  # seconds


@dataclass
class HomeGames:
    """The three games' ids and the address's seat in each."""

    stop: str
    soon: str
    late: str
    seats: dict[str, int]

    @property
    def order(self) -> list[str]:
        return [self.stop, self.soon, self.late]


def _give(gid: str, seat: int, email: str) -> None:
    db.session.execute(
        update(Seat).where(Seat.game_id == gid, Seat.seat_index == seat).values(email=email)
    )
    db.session.commit()


def make_home_games(app: Any, email: str) -> HomeGames:
    """Make the three games (see the module docstring) on ``app``'s database."""
    s = find_setup()
    with app.app_context():
        stop = create_game("Stop game", PLAYERS, {"windows": {"stop": STOP}}, seed=s.seed)
        gid = stop.game_id
        submit(gid, s.boss, {"do": "place_marker", "space": s.space}, "home-marker")
        submit(gid, s.boss, {"do": "open_deal"}, "home-open")
        travel = {"do": "travel", "card": s.travel_card, "target": f"investor:{s.letter}"}
        submit(gid, s.traveller, travel, "home-travel")
        _give(gid, s.provider, email)
        seats = {gid: s.provider}
        made = []
        for title, seconds in (("Soon game", SOON), ("Late game", LATE)):
            game = create_game(title, PLAYERS, {"windows": {"turn": seconds}}, seed=s.seed + 1)
            first = load_state(get_game(game.game_id)).active
            _give(game.game_id, first, email)
            seats[game.game_id] = first
            made.append(game.game_id)
    return HomeGames(gid, made[0], made[1], seats)
