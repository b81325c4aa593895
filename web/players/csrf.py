"""The browser's CSRF secret (Flask-WTF's), renewed when who the browser is changes: at
sign-in by email (``people.sign_in``) and when a seat's link switches it to another seat
(``auth.open_seat``).
"""

from __future__ import annotations

from flask import g, session

CSRF_KEY = "csrf_token"  # Flask-WTF's name for the secret, in the session and on ``g``


def renew_csrf() -> None:
    """Give the browser a new CSRF secret (at sign-in, and when it switches to another seat):
    a token read before, by whoever read it, no longer passes."""
    session.pop(CSRF_KEY, None)
    g.pop(CSRF_KEY, None)
