"""Abuse limits, counted by Flask-Limiter in ``RATELIMIT_STORAGE_URI`` (Redis when ``REDIS_URL``
is set, so every web process shares one count; memory in the embedded default).

- games made, per client address (``RATELIMIT_NEW_GAMES``): ``POST /new`` and
  ``POST /api/games`` share one count; a game made counts, a refused form does not;
- invitations asked for, per client address (``RATELIMIT_INVITATIONS``): one per player of a
  game made, one per resent invitation or email-change notice (``spending("invitations")``);
- commands, per seat of a game (``RATELIMIT_COMMANDS``): each command taken, so no seat can
  flood the server's queues with cheap ones (``command_spending``);
- chat, per seat of a game (``RATELIMIT_CHAT``): each chat message taken, besides
  (``command_spending``);
- wrong secrets, per client address (``RATELIMIT_BAD_SECRETS``): each 403 of a route that takes
  a secret (seat, admin, mailed, unsubscribe and confirm links, the API's bearer tokens, the
  operator token, sign-in links, ``/api/me`` tokens). Once they are used up, a wrong secret gets
  a 429 until the window moves on, but the right one still opens (``_count_wrong_secret``): the
  secrets are too long to guess, and one player behind a shared address (a NAT) must not lock
  the others out;
- sign-in links asked for (``imtheboss.web.players.signin``), per client address
  (``RATELIMIT_SIGN_IN``), per address asked for and client address
  (``RATELIMIT_SIGN_IN_ADDRESS``), and per address from all clients
  (``RATELIMIT_SIGN_IN_MAILBOX``), which a browser that signed in with a link of that address
  skips: each link asked for counts, whether or not the address has games, and a stranger's
  asks never use up the owner's. The last is never a refusal (strangers can fill it): past it
  no new mail goes out and the address's newest link keeps working (``signin._hold``).

Each setting is in Flask-Limiter's notation (``"10 per hour; 20 per day"``). A refusal is a 429
with ``Retry-After`` (seconds) and a message in plain words in the reader's language (the error
page, or the API's JSON error); it changes nothing. The client address is
``request.remote_addr`` (behind a trusted proxy, ``ProxyFix`` makes it the client's).
``RATELIMIT_ENABLED`` off counts nothing, and so does a storage that cannot be reached (it is
logged): the limits never stop a game.

Each app has a limiter of its own (``app.extensions["imtheboss.limits"]``): two apps in one
process do not share a memory count, as two processes would not.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from flask import Flask, current_app, make_response, request
from flask_babel import gettext as _
from flask_babel import ngettext
from flask_limiter import Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address
from imtheboss.web.app.errors import error_response
from imtheboss.web.games.basics import ServiceError
from limits import parse_many
from werkzeug.wrappers import Response

EXTENSION = "imtheboss.limits"
SETTINGS = {
    "new_games": "RATELIMIT_NEW_GAMES",
    "invitations": "RATELIMIT_INVITATIONS",
    "commands": "RATELIMIT_COMMANDS",
    "chat": "RATELIMIT_CHAT",
    "bad_secrets": "RATELIMIT_BAD_SECRETS",
    "sign_in": "RATELIMIT_SIGN_IN",
    "sign_in_address": "RATELIMIT_SIGN_IN_ADDRESS",
    "sign_in_mailbox": "RATELIMIT_SIGN_IN_MAILBOX",
    "mail_replies": "RATELIMIT_MAIL_REPLIES",
}
NEW_GAME_ENDPOINTS = ("pages.new_game", "api.create")
SECRET_ENDPOINTS = (
    "pages.seat_link",
    "pages.admin_link",
    "links.mail_sign_in",
    "links.unsubscribe",
    "links.confirm",
    "links.operator_mail",
    "links.operator_sign_in",
    "operator_replies.reply",
    "api.game_view",
    "api.events",
    "api.join",
    "api.command",
    "signin.mailed_link",
    "signin.confirm",
    "me.api_me",
)


class TooMany(ServiceError):
    """A request over a limit: 429, ``retry_after`` seconds until it may be tried again."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(429, "rate_limited", message)
        self.retry_after = retry_after


def client_address() -> str:
    """Who is counted: the request's client address."""
    return get_remote_address()


def init_limits(app: Flask) -> None:
    """Give ``app`` its limiter and put the route limits on its views (called by
    ``create_app`` once the blueprints are registered). Raises ``KeyError`` for an endpoint
    that does not exist."""
    limiter = Limiter(
        get_remote_address,
        app=app,
        strategy="moving-window",
        key_prefix="imtheboss",
        swallow_errors=True,  # a storage that is down is logged; the request goes on uncounted
    )
    app.extensions[EXTENSION] = limiter
    games = limiter.shared_limit(
        _setting("new_games"),
        scope="new_games",
        methods=["POST"],
        # a game was made: the API answers 201, the form sends the browser on with 303
        deduct_when=lambda response: response.status_code in (201, 303),
    )
    for endpoint in NEW_GAME_ENDPOINTS:
        app.view_functions[endpoint] = games(app.view_functions[endpoint])
    for endpoint in SECRET_ENDPOINTS:
        if endpoint not in app.view_functions:
            raise KeyError(endpoint)
    app.after_request(_count_wrong_secret)
    app.register_error_handler(RateLimitExceeded, _exceeded)
    app.register_error_handler(TooMany, _too_many)


