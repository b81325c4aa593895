"""The organiser's tools for long games (A13): more time for one open window or for every window
that waits for a seat, with a reason the table reads in the history; a seat passed to a new
player (a new address, a fresh secret link; the old link dies), or to the server's bot. They
are engine commands sent by the server (``extend_window``, ``replace_player``,
``pass_to_bot``) through ``submit.submit``, so each is an
event in the history and the deadline rows follow the windows (``deadlines.sync_deadlines``).

Addresses are private: the ``seat_replaced`` event holds the new name, never an address. The
caller checks that the request is the organiser's (``pages.organiser.organiser_only``, or the
admin token in the API, ``api_organiser``). The organiser's other acts (a pause, a resume, a
seat's address, a new invitation) are events too: ``seats.set_status``,
``seats.set_seat_email``, ``seats.resend_invitation``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import current_app
from flask_babel import gettext as _
from imtheboss.engine.organiser import CONTROL, MAX_MINUTES, MAX_NAME, MAX_REASON, seat_windows
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting
from imtheboss.engine.windows import due_windows
from imtheboss.web.app.inputs import whole_number
from imtheboss.web.games.basics import ServiceError, hash_token, new_token, now_utc
from imtheboss.web.games.commit_hooks import run_after_commit
from imtheboss.web.games.load import get_game, require_confirmed
from imtheboss.web.games.names import (
    already_plays,
    invisible,
    invisible_in_name,
    name_key,
    normal_email,
    plays_here,
)
from imtheboss.web.games.seats import seats_of
from imtheboss.web.games.submit import MAX_KEY, SubmitResult, stored_command, submit
from imtheboss.web.mail.notify import invitation, seat_passed
from imtheboss.web.models import SERVER_SCOPE, Deadline, Notification, Seat, db
from sqlalchemy import select, update

KEY_PREFIX = "organiser:"  # the organiser's keys, in the server's scope (no seat writes there)
MAX_KEY_CHARS = MAX_KEY - len(KEY_PREFIX)


@dataclass(frozen=True)
class OpenWindow:
    """An open window as the organiser's form lists it: ``kind`` as ``awaiting``'s ``for``,
    ``seats`` who it waits for (seat indexes), ``until`` its deadline (aware UTC)."""

    id: str
    kind: str
    seats: list[int]
    until: datetime


def open_windows(state: GameState) -> list[OpenWindow]:
    """The windows the organiser may extend, earliest first (the away proxy's is none)."""
    asked: dict[str, tuple[str, list[int]]] = {}
    for a in awaiting(state):
        kind, seats = asked.setdefault(a["window"], (a["for"], []))
        seats.append(a["seat"])
    out = []
    for w in due_windows(state):
        if w.kind == "proxy":
            continue
        kind, seats = asked.get(w.id, (w.kind, []))
        if w.kind == "negotiation" and state.deal is not None:
            kind, seats = "negotiation", [state.deal.boss]
        out.append(OpenWindow(w.id, kind, sorted(seats), w.deadline))
    return out


def waiting_seats(state: GameState) -> list[int]:
    """The seats with at least one open window to extend (``seat_windows``)."""
    return [seat for seat in range(state.n) if seat_windows(state, seat)]


def checked_text(value: Any, longest: int, message: str) -> str:
    """A one-line text from a form, surrounding spaces dropped: 1 to ``longest`` characters, no
    control character. Raises ``ServiceError`` 400 ``bad_text`` with ``message``."""
    text = value.strip() if isinstance(value, str) else ""
    if not 1 <= len(text) <= longest or CONTROL.search(text):
        raise ServiceError(400, "bad_text", message)
    return text


def checked_minutes(hours: Any) -> int:
    """Hours from a form (``"1"`` to ``"168"``, a whole number) as minutes. Raises
    ``ServiceError`` 400 ``bad_extension``."""
    text = hours.strip() if isinstance(hours, str) else ""
    most = MAX_MINUTES // 60
    number = whole_number(text)
    if number is None or not 1 <= number <= most:
        raise ServiceError(
            400, "bad_extension", _("More time is 1 to %(num)d hours.", num=most), "A13"
        )
    return number * 60


def extend(
    game_id: str,
    key: str,
    minutes: int,
    reason: str,
    *,
    window: str | None = None,
    seat: int | None = None,
) -> SubmitResult:
    """Give ``window`` (an id), or every open window that waits for ``seat``, ``minutes`` more,
    saying ``reason`` to the table. ``key``: the form's idempotency key (a repeat appends
    nothing). The reminders of the moved deadlines are planned again. Raises ``ServiceError``
    400 (a reason that is not 1 to ``MAX_REASON`` characters of one line), 404, 409 (the
    engine's refusal: no such open window, the game paused or over)."""
    reason = checked_text(
        reason, MAX_REASON, _("Say why in 1 to %(num)d characters, on one line.", num=MAX_REASON)
    )
    command: dict[str, Any] = {"do": "extend_window", "minutes": minutes, "reason": reason}
    command.update({"window": window} if seat is None else {"seat": seat})
    result = submit(game_id, None, command, checked_key(key))
    moved = [w["window"] for _seq, e in result.events for w in e.data.get("windows", [])]
    if moved and not result.duplicate:
        _plan_reminders_again(game_id, moved)
    return result


def _plan_reminders_again(game_id: str, windows: list[str]) -> None:
    """The moved deadlines get their reminder planned again (80% of the longer window)."""
    table = Deadline.__table__
    db.session.execute(
        update(table)
        .where(table.c.game_id == game_id, table.c.window_id.in_(windows))
        .where(table.c.state == "open")
        .values(remind_at=None, reminded=False)
    )
    db.session.commit()


def replace_player(game_id: str, seat_index: int, name: str, email: str, key: str) -> bool:
    """The seat passes to a new player ``name`` at ``email``: a fresh secret link (every older
    link of the seat dies, the old player's browser is signed out), an invitation with it to
    the new address, a notice to the old player (``seat_passed``, in their language), and the
    ``seat_replaced`` event for the table, all in one transaction. Returns ``True``; ``False``
    for a repeat of ``key`` with the same seat, name and address (the first answer: nothing
    changed again). Raises ``ServiceError`` 400 (a bad name, address or key, a name another
    seat has), 404, 409 (``key_reused``: the key of another act; before the game is
    confirmed, once it is over, while paused)."""
    name = checked_text(
        name, MAX_NAME, _("A name is 1 to %(num)d characters, on one line.", num=MAX_NAME)
    )
    if invisible(name):
        raise ServiceError(400, "bad_text", invisible_in_name())
    key = checked_key(key)
    try:
        email = normal_email(email or "")
    except ValueError as exc:
        raise ServiceError(400, "bad_email", str(exc)) from None
    game = get_game(game_id, lock=True)  # the game row first, as submit takes it
    require_confirmed(game)
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index)
    ).scalar_one_or_none()
    if seat is None:
        db.session.rollback()
        raise ServiceError(404, "no_seat", _("There is no such seat."))
    if _repeat_of(game_id, key, seat, name, email):
        return False
    others = [s for s in seats_of(game_id) if s.seat_index != seat_index]
    if any(name_key(s.name) == name_key(name) for s in others):
        db.session.rollback()
        raise ServiceError(400, "bad_name", _("Another seat has that name."))
    if plays_here(email, [s.email for s in others]):  # one player, one seat
        db.session.rollback()
        raise ServiceError(400, "bad_email", already_plays())
    _hand_over(game_id, seat, name, email, game.last_seq)
    command = {"do": "replace_player", "seat": seat_index, "name": name}
    result = submit(game_id, None, command, key)  # commits the seat with the event
    if result.duplicate:  # pragma: no cover - the key was looked up under the game's lock
        raise ServiceError(409, "key_reused", _("This form was sent already."))
    run_after_commit(game_id)  # the invitation and the notice go out
    return True


