"""Web Push to a seat's phones: the VAPID key, the subscriptions, and what is pushed.

Anything that needs an answer (the mail's urgent kinds and new terms, ``kinds.ASKING``; the reminder
at 80% of a window too, written by ``imtheboss.web.mail.reminders``), and "you are next"
(``kinds.PUSHED``), is pushed at once to every
phone of the seat (``asks``: rows written with the events, posted by the worker,
``imtheboss.worker.push``): the question and its deadline in the seat's language and zone (a
reminder says what is still asked, from the seat's own view when it is sent), and the game
page's address (never a seat's link). The payload is encrypted for the browser's keys
(RFC 8291, ``aes128gcm``) and the request signed with the server's VAPID key (RFC 8292).

The VAPID key is ``VAPID_PRIVATE_KEY`` (PEM, or the raw key in base64url); without it, the
embedded default makes one and keeps it in the instance folder (``vapid_private_key.pem``, mode
600), and elsewhere push is off (the settings page offers no button).
"""

from __future__ import annotations

import base64
import binascii
import os
from datetime import timedelta
from email.utils import parseaddr
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from flask import current_app
from flask_babel import force_locale
from flask_babel import gettext as _
from imtheboss.engine import languages
from imtheboss.engine.views import view
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.load import load_state
from imtheboss.web.mail.kinds import PUSHED
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.outbound import ssrf
from imtheboss.web.outbound.outbox import OutboundPost, PushSubscription
from imtheboss.web.outbound.webhooks import with_deadline
from imtheboss.web.players import people as players_
from imtheboss.web.replies.choices import has_stop_card
from imtheboss.web.say import decisions, display, messages
from py_vapid import Vapid
from sqlalchemy import delete, func, select

LOCALES = languages.CODES
MAX_PHONES = 5  # subscriptions per seat: a new one beyond replaces the oldest
KEY_FILE = "vapid_private_key.pem"


