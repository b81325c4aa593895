"""PostgreSQL for the tests: databases of their own, created and dropped by the tests.

``IMTHEBOSS_TEST_PG`` overrides the server URL (default ``postgresql+psycopg://postgres@127.0.0.1``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import psycopg
import pytest

from support.wait import wait_for

SERVER = os.environ.get("IMTHEBOSS_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1")


def admin_conn() -> psycopg.Connection:
    """An autocommit connection to the server's ``postgres`` database (to create and drop
    databases, and for advisory locks)."""
    url = SERVER.replace("postgresql+psycopg://", "postgresql://")
    try:
        return psycopg.connect(f"{url}/postgres", autocommit=True)
    except psycopg.OperationalError as exc:  # pragma: no cover - .ci/run starts PostgreSQL
        pytest.fail(f"PostgreSQL is not reachable at {SERVER}: {exc}")


@contextlib.contextmanager
def own_database(name: str) -> Iterator[str]:
    """A fresh database ``name`` (dropped first if a crashed run left it), its SQLAlchemy URL
    while the block runs, dropped after it."""
    with admin_conn() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{SERVER}/{name}"
    finally:
        with admin_conn() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def refuse_connections(name: str) -> None:
    """Database ``name`` goes away for its clients: new connections are refused and the open
    ones are ended (``allow_connections`` brings it back)."""
    with admin_conn() as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
    end_connections(name)


def end_connections(name: str) -> int:
    """End every open connection to database ``name`` on the server side
    (``pg_terminate_backend``, as a restart or a failover would) and wait until they are gone;
    how many there were. Their clients find out when they next use them."""
    with admin_conn() as conn:
        (count,) = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s",
            (name,),
        ).fetchone()
        query = "SELECT count(*) = 0 FROM pg_stat_activity WHERE datname = %s"
        wait_for(
            lambda: conn.execute(query, (name,)).fetchone()[0],
            10,
            every=0.01,
            what=f"the connections to {name} to end",
        )
    return count


def allow_connections(name: str) -> None:
    """Database ``name`` takes connections again."""
    with admin_conn() as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
