"""A rematch: from a finished game the organiser makes the next one in one step, with the same
players and settings (board, variants, windows, standing orders to start with, the seats'
names, addresses, languages, zones and mail preferences), and a new seed.

The new game waits (status ``unconfirmed``, as a game waiting for its organiser, with
``settings["rematch"]``) until every seat has said it plays: each seat's mail holds a link of
its own (``join_link``: signed, naming the seat and a fingerprint of its token) to a page that
asks "do you play?". When the last seat says yes, the game starts (``create.confirm_game``:
its first events dated then, and every seat invited again with a fresh secret link, so a join
link no longer opens anything). The number of seats is fixed when the rematch is made (R2.1):
a seat that says no, or never answers, can be given to another player by the organiser (a new
name and address, a new join link; the old one dies). No link of the finished game acts in
the new one: seats have new tokens, and sessions and signed links name their game.

``settings["rematch"]``: ``{"of": finished game's id, "answers": {seat index (text): "yes" |
"no"}}``; the finished game's ``settings["next_game"]`` names the new one.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from flask import current_app
from flask_babel import gettext as _
from imtheboss.engine.orders import Orders, pace_of
from imtheboss.web.games.basics import ServiceError, hash_token, new_token, now_utc
from imtheboss.web.games.commit_hooks import run_after_commit
from imtheboss.web.games.create import ENGINE_VERSION, confirm_game
from imtheboss.web.games.load import get_game, load_events
from imtheboss.web.games.names import normal_email
from imtheboss.web.games.organiser import checked_text
from imtheboss.web.games.seats import seats_of
from imtheboss.web.mail.notify import invitation
from imtheboss.web.models import Game, Notification, Seat, db
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy.orm.attributes import flag_modified

JOIN_MAX_AGE = 90 * 86400  # seconds
SALT = "rematch-join"
COPIED = ("name", "email", "locale", "timezone", "notify")  # what a seat keeps


@dataclass(frozen=True)
class Rematch:
    """What ``make_rematch`` made: the new game's id and its admin token (never stored)."""

    game_id: str
    admin_token: str


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt=SALT)


def join_link(game_id: str, seat: Seat) -> str:
    """The absolute link by which ``seat`` says whether it plays the rematch ``game_id``."""
    signed = _serializer().dumps({"g": game_id, "s": seat.seat_index, "h": seat.token_hash[:16]})
    return f"{current_app.config['BASE_URL'].rstrip('/')}/g/{game_id}/join/{signed}"


def seat_of_join(game_id: str, signed: str) -> Seat:
    """The seat a join link names, while it is the seat's current one. Raises ``ServiceError``
    404 (no such game), 403 (a bad, expired or replaced link, or one of another game)."""
    get_game(game_id)
    try:
        data = _serializer().loads(signed, max_age=JOIN_MAX_AGE)
    except BadSignature:
        raise ServiceError(403, "bad_link", _("this link is not valid (or has expired)")) from None
    seat = None
    if isinstance(data, dict) and data.get("g") == game_id:
        seat = next((s for s in seats_of(game_id) if s.seat_index == data.get("s")), None)
    if seat is None or seat.token_hash[:16] != data.get("h"):
        raise ServiceError(403, "bad_link", _("this link is not valid for this game"))
    return seat


def successor(game: Game) -> Game | None:
    """The game made as the rematch of ``game``, if any."""
    next_id = (game.settings or {}).get("next_game")
    return db.session.get(Game, next_id) if next_id else None


def pending(game: Game) -> dict[str, Any] | None:
    """``settings["rematch"]`` of a rematch still waiting for its seats, else ``None``."""
    found = (game.settings or {}).get("rematch")
    return found if game.status == "unconfirmed" and found else None


def make_rematch(finished_id: str) -> Rematch:
    """The next game of the finished game ``finished_id``: same seats and settings, a new seed,
    waiting for every seat's yes; each seat is mailed its join link. Raises ``ServiceError``
    404, 409 (the game is not over, or has its rematch already)."""
    old = get_game(finished_id, lock=True)
    if old.status != "over":
        db.session.rollback()
        raise ServiceError(409, "not_over", _("A rematch can be made once the game is over."))
    if successor(old) is not None:
        db.session.rollback()
        raise ServiceError(409, "rematch_made", _("This game has its rematch already."))
    old_seats = seats_of(finished_id)
    bots = [s.seat_index for s in old_seats if not s.email]  # A13: a bot seat has no address
    game, admin_token = _new_game(old, bots)
    seats = [_new_seat(game.id, s) for s in old_seats]
    db.session.add_all(seats)
    db.session.flush()
    now = now_utc()
    for seat in seats:
        if seat.seat_index in bots:  # the bot plays again: it says yes, no mail
            continue
        row = invitation(
            game.id, seat.seat_index, seat.name, join_link(game.id, seat), seat.token_hash, now, 0
        )
        db.session.add(Notification(**row))
    old.settings = {**old.settings, "next_game": game.id}
    db.session.commit()
    run_after_commit(game.id)
    return Rematch(game.id, admin_token)


