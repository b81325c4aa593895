"""Helpers for tests with real processes: ``wait_for`` polls with a bound (no bare sleeps),
``free_port`` picks a loopback port, ``SmtpServer`` is a real SMTP server to receive mail."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from aiosmtpd.controller import Controller

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


class SmtpServer:
    """A real SMTP server (aiosmtpd) on ``127.0.0.1:port`` in the test process. Subclasses say
    what to ``keep`` of each message; ``stop()`` and ``start()`` take it down and bring it back
    on the same port. ``options`` go to aiosmtpd's ``Controller``: ``ssl_context`` (implicit
    TLS), ``tls_context`` and ``require_starttls`` (STARTTLS), ``enable_SMTPUTF8``..."""

    def __init__(self, port: int | None = None, **options: Any) -> None:
        self.port = port or free_port()
        self.options = options
        self.lock = threading.Lock()
        self.controller: Controller | None = None

    def keep(self, content: bytes) -> None:
        raise NotImplementedError

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        with self.lock:
            self.keep(envelope.content)
        return "250 OK"

    def start(self) -> None:
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, **self.options)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None
