"""A dead pooled connection costs no request: ``RetryingSession`` (``db.session``) runs the first
statement of a transaction once more when the connection it was handed turned out dead.

The pool does not ping a connection before handing it out (``pool_pre_ping`` would cost a round
trip on every transaction). A connection the server ended meanwhile (a restart, a failover,
``pg_terminate_backend``, an idle timeout) fails its first statement instead; SQLAlchemy then
invalidates it and every connection the pool opened before it. Nothing had been done in that
transaction, so running the statement again, on a fresh connection, cannot do anything twice.
A connection lost later in a transaction is not retried: what it did may or may not have been
committed, and the caller is told (a 503 on the web, a retry of the task in the worker).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from flask_sqlalchemy.session import Session
from sqlalchemy.exc import DBAPIError

log = logging.getLogger(__name__)
T = TypeVar("T")


class RetryingSession(Session):
    """``db.session``: ``execute``, ``scalar`` and ``scalars`` retry the statement that begins a
    transaction once on a dead connection (see the module). Only then, and only when the
    session holds no change to flush (a retry after the rollback would lose it)."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        return self._once_more_if_dead(super().execute, args, kwargs)

    def scalar(self, *args: Any, **kwargs: Any) -> Any:
        return self._once_more_if_dead(super().scalar, args, kwargs)

    def scalars(self, *args: Any, **kwargs: Any) -> Any:
        return self._once_more_if_dead(super().scalars, args, kwargs)

    def _once_more_if_dead(
        self, run: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> T:
        if self.in_transaction() or self.new or self.deleted or self.identity_map.check_modified():
            return run(*args, **kwargs)
        try:
            return run(*args, **kwargs)
        except DBAPIError as exc:
            if not exc.connection_invalidated:
                raise
            log.debug("a pooled database connection was dead; the transaction begins again")
            self.rollback()
            return run(*args, **kwargs)
