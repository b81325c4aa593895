"""Logging: one setup for the web app, gunicorn and the worker, with secrets kept out.

- ``RedactSecrets`` is a filter on the HANDLERS, so every record that is written passes it,
  whichever logger made it: secret link tokens (the paths of ``SECRET_PATH_PREFIXES``), bearer
  tokens, ``Authorization``/``Cookie`` headers, ``token=`` query values and the key values of
  database error details become ``…`` in the message, the traceback and the stack.
- ``LogContext`` puts the request id (``req=…``, web) or the Celery task id (``task=…``, worker)
  in every record (``%(context)s``, also ``%(request_id)s`` and ``%(task_id)s``).
- ``configure_logging()`` is the one setup: ``dictConfig(LOGGING)`` (stderr) when nobody has
  configured logging yet, and our filters on the handlers of whoever did: gunicorn (which makes
  its own for ``gunicorn.error``/``gunicorn.access``) and Celery (``worker/celery_app.py``).
- ``GunicornLogger`` (gunicorn's ``logger_class``; ``gunicorn.conf.py`` names it) keeps
  gunicorn's own handlers redacted across reloads and sends the app's records to gunicorn's
  error log.
- ``QuietRoutine`` drops the INFO lines of routine work that found nothing to do: beat sending
  a periodic sweep, a worker receiving it, its success with nothing done (all counts 0;
  ``QUIET_TASKS``, filled by ``worker/celery_app.py``; also a webhook or push post that found
  its row settled or waiting), and gunicorn's access lines of probes
  that answered fine (``PROBE_PATHS``). Idle, the processes write nothing at INFO.
- ``LOG_FORMAT=json`` writes each line as one JSON object (python-json-logger) with the same
  fields: time, level, logger, process, ``request_id``, ``task_id``, message.
- ``init_app(app)`` gives every request an id: a sane incoming ``X-Request-Id`` (a proxy's) or a
  new one, in ``g.request_id``, in each of its log lines and in the response's ``X-Request-Id``.

SQL parameters never reach a log: the engine runs with ``hide_parameters=True``
(``imtheboss.web.create_app``).
"""

from __future__ import annotations

import logging
import logging.config
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import IO, Any

from gunicorn.glogging import Logger as _GunicornBaseLogger
from imtheboss.web.settings import Settings
from werkzeug.wsgi import ClosingIterator

# -- what is secret --------------------------------------------------------------------------

# Paths whose next segment is a secret (a seat or admin token, a signed mail link). ``*`` stands
# for one path segment (the game id). A new secret-link route adds its prefix here; the tests
# check that every route with a ``token`` or ``signed`` argument is covered.
SECRET_PATH_PREFIXES: tuple[str, ...] = (
    "/g/*/s/",
    "/g/*/admin/",
    "/g/*/m/",
    "/g/*/confirm/",
    "/g/*/join/",
    "/u/*/",
    "/sign-in/",
)
SECRET_ARGUMENTS = ("token", "signed")  # route arguments that hold a secret
SECRET_QUERY_NAMES = ("token", "operator_token")  # ?token=… in a logged URL
SECRET_HEADERS = (
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-operator-token",
)
MIN_SECRET = 8  # characters: shorter path segments (``pause``, ``seat``) are not secrets
HIDDEN = "…"


def _prefix_pattern(prefix: str) -> str:
    return "".join(
        r"[^/\s?#]+" if part == "*" else re.escape(part) for part in re.split(r"(\*)", prefix)
    )


def _redactions() -> list[tuple[re.Pattern[str], str]]:
    prefixes = "|".join(_prefix_pattern(p) for p in SECRET_PATH_PREFIXES)
    names = "|".join(re.escape(n) for n in SECRET_QUERY_NAMES)
    headers = "|".join(re.escape(h) for h in SECRET_HEADERS)
    return [
        (re.compile(rf"({prefixes})[\w.~%+=-]{{{MIN_SECRET},}}"), rf"\1{HIDDEN}"),
        (re.compile(r"(?i)\b(bearer\s+)[\w.~+/=-]+"), rf"\1{HIDDEN}"),
        (re.compile(rf"(?i)([?&](?:{names})=)[^&\s\"'#]+"), rf"\1{HIDDEN}"),
        (re.compile(rf"(?i)\b((?:{headers})[\"']?\s*[:=]\s*[\"']?)[^\"'\r\n]+"), rf"\1{HIDDEN}"),
        # PostgreSQL's error details quote the values: "Key (token_hash)=(…) already exists."
        (re.compile(r"(DETAIL:\s+Key \([^)]*\)=\().*?(\)\s+(?:already exists|is not present))"),
         rf"\1{HIDDEN}\2"),
        (re.compile(r"(DETAIL:\s+Failing row contains \().*(\))"), rf"\1{HIDDEN}\2"),
    ]  # fmt: skip


