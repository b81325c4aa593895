"""The Flask app: ``create_app(config)``.

Settings come from ``imtheboss.web.settings.Settings`` (the environment, read once); ``config``
overrides them (tests: ``SQLALCHEMY_DATABASE_URI``, ``CLOCK`` injects the time...). Outside the
embedded default a missing ``SECRET_KEY`` or ``BASE_URL`` stops the start (``SettingsError``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy.exc
from flask import Flask, request
from flask_babel import Babel
from flask_migrate import Migrate, upgrade
from flask_wtf.csrf import CSRFError
from imtheboss.engine import languages
from imtheboss.web.app import logs as app_logs  # (web.logs is the old name of a gunicorn class)
from imtheboss.web.app.errors import error_response, unreachable_response
from imtheboss.web.app.health import check_at_start
from imtheboss.web.app.limits import init_limits
from imtheboss.web.app.security import csrf, csrf_refusal, init_security
from imtheboss.web.app.tasks_out import init_queue
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.models import db
from imtheboss.web.players.auth import page_language
from imtheboss.web.say import display, refusals
from imtheboss.web.say.display import LANGUAGES
from imtheboss.web.settings import Settings
from imtheboss.web.store import outage
from sqlalchemy import event
from sqlalchemy.engine import Engine
from werkzeug.exceptions import HTTPException

# The templates ship inside the package, beside ``web`` (``imtheboss/templates`` in a wheel, the
# top-level ``templates/`` folder in a checkout).
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

migrate = Migrate()
babel = Babel()


@event.listens_for(Engine, "connect")
def _sqlite_pragmas(dbapi_connection: Any, record: Any) -> None:
    """SQLite: WAL, a busy timeout, and transactions we begin ourselves (see ``_begin``)."""
    if type(dbapi_connection).__module__.startswith("sqlite3"):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()


@event.listens_for(Engine, "begin")
def _begin(conn: Any) -> None:
    """SQLite: ``BEGIN IMMEDIATE`` takes the write lock at once, so two submits to one game are
    serialised as PostgreSQL's row lock does."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def select_locale() -> str:
    """The language: ``?lang=``, then the session, then the seat's or the signed-in player's
    (``auth.page_language``: a seat without a language of its own reads in its address's
    default), then the browser's Accept-Language; outside a request (mail rendered by the
    worker), ``g.locale`` or English."""
    from flask import g, has_request_context, session

    if not has_request_context():
        return g.get("locale") or "en"
    lang = request.args.get("lang")
    if lang in LANGUAGES:
        session["lang"] = lang
        return lang
    if session.get("lang") in LANGUAGES:
        return session["lang"]
    chosen = page_language()
    if chosen:
        return chosen
    tags = languages.accept_tags()
    return tags.get(request.accept_languages.best_match(list(tags)) or "", languages.DEFAULT)


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the app from the settings, ``config`` on top (tests: ``SQLALCHEMY_DATABASE_URI``,
    ``CLOCK``, ``WTF_CSRF_ENABLED``...). Raises ``SettingsError`` when the settings cannot run
    a server (see ``Settings.require_production``)."""
    overrides = dict(config or {})
    settings = Settings.load()
    app = Flask(
        "imtheboss.web",
        instance_path=str(settings.instance_dir()),
        template_folder=str(TEMPLATES),
        static_folder="static",
    )
    app.config.update(
        # hide_parameters: SQL errors (and their log lines) never show the values of a query.
        # No pool_pre_ping: a dead pooled connection is retried instead (web/store/retry.py).
        SQLALCHEMY_ENGINE_OPTIONS={"hide_parameters": True},
        BABEL_DEFAULT_LOCALE="en",
        BABEL_TRANSLATION_DIRECTORIES=str(Path(__file__).parent / "translations"),
        AUTO_MIGRATE=settings.embedded,  # else the release step migrates (README, Production)
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_HTTPONLY=True,
        WTF_CSRF_TIME_LIMIT=None,
        MAX_CONTENT_LENGTH=1 << 20,
    )
    app.config.update(settings.flask_config(database="SQLALCHEMY_DATABASE_URI" not in overrides))
    app.config.update(overrides)
    _check_settings(app, settings)
    app_logs.init_app(app)
    init_security(app)  # headers, Secure cookie, TRUSTED_PROXIES
    db.init_app(app)
    app.after_request(_end_transaction)  # registered first, so it runs last
    migrate.init_app(app, db, directory=str(Path(__file__).parent / "migrations"))
    csrf.init_app(app)
    babel.init_app(app, locale_selector=select_locale)
    _register_blueprints(app)
    _register_errors(app)
    app.jinja_env.globals.update(refusal=refusals.refusal, error_title=refusals.title)
    app.jinja_env.globals.update(bot_name=display.bot_name)  # A13: "Ann (bot)"
    # the page's language's brackets, colon and list joins (docs/glossary.md, punctuation)
    app.jinja_env.globals.update(
        paren=display.paren,
        said=display.said,
        said_each=display.said_each,
        list_words=display.list_words,
    )
    app.jinja_env.filters["list_words"] = display.list_words
    init_limits(app)
    init_queue(app)
    if app.config["AUTO_MIGRATE"]:
        with app.app_context():
            upgrade(directory=str(Path(__file__).parent / "migrations"))
            db.engine.dispose()  # no connection crosses a fork (gunicorn --preload)
    check_at_start(app)
    return app


def _check_settings(app: Flask, settings: Settings) -> None:
    """The embedded default makes its own key and links to itself; anything else must be told
    both (``SettingsError``)."""
    if app.config.get("EMBEDDED"):
        if not app.config.get("SECRET_KEY"):
            app.config["SECRET_KEY"] = settings.embedded_secret_key()
        if not app.config.get("BASE_URL"):
            app.config["BASE_URL"] = f"http://127.0.0.1:{app.config['PORT']}"
        return
    checked = settings.model_copy(
        update={
            "secret_key": app.config.get("SECRET_KEY") or "",
            "base_url": app.config.get("BASE_URL") or "",
        }
    )
    checked.require_production()


def _register_blueprints(app: Flask) -> None:
    import importlib

    for name in (
        "imtheboss.web.app.inputs",  # first: every request's input is checked before a view runs
        "imtheboss.web.app.health",  # /healthz, /readyz, /metrics; 503 while the schema is behind
        "imtheboss.web.pages",  # the pages blueprint (pages/common.py) and its rooms
        "imtheboss.web.api",  # the api blueprint (api/seat.py) and the organiser's routes
        "imtheboss.web.players.links",
        "imtheboss.web.pages.orders",
        "imtheboss.web.pages.replay",
        "imtheboss.web.pages.organiser",
        "imtheboss.web.players.signin",
        "imtheboss.web.players.me",
        "imtheboss.web.players.defaults",
        "imtheboss.web.games.presence",
        "imtheboss.web.pages.webhooks",
        "imtheboss.web.pages.push",
        "imtheboss.web.say.board_svg",
        "imtheboss.web.games.server_moves",
        "imtheboss.web.pages.story",
        "imtheboss.web.replies.operator",
        "imtheboss.web.pages.rules",
    ):
        importlib.import_module(name).register(app)


def _end_transaction(response: Any) -> Any:
    """The last ``after_request`` step: end the request's transaction while an error can still
    be answered. A connection cut now would otherwise raise in Flask-SQLAlchemy's teardown,
    after the answer was built, and the WSGI server would answer its own HTML 500; here it
    becomes the 503 of every outage (``unreachable_response``). The teardown finds nothing
    left to roll back."""
    try:
        db.session.rollback()
    except sqlalchemy.exc.SQLAlchemyError as exc:
        if not outage.database_unreachable(exc):
            raise
        return unreachable_response(exc)
    return response


def _register_errors(app: Flask) -> None:
    render = error_response

    @app.errorhandler(ServiceError)
    def service_error(exc: ServiceError):
        return render(exc.status, exc.code, exc.message, exc.rule)

    @app.errorhandler(CSRFError)
    def csrf_error(exc: CSRFError):
        return render(400, *csrf_refusal(exc.description or ""))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        code = (exc.name or "error").lower().replace(" ", "_")
        return render(exc.code or 500, code, exc.description or exc.name)

    @app.errorhandler(sqlalchemy.exc.SQLAlchemyError)
    def database_error(exc: sqlalchemy.exc.SQLAlchemyError):
        if not outage.database_unreachable(exc):
            return unexpected(exc)
        return unreachable_response(exc)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):  # never a bare 500 page; the log has the trace
        app.logger.exception("unexpected error on %s %s", request.method, request.path)
        return render(500, "internal", "something went wrong on our side; nothing was changed")