def pass_to_bot(game_id: str, seat_index: int, key: str) -> bool:
    """The seat passes to the server's bot (A13, ``web.bots``): its secret link dies, its
    address is dropped (a bot gets no mail), the old player gets a notice (``seat_passed``),
    the table the ``seat_to_bot`` event, in one transaction; then the bot acts at once.
    Returns ``True``; ``False`` for a repeat of ``key`` for the same seat. Raises
    ``ServiceError`` 400 (a bad key), 404, 409 (``key_reused``; ``bots_only``: the last seat
    of a person; ``bad_command``: a bot plays the seat already; before the game is
    confirmed, once it is over, while paused)."""
    key = checked_key(key)
    command = {"do": "pass_to_bot", "seat": seat_index}
    game = get_game(game_id, lock=True)  # the game row first, as submit takes it
    require_confirmed(game)
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index)
    ).scalar_one_or_none()
    if seat is None:
        db.session.rollback()
        raise ServiceError(404, "no_seat", _("There is no such seat."))
    seen = stored_command(game_id, SERVER_SCOPE, key)
    if seen is not None:
        db.session.rollback()
        if seen.body != command:
            raise ServiceError(
                409,
                "key_reused",
                _("This form was sent already for another change: open the admin page again."),
            )
        return False
    now, old_email = now_utc(), seat.email
    seat.token_hash = hash_token(new_token())  # the old link dies; nobody gets the new one
    seat.email, seat.notify, seat.joined_at = "", "every", None
    if old_email:  # the old player hears, in their language
        row = seat_passed(
            game_id, seat_index, seat.name, old_email, seat.locale or "en", now, game.last_seq
        )
        db.session.add(Notification(**row))
    _drop_unsent(game_id, seat_index)
    db.session.flush()
    submit(game_id, None, command, key)  # commits the seat with the event; the bot acts
    run_after_commit(game_id)  # the notice goes out
    return True


