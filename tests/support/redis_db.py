"""Redis for the tests: a database number of the tests' own, on ``IMTHEBOSS_TEST_REDIS``
(default ``redis://127.0.0.1:6379``), flushed before and after use.

Two test sessions at once on one machine (say ``./dev test`` in two checkouts) would share the
number: a PostgreSQL advisory lock, keyed by the Redis server and the number, makes the second
wait. Sessions on different Redis servers do not wait for each other.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator

import pytest
import redis

from support.postgres import admin_conn
from support.wait import wait_for

REDIS_SERVER = os.environ.get("IMTHEBOSS_TEST_REDIS", "redis://127.0.0.1:6379")


def _lock_key(number: int) -> int:
    digest = hashlib.sha256(f"{REDIS_SERVER}/{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def own_redis_db(number: int, wait: float = 600) -> Iterator[str]:
    """Hold Redis database ``number`` for the block: its URL, flushed before and after."""
    url = f"{REDIS_SERVER}/{number}"
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.ConnectionError as exc:  # pragma: no cover - .ci/run starts Redis
        pytest.fail(f"Redis is not reachable at {REDIS_SERVER}: {exc}")
    key = _lock_key(number)
    with admin_conn() as lock:
        wait_for(
            lambda: lock.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0],
            wait,
            every=0.5,
            what=f"another test session to free Redis db {number}",
        )
        client.flushdb()
        try:
            yield url
        finally:
            client.flushdb()
            client.close()
            lock.execute("SELECT pg_advisory_unlock(%s)", (key,))
