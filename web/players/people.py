"""Players: the people behind the seats, known by their email address.

A seat belongs to an address (``seats.email``, as ``names.normal_email`` stores it). An
address that signed in by email (``imtheboss.web.players.signin``) has a ``players`` row: its
defaults for new seats (language, time zone, mail frequency, night, standing orders) and the hash of
its API token. Nothing here is a secret of a game: a player's defaults are that player's own, and no
other seat reads them.

An address is one player whatever the case of its local part: ``key`` (the address as
``names.normal_email`` stores it, in lower case) is the ``players`` row's key and the session's
address, and the seats of an address are found by ``of_address`` (``lower(seats.email)``, an
index of its own), since seats keep their address as it was typed (normalised).

The browser's session remembers the signed-in address (``session["player"]``:
``[address, generation, fingerprint]``, the fingerprint of both under ``SECRET_KEY``, so a
cookie signed for one address cannot be edited into another even if the session format
changes). The generation is the ``players.sign_ins`` the browser signed in with: every request
checks it against the row (``signed_in``), and signing out counts it up, so a copy of the
cookie (and every other browser of the address) is signed out too.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from typing import Any

from flask import current_app, g, request, session
from imtheboss.engine import languages
from imtheboss.engine.orders import Orders, OrdersError
from imtheboss.web.games.basics import ServiceError, hash_token, now_utc
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Seat, UTCDateTime, db
from imtheboss.web.players.addresses import key
from imtheboss.web.players.csrf import renew_csrf
from sqlalchemy import JSON, Index, Integer, String, func, select, update
from sqlalchemy.orm import Mapped, mapped_column

NOTIFY_CHOICES = ("every", "must_act", "digest", "off")


class Player(db.Model):
    """One address's defaults for its new seats (empty or ``None``: the game's own default)
    and the sha256 of its API token (``None``: none made). ``email`` is the ``key`` of the
    address; ``sign_ins`` its sign-in generation (see the module)."""

    __tablename__ = "players"
    email: Mapped[str] = mapped_column(String(254), primary_key=True)
    locale: Mapped[str] = mapped_column(String(16), default="", server_default="")
    timezone: Mapped[str] = mapped_column(String(64), default="", server_default="")
    notify: Mapped[str] = mapped_column(String(16), default="", server_default="")
    night: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # A12: {"start","end"}
    orders: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # A10: Orders JSON
    api_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    sign_ins: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class SignInLink(db.Model):
    """One sign-in link asked for: for ``email``, made at ``created_at``, mailed in ``locale``
    (``mail_state``: ``pending``, ``sent``, ``skipped``: the address has no seat, ``failed``),
    used at ``used_at`` by the browser whose fingerprint is ``used_by`` (a double click from
    that browser within the grace signs in again; nothing else does); ``renewed_at``: when an
    ask that the mailbox's limit held back last renewed it (the address's newest link then
    works ``SIGN_IN_LINK_SECONDS`` from that moment)."""

    __tablename__ = "sign_in_links"
    __table_args__ = (Index("ix_sign_in_links_created", "created_at"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    email: Mapped[str] = mapped_column(String(254))
    locale: Mapped[str] = mapped_column(String(16), default="en", server_default="en")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    mail_state: Mapped[str] = mapped_column(String(12), default="pending", server_default="pending")
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    used_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    renewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


# the links of an address, newest first, whatever the case of its local part (``signin``)
Index("ix_sign_in_links_email_lower", func.lower(SignInLink.email), SignInLink.created_at)


def _fingerprint(email: str, generation: int) -> str:
    secret = current_app.config["SECRET_KEY"].encode()
    text = f"player:{email}:{generation}".encode()
    return hmac.new(secret, text, hashlib.sha256).hexdigest()[:32]


def sign_in(email: str) -> None:
    """Remember in the session that this browser is ``email``'s player (a normalised address;
    its ``players`` row is made if missing, and committed), with the row's generation; the
    browser's CSRF secret is renewed (``csrf.renew_csrf``)."""
    row = player_row(key(email), create=True)
    db.session.commit()
    session["player"] = [row.email, row.sign_ins, _fingerprint(row.email, row.sign_ins)]
    session.permanent = True
    g.pop(SIGNED_IN, None)
    renew_csrf()


def sign_out() -> None:
    """Forget the signed-in address, here and in every other session of it (copies of this
    cookie too): the row's generation is counted up and its API token revoked (``None``), and
    committed. Seat sessions of the seats' own links stay; those opened through the address end
    with it (``auth``)."""
    email = signed_in()
    session.pop("player", None)
    g.pop(SIGNED_IN, None)
    if email is not None:
        db.session.execute(
            update(Player)
            .where(Player.email == email)
            .values(sign_ins=Player.sign_ins + 1, api_token_hash=None)
        )
        db.session.commit()


SIGNED_IN = "imtheboss_signed_in"  # on ``g``: the request's answer of ``signed_in``


