"""What every part of the game service shares: its refusal (``ServiceError``: an HTTP status,
a stable code, a message for people), its clock (``now_utc``), secret link tokens
(``new_token``, ``hash_token``: only hashes are stored) and the shapes of game ids, tokens and
text (``GAME_ID``, ``TOKEN``, ``CONTROL``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime

from flask import current_app

# Control characters, lone surrogates (text that cannot be encoded), line and bidi controls.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,24}")  # secrets.token_urlsafe(9) makes 12 of these


TOKEN = re.compile(r"[A-Za-z0-9_-]{10,100}")  # secret link tokens (``new_token``)


class ServiceError(Exception):
    """A request the service refuses. ``status`` is the HTTP status the web layer answers with,
    ``code`` a stable string, ``message`` for people, ``rule`` the rule id when the engine
    refused (``RuleError``)."""

    def __init__(self, status: int, code: str, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.rule = rule

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "rule": self.rule}


def now_utc() -> datetime:
    """The app's clock (``CLOCK`` in config, for tests), else the real UTC time."""
    clock: Callable[[], datetime] | None = current_app.config.get("CLOCK")
    return clock() if clock else datetime.now(UTC)


def hash_token(token: str) -> str:
    """sha256 hex of a secret token: only hashes are stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh secret link token (192 bits)."""
    return secrets.token_urlsafe(24)
