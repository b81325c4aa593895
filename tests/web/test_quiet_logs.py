"""Quiet logs (``imtheboss.web.app.logs``): the access lines of probes that answered fine are not
written, others are; ``LOG_FORMAT=json`` writes one JSON object a line with the request id and
the same redaction. (The worker's idle sweeps: tests/worker/test_worker_logs.py.)"""

from __future__ import annotations

import io
import json
import logging

import pytest
from imtheboss.web.app import logs


def _access(handler: logging.Handler, path: str, status: str) -> None:
    atoms = {"h": "127.0.0.1", "r": f"GET {path} HTTP/1.1", "s": status, "U": path}
    record = logging.LogRecord(
        "gunicorn.access", logging.INFO, __file__, 1, '%(h)s "%(r)s" %(s)s', (atoms,), None
    )
    handler.handle(record)


def test_probe_access_lines_that_answered_fine_are_not_written() -> None:
    out = io.StringIO()
    handler = logs.stream_handler(out, logs.ACCESS_FORMAT)
    for path in ("/healthz", "/readyz", "/metrics"):
        _access(handler, path, "200")
    _access(handler, "/readyz", "503")
    _access(handler, "/metrics", "403")
    _access(handler, "/g/Abc123def456", "200")
    lines = out.getvalue().splitlines()
    assert [line.split('"')[1] for line in lines] == [
        "GET /readyz HTTP/1.1",
        "GET /metrics HTTP/1.1",
        "GET /g/Abc123def456 HTTP/1.1",
    ]


def test_json_log_format_has_the_ids_and_the_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOG_FORMAT", "json")
    out = io.StringIO()
    logger = logging.getLogger("imtheboss.test_json")
    logger.addHandler(logs.stream_handler(out))
    token = logs.REQUEST_ID.set("req-12345678")
    try:
        logger.warning("opened %s", "/g/Abc123def456/s/secret-seat-token-1")
    finally:
        logs.REQUEST_ID.reset(token)
        logger.handlers.clear()
    line = json.loads(out.getvalue())
    assert line["request_id"] == "req-12345678" and line["task_id"] == "-"
    assert line["levelname"] == "WARNING" and line["name"] == "imtheboss.test_json"
    assert line["message"] == "opened /g/Abc123def456/s/…"
    assert "secret-seat-token-1" not in out.getvalue()