def checked_key(key: Any) -> str:
    """A form's (or a client's) idempotency key, in the organiser's scope: 1 to
    ``MAX_KEY_CHARS`` characters, no control character. Raises ``ServiceError`` 400
    ``bad_key``."""
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_CHARS or CONTROL.search(key):
        raise ServiceError(
            400, "bad_key", _("This form is out of date: open the admin page again.")
        )
    return KEY_PREFIX + key


def _repeat_of(game_id: str, key: str, seat: Seat, name: str, email: str) -> bool:
    """Whether ``key`` (the game locked) handed ``seat`` over before to ``name`` at ``email``
    (then the transaction is ended). Raises ``ServiceError`` 409 ``key_reused`` when ``key``
    was used for another act, or for this seat with another player."""
    seen = stored_command(game_id, SERVER_SCOPE, key)
    if seen is None:
        return False
    same = seen.body == {"do": "replace_player", "seat": seat.seat_index, "name": name} and (
        seat.name == name and seat.email.lower() == email.lower()
    )
    db.session.rollback()
    if not same:
        raise ServiceError(
            409,
            "key_reused",
            _("This form was sent already for another change: open the admin page again."),
        )
    return True


def _hand_over(game_id: str, seat: Seat, name: str, email: str, seq: int) -> None:
    """Stage the seat's new player: name, address, a fresh token, no preferences of the old
    player's but the language and zone; the invitation and the old address's notice."""
    now = now_utc()
    old_email, old_name = seat.email, seat.name
    token = new_token()
    seat.token_hash = hash_token(token)
    seat.name, seat.email = name, email
    seat.notify, seat.joined_at = "every", None
    seat.last_seen_seq, seat.last_seen_at, seat.present_at = 0, None, None
    link = f"{current_app.config['BASE_URL'].rstrip('/')}/g/{game_id}/s/{token}"
    index = seat.seat_index
    rows = [invitation(game_id, index, name, link, seat.token_hash[:16], now, seq)]
    if old_email and old_email.lower() != email.lower():  # the old player hears (a bot: none)
        rows.append(seat_passed(game_id, index, old_name, old_email, seat.locale or "en", now, seq))
    _drop_unsent(game_id, index)
    for row in rows:
        db.session.add(Notification(**row))
    db.session.flush()  # a conflict here is ours, before submit writes anything


def _drop_unsent(game_id: str, seat_index: int) -> None:
    """The old player's mail not sent yet is no mail for the new one: ``skipped``."""
    db.session.execute(
        update(Notification)
        .where(
            Notification.game_id == game_id,
            Notification.seat_index == seat_index,
            Notification.to_email.is_(None),
            Notification.email_state == "pending",
        )
        .values(email_state="skipped")
    )
