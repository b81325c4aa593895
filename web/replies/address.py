"""The signed reply address of a decision: ``<MAIL_REPLY_LOCAL>+<token>@<MAIL_DOMAIN>``.

The token names the game, the seat, a fingerprint of the seat's current token and the window the
mail asks about (``w12``) or, for a mail about more than one thing, the newest window opened
when it was made (``n12``), with the turn's step then when a turn runs (``w12p``: placing the
marker; ``s`` roll, ``a`` after the roll, ``d`` discard; the turn's steps share its window):
``<game>.<seat>.<fingerprint>.<window>[.<terms>|.e<seen>].<signature>`` (itsdangerous
``Signer``, its own salt, HMAC-SHA256 cut to 112 bits; addresses sent with the full-length
HMAC-SHA1 signature of before still read). ``<terms>``: the terms a mail's ``accept``/``reject``
answer, ``1S2m`` (``imtheboss.web.replies.terms``): a reply acts only on them. ``e<seen>``, for a
mail showing several sets of terms (``accept C``, ``reject W``): the number of events of the
game's log when it was made, so a reply acts only on terms that mail showed. Either way a reply
answers no window newer than that (A7): window ids ``w0``, ``w1``, … increase. An address of the
older form (``-``, no mark) answers no window at all, only chat. The address is the capability:
a reply to it acts for that seat. Rotating the seat's token (admin "resend invitation") kills
every older address; a window that ended makes its address answer "that window ended". The token
is short enough for a 64-character local part (RFC 5321) and uses only the characters of a
dot-atom.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from flask import current_app
from imtheboss.engine.state import GameState
from imtheboss.web.models import Seat
from imtheboss.web.replies.terms import Shown, read_mark
from itsdangerous import BadSignature, Signer
from itsdangerous.signer import HMACAlgorithm

SALT = "reply-address"
FINGERPRINT = 8  # hex characters of the seat's token hash
WINDOW = re.compile(r"(w[0-9]{1,6})([a-z]?)")
NEWEST = re.compile(r"n([0-9]{1,6})([a-z]?)")
SEEN = re.compile(r"e([0-9]{1,7})")  # the log's length when a mail of several terms was made
# The step of the turn's window a mail was made at (the turn's steps share its window): a reply
# to a mail about placing the marker must not roll, one about rolling must not draw.
TURN_STEPS = {"place_marker": "p", "turn_start": "s", "after_roll": "a", "discard": "d"}
GAME = re.compile(r"[A-Za-z0-9_-]{1,24}")
SIGNATURE_BYTES = 14  # 112 bits of HMAC-SHA256: 19 characters, room for the terms' mark


class BadReplyAddress(ValueError):
    """The address is not one of ours, or its signature does not hold."""


@dataclass(frozen=True)
class ReplyTicket:
    """What a reply address names: ``game_id``, ``seat`` (index), ``fingerprint`` (the first
    ``FINGERPRINT`` hex characters of the seat's token hash when it was made), ``window`` (a
    window id such as ``w12``, or ``""``), ``newest`` (the number of the newest window a reply
    may answer: the window's own, or the newest opened when a window-less mail was made; -1 for
    an address of the older form, which answers none), ``step`` (the turn's step when the mail
    was made, ``TURN_STEPS``; ``""``: not known), ``terms`` (the terms its mail's ``accept`` and
    ``reject`` answer; ``None``: it showed none), ``seen`` (for a mail showing several sets of
    terms: the number of events of the log when it was made; ``None``: not such a mail)."""

    game_id: str
    seat: int
    fingerprint: str
    window: str
    newest: int = -1
    step: str = ""
    terms: Shown | None = None
    seen: int | None = None

    def matches(self, seat: Seat) -> bool:
        """Whether ``seat`` still has the token this address was made for."""
        return seat.token_hash[:FINGERPRINT] == self.fingerprint


class _ShortHMAC(HMACAlgorithm):
    """HMAC-SHA256 cut to ``SIGNATURE_BYTES`` (a truncated HMAC, as RFC 2104 allows)."""

    def __init__(self) -> None:
        super().__init__(hashlib.sha256)

    def get_signature(self, key: bytes, value: bytes) -> bytes:
        return super().get_signature(key, value)[:SIGNATURE_BYTES]


def _signer(legacy: bool = False) -> Signer:
    """The signer of addresses (``legacy``: the full HMAC-SHA1 of addresses sent before)."""
    secret = current_app.config["SECRET_KEY"]
    if legacy:
        return Signer(secret, salt=SALT)
    return Signer(secret, salt=SALT, algorithm=_ShortHMAC())


def reply_token(
    game_id: str,
    seat: Seat,
    window: str = "",
    newest: int = -1,
    step: str = "",
    terms: Shown | None = None,
    seen: int | None = None,
) -> str:
    """The signed token of ``seat``'s decision in ``game_id``: ``window``, its id, or ``""``
    and ``newest``, the number of the newest window opened when the mail is made (``-1``: the
    older form, for tests of it); ``step``: the turn's step then (``turn_step``); ``terms``:
    those the mail's ``accept``/``reject`` answer; else ``seen``: the number of events of the
    log when a mail showing several sets of terms is made."""
    mark = (window or (f"n{newest}" if newest >= 0 else "-")) + (step if mark_ok(step) else "")
    payload = f"{game_id}.{seat.seat_index}.{seat.token_hash[:FINGERPRINT]}.{mark}"
    if terms is not None:
        payload += f".{terms.mark()}"
    elif seen is not None:
        payload += f".e{seen}"
    return _signer().sign(payload).decode()


def mark_ok(step: str) -> bool:
    """Whether ``step`` is one of ``TURN_STEPS``' letters."""
    return step in TURN_STEPS.values()


