"""A8: secret link tokens never reach a log line (request lines of the dev server or gunicorn)."""

from __future__ import annotations

import logging

import imtheboss.web  # noqa: F401  (installs the filter)
import pytest


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


def test_gunicorn_access_lines_with_its_dict_of_atoms_hide_tokens(caplog) -> None:
    """gunicorn logs an access line with one dict of atoms as its argument (not a tuple): the
    filter keeps it a dict, so the line is still written, without the token."""
    secret = "Zx9_Kk2-abcdefghijklmnopqrst"
    atoms = {"h": "127.0.0.1", "r": f"GET /g/Abc123/s/{secret} HTTP/1.1", "s": "303"}
    with caplog.at_level(logging.INFO, logger="gunicorn.access"):
        logging.getLogger("gunicorn.access").info('%(h)s "%(r)s" %(s)s', atoms)
    assert caplog.records and caplog.records[0].getMessage().endswith(
        '"GET /g/Abc123/s/… HTTP/1.1" 303'
    )
    assert secret not in caplog.text
