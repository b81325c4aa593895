"""What an outbox row posts (the outbound worker's door into web/): the request a row makes for
its channel, a webhook's (``hook_request``: the body in the webhook's shape, signed with its
secret, ``imtheboss.web.outbound.webhooks``) or a phone's (``push_request``: the payload encrypted
for the browser's keys, ``aes128gcm``, pywebpush's ``WebPusher.encode``, the request signed with
the VAPID key, ``imtheboss.web.outbound.push``), and the rows and guard the worker posts them
with (``OutboundPost``, ``PushSubscription``, ``Webhook``; ``ssrf``: posting to addresses other
people chose, safely). The worker (``imtheboss.worker.outbound``) claims, posts, retries and
records; what a row says is decided here.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from imtheboss.web.models import Game, Seat, db
from imtheboss.web.outbound import push, ssrf, webhooks
from imtheboss.web.outbound.outbox import OutboundPost, PushSubscription, Webhook
from pywebpush import WebPusher
from sqlalchemy import select

__all__ = [
    "OutboundPost",
    "PushSubscription",
    "Request",
    "Webhook",
    "hook_request",
    "push_request",
    "ssrf",
]

USER_AGENT = "imtheboss-webhook/1"
VAPID_HOURS = 12  # how long the signed VAPID claim holds


@dataclass(frozen=True)
class Request:
    """A post to make: the URL, the raw body, the headers."""

    url: str
    body: bytes
    headers: dict[str, str]


def player_names(game_id: str) -> list[str]:
    """The names at the game's table, in seat order (how a post's words name the seats)."""
    query = select(Seat.name).where(Seat.game_id == game_id).order_by(Seat.seat_index)
    return list(db.session.execute(query).scalars())


def hook_request(row: OutboundPost, hook: Webhook, game: Game) -> Request:
    """The request that posts ``row`` to ``hook``: the body (``webhooks.body``) and the headers
    ``X-Imtheboss-Event``, ``X-Imtheboss-Delivery`` and ``X-Imtheboss-Signature``."""
    players = player_names(game.id)
    raw = webhooks.encode(webhooks.body(hook.kind, webhooks.payload(row, hook, game, players)))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Imtheboss-Event": row.kind,
        "X-Imtheboss-Delivery": str(row.id),
        "X-Imtheboss-Signature": webhooks.sign(hook.secret, raw),
    }
    return Request(hook.url, raw, headers)


def push_request(row: OutboundPost, sub: PushSubscription, game: Game, seat: Seat) -> Request:
    """The encrypted, signed request that pushes ``row`` to ``sub``. Raises ``ValueError``
    when push is off on this server."""
    key = push.vapid()
    if key is None:
        raise ValueError("no VAPID key: push is off")
    players = player_names(game.id)
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
