"""Health, readiness, metrics and the schema guard (docs/operations.md, "Health and metrics").

- ``GET /healthz``: 200 ``{"status": "alive"}`` while the process answers; touches nothing.
- ``GET /readyz``: 200 when the database and the broker answer and the database's schema is
  the code's (its Alembic revision is the migrations' head), else 503; the JSON says which
  check failed: ``{"status": "ready"|"unready", "checks": {"database": "ok"|"unreachable",
  "schema": "ok"|"behind"|"unknown", "broker": "ok"|"unreachable"}}``.
- ``GET /metrics``: the Prometheus text (``imtheboss.web.app.metrics``). It opens to a request
  made straight from this host (a loopback peer and no ``X-Forwarded-For``: a proxy relayed
  nothing) or one that presents ``OPERATOR_TOKEN`` as ``Authorization: Bearer``; else 403.
- The schema guard: until the database's schema is current, every other request is answered
  503 ``schema_not_current`` (the release step was not run), never a 500; the start logs the
  same once. Once current it is not looked at again in this process.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path
from time import perf_counter
from typing import Any

from alembic.script import ScriptDirectory
from flask import Blueprint, Flask, current_app, g, jsonify, make_response, request
from flask_babel import gettext as _
from imtheboss.web.app import metrics
from imtheboss.web.app.errors import error_response
from imtheboss.web.models import db
from imtheboss.web.players.links import operator_allowed
from imtheboss.web.store import outage
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

bp = Blueprint("health", __name__)
OPEN_ENDPOINTS = {"health.healthz", "health.readyz", "health.metrics", "static"}
SCHEMA_OK = "imtheboss.schema_current"  # in ``app.extensions``: True once it was current
MIGRATIONS = Path(__file__).parents[1] / "migrations"  # web/migrations


def schema_heads() -> set[str]:
    """The Alembic revisions the code expects (the heads of ``web/migrations``)."""
    return set(ScriptDirectory(str(MIGRATIONS)).get_heads())


def schema_current() -> bool:
    """True when the database's ``alembic_version`` holds exactly the migrations' heads; False
    when it differs or the table is missing (a fresh database). Raises SQLAlchemy's error when
    the database cannot be reached (``outage.database_unreachable``)."""
    try:
        with db.engine.connect() as connection:
            stored = {
                row[0]
                for row in connection.execute(text("SELECT version_num FROM alembic_version"))
            }
    except SQLAlchemyError as exc:
        if outage.database_unreachable(exc):
            raise
        return False
    return stored == schema_heads()


def schema_message() -> str:
    """What a client reads while the schema is behind, in their language."""
    return _(
        "the game server is being updated and its database is not ready yet; nothing was"
        " changed; try again in a minute"
    )


def _guard_schema() -> Any:
    """``before_request``: 503 ``schema_not_current`` while the schema is behind."""
    app = current_app
    if app.extensions.get(SCHEMA_OK) or request.endpoint in OPEN_ENDPOINTS:
        return None
    try:
        current = schema_current()
    except SQLAlchemyError:  # unreachable: pages without the database still answer
        return None
    if current:
        app.extensions[SCHEMA_OK] = True
        return None
    response = make_response(error_response(503, "schema_not_current", schema_message()))
    response.headers["Retry-After"] = str(outage.RETRY_AFTER)
    return response


def _start_timer() -> None:
    g.metrics_started = perf_counter()


def _count(response: Any) -> Any:
    """``after_request``: count the request by its route template and status."""
    if request.endpoint != "health.metrics":
        rule = request.url_rule.rule if request.url_rule is not None else "unmatched"
        started = g.get("metrics_started", perf_counter())
        metrics.count_request(rule, request.method, response.status_code, perf_counter() - started)
    return response


@bp.get("/healthz")
def healthz():
    """The process is alive: 200, nothing else looked at."""
    return jsonify({"status": "alive"})


def _check_database() -> tuple[str, str]:
    try:
        return "ok", "ok" if schema_current() else "behind"
    except SQLAlchemyError as exc:
        if not outage.database_unreachable(exc):
            raise
        return "unreachable", "unknown"


def _check_broker() -> str:
    try:
        metrics.queue_depths()
    except Exception:  # any failure to reach it: kombu's, redis's or the socket's own errors
        return "unreachable"
    return "ok"


@bp.get("/readyz")
def readyz():
    """200 when the database, its schema and the broker are fine, else 503 naming which."""
    database, schema = _check_database()
    checks = {"database": database, "schema": schema, "broker": _check_broker()}
    ready = all(value == "ok" for value in checks.values())
    if schema == "ok":
        current_app.extensions[SCHEMA_OK] = True
    body = {"status": "ready" if ready else "unready", "checks": checks}
    return jsonify(body), 200 if ready else 503


def scraper_allowed() -> bool:
    """The operator token as a bearer token (``imtheboss.web.players.links``'s check), or a request
    straight from this host: a loopback peer, no ``X-Forwarded-For``."""
    if current_app.config.get("OPERATOR_TOKEN") and operator_allowed():
        return True
    peer = request.environ.get("werkzeug.proxy_fix.orig", {}).get("REMOTE_ADDR")
    peer = peer or request.environ.get("REMOTE_ADDR", "")
    if "X-Forwarded-For" in request.headers:
        return False
    try:
        return ipaddress.ip_address(peer).is_loopback
    except ValueError:
        return False


@bp.get("/metrics", endpoint="metrics")
def metrics_page():
    """The Prometheus text; 403 unless ``scraper_allowed``."""
    if not scraper_allowed():
        return error_response(403, "not_operator", _("This page is for the server's operator."))
    body, content_type = metrics.exposition(schema_current)
    return body, 200, {"Content-Type": content_type}


RELEASE_STEP = 'flask --app "imtheboss.web:create_app()" db upgrade'


def release_step_running() -> bool:
    """Whether this process is the release step itself (``flask ... db ...``): the schema it
    is about to bring up to date is behind, and that is no fault."""
    return Path(sys.argv[0]).name == "flask" and "db" in sys.argv[1:]


def check_at_start(app: Flask) -> None:
    """Log once, at start, when the schema is behind (an unreachable database: nothing here;
    requests will say so; the release step itself: nothing)."""
    if release_step_running():
        return
    with app.app_context():
        try:
            current = schema_current()
        except SQLAlchemyError:
            return
        finally:
            db.engine.dispose()  # no connection crosses a fork (gunicorn --preload)
    if current:
        app.extensions[SCHEMA_OK] = True
    else:
        app.logger.error(
            "database schema is not current: run the release step (%s);"
            " until then requests are answered 503",
            RELEASE_STEP,
        )


def register(app: Flask) -> None:
    """The three endpoints, the schema guard and the request counting."""
    app.register_blueprint(bp)
    app.before_request(_start_timer)
    app.before_request(_guard_schema)
    app.after_request(_count)
