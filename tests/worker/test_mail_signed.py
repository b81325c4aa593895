"""DKIM signing and the 8-bit question, on the wire to a real aiosmtpd server.

The worker's delivery code runs here (``deliver.run``) with ``DKIM_SELECTOR``/``DKIM_KEY_FILE``
set; what the server received is verified with dkimpy against the public key, which the test's
own DNS function serves (``dnsfunc``). A server offering 8BITMIME gets an 8-bit body with
``BODY=8BITMIME`` (RFC 6152); one that does not (aiosmtpd with ``decode_data``) gets 7 bits.
"""

from __future__ import annotations

import base64
import email
import email.policy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dkim
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from imtheboss.web.games.create import create_game
from imtheboss.web.models import Seat, db
from sqlalchemy import update
from support.wait import free_port
from support.worker import Mailbox, deliver_here, invitation, players

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
DOMAIN = "boss.example.org"
SELECTOR = "game2026"


class RawMailbox(Mailbox):
    """A ``Mailbox`` that also keeps each message's bytes as they came (``raw``)."""

    def __init__(self, port: int, **options: Any) -> None:
        super().__init__(port, **options)
        self.raw: list[bytes] = []

    def keep(self, content: bytes | str) -> None:
        data = content.encode() if isinstance(content, str) else content
        self.raw.append(data)
        self.messages.append(email.message_from_bytes(data, policy=email.policy.default))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, bytes]:
    """``(private key file, DNS TXT record)`` of a fresh RSA key."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path_factory.mktemp("dkim") / "private.pem"
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    Path(path).write_bytes(pem)
    der = private.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return str(path), b"v=DKIM1; k=rsa; p=" + base64.b64encode(der)


@pytest.fixture
def dnsfunc(key: tuple[str, bytes]) -> Callable[..., bytes]:
    """The test's DNS: the TXT record of ``<SELECTOR>._domainkey.<DOMAIN>`` and nothing else."""

    def lookup(name: bytes, timeout: int = 5) -> bytes:
        return key[1] if name.rstrip(b".") == f"{SELECTOR}._domainkey.{DOMAIN}".encode() else b""

    return lookup


@pytest.fixture
def mailbox() -> Iterator[Callable[..., RawMailbox]]:
    started: list[RawMailbox] = []

    def start(**options: Any) -> RawMailbox:
        box = RawMailbox(free_port(), **options)
        box.start()
        started.append(box)
        return box

    yield start
    for box in started:
        box.stop()


def _send_chinese_invitation(local_app, server: RawMailbox, key_file: str) -> None:
    app = local_app(
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=server.port,
        MAIL_FROM=f"I'm the Boss! <boss@{DOMAIN}>",
        MAIL_DOMAIN=DOMAIN,
        DKIM_SELECTOR=SELECTOR,
        DKIM_KEY_FILE=key_file,
    )
    with app.app_context():
        gid = create_game("Signed", players("signed"), SLOW, seed=7).game_id
        db.session.execute(update(Seat).where(Seat.game_id == gid).values(locale="zh_Hans"))
        db.session.commit()
        assert deliver_here(invitation(gid, 0).id) == "sent"


def test_a_signed_mail_verifies_with_the_public_key_and_covers_the_unsubscribe_headers(
    local_app, mailbox, key, dnsfunc
):
    server = mailbox()  # aiosmtpd offers 8BITMIME
    _send_chinese_invitation(local_app, server, key[0])
    (raw,) = server.raw
    assert raw.startswith(b"DKIM-Signature:")
    assert dkim.verify(raw, dnsfunc=dnsfunc)
    header = raw.split(b"\r\n\r\n", 1)[0].replace(b"\r\n\t", b"").replace(b"\r\n ", b"")
    signed = header.split(b"h=", 1)[1].split(b";", 1)[0].lower().replace(b" ", b"").split(b":")
    for name in (b"from", b"subject", b"date", b"message-id", b"list-unsubscribe",
                 b"list-unsubscribe-post", b"reply-to", b"list-id", b"auto-submitted"):  # fmt: skip
        assert name in signed, (name, signed)
    assert f"d={DOMAIN}".encode() in header and f"s={SELECTOR}".encode() in header
    # an 8-bit body, announced as such
    assert not raw.isascii()
    assert "BODY=8BITMIME" in server.envelopes[0].mail_options
    # changed on the way, it no longer verifies
    assert not dkim.verify(raw.replace(b"Subject: ", b"Subject: Fw: ", 1), dnsfunc=dnsfunc)


def test_a_server_without_8bitmime_gets_seven_bits_still_signed(local_app, mailbox, key, dnsfunc):
    server = mailbox(decode_data=True)  # aiosmtpd then does not offer 8BITMIME
    _send_chinese_invitation(local_app, server, key[0])
    (raw,) = server.raw
    assert raw.isascii()
    assert "BODY=8BITMIME" not in server.envelopes[0].mail_options
    assert dkim.verify(raw, dnsfunc=dnsfunc)
    (got,) = server.messages
    assert "你好" in got.get_body(("plain",)).get_content()


def test_a_selector_without_its_key_file_stops_the_start(tmp_path) -> None:
    from imtheboss.web.settings import Settings, SettingsError

    missing = str(tmp_path / "missing.pem")
    with pytest.raises(SettingsError) as refused:
        Settings.load(dkim_selector=SELECTOR, dkim_key_file=missing)
    said = str(refused.value)  # names the file that is not there, in plain words
    assert f"DKIM_KEY_FILE '{missing}' is not a file" in said and ": :" not in said, said
    assert "Value error" not in said, said
    with pytest.raises(SettingsError, match="DKIM_SELECTOR needs DKIM_KEY_FILE"):
        Settings.load(dkim_selector=SELECTOR, dkim_key_file="")
    key_file = tmp_path / "key.pem"
    key_file.write_text("-----BEGIN RSA PRIVATE KEY-----\n")
    assert Settings.load(dkim_selector=SELECTOR, dkim_key_file=str(key_file)).dkim_selector