REDACTIONS = _redactions()
SECRET_PATH = REDACTIONS[0][0]


def holds_secret(path: str, args: Any = ()) -> bool:
    """True when a URL's ``path`` (or one of its query ``args`` names) carries a secret: a seat
    or admin token, a signed mail link, an unsubscribe link, a ``token`` parameter."""
    return SECRET_PATH.search(path) is not None or any(k in args for k in SECRET_QUERY_NAMES)


def redact(text: str) -> str:
    """``text`` with every secret this module knows replaced by ``…`` (see the module doc)."""
    for pattern, replacement in REDACTIONS:
        text = pattern.sub(replacement, text)
    return text


class RedactSecrets(logging.Filter):
    """A handler filter: the record's message, traceback and stack go out redacted (``redact``).
    The message is formatted here (``record.args`` are folded in), so no argument escapes."""

    _tracebacks = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad logging call: let the handler report it as logging does
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._tracebacks.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


# -- routine work, not logged ---------------------------------------------------------------

QUIET_TASKS: set[str] = set()  # periodic task names (``imtheboss.worker.celery_app``)
PROBE_PATHS = ("/healthz", "/readyz", "/metrics")  # scraped and probed every few seconds
NOTHING_DONE = re.compile(
    r"succeeded in [\d.e-]+s: (\{(?:'\w+': 0(?:, )?)*\}|None|0|'done'|'backoff')$"
)  # all counts 0, or a post whose row was already settled (``done``) or is waiting (``backoff``)
ROUTINE_LOGGERS = ("celery.beat", "celery.worker.strategy", "celery.app.trace")


class QuietRoutine(logging.Filter):
    """A handler filter that drops INFO lines of routine work that did nothing (the module
    docstring); must run before ``RedactSecrets`` (it reads the access line's atoms)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        if record.name == "gunicorn.access" and isinstance(record.args, dict):
            path, status = record.args.get("U"), str(record.args.get("s", ""))
            return not (path in PROBE_PATHS and status.startswith(("2", "3")))
        if record.name not in ROUTINE_LOGGERS or not QUIET_TASKS:
            return True
        try:
            message = record.getMessage()
        except Exception:
            return True
        if not any(name in message for name in QUIET_TASKS):
            return True
        return " succeeded in " in message and NOTHING_DONE.search(message) is None


# -- request and task ids --------------------------------------------------------------------

REQUEST_ID: ContextVar[str | None] = ContextVar("imtheboss_request_id", default=None)
TASK_ID: ContextVar[str | None] = ContextVar("imtheboss_task_id", default=None)
REQUEST_ID_HEADER = "X-Request-Id"
ENVIRON_KEY = "imtheboss.request_id"
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{7,63}")  # nginx, Heroku, uuids


class LogContext(logging.Filter):
    """A handler filter: ``record.request_id``, ``record.task_id`` (``-`` when none) and
    ``record.context`` (``req=<id>``, ``task=<id>`` or ``-``) from the running request or task,
    or the task a Celery record is about (its ``data["id"]``: the worker's "received" line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id, task_id = REQUEST_ID.get(), TASK_ID.get()
        data = getattr(record, "data", None)  # Celery's "received" line, before the task runs
        if not (request_id or task_id) and isinstance(data, dict):
            task_id = data.get("id") if isinstance(data.get("id"), str) else None
        record.request_id = request_id or "-"
        record.task_id = task_id or "-"
        record.context = (
            f"req={request_id}" if request_id else f"task={task_id}" if task_id else "-"
        )
        return True


def request_id_for(incoming: str | None) -> str:
    """``incoming`` (an ``X-Request-Id`` header) when it is 8 to 64 plain characters (letters,
    digits, ``._:-``), else a new random id (16 hex digits)."""
    if incoming and SANE_REQUEST_ID.fullmatch(incoming):
        return incoming
    return secrets.token_hex(8)


def bind_task(task_id: str | None) -> None:
    """The worker's log lines carry ``task_id`` from now on in this thread (``None``: none)."""
    TASK_ID.set(task_id)


class RequestIds:
    """WSGI middleware: each request's id in ``environ[ENVIRON_KEY]``, in ``REQUEST_ID`` until
    the server closes the response (the server's access line is written before that, so it
    carries the id too) and in the response's ``X-Request-Id``."""

    def __init__(self, wsgi_app: Callable[..., Iterable[bytes]]) -> None:
        self.wsgi_app = wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request_id = request_id_for(environ.get("HTTP_X_REQUEST_ID"))
        environ[ENVIRON_KEY] = request_id
        REQUEST_ID.set(request_id)

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers = [(k, v) for k, v in headers if k.lower() != REQUEST_ID_HEADER.lower()]
            headers.append((REQUEST_ID_HEADER, request_id))
            return start_response(status, headers, exc_info)

        try:
            body = self.wsgi_app(environ, start)
        except BaseException:
            REQUEST_ID.set(None)
            raise
        return ClosingIterator(body, lambda: REQUEST_ID.set(None))


def init_app(app: Any) -> None:
    """Request ids for ``app`` (``RequestIds``, ``g.request_id``); its logger writes only
    through the configured handlers (Flask's own stderr handler, which has no filter, is
    removed)."""
    from flask import g, request
    from flask.logging import default_handler

    configure_logging()
    app.logger.removeHandler(default_handler)
    if not isinstance(app.wsgi_app, RequestIds):
        app.wsgi_app = RequestIds(app.wsgi_app)

    @app.before_request
    def _request_id() -> None:
        g.request_id = request.environ.get(ENVIRON_KEY) or REQUEST_ID.get() or "-"


# -- the setup -------------------------------------------------------------------------------

LOG_FORMAT = "%(asctime)s [%(process)d] [%(levelname)s] %(name)s %(context)s: %(message)s"
ACCESS_FORMAT = "%(context)s %(message)s"  # gunicorn's access line has its own time
CELERY_FORMAT = "[%(asctime)s: %(levelname)s/%(processName)s] %(name)s %(context)s: %(message)s"


JSON_FIELDS = ("asctime", "levelname", "name", "process", "request_id", "task_id", "message")


def formatter(fmt: str = LOG_FORMAT, datefmt: str | None = None) -> logging.Formatter:
    """A formatter for ``fmt``; records that missed ``LogContext`` show ``-`` for its fields.
    With the setting ``LOG_FORMAT=json``: one JSON object a line (``JSON_FIELDS``), whatever
    ``fmt``."""
    defaults = {"context": "-", "request_id": "-", "task_id": "-"}
    if Settings.load().log_format == "json":
        from pythonjsonlogger.json import JsonFormatter

        return JsonFormatter(list(JSON_FIELDS), defaults=defaults, json_ensure_ascii=False)
    return logging.Formatter(fmt, datefmt, defaults=defaults)


def stream_handler(stream: IO[str] | None = None, fmt: str = LOG_FORMAT) -> logging.Handler:
    """A handler writing to ``stream`` (stderr) through ``adopt_handler``'s filters."""
    handler = logging.StreamHandler(stream)
    adopt_handler(handler, fmt)
    return handler


LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"()": stream_handler, "stream": "ext://sys.stderr"}},
    "root": {"level": "INFO", "handlers": ["stderr"]},
}


