"""Waiting on real processes without bare sleeps: ``wait_for`` polls with a bound; ``free_port``
picks a loopback port for a server the test starts."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def wait_for(
    check: Callable[[], T], timeout: float = 30.0, every: float = 0.2, what: str = "condition"
) -> T:
    """Poll ``check()`` until it returns something truthy (returned); fail the test naming
    ``what`` after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