def asks(notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What of the mail's rows ``notes`` is pushed: ``[{"seat", "kind", "seq", "key", "body"}]``
    (the row's own body: its window, deadline and what is asked, the seat's own view)."""
    return [
        {
            "seat": note["seat_index"],
            "kind": note["kind"],
            "seq": note["seq"],
            "key": note["dedupe_key"],
            "body": note["body"],
        }
        for note in notes
        if note["seat_index"] >= 0 and note["kind"] in PUSHED and not note.get("to_email")
    ]


# -- the VAPID key ---------------------------------------------------------------------------


def vapid() -> Vapid | None:
    """The server's VAPID key (see the module), or ``None`` when push is off."""
    made = current_app.extensions.get("imtheboss.vapid")
    if made is not None:
        return made
    text = current_app.config.get("VAPID_PRIVATE_KEY") or ""
    if not text and current_app.config.get("EMBEDDED"):
        text = _embedded_key(Path(current_app.config["INSTANCE_DIR"]))
    if not text:
        return None
    text = text.strip()
    key = Vapid.from_pem(text.encode()) if text.startswith("-----") else Vapid.from_string(text)
    current_app.extensions["imtheboss.vapid"] = key
    return key


def _embedded_key(folder: Path) -> str:
    """The embedded default's key, made once (the first process to start writes it)."""
    path = folder / KEY_FILE
    if not path.exists():
        key = Vapid()
        key.generate_keys()
        folder.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_text()
        with os.fdopen(fd, "wb") as out:
            out.write(key.private_pem())
    return path.read_text()


def public_key() -> str | None:
    """The VAPID public key as browsers take it (``applicationServerKey``: the uncompressed
    point, base64url without padding), or ``None`` when push is off."""
    key = vapid()
    if key is None:
        return None
    raw = key.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def subject() -> str:
    """The VAPID contact push services may write to: ``VAPID_SUBJECT``, else the server's
    address when it is ``https``, else ``mailto:`` the sender of the mail."""
    chosen = current_app.config.get("VAPID_SUBJECT") or ""
    base = current_app.config.get("BASE_URL") or ""
    if chosen:
        return chosen
    if base.startswith("https://"):
        return base.rstrip("/")
    return "mailto:" + (parseaddr(current_app.config.get("MAIL_FROM") or "")[1] or "boss@localhost")


# -- subscriptions ---------------------------------------------------------------------------


def _key_bytes(value: Any, size: int) -> str:
    """A browser key (base64url) that decodes to ``size`` bytes; the 65 bytes of ``p256dh``
    must be a point of the P-256 curve. Raises ``ServiceError`` 400."""
    try:
        if not isinstance(value, str) or len(value) > 200:
            raise ValueError
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != size or (size == 65 and not _on_curve(raw)):
        raise ServiceError(400, "bad_subscription", _("This browser's push keys are not valid."))
    return value.rstrip("=")


def _on_curve(raw: bytes) -> bool:
    """Whether ``raw`` is an uncompressed point of P-256 (the browser's ECDH key)."""
    if raw[:1] != b"\x04":
        return False
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
    except ValueError:
        return False
    return True


def subscribe(game_id: str, seat: int, data: Any) -> int:
    """Store a browser's push subscription (``{"endpoint", "keys": {"p256dh", "auth"}}``, as
    ``PushSubscription.toJSON()`` gives it) for ``seat``. Returns its id (the same when the
    phone subscribes again). Raises ``ServiceError`` 400 (not https, a private address, bad
    keys) or 409 (push is off here); nothing is written then."""
    if vapid() is None:
        raise ServiceError(409, "push_off", _("This server does not send notifications to phones."))
    if not isinstance(data, dict) or not isinstance(data.get("keys"), dict):
        raise ServiceError(400, "bad_subscription", _("This browser's push keys are not valid."))
    endpoint = data.get("endpoint")
    try:
        ssrf.check_url(endpoint, bool(current_app.config["WEBHOOK_ALLOW_LOOPBACK"]))
    except ssrf.Refused:
        raise ServiceError(
            400, "bad_subscription", _("This browser's push service cannot be reached from here.")
        ) from None
    p256dh = _key_bytes(data["keys"].get("p256dh"), 65)
    auth = _key_bytes(data["keys"].get("auth"), 16)
    mine = (PushSubscription.game_id == game_id) & (PushSubscription.seat_index == seat)
    found = db.session.execute(
        select(PushSubscription).where(mine, PushSubscription.endpoint == endpoint)
    ).scalar_one_or_none()
    if found is not None:
        found.p256dh, found.auth = p256dh, auth
        db.session.commit()
        return found.id
    _drop_oldest(mine)
    row = PushSubscription(
        game_id=game_id,
        seat_index=seat,
        endpoint=endpoint,
        p256dh=p256dh,
        auth=auth,
        created_at=now_utc(),
    )
    db.session.add(row)
    db.session.commit()
    return row.id


def _drop_oldest(mine: Any) -> None:
    count = db.session.execute(
        select(func.count()).select_from(PushSubscription).where(mine)
    ).scalar_one()
    if count >= MAX_PHONES:
        oldest = select(PushSubscription.id).where(mine).order_by(PushSubscription.id).limit(1)
        db.session.execute(delete(PushSubscription).where(PushSubscription.id.in_(oldest)))


def unsubscribe(game_id: str, seat: int, data: Any) -> None:
    """Forget the seat's phone ``data["endpoint"]`` (only a subscription of this seat). Raises
    ``ServiceError`` 400 (no endpoint given) or 404 (the seat has no such phone); nothing is
    removed then."""
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not isinstance(endpoint, str) or not endpoint.strip() or len(endpoint) > 2000:
        raise ServiceError(
            400, "bad_subscription", _("Say which phone to stop: its push address is missing.")
        )
    done = db.session.execute(
        delete(PushSubscription).where(
            PushSubscription.game_id == game_id,
            PushSubscription.seat_index == seat,
            PushSubscription.endpoint == endpoint,
        )
    )
    if not done.rowcount:
        db.session.rollback()
        raise ServiceError(
            404, "no_subscription", _("This phone does not get notifications for your seat.")
        )
    db.session.commit()


def phones(game_id: str, seat: int) -> int:
    """How many phones of the seat get notifications."""
    return db.session.execute(
        select(func.count())
        .select_from(PushSubscription)
        .where(PushSubscription.game_id == game_id, PushSubscription.seat_index == seat)
    ).scalar_one()


# -- what is pushed --------------------------------------------------------------------------


def payload(row: OutboundPost, game: Game, seat: Seat, players: list[str]) -> dict[str, Any]:
    """What the phone shows, in the seat's language and zone: ``{"title", "body", "url",
    "tag"}`` (the same window replaces its earlier notification)."""
    locale = players_.seat_language(seat) or "en"  # its own, else its address's default
    body = row.body["body"]
    note = SimpleNamespace(kind=row.kind, body=body, seat_index=seat.seat_index, text=row.kind)
    base = current_app.config["BASE_URL"].rstrip("/")
    window = body.get("window")
    with force_locale(locale):
        zone = seat.timezone
        can_stop = row.kind != "stop" or has_stop_card(load_state(game), seat.seat_index)
        said = messages.row_text(note, players, zone, can_stop)
        if row.kind == "reminder":
            said = _still_asked(game, seat.seat_index, window, players) or said
        text = with_deadline(said, body, zone, "until")
    return {
        "title": game.title,
        "body": text,
        "url": f"{base}/g/{game.id}" + (f"#window-{window}" if window else ""),
        "tag": f"{game.id}:{window or row.kind}",
    }


def _still_asked(game: Game, seat: int, window: str | None, players: list[str]) -> str:
    """A reminder's words: what ``seat`` is still asked in ``window``, from its own view (A8),
    in the current locale; ``""`` when it is asked nothing there any more."""
    v = view(load_state(game), seat)
    asked = [a.text for a in decisions.asked_of(v, seat, players) if a.window == window]
    return _("Reminder: %(asked)s", asked=asked[0]) if asked else ""


def ttl(row: OutboundPost) -> int:
    """Seconds the push service may keep the push for an offline phone: until the deadline
    (at least a minute, at most four weeks)."""
    until = row.body["body"].get("until")
    if not until:
        return int(timedelta(days=1).total_seconds())
    left = display.when(until) - now_utc()
    return int(min(max(left, timedelta(minutes=1)), timedelta(weeks=4)).total_seconds())
