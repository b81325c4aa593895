"""A push to a phone (``imtheboss.web.outbound.push``): the payload encrypted for the browser's keys
(``aes128gcm``, pywebpush's ``WebPusher.encode``), the request signed with the VAPID key
(py_vapid), posted through the SSRF guard. A subscription the push service no longer knows
(404, 410) is dropped."""

from __future__ import annotations

import json
import time
from urllib.parse import urlsplit

from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.outbound import push
from imtheboss.web.outbound.outbox import OutboundPost, PushSubscription
from imtheboss.worker.posting import Outcome, Request, post
from pywebpush import WebPusher
from sqlalchemy import delete, select

GONE = (404, 410)
VAPID_HOURS = 12  # how long the signed VAPID claim holds


def request_for(row: OutboundPost, sub: PushSubscription, game: Game, seat: Seat) -> Request:
    """The encrypted, signed request that pushes ``row`` to ``sub``. Raises ``ValueError``
    when push is off on this server."""
    key = push.vapid()
    if key is None:
        raise ValueError("no VAPID key: push is off")
    players = [s.name for s in seats_of(game.id)]
    data = json.dumps(push.payload(row, game, seat, players), ensure_ascii=False).encode()
    info = {"endpoint": sub.endpoint, "keys": {"p256dh": sub.p256dh, "auth": sub.auth}}
    encrypted = WebPusher(info).encode(data, "aes128gcm")["body"]
    parts = urlsplit(sub.endpoint)
    claims = {
        "sub": push.subject(),
        "aud": f"{parts.scheme}://{parts.netloc}",
        "exp": int(time.time()) + VAPID_HOURS * 3600,
    }
    headers = {
        **key.sign(claims),
        "TTL": str(push.ttl(row)),
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        "Urgency": "high",
    }
    return Request(sub.endpoint, encrypted, headers)


def deliver(row: OutboundPost, game: Game) -> Outcome:
    """Push ``row``; on 404 or 410 the subscription is dropped (``failed``, ``gone``)."""
    sub = db.session.get(PushSubscription, row.subscription_id)
    if sub is None:
        return Outcome("failed", "removed")
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game.id, Seat.seat_index == sub.seat_index)
    ).scalar_one()
    request = request_for(row, sub, game, seat)
    sub_id = sub.id
    db.session.rollback()
    outcome = post(request, gone=GONE)
    if outcome.code == "gone":
        db.session.execute(delete(PushSubscription).where(PushSubscription.id == sub_id))
        db.session.commit()
    return outcome
