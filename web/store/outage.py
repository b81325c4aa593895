"""When the database cannot be reached: which errors say so, and what the server answers (503
with ``Retry-After``, the words below; ``imtheboss.web._register_errors``)."""

from __future__ import annotations

import sqlalchemy.exc
from flask_babel import gettext as _

RETRY_AFTER = 60  # seconds a client is asked to wait
# SQLSTATE classes of a lost or refused connection: 08 connection exception, 53 insufficient
# resources (too many connections), 57P operator intervention (shutdown, terminated backend).
UNREACHABLE_SQLSTATES = ("08", "53", "57P")
UNREACHABLE_SQLITE = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN", "SQLITE_IOERR")


def database_unreachable(exc: BaseException) -> bool:
    """True when ``exc`` says the database cannot be reached or used right now (a refused or
    lost connection, an exhausted pool, a locked SQLite file), not that a query was wrong."""
    if isinstance(exc, sqlalchemy.exc.TimeoutError | sqlalchemy.exc.InterfaceError):
        return True
    if not isinstance(exc, sqlalchemy.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    if not isinstance(exc, sqlalchemy.exc.OperationalError):
        return False
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate.startswith(UNREACHABLE_SQLSTATES)
    sqlite_error = getattr(exc.orig, "sqlite_errorname", None)
    if sqlite_error is not None:
        return sqlite_error.startswith(UNREACHABLE_SQLITE)
    return True  # psycopg raises a failed connection without a SQLSTATE


def transient(exc: BaseException) -> bool:
    """True when handling something failed for a reason that passes (``database_unreachable``,
    or any ``OperationalError``: a deadlock, a serialization failure, a lost connection), so
    the same work done later may succeed; False for an error that would come back."""
    return database_unreachable(exc) or isinstance(exc, sqlalchemy.exc.OperationalError)


def reason(exc: BaseException) -> str:
    """The first line of the driver's message (for the log: no statement, no parameters)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def message() -> str:
    """What the player reads, in their language."""
    return _(
        "the game server cannot reach its database right now; nothing was changed; try again"
        " in a minute"
    )