def _count_wrong_secret(response: Response) -> Response:
    """After a route that takes a secret answered 403 (a wrong one): count it against the
    client address (``RATELIMIT_BAD_SECRETS``), or, when its count is used up, answer 429
    instead. An answer that is not a 403 (the right secret) is never held back."""
    if request.endpoint not in SECRET_ENDPOINTS or response.status_code != 403:
        return response
    try:
        with spending("bad_secrets", client_address()):
            pass
    except TooMany as exc:
        return _too_many(exc)
    return response


def _setting(kind: str) -> Callable[[], str]:
    return lambda: current_app.config[SETTINGS[kind]]


def _limiter() -> Limiter:
    return current_app.extensions[EXTENSION]


class Charge:
    """What a ``spending`` block may say of itself: ``free`` (it did nothing new, such as a
    command repeated with its idempotency key) is not charged."""

    free: bool = False


@contextmanager
def spending(kind: str, key: str, cost: int = 1) -> Iterator[Charge]:
    """Charge ``cost`` to the ``kind`` limits (``SETTINGS``) of ``key`` when the block ends
    without an exception and did not set its ``Charge`` free; raise ``TooMany`` before the
    block when they have no room for it. A storage that cannot be reached counts nothing
    (logged): the limits never stop the game."""
    limiter = _limiter()
    charge = Charge()
    if not limiter.enabled:
        yield charge
        return
    items = parse_many(current_app.config[SETTINGS[kind]])
    ids = ("imtheboss", kind, key)
    try:
        full = [item for item in items if not limiter.limiter.test(item, *ids, cost=cost)]
        reset = max((limiter.limiter.get_window_stats(i, *ids).reset_time for i in full), default=0)
    except Exception:  # the storage is down: serve without counting
        current_app.logger.warning("rate limit storage unreachable; %s not counted", kind)
        items, full = [], []
    if full:
        seconds = _seconds_until(reset)
        raise TooMany(refusal_message(kind, seconds), seconds)
    yield charge
    if charge.free:
        return
    try:
        for item in items:
            limiter.limiter.hit(item, *ids, cost=cost)
    except Exception:
        current_app.logger.warning("rate limit storage unreachable; %s not counted", kind)


@contextmanager
def command_spending(game_id: str, seat: int, command: Any) -> Iterator[Charge]:
    """``spending("commands")`` for any command of ``seat`` in ``game_id``, and
    ``spending("chat")`` too for a chat; the block's ``Charge`` set free (a repeated key)
    charges neither."""
    key = f"{game_id}:{seat}"
    chat = isinstance(command, dict) and command.get("do") == "chat"
    with (
        spending("commands", key) as charge,
        spending("chat", key) if chat else nullcontext(Charge()) as chat_charge,
    ):
        yield charge
        chat_charge.free = charge.free


def _seconds_until(reset: float) -> int:
    return max(1, math.ceil(reset - time.time()))


def wait_words(seconds: int) -> str:
    """``seconds`` in words: "40 seconds", "3 minutes", "5 hours"."""
    if seconds < 120:
        return ngettext("%(num)d second", "%(num)d seconds", seconds)
    minutes = math.ceil(seconds / 60)
    if minutes < 120:
        return ngettext("%(num)d minute", "%(num)d minutes", minutes)
    return ngettext("%(num)d hour", "%(num)d hours", math.ceil(seconds / 3600))


def refusal_message(kind: str, seconds: int) -> str:
    """What a reader is told when a ``kind`` limit refuses them, ``seconds`` before a retry."""
    wait = wait_words(seconds)
    if kind == "new_games":
        return _("Too many new games from your address: try again in %(wait)s.", wait=wait)
    if kind == "invitations":
        return _(
            "Your address has asked for as many invitations as it may for now (each player of"
            " a game is one): try again in %(wait)s.",
            wait=wait,
        )
    if kind == "chat":
        return _(
            "Too many chat messages from your seat: wait %(wait)s, then send it again.", wait=wait
        )
    if kind in ("sign_in", "sign_in_address", "sign_in_mailbox"):
        return _("Too many sign-in links were asked for: try again in %(wait)s.", wait=wait)
    if kind == "commands":
        return _("Too many moves from your seat: wait %(wait)s, then try again.", wait=wait)
    return _(
        "Too many wrong links or tokens came from your address: try again in %(wait)s.",
        wait=wait,
    )


def _refusal(message: str, seconds: int) -> Response:
    response = make_response(error_response(429, "rate_limited", message))
    response.headers["Retry-After"] = str(seconds)
    return response


def _exceeded(exc: RateLimitExceeded) -> Response:
    """A route limit refused the request (games made, wrong secrets)."""
    current = _limiter().current_limit
    reset = current.reset_at if current is not None else time.time() + exc.limit.limit.get_expiry()
    seconds = _seconds_until(reset)
    scope = exc.limit.scope if isinstance(exc.limit.scope, str) else ""
    return _refusal(refusal_message(scope, seconds), seconds)


def _too_many(exc: TooMany) -> Response:
    return _refusal(exc.message, exc.retry_after)