def adopt_handler(handler: logging.Handler, fmt: str | None = None) -> None:
    """Put ``QuietRoutine``, ``LogContext`` and ``RedactSecrets`` on ``handler`` (once) and,
    given ``fmt``, our formatter."""
    for kind in (QuietRoutine, LogContext, RedactSecrets):
        if not any(isinstance(f, kind) for f in handler.filters):
            handler.addFilter(kind())
    if fmt is not None:
        handler.setFormatter(formatter(fmt))


def adopt(logger: logging.Logger, fmt: str | None = None) -> None:
    """``adopt_handler`` for every handler of ``logger``."""
    for handler in logger.handlers:
        adopt_handler(handler, fmt)


def _handlers(names: Iterable[str]) -> Iterator[logging.Handler]:
    for name in names:
        yield from logging.getLogger(name).handlers


def configure_logging() -> None:
    """The process's logging: ``dictConfig(LOGGING)`` unless the root logger has handlers
    already (gunicorn's, Celery's), then our filters on every handler of the root and of
    gunicorn's loggers (gunicorn's handlers also get our formats); Python's warnings become
    records of ``py.warnings`` (one line each in the log's format). Safe to call again."""
    logging.captureWarnings(True)
    root = logging.getLogger()
    if not root.handlers:
        logging.config.dictConfig(LOGGING)
    adopt(root)
    adopt(logging.getLogger("gunicorn.error"), LOG_FORMAT)
    adopt(logging.getLogger("gunicorn.access"), ACCESS_FORMAT)


class GunicornLogger(_GunicornBaseLogger):
    """gunicorn's logger with our filters and formats on its handlers (also after a reload,
    which makes new ones), and the root logger (the app's records) writing to gunicorn's error
    log. Select it with ``logger_class`` (``gunicorn.conf.py``) or ``--logger-class``."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        adopt(self.error_log, LOG_FORMAT)
        adopt(self.access_log, ACCESS_FORMAT)
        root = logging.getLogger()
        for handler in list(root.handlers):
            if getattr(handler, "_gunicorn", False):  # the error log of an earlier setup
                root.removeHandler(handler)
        if not root.handlers:
            for handler in self.error_log.handlers:
                root.addHandler(handler)
        root.setLevel(self.loglevel)
