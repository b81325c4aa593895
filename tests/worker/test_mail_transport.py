"""Talking to the SMTP server: verified STARTTLS, implicit TLS, the send timeout, international
addresses (IDNA domains, SMTPUTF8 local parts).

The worker's delivery code runs in this process (``deliver.run``), with the settings each test
is about, against real aiosmtpd servers holding real certificates (trustme) and the tests'
PostgreSQL database. The addresses are written to the seat rows directly: what the server
accepted at creation is not what these tests are about, sending whatever is stored is.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import trustme
from imtheboss.web.games.create import create_game
from imtheboss.web.models import Seat, db
from sqlalchemy import update
from support.wait import free_port, wait_for
from support.worker import Mailbox, SilentServer, deliver_here, invitation, players

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def new_game(title: str, emails: list[str] | None = None) -> str:
    """A game whose seats have ``emails`` (written to the rows as they are)."""
    gid = create_game(title, players(title.lower().replace(" ", "-")), SLOW, seed=7).game_id
    for seat, address in enumerate(emails or []):
        db.session.execute(
            update(Seat).where(Seat.game_id == gid, Seat.seat_index == seat).values(email=address)
        )
    db.session.commit()
    return gid


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def ca_file(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture(scope="module")
def server_tls(ca: trustme.CA) -> ssl.SSLContext:
    """The servers' TLS context: a certificate for 127.0.0.1 signed by the test CA."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    return context


@pytest.fixture
def mail_server() -> Iterator[Callable[..., Mailbox]]:
    """``start(**options)``: an SMTP server of the test's own (``Mailbox`` options)."""
    started: list[Mailbox] = []

    def start(**options: Any) -> Mailbox:
        box = Mailbox(free_port(), **options)
        box.start()
        started.append(box)
        return box

    yield start
    for box in started:
        box.stop()


def test_starttls_to_a_server_whose_certificate_is_not_trusted_sends_nothing(
    local_app, mail_server, server_tls
):
    server = mail_server(tls_context=server_tls, require_starttls=True)
    app = local_app(SMTP_HOST="127.0.0.1", SMTP_PORT=server.port, SMTP_STARTTLS=True)
    with app.app_context():
        gid = new_game("Untrusted")
        row = invitation(gid, 0)
        assert deliver_here(row.id) == "retry"
        row = invitation(gid, 0)
    assert server.messages == []
    assert (row.email_state, row.attempts, row.email_error) == ("pending", 1, "tls")
    assert "certificate" in row.email_error_detail


def test_starttls_with_the_ca_file_verifies_the_server_and_delivers(
    local_app, mail_server, server_tls, ca_file
):
    server = mail_server(tls_context=server_tls, require_starttls=True)  # no MAIL before TLS
    app = local_app(
        SMTP_HOST="127.0.0.1", SMTP_PORT=server.port, SMTP_STARTTLS=True, SMTP_CA_FILE=ca_file
    )
    with app.app_context():
        gid = new_game("Trusted")
        row = invitation(gid, 0)
        assert deliver_here(row.id) == "sent"
        assert invitation(gid, 0).email_state == "sent"
    (got,) = server.messages
    assert str(got["To"]) == players("trusted")[0][1]


def test_implicit_tls_delivers_and_refuses_an_untrusted_server(
    local_app, mail_server, server_tls, ca_file
):
    server = mail_server(ssl_context=server_tls)
    trusting = local_app(
        SMTP_HOST="127.0.0.1", SMTP_PORT=server.port, SMTP_SSL=True, SMTP_CA_FILE=ca_file
    )
    with trusting.app_context():
        gid = new_game("Implicit")
        assert deliver_here(invitation(gid, 0).id) == "sent"
    (got,) = server.messages
    assert str(got["To"]) == players("implicit")[0][1]
    untrusting = local_app(SMTP_HOST="127.0.0.1", SMTP_PORT=server.port, SMTP_SSL=True)
    with untrusting.app_context():
        assert deliver_here(invitation(gid, 1).id) == "retry"
        row = invitation(gid, 1)
    assert (row.email_state, row.email_error) == ("pending", "tls")
    assert len(server.messages) == 1


