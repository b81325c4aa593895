"""A game's webhooks: what is posted, in what shape, and the organiser's list of URLs.

What is posted (``posts_for``, one post per event, ``KINDS``): ``turn`` (the game's first turn,
``game_started``, and every ``turn_started``), ``deal_opened``, ``window_opened`` (a window that
asks several seats: a card's stop window, ``card_pending``; the last call, ``close_called``;
the discard step, ``discard_step``), ``deal_closed``, ``deal_failed`` and ``game_over``. A post
holds the event's message as a spectator reads it (``history.message(event, None)``, which
reads only ``redact_event(event, None)``: no hand, pile order, seed or hidden money) and the
window's deadline. It is rendered when it is sent (``payload``), in the webhook's language and
time zone, with the link to the game's page (never a seat's link).

Bodies (``body``): ``json`` is the payload itself; ``discord`` is ``{"content"}`` (mentions
off); ``slack`` is ``{"text"}`` (Slack's control characters escaped). Every post carries
``X-Imtheboss-Signature: sha256=<hex>``: HMAC-SHA256 of the raw body with the webhook's secret
(``sign``), ``X-Imtheboss-Event`` and ``X-Imtheboss-Delivery`` (the row id: a receiver drops a
delivery it has seen). docs/webhooks.md describes them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from flask import current_app
from flask_babel import force_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from imtheboss.engine import languages
from imtheboss.engine.events import Event
from imtheboss.engine.history import Message, message
from imtheboss.engine.views import redact_event
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.models import Game, db
from imtheboss.web.outbound import ssrf
from imtheboss.web.outbound.outbox import OutboundPost, Webhook
from imtheboss.web.say import display, messages
from imtheboss.web.say.events import EVENTS
from sqlalchemy import func, select

KINDS = {t: face.post for t, face in EVENTS.items() if face.post}
"""The post each event type makes (event type -> post kind: the events table's ``post``)."""

WITH_DEADLINE = ("turn", "deal_opened", "window_opened")
HOOK_KINDS = {"discord": "Discord", "slack": "Slack", "json": _l("JSON (signed)")}
LOCALES = languages.CODES
MAX_HOOKS = 5  # per game
DISCORD_MAX = 2000  # characters of a Discord message


def posts_for(first: int, events: list[Event]) -> list[dict[str, Any]]:
    """The posts of ``events`` appended at ``first``: ``[{"kind", "seq", "message",
    "deadline"}]`` (``message``: ``Message.to_json()`` as a spectator reads it; ``deadline``:
    ISO 8601 UTC of the window it opens, or ``None``). Public information only (A8)."""
    out = []
    for offset, event in enumerate(events):
        kind = KINDS.get(event.type)
        if kind is None:
            continue
        public = redact_event(event, None)
        deadline = public.get("deadline") if kind in WITH_DEADLINE else None
        out.append(
            {
                "kind": kind,
                "seq": first + offset,
                "message": message(event, None).to_json(),
                "deadline": deadline,
            }
        )
    return out


def game_url(game_id: str) -> str:
    """The game's page (each player's browser shows it as their seat; never a seat's link)."""
    return f"{current_app.config['BASE_URL'].rstrip('/')}/g/{game_id}"


def text_of(post: dict[str, Any], players: list[str], tz: str) -> str:
    """The post's sentence in the current locale, its deadline in zone ``tz``."""
    return with_deadline(messages.render(Message.from_json(post["message"]), players, tz), post, tz)


def with_deadline(text: str, post: dict[str, Any], tz: str, key: str = "deadline") -> str:
    """``text`` followed by the deadline ``post[key]`` (ISO 8601) in zone ``tz``, if any."""
    if not post.get(key):
        return text
    return _("%(what)s (until %(time)s)", what=text, time=display.page_time(post[key], tz))


def payload(row: OutboundPost, hook: Webhook, game: Game, players: list[str]) -> dict[str, Any]:
    """The JSON a post carries (``docs/webhooks.md``), in the webhook's language and zone."""
    locale = hook.locale if hook.locale in LOCALES else "en"
    with force_locale(locale):
        text = text_of(row.body, players, hook.timezone)
    return {
        "event": row.kind,
        "delivery": row.id,
        "seq": row.seq,
        "text": text,
        "deadline": row.body.get("deadline"),
        "at": row.created_at.isoformat(),
        "language": locale,
        "game": {"id": game.id, "title": game.title, "url": game_url(game.id)},
    }


_MARKDOWN = re.compile(r"([\\*_~|`>#\[\]()-])")


def body(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The body posted to a webhook of ``kind`` for ``payload`` ``data``."""
    title, text, url = data["game"]["title"], data["text"], data["game"]["url"]
    if kind == "discord":
        content = f"**{_discord_escape(title)}** · {_discord_escape(text)}"
        content = content[: DISCORD_MAX - len(url) - 3] + f"\n<{url}>"
        return {"content": content, "allowed_mentions": {"parse": []}}
    if kind == "slack":
        esc = _slack_escape
        return {"text": f"*{esc(title)}* · {esc(text)} <{url}>", "unfurl_links": False}
    return data


def _discord_escape(text: str) -> str:
    return _MARKDOWN.sub(r"\\\1", text)


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def encode(data: dict[str, Any]) -> bytes:
    """A body as the bytes posted (UTF-8 JSON, compact)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def sign(secret: str, raw: bytes) -> str:
    """The signature header's value for ``raw`` (the body as posted): ``sha256=<hex>``."""
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


# -- the organiser's list --------------------------------------------------------------------

REFUSALS = {
    "bad_url": _l("That is not a web address we can post to."),
    "not_https": _l("The address must start with https://."),
    "no_address": _l("That address's host name cannot be found."),
    "not_public": _l("That address leads into a private network; use a public address."),
}


def checked_url(url: str) -> str:
    """``url`` if webhooks may post to it (``ssrf.check_url``). Raises ``ServiceError`` 400
    with a sentence for people."""
    try:
        ssrf.check_url(url, bool(current_app.config["WEBHOOK_ALLOW_LOOPBACK"]))
    except ssrf.Refused as exc:
        raise ServiceError(400, "bad_webhook", str(REFUSALS[exc.code])) from None
    return url.strip()


def hooks_of(game_id: str) -> list[Webhook]:
    """The game's webhooks, oldest first."""
    return list(
        db.session.execute(
            select(Webhook).where(Webhook.game_id == game_id).order_by(Webhook.id)
        ).scalars()
    )


def add_hook(game_id: str, kind: str, url: str, locale: str, timezone: str) -> tuple[int, str]:
    """Add a webhook to the game: ``kind`` of ``HOOK_KINDS``, an ``https`` URL with public
    addresses, texts in ``locale``, times in ``timezone``. Returns its id and its secret (shown
    to the organiser once). Raises ``ServiceError`` 400 (nothing is written then)."""
    if kind not in HOOK_KINDS:
        raise ServiceError(400, "bad_webhook", _("Choose Discord, Slack or JSON."))
    if locale not in LOCALES:
        raise ServiceError(400, "bad_webhook", _("Choose one of the languages offered."))
    if not display.valid_timezone(timezone):
        message = _("unknown time zone: use a name like Europe/Berlin or UTC")
        raise ServiceError(400, "bad_zone", message)
    url = checked_url(url)
    count = db.session.execute(
        select(func.count()).select_from(Webhook).where(Webhook.game_id == game_id)
    ).scalar_one()
    if count >= MAX_HOOKS:
        message = _("A game has at most %(num)d webhooks: remove one first.", num=MAX_HOOKS)
        raise ServiceError(400, "too_many_webhooks", message)
    secret = secrets.token_hex(32)
    hook = Webhook(
        game_id=game_id,
        kind=kind,
        url=url,
        secret=secret,
        locale=locale,
        timezone=timezone,
        created_at=now_utc(),
    )
    db.session.add(hook)
    db.session.commit()
    return hook.id, secret


def remove_hook(game_id: str, hook_id: int) -> bool:
    """Remove the game's webhook ``hook_id`` (its posts not yet made are skipped). Returns
    whether there was one."""
    hook = db.session.get(Webhook, hook_id)
    if hook is None or hook.game_id != game_id:
        db.session.rollback()
        return False
    db.session.delete(hook)
    db.session.commit()
    return True


def shown_url(url: str) -> str:
    """A webhook's URL as the list shows it: scheme and host, the path cut short (Discord's
    and Slack's URLs hold their token in the path)."""
    scheme, _sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}/{path[:12]}…" if slash and len(path) > 12 else url


def delivery_counts(game_id: str) -> dict[int, dict[str, int]]:
    """Per webhook id, how many of its posts are in each state."""
    rows = db.session.execute(
        select(OutboundPost.webhook_id, OutboundPost.state, func.count())
        .where(OutboundPost.game_id == game_id, OutboundPost.webhook_id.is_not(None))
        .group_by(OutboundPost.webhook_id, OutboundPost.state)
    ).all()
    out: dict[int, dict[str, int]] = {}
    for hook_id, state, count in rows:
        out.setdefault(hook_id, {})[state] = count
    return out


FAILURES = {
    "refused": _l("the server refused the connection"),
    "timeout": _l("the server did not answer in time"),
    "tls": _l("the server's certificate is not valid for its address"),
    "connection": _l("the connection to the server broke off"),
    "server": _l("the server answered with an error (it is tried again a few times)"),
    "rejected": _l("the server answered with an error: it did not take the post"),
    "redirect": _l("the server answered with a redirect, which is not followed"),
    "not_public": _l("the address is not public (it leads into a private network)"),
    "no_address": _l("the address's host name cannot be found"),
    "not_https": _l("the address does not start with https://"),
    "bad_url": _l("the address is not a web address we can post to"),
    "cannot_compose": _l("the post could not be written on our side"),
}
"""A post's failure (``outbound_posts.error``, the worker's ``Outcome.code``) in plain words."""


@dataclass
class Failure:
    """A webhook's last failed post: when it was tried (aware UTC), why in plain words
    (``FAILURES``), and the worker's short technical detail for the organiser (``""``: none;
    may hold the receiver's HTTP status)."""

    at: Any
    words: str
    detail: str


def failure_words(code: str | None) -> str:
    """The plain words of a failure ``code`` (a sentence for any code not in ``FAILURES``)."""
    return str(FAILURES.get(code or "", _l("the post did not go through")))


def last_failures(game_id: str) -> dict[int, Failure]:
    """Per webhook id of the game, its last failed try (a post ``failed`` for good, or
    ``pending`` again after a try that failed), for the organiser's list."""
    newest = (
        select(func.max(OutboundPost.id))
        .where(
            OutboundPost.game_id == game_id,
            OutboundPost.webhook_id.is_not(None),
            OutboundPost.error.is_not(None),
            OutboundPost.state.in_(("failed", "pending", "unknown")),
        )
        .group_by(OutboundPost.webhook_id)
    )
    rows = db.session.execute(select(OutboundPost).where(OutboundPost.id.in_(newest))).scalars()
    return {
        row.webhook_id: Failure(row.tried_at, failure_words(row.error), row.error_detail or "")
        for row in rows
    }