def turn_step(state: GameState) -> str:
    """The letter of the turn's step in ``state`` (``TURN_STEPS``; ``""`` when no turn runs)."""
    return TURN_STEPS.get(state.phase, "") if state.turn is not None else ""


def reply_address(
    game_id: str,
    seat: Seat,
    window: str = "",
    newest: int = -1,
    step: str = "",
    terms: Shown | None = None,
    seen: int | None = None,
) -> str:
    """The ``Reply-To`` address of ``seat``'s decision (``local+token@MAIL_DOMAIN``; ``window``,
    ``newest``, ``step``, ``terms`` and ``seen`` as for ``reply_token``)."""
    config = current_app.config
    token = reply_token(game_id, seat, window, newest, step, terms, seen)
    return f"{config['MAIL_REPLY_LOCAL']}+{token}@{config['MAIL_DOMAIN']}"


def is_ours(address: str) -> bool:
    """Whether ``address`` (``local@domain``) is a reply address of this server: our
    ``MAIL_REPLY_LOCAL`` with a ``+`` tag, at our ``MAIL_DOMAIN`` (domains compared without
    case). Says nothing of the signature."""
    local, at, domain = address.strip().strip("<>").rpartition("@")
    config = current_app.config
    head, plus, tag = local.partition("+")
    return bool(
        at
        and plus
        and tag
        and head.lower() == config["MAIL_REPLY_LOCAL"].lower()
        and domain.lower().rstrip(".") == config["MAIL_DOMAIN"].lower()
    )


def read_address(address: str) -> ReplyTicket:
    """The ticket a reply address carries. Raises ``BadReplyAddress`` when the address is not
    ours or its token was tampered with (or signed with another key)."""
    if not is_ours(address):
        raise BadReplyAddress("not a reply address of this server")
    token = address.strip().strip("<>").rpartition("@")[0].partition("+")[2]
    payload = _unsign(token)
    game_id, seat, fingerprint, mark, *rest = payload.split(".")
    if not GAME.fullmatch(game_id) or not seat.isdigit():  # pragma: no cover - we signed it
        raise BadReplyAddress("malformed token")
    seen = SEEN.fullmatch(rest[0]) if rest else None
    terms = read_mark(rest[0]) if rest and not seen else None
    count = int(seen.group(1)) if seen else None
    window = WINDOW.fullmatch(mark)
    if window:
        wid, step = window.groups()
        return ReplyTicket(game_id, int(seat), fingerprint, wid, int(wid[1:]), step, terms, count)
    newest = NEWEST.fullmatch(mark)
    if newest:
        number = int(newest.group(1))
        step = newest.group(2)
        return ReplyTicket(game_id, int(seat), fingerprint, "", number, step, terms, count)
    return ReplyTicket(game_id, int(seat), fingerprint, "", -1)


def _unsign(token: str) -> str:
    """The payload of ``token``, signed now or with the signature of before. Raises
    ``BadReplyAddress`` when neither holds."""
    for legacy in (False, True):
        try:
            return _signer(legacy).unsign(token).decode()
        except BadSignature:
            continue
    raise BadReplyAddress("the token's signature does not hold")
