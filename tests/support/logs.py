"""Reading the server's log lines in the test process: ``written()`` puts the configured
handler (``imtheboss.web.app.logs.LOGGING``'s, redaction and request ids included) on the root
logger for a block and yields what it wrote."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator

from imtheboss.web.app import logs


@contextlib.contextmanager
def written(level: int = logging.INFO) -> Iterator[io.StringIO]:
    """What the server's handler writes while the block runs (every logger reaches it)."""
    stream = io.StringIO()
    handler = logs.stream_handler(stream)
    root = logging.getLogger()
    saved = root.level
    root.addHandler(handler)
    root.setLevel(level)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(saved)