def signed_in() -> str | None:
    """The address (``key``) this browser signed in as, or ``None`` (no such session, a
    forged one, or one of a generation the address has signed out of). One read of the
    ``players`` row per request."""
    if SIGNED_IN in g:
        return g.get(SIGNED_IN)
    g.setdefault(SIGNED_IN, _check_session())
    return g.get(SIGNED_IN)


def _check_session() -> str | None:
    entry = session.get("player")
    if not (isinstance(entry, list) and len(entry) == 3):
        return None
    email, generation, mark = entry
    if not (isinstance(email, str) and isinstance(generation, int) and isinstance(mark, str)):
        return None
    if not hmac.compare_digest(mark, _fingerprint(email, generation)):
        return None
    current = db.session.execute(
        select(Player.sign_ins).where(Player.email == email)
    ).scalar_one_or_none()
    return email if current == generation else None


def bearer_player() -> str | None:
    """The address whose API token is in ``Authorization: Bearer`` (``None``: no such header,
    or a token of no address)."""
    scheme, _space, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return db.session.execute(
        select(Player.email).where(Player.api_token_hash == hash_token(token.strip()))
    ).scalar_one_or_none()


def player_row(email: str, *, create: bool = False) -> Player | None:
    """The ``players`` row of ``email``'s player (``key``); made (not committed) when
    ``create`` and missing."""
    row = db.session.get(Player, key(email))
    if row is None and create:
        row = Player(email=key(email), created_at=now_utc(), sign_ins=0)
        db.session.add(row)
    return row


def seat_defaults(emails: list[str]) -> dict[str, Player]:
    """The ``players`` rows of the addresses among ``emails`` that have one, by address (as
    given: the row of its ``key``)."""
    if not emails:
        return {}
    keys = sorted({key(e) for e in emails})
    rows = {
        row.email: row
        for row in db.session.execute(select(Player).where(Player.email.in_(keys))).scalars()
    }
    return {e: rows[key(e)] for e in emails if key(e) in rows}


def apply_defaults(seat: Any, player: Player | None) -> None:
    """Give a new ``seat`` (a ``Seat`` not yet flushed) its address's language, zone and mail
    frequency, where the address chose them."""
    if player is None:
        return
    if player.locale:
        seat.locale = player.locale
    if player.timezone:
        seat.timezone = player.timezone
    if player.notify in NOTIFY_CHOICES:
        seat.notify = player.notify


def orders_for(emails: list[str], starting: list[Orders] | None) -> list[Orders] | None:
    """Every new seat's first standing orders (A10): its address's default where it chose one
    (``players.orders``: ``{"kind": "none"}`` or ``{"kind": "orders", "orders": JSON}``), else
    the game's ``starting`` orders (``None``: none for every seat)."""
    defaults = seat_defaults(emails)
    chosen = [(defaults.get(e).orders if defaults.get(e) else None) for e in emails]
    if not any(chosen):
        return starting
    out = []
    for i, kept in enumerate(chosen):
        game_own = starting[i] if starting is not None else Orders()
        if not kept:
            out.append(game_own)
        elif kept.get("kind") == "none":
            out.append(Orders())
        else:
            try:
                out.append(Orders.from_json(kept.get("orders")))
            except OrdersError:  # a default kept by an older rule set: the game's own
                out.append(game_own)
    return out


def start_nights(game_id: str) -> None:
    """A12: in a game with quiet hours that has just started, each seat whose address chose a
    night names it (a ``night`` command through ``submit``, in the address's zone), unless the
    seat has named one already. A night the rules refuse is left out (logged): the game has
    started, and the seat can name its night on its orders page."""
    game = get_game(game_id)
    state = load_state(game)
    if not state.options.quiet_hours or state.phase == "game_over":
        db.session.rollback()  # it only read: end its transaction (no idle one held open)
        return
    seats = db.session.execute(select(Seat).where(Seat.game_id == game_id)).scalars().all()
    defaults = seat_defaults([s.email for s in seats])
    for seat in sorted(seats, key=lambda s: s.seat_index):
        player = defaults.get(seat.email)
        if player is None or not player.night or state.nights[seat.seat_index]:
            continue
        night = {**player.night, "zone": player.timezone or seat.timezone or "UTC"}
        command = {"do": "night", "night": night}
        try:
            submit(game_id, seat.seat_index, command, f"default-night:{seat.seat_index}")
        except ServiceError as exc:  # the seat names its night itself, on its orders page
            current_app.logger.warning("a default night was refused: %s", exc.code)
    db.session.rollback()  # what is left open is a read


def seat_language(seat: Any) -> str:
    """The language ``seat`` reads in: its own (``seats.locale``), else its address's default
    (``players.locale``, ``/me/settings``), else ``""`` (none chosen)."""
    if seat.locale in languages.CODES:
        return seat.locale
    row = db.session.get(Player, key(seat.email))
    return row.locale if row is not None and row.locale in languages.CODES else ""
