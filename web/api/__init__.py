"""The JSON API (docs/api.md): ``seat`` (a seat's API: state, events, commands, the token; the
``api`` blueprint) and ``organiser`` (the organiser's acts on the same blueprint).
"""

from __future__ import annotations

from flask import Flask
from imtheboss.web.api import organiser, seat
from imtheboss.web.app.security import csrf

ON_BP = (organiser, seat)  # the modules whose routes go on ``seat.bp``


def register(app: Flask) -> None:
    """Add the API blueprint (``seat.bp``, with the organiser's routes) to ``app`` (called by
    ``web.create_app``), exempt from CSRF: it is authenticated by a bearer token, never by a
    cookie."""
    csrf.exempt(seat.bp)
    app.register_blueprint(seat.bp)
