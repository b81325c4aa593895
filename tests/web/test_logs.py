"""A8: secret link tokens never reach a log line (request lines of the dev server or gunicorn)."""

from __future__ import annotations

import logging

import pytest

import web  # noqa: F401  (installs the filter)


@pytest.mark.parametrize(
    "path",
    [
        "/g/Abc123/s/Zx9_Kk2-abcdefghijklmnopqrst",
        "/g/Abc123/admin/Zx9_Kk2-abcdefghijklmnopqrst",
        "/g/Abc123/m/eyJnIjoiQWJjMTIzIn0.Zx9Kk2.abcdefghij",
        "/u/Abc123/eyJnIjoiQWJjMTIzIn0.Zx9Kk2.abcdefghij",
    ],
)
@pytest.mark.parametrize("logger", ["werkzeug", "gunicorn.access"])
def test_request_lines_hide_tokens(caplog, path: str, logger: str) -> None:
    secret = path.rsplit("/", 1)[1]
    with caplog.at_level(logging.INFO, logger=logger):
        logging.getLogger(logger).info('%s - - "%s" %s', "127.0.0.1", f"GET {path} HTTP/1.1", "303")
    text = caplog.text
    assert "GET /" in text and secret not in text and "…" in text