def test_a_server_that_never_answers_is_given_up_on_after_smtp_timeout(local_app):
    silent = SilentServer(free_port())
    silent.start()
    try:
        app = local_app(SMTP_HOST="127.0.0.1", SMTP_PORT=silent.port, SMTP_TIMEOUT=1)
        with app.app_context():
            gid = new_game("Silent")
        results: list[str] = []

        def run() -> None:
            with app.app_context():
                results.append(deliver_here(invitation(gid, 0).id))
                db.session.remove()

        thread = threading.Thread(target=run)
        thread.start()
        wait_for(lambda: results, 10, what="the send to give up after SMTP_TIMEOUT (1 s)")
        thread.join()
        assert silent.accepted == 1
        with app.app_context():
            row = invitation(gid, 0)
        assert results == ["retry"]
        assert (row.email_state, row.attempts, row.email_error) == ("pending", 1, "timeout")
    finally:
        silent.stop()


INTERNATIONAL = "用户@例子.中国"
INTERNATIONAL_ASCII_DOMAIN = "用户@xn--fsqu00a.xn--fiqs8s"
IDN_ONLY = "user@例子.中国"
IDN_ONLY_ASCII = "user@xn--fsqu00a.xn--fiqs8s"


def test_international_addresses_go_out_with_smtputf8_when_the_server_offers_it(
    local_app, mail_server
):
    server = mail_server(enable_SMTPUTF8=True)
    app = local_app(SMTP_HOST="127.0.0.1", SMTP_PORT=server.port)
    with app.app_context():
        gid = new_game("Utf8", [INTERNATIONAL, IDN_ONLY])
        assert deliver_here(invitation(gid, 0).id) == "sent"
        assert deliver_here(invitation(gid, 1).id) == "sent"
    first, second = server.messages
    first_envelope, second_envelope = server.envelopes
    # The domain in its IDNA (ASCII) form, the local part in UTF-8 under SMTPUTF8.
    assert str(first["To"]) == INTERNATIONAL_ASCII_DOMAIN
    assert first_envelope.rcpt_tos == [INTERNATIONAL_ASCII_DOMAIN]
    assert "SMTPUTF8" in first_envelope.mail_options
    assert "=?" not in str(first["To"])
    # An ASCII local part needs no SMTPUTF8: only the domain is written as IDNA.
    assert str(second["To"]) == IDN_ONLY_ASCII
    assert second_envelope.rcpt_tos == [IDN_ONLY_ASCII]
    assert "SMTPUTF8" not in second_envelope.mail_options


def test_an_international_local_part_fails_for_good_when_the_server_lacks_smtputf8(
    local_app, mail_server
):
    server = mail_server(enable_SMTPUTF8=False)  # aiosmtpd's Controller offers it by default
    app = local_app(SMTP_HOST="127.0.0.1", SMTP_PORT=server.port)
    with app.app_context():
        gid = new_game("Ascii only", [INTERNATIONAL, IDN_ONLY, "no-at-sign"])
        assert deliver_here(invitation(gid, 0).id) == "failed"
        assert deliver_here(invitation(gid, 1).id) == "sent"
        assert deliver_here(invitation(gid, 2).id) == "failed"
        international, idn, broken = (invitation(gid, s) for s in range(3))
    assert (international.email_state, international.email_error) == ("failed", "no_smtputf8")
    assert international.attempts == 1
    assert idn.email_state == "sent"
    assert (broken.email_state, broken.email_error) == ("failed", "bad_address")
    (got,) = server.messages
    assert str(got["To"]) == IDN_ONLY_ASCII
    assert server.envelopes[0].rcpt_tos == [IDN_ONLY_ASCII]
