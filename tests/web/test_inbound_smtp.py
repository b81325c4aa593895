"""The inbound SMTP receiver as the Procfile's ``mail:`` line starts it, spoken to with
smtplib over a real socket: a reply becomes the move; only our reply addresses whose signature
holds pass ``RCPT``;
a 30 MB mail is refused at the SMTP level (at ``MAIL FROM`` when its size is announced, at
the end of ``DATA`` when not) and changes nothing; while the database is down a reply is
answered 451 (the sender keeps it), and delivered again after the outage it acts once."""

from __future__ import annotations

import asyncio
import os
import shlex
import smtplib
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiosmtpd.smtp import Envelope
from imtheboss.web.games.load import get_game, load_events
from imtheboss.worker.inbound_smtp import ReplyHandler
from prometheus_client import REGISTRY
from sqlalchemy.engine import make_url
from support.postgres import allow_connections, refuse_connections
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail
from support.wait import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]

THIRTY_MB = 30 * 1024 * 1024


@pytest.fixture
def app_config():
    return REPLY_CONFIG


def _procfile_mail() -> list[str]:
    for line in (ROOT / "Procfile").read_text().splitlines():
        kind, _, command = line.partition(":")
        if kind.strip() == "mail":
            return shlex.split(command.strip())
    raise AssertionError("the Procfile has no mail: line")


@dataclass
class Receiver:
    port: int
    process: subprocess.Popen


def receiver_logs(process: subprocess.Popen) -> str:
    """What the receiver wrote, once it stopped."""
    process.terminate()
    return process.communicate(timeout=20)[1].decode()


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def receiver(app, tmp_path):
    """The receiver process on a free port, on the tests' database."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "SECRET_KEY": app.config["SECRET_KEY"],
        "BASE_URL": app.config["BASE_URL"],
        "MAIL_DOMAIN": REPLY_CONFIG["MAIL_DOMAIN"],
        "MAIL_REPLIES": "1",
        "MAIL_INBOUND_PORT": str(port),
        "MAIL_INBOUND_MAX_BYTES": str(10_000_000),
        "RATELIMIT_ENABLED": "0",
        "IMTHEBOSS_INSTANCE": str(tmp_path),
    }
    env.pop("REDIS_URL", None)
    command = _procfile_mail()
    command[0] = sys.executable if command[0] == "python" else command[0]
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: _listening(port) or process.poll() is not None, what="the receiver")
        assert process.poll() is None, process.stderr.read().decode()
        yield Receiver(port, process)
    finally:
        if process.poll() is None:
            process.terminate()
            process.communicate(timeout=20)


def test_a_reply_over_smtp_is_the_move(app, receiver) -> None:
    a = asked(app)
    with app.app_context():
        before = get_game(a.game_id).last_seq
    raw = raw_mail("place 6\n\n" + quoted(), to=a.address, sender=a.email)
    with smtplib.SMTP("127.0.0.1", receiver.port, timeout=30) as client:
        client.sendmail(a.email, [a.address], raw)

    def moved():
        with app.app_context():
            return [e for e in load_events(a.game_id, before) if e.type == "marker_placed"]

    [event] = wait_for(moved, what="the move")
    assert event.data["space"] == 5 and event.data["via"] == "mail"
    wait_for(lambda: answers(app), what="the answer")
    logs = receiver_logs(receiver.process)
    token = a.address.partition("+")[2].partition("@")[0]
    assert "reply by mail: done" in logs and token not in logs  # a capability: never logged


def test_only_our_reply_addresses_pass_rcpt(app, receiver) -> None:
    a = asked(app)
    local, _at, domain = a.address.partition("@")
    with smtplib.SMTP("127.0.0.1", receiver.port, timeout=30) as client:
        client.ehlo()
        client.mail("amy@example.org")
        assert client.rcpt("boss@elsewhere.example.org")[0] == 550
        assert client.rcpt("play@boss.example.org")[0] == 550  # no token: not a reply address
        assert client.rcpt("play+x.1.a.-.b@boss.example.org")[0] == 550  # a forged signature
        assert client.rcpt(local[:-1] + "@" + domain)[0] == 550  # a cut one
        assert client.rcpt(a.address)[0] == 250


def test_a_30_mb_mail_is_refused_at_the_smtp_level(app, receiver) -> None:
    a = asked(app)
    big = raw_mail("place 6\n\n" + "x" * 76 + "\n", to=a.address, sender=a.email, encoding="8bit")
    big += b"y" * 76 + b"\r\n"
    big = big + (b"z" * 998 + b"\r\n") * (THIRTY_MB // 1000)
    with smtplib.SMTP("127.0.0.1", receiver.port, timeout=120) as client:
        with pytest.raises(smtplib.SMTPSenderRefused) as announced:
            client.sendmail(a.email, [a.address], big)  # smtplib announces SIZE=
        assert announced.value.smtp_code == 552
    with smtplib.SMTP("127.0.0.1", receiver.port, timeout=120) as client:
        client.ehlo()
        assert client.mail(a.email)[0] == 250  # no SIZE given
        assert client.rcpt(a.address)[0] == 250
        code, _message = client.data(big)
        assert code == 552
    with app.app_context():
        assert [e.type for e in load_events(a.game_id)].count("marker_placed") == 0
    assert answers(app) == []


def _deliver(port: int, sender: str, to: str, raw: bytes) -> None:
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        assert client.sendmail(sender, [to], raw) == {}


def test_a_reply_during_a_database_outage_is_answered_451_and_acts_once_after_it(
    app, pg_url, receiver
) -> None:
    a = asked(app)
    raw = raw_mail("place 6\n\n" + quoted(), to=a.address, sender=a.email, message_id="<o@c>")
    name = make_url(pg_url).database
    refuse_connections(name)
    try:
        with pytest.raises(smtplib.SMTPDataError) as later:
            _deliver(receiver.port, a.email, a.address, raw)
        assert later.value.smtp_code == 451 and b"4.3.0" in later.value.smtp_error
    finally:
        allow_connections(name)
    with app.app_context():
        assert [e.type for e in load_events(a.game_id)].count("marker_placed") == 0
    assert answers(app) == []
    _deliver(receiver.port, a.email, a.address, raw)  # the sending server's retry
    _deliver(receiver.port, a.email, a.address, raw)  # and one more: a mail acts once
    with app.app_context():
        placed = [e for e in load_events(a.game_id) if e.type == "marker_placed"]
    assert [e.data["space"] for e in placed] == [5]
    assert [row.body["answer"] for row in answers(app)] == ["done"]
    logs = receiver_logs(receiver.process)
    assert "a reply by mail waits" in logs and "Traceback" not in logs


def test_a_recipient_refused_at_rcpt_is_counted_as_a_refused_reply(app) -> None:
    """A mail to no reply address of ours never reaches ``DATA``: the ``RCPT`` refusal itself is
    counted in ``imtheboss_replies`` (``refused``/``not_ours``), as ``apply_reply`` counts it."""
    labels = {"outcome": "refused", "reason": "not_ours"}
    before = REGISTRY.get_sample_value("imtheboss_replies_total", labels) or 0.0
    handler = ReplyHandler(app)
    envelope = Envelope()
    answer = asyncio.run(handler.handle_RCPT(None, None, envelope, "nobody@reply.example.org", []))
    assert answer.startswith("550") and envelope.rcpt_tos == []
    assert REGISTRY.get_sample_value("imtheboss_replies_total", labels) == before + 1