def _new_game(old: Game, bots: list[int]) -> tuple[Game, str]:
    """The new game's row (added to the session) and its admin token; ``bots``: the bot seats
    (A13), bots again in the rematch, each with its yes already given."""
    start = load_events(old.id, 0, 1)[0].data  # game_started: the board and orders it began with
    orders = [o for i, o in enumerate(start.get("orders") or []) if i not in bots]
    # the old table's pace when every seat began with one pace's orders, else "relaxed"
    pace = pace_of(Orders.from_json(orders[0])) if orders else None
    same = pace is not None and all(o == orders[0] for o in orders)
    settings = {
        "options": start["options"],
        "board": old.settings.get("board", "custom"),
        "start": {
            "board": {"name": old.settings.get("board", "custom"), "spaces": start["board"]},
            "seed": None,
            "orders": pace if same else "relaxed",
            **({"bots": bots} if bots else {}),
        },
        "rematch": {"of": old.id, "answers": {str(b): "yes" for b in bots}},
    }
    admin_token = new_token()
    game = Game(
        id=secrets.token_urlsafe(9),
        title=old.title,
        created_at=now_utc(),
        status="unconfirmed",
        settings=settings,
        engine_version=ENGINE_VERSION,
        last_seq=0,
        admin_token_hash=hash_token(admin_token),
        creator_email=old.creator_email,
    )
    db.session.add(game)
    return game, admin_token


def _new_seat(game_id: str, old: Seat) -> Seat:
    seat = Seat(game_id=game_id, seat_index=old.seat_index, token_hash=hash_token(new_token()))
    for name in COPIED:
        setattr(seat, name, getattr(old, name))
    return seat


def answer(game_id: str, seat: Seat, plays: bool) -> bool:
    """``seat`` says whether it plays the pending rematch ``game_id``; when every seat has said
    yes the game starts (``confirm_game``). Returns whether it started. Raises ``ServiceError``
    409 when the rematch is not waiting any more."""
    game = get_game(game_id, lock=True)
    found = pending(game)
    if found is None:
        db.session.rollback()
        raise ServiceError(409, "started", _("This game has started: use your invitation."))
    answers = {**found["answers"], str(seat.seat_index): "yes" if plays else "no"}
    _set_answers(game, answers)
    db.session.commit()
    if len(seats_of(game_id)) == sum(a == "yes" for a in answers.values()):
        return confirm_game(game_id) > 0
    return False


def _set_answers(game: Game, answers: dict[str, str]) -> None:
    game.settings = {**game.settings, "rematch": {**game.settings["rematch"], "answers": answers}}
    flag_modified(game, "settings")


def start_now(game_id: str) -> bool:
    """The organiser starts a rematch every seat has said yes to (should the start after the
    last yes have failed). Raises ``ServiceError`` 409 while a seat has not said yes."""
    game = get_game(game_id)
    found = pending(game)
    if found is None:
        raise ServiceError(409, "started", _("This game has started already."))
    if sum(a == "yes" for a in found["answers"].values()) != len(seats_of(game_id)):
        raise ServiceError(
            409, "not_all_in", _("The game starts once every seat has said it plays.")
        )
    return confirm_game(game_id) > 0


def give_seat(game_id: str, seat_index: int, name: str, email: str) -> None:
    """The organiser gives a seat of a pending rematch to another player (who said no, or does
    not answer): a new name and address, a new join link mailed there (the old one dies), the
    seat's answer forgotten. Raises ``ServiceError`` 400 (a bad name or address, a name
    another seat has), 404, 409 (the rematch has started)."""
    name = checked_text(name, 40, _("A name is 1 to %(num)d characters, on one line.", num=40))
    try:
        email = normal_email(email or "")
    except ValueError as exc:
        raise ServiceError(400, "bad_email", str(exc)) from None
    game = get_game(game_id, lock=True)
    found = pending(game)
    seats = seats_of(game_id)
    seat = next((s for s in seats if s.seat_index == seat_index), None)
    if found is None or seat is None:
        db.session.rollback()
        raise ServiceError(409 if seat else 404, "started", _("This seat cannot change now."))
    if any(s.name == name for s in seats if s is not seat):
        db.session.rollback()
        raise ServiceError(400, "bad_name", _("Another seat has that name."))
    seat.name, seat.email, seat.token_hash = name, email, hash_token(new_token())
    answers = {k: v for k, v in found["answers"].items() if k != str(seat_index)}
    _set_answers(game, answers)
    link = join_link(game_id, seat)
    row = invitation(game_id, seat_index, name, link, seat.token_hash, now_utc(), 0)
    db.session.add(Notification(**row))
    db.session.commit()
    run_after_commit(game_id)
