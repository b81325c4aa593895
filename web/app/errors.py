"""Refusals as the client wants them: JSON ``{"error": {"code", "message", "rule"}}`` for the
API and the endpoints that answer JSON (``wants_json``), else the error page
(``error_response``), and the 503 of a database that is unreachable (``unreachable_response``).
``web.create_app`` registers them as the app's error handlers.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, jsonify, make_response, render_template, request
from imtheboss.web.store import outage

JSON_KEY = "imtheboss.json_endpoints"  # in ``app.extensions``: endpoints that answer JSON


def wants_json() -> bool:
    """API requests (``/api/``), the endpoints that answer JSON (``app.extensions[JSON_KEY]``:
    the push subscription's) and clients that prefer JSON get JSON errors."""
    if request.path.startswith("/api/"):
        return True
    if request.endpoint in current_app.extensions.get(JSON_KEY, ()):
        return True
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return (
        best == "application/json"
        and request.accept_mimetypes[best] > request.accept_mimetypes["text/html"]
    )


def error_response(status: int, code: str, message: str, rule: str = "") -> Any:
    """A refusal as the client wants it: ``{"error": {"code", "message", "rule"}}`` for the
    API (``wants_json``), else the error page; plain text if the page cannot be drawn."""
    if wants_json():
        return jsonify({"error": {"code": code, "message": message, "rule": rule}}), status
    try:
        return render_template(
            "error.html", status=status, code=code, message=message, rule=rule
        ), status
    except Exception:  # no template yet, or it failed: still a clear answer
        return (
            f"{status} {code}: {message}\n",
            status,
            {"Content-Type": "text/plain; charset=utf-8"},
        )


def unreachable_response(exc: BaseException) -> Any:
    """The answer to a request that found the database unreachable (``exc``, logged without
    statement or parameters): 503 with ``Retry-After`` and ``outage.message()``."""
    current_app.logger.warning(
        "database unreachable on %s %s: %s", request.method, request.path, outage.reason(exc)
    )
    response = make_response(error_response(503, "database_unavailable", outage.message()))
    response.headers["Retry-After"] = str(outage.RETRY_AFTER)
    return response
