"""A8 in the logs: secrets never reach a log line, whichever logger writes it (the redaction is
on the handlers of ``imtheboss.web.app.logs``), tracebacks and SQL errors included; every request
has an id. gunicorn and the worker for real: tests/e2e/test_gunicorn_logs.py and
tests/worker/test_worker_logs.py."""

from __future__ import annotations

import logging
import re

import pytest
from imtheboss.web.app import logs
from imtheboss.web.games.basics import hash_token
from imtheboss.web.games.create import create_game
from imtheboss.web.models import Seat, db
from sqlalchemy.exc import IntegrityError
from support.logs import written

SECRET = "Zx9_Kk2-abcdefghijklmnopqrst"
SIGNED = "eyJnIjoiQWJjMTIzIn0.Zx9Kk2.abcdefghij"
SECRET_PATHS = [
    f"/g/Abc123/s/{SECRET}",
    f"/g/Abc123/admin/{SECRET}",
    f"/g/Abc123/m/{SIGNED}",
    f"/u/Abc123/{SIGNED}",
]
PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]


@pytest.mark.parametrize("path", SECRET_PATHS)
@pytest.mark.parametrize(
    "logger", ["werkzeug", "gunicorn.access", "imtheboss.web", "sqlalchemy.pool", "any.library"]
)
def test_no_logger_writes_a_secret_path(path: str, logger: str) -> None:
    secret = path.rsplit("/", 1)[1]
    with written() as out:
        logging.getLogger(logger).warning('%s "%s" %s', "127.0.0.1", f"GET {path} HTTP/1.1", 303)
    text = out.getvalue()
    assert "GET /" in text and "…" in text and secret not in text


def test_tracebacks_and_exception_text_are_redacted() -> None:
    with written() as out:
        try:
            raise RuntimeError(f"bad link /g/Abc123/s/{SECRET} sent Authorization: Bearer {SIGNED}")
        except RuntimeError:
            logging.getLogger("imtheboss.web").exception(
                "unexpected error on %s %s", "GET", f"/g/Abc123/s/{SECRET}"
            )
    text = out.getvalue()
    assert "Traceback" in text and "RuntimeError: bad link /g/Abc123/s/…" in text
    assert SECRET not in text and SIGNED not in text


def test_gunicorn_access_lines_with_its_dict_of_atoms_hide_tokens() -> None:
    """gunicorn logs an access line with one dict of atoms as its argument (not a tuple)."""
    atoms = {"h": "127.0.0.1", "r": f"GET /g/Abc123/s/{SECRET} HTTP/1.1", "s": "303"}
    with written() as out:
        logging.getLogger("gunicorn.access").info('%(h)s "%(r)s" %(s)s', atoms)
    assert out.getvalue().rstrip().endswith('"GET /g/Abc123/s/… HTTP/1.1" 303')


@pytest.mark.parametrize(
    ("line", "kept", "secret"),
    [
        ("GET /operator/mail?token=op-secret-123&x=1", "?token=…&x=1", "op-secret-123"),
        ("{'Authorization': 'Bearer tok-secret-12', 'Host': 'h'}", "'Host': 'h'", "tok-secret"),
        ("headers: Cookie: session=eyJhbGciOi.x.y", "Cookie: …", "eyJhbGciOi"),
        ("X-Operator-Token: op-secret-123", "X-Operator-Token: …", "op-secret-123"),
        (
            "DETAIL:  Key (token_hash)=(9f86d081884c7d65) already exists.",
            "Key (token_hash)=(…) already exists.",
            "9f86d081884c7d65",
        ),
        ("/g/Abc123/admin/pause and /g/Abc123/admin/seat/1/email", "/admin/pause", "no secret"),
    ],
)
def test_tokens_headers_and_database_details_are_redacted(line, kept, secret) -> None:
    assert kept in logs.redact(line) and secret not in logs.redact(line)


def test_every_route_with_a_secret_argument_is_redacted(app) -> None:
    """One list of secret path prefixes (``logs.SECRET_PATH_PREFIXES``): a new route taking a
    ``token`` or ``signed`` argument fails here until its prefix is on the list."""
    secret_routes = 0
    for rule in app.url_map.iter_rules():
        arguments = set(rule.arguments)
        if not arguments & set(logs.SECRET_ARGUMENTS):
            continue
        secret_routes += 1
        path = re.sub(
            r"<(?:[^:<>]+:)?(\w+)>",
            lambda m: SECRET if m.group(1) in logs.SECRET_ARGUMENTS else "Abc123",
            rule.rule,
        )
        assert SECRET not in logs.redact(f"GET {path}?x=1 HTTP/1.1"), rule.rule
        assert SECRET not in logs.redact(f"https://boss.example.org{path}#top"), rule.rule
    assert secret_routes >= len(SECRET_PATHS)


def test_sql_errors_log_neither_parameters_nor_the_values_in_their_details(app) -> None:
    """A real PostgreSQL error whose statement carries a token hash and an email address."""
    with app.app_context():
        created = create_game("t", PLAYERS)
        taken = hash_token(created.seat_tokens[0])
        db.session.add(
            Seat(
                game_id=created.game_id,
                seat_index=8,
                name="Eve",
                email="eve@secret.example",
                token_hash=taken,
            )
        )
        with written() as out, pytest.raises(IntegrityError):
            try:
                db.session.commit()
            except IntegrityError:
                app.logger.exception("unexpected error on %s %s", "POST", "/somewhere")
                raise
        db.session.rollback()
    text = out.getvalue()
    assert "UniqueViolation" in text and "hide_parameters" in text
    assert taken not in text and "eve@secret.example" not in text


def test_every_response_has_a_request_id_and_a_sane_incoming_one_is_kept(client) -> None:
    first, second = client.get("/"), client.get("/")
    ids = [r.headers.get("X-Request-Id", "") for r in (first, second)]
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids) and ids[0] != ids[1]
    assert client.get("/", headers={"X-Request-Id": "proxy-1234abcd"}).headers["X-Request-Id"] == (
        "proxy-1234abcd"
    )
    for insane in ("short", "x" * 65, "has space 12345", "../../etc/passwd", "é-12345678"):
        answer = client.get("/nowhere", headers={"X-Request-Id": insane})
        assert answer.status_code == 404
        assert re.fullmatch(r"[0-9a-f]{16}", answer.headers["X-Request-Id"]), insane
