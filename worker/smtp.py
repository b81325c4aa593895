"""Handing a message to the SMTP server, and saying what went wrong when it cannot be.

Settings (the app's config): ``SMTP_HOST`` (unset: the message is kept in the local outbox
table the operator reads at ``/operator/mail``), ``SMTP_PORT``, ``SMTP_USER``/``SMTP_PASSWORD``,
``SMTP_STARTTLS`` (upgrade a plain connection), ``SMTP_SSL`` (implicit TLS, port 465 by
default), ``SMTP_CA_FILE`` (a CA bundle to trust besides the system's), ``SMTP_TIMEOUT``
(seconds any one step may wait). TLS always verifies the server's certificate and name.
``DKIM_SELECTOR``, ``DKIM_KEY_FILE``, ``DKIM_DOMAIN`` (default: ``MAIL_FROM``'s domain): each
message is DKIM-signed (dkimpy, relaxed/relaxed, rsa-sha256) over ``SIGNED`` as it goes out
(docs/deliverability.md). An 8-bit body goes with ``BODY=8BITMIME`` (RFC 6152) when the server
offers it, else it is re-encoded to 7 bits (base64) before it is signed.

Every failure is raised as ``MailFailure`` (``imtheboss.web.mail.failure``; composing raises it
too): a code (``imtheboss.web.mail.undelivered.REASONS`` says each in plain words), the server's
words, and whether trying again could help. Permanent:
5xx replies (an address refused, a message rejected), an international address the server
cannot take. Temporary: 4xx replies, connection errors, timeouts, TLS failures, a refused
login (nothing about the message itself is wrong).
"""

from __future__ import annotations

import contextlib
import smtplib
import ssl
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import dkim
from flask import current_app
from imtheboss.web.games.driven import now_utc
from imtheboss.web.mail.outgoing import MailFailure
from imtheboss.web.models import OutboxMail, db


def send(msg: EmailMessage) -> None:
    """Hand ``msg`` (its ``From`` and ``To`` are the envelope) to the SMTP server, or keep it in
    the local outbox (committed at once) when no ``SMTP_HOST`` is set. A non-ASCII address goes
    out with SMTPUTF8 when the server offers it. Raises ``MailFailure``."""
    try:
        sender = msg["From"].addresses[0].addr_spec
        recipients = [address.addr_spec for address in msg["To"].addresses]
    except (AttributeError, IndexError, TypeError):
        raise MailFailure("cannot_compose", "no sender or recipient address", True) from None
    international = not all(a.isascii() for a in (sender, *recipients))
    config = current_app.config
    if not config["SMTP_HOST"]:
        _keep_locally(msg, international)
        return
    try:
        smtp = _open(config)
    except (smtplib.SMTPException, OSError) as exc:
        raise classify(exc) from exc
    try:
        smtp.ehlo_or_helo_if_needed()
        options = _mail_options(smtp, international)
        eight = smtp.has_extn("8bitmime")
        data = msg.as_bytes(policy=msg.policy.clone(utf8=international, cte_type=_cte(eight)))
        if eight and not data.isascii() and "BODY=8BITMIME" not in options:
            options.append("BODY=8BITMIME")
        data = signed(data, config, sender)
        smtp.sendmail(sender, recipients, data, mail_options=options)
    except (smtplib.SMTPException, OSError) as exc:
        smtp.close()
        raise classify(exc) from exc
    except BaseException:
        smtp.close()
        raise
    with contextlib.suppress(smtplib.SMTPException, OSError):
        smtp.quit()  # the server has taken the message: a failing QUIT changes nothing
    smtp.close()


# The headers a DKIM signature covers (RFC 6376 5.4; RFC 8058 asks for the List-Unsubscribe
# pair): an absent one is signed as absent, so nobody can add it on the way.
SIGNED = (
    "From", "To", "Subject", "Date", "Message-ID", "Reply-To", "In-Reply-To", "References",
    "List-Id", "List-Unsubscribe", "List-Unsubscribe-Post", "Auto-Submitted", "MIME-Version",
    "Content-Type", "Content-Transfer-Encoding",
)  # fmt: skip


def _cte(eight_bit: bool) -> str:
    """The policy's transfer encoding: 8-bit bodies only to a server that offers 8BITMIME."""
    return "8bit" if eight_bit else "7bit"


def signed(data: bytes, config: Any, sender: str) -> bytes:
    """``data`` (a whole message, CRLF lines) with a ``DKIM-Signature`` header in front when
    ``DKIM_SELECTOR`` is set (domain: ``DKIM_DOMAIN``, else ``sender``'s), else as it is.
    Raises ``MailFailure`` (``smtp``, temporary: the operator can fix it) when the key cannot be
    read or used."""
    selector = config.get("DKIM_SELECTOR") or ""
    if not selector:
        return data
    domain = config.get("DKIM_DOMAIN") or sender.rpartition("@")[2]
    try:
        key = Path(config["DKIM_KEY_FILE"]).read_bytes()
        header = dkim.sign(
            data,
            selector.encode(),
            domain.encode(),
            key,
            canonicalize=(b"relaxed", b"relaxed"),
            include_headers=[name.lower().encode() for name in SIGNED],
            linesep=b"\r\n",
        )
    except (OSError, dkim.DKIMException, ValueError) as exc:
        raise MailFailure("smtp", f"DKIM signing failed: {exc}") from exc
    return header + data


def _open(config: Any) -> smtplib.SMTP:
    """A connection to ``SMTP_HOST``: implicit TLS with ``SMTP_SSL``, else plain and upgraded
    with ``SMTP_STARTTLS``; signed in with ``SMTP_USER``. Each step waits ``SMTP_TIMEOUT`` at
    most."""
    host, port = config["SMTP_HOST"], int(config["SMTP_PORT"])
    timeout = float(config["SMTP_TIMEOUT"])
    if config["SMTP_SSL"]:
        smtp = smtplib.SMTP_SSL(host, port, timeout=timeout, context=_tls_context(config))
    else:
        smtp = smtplib.SMTP(host, port, timeout=timeout)
    try:
        if config["SMTP_STARTTLS"] and not config["SMTP_SSL"]:
            smtp.starttls(context=_tls_context(config))
        if config["SMTP_USER"]:
            smtp.login(config["SMTP_USER"], config["SMTP_PASSWORD"])
    except BaseException:
        smtp.close()
        raise
    return smtp


def _tls_context(config: Any) -> ssl.SSLContext:
    """Verifies the server's certificate and host name, against the system's CAs and
    ``SMTP_CA_FILE``."""
    return ssl.create_default_context(cafile=config["SMTP_CA_FILE"] or None)


def _mail_options(smtp: smtplib.SMTP, international: bool) -> list[str]:
    """``SMTPUTF8`` (and 8-bit MIME) for a non-ASCII address; refused for good when the server
    does not offer SMTPUTF8."""
    if not international:
        return []
    if not smtp.has_extn("smtputf8"):
        raise MailFailure(
            "no_smtputf8",
            "the address has non-ASCII letters before the @ and the mail server does not offer"
            " SMTPUTF8",
            permanent=True,
        )
    return ["SMTPUTF8", "BODY=8BITMIME"] if smtp.has_extn("8bitmime") else ["SMTPUTF8"]


def _keep_locally(msg: EmailMessage, international: bool) -> None:
    db.session.add(
        OutboxMail(
            to=str(msg["To"]),
            subject=str(msg["Subject"]),
            message=msg.as_string(policy=msg.policy.clone(utf8=international)),
            created_at=now_utc(),
        )
    )
    db.session.commit()


def classify(exc: BaseException) -> MailFailure:
    """The ``MailFailure`` an SMTP or socket error stands for (a 5xx reply is permanent)."""
    if isinstance(exc, MailFailure):
        return exc
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        code, words = next(iter(exc.recipients.values()))
        return _reply("refused", code, words)
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return MailFailure("login", _words(exc.smtp_code, exc.smtp_error))
    if isinstance(exc, smtplib.SMTPResponseException):
        return _reply("rejected", exc.smtp_code, exc.smtp_error)
    if isinstance(exc, ssl.SSLError | ssl.CertificateError):
        return MailFailure("tls", str(getattr(exc, "verify_message", "") or exc))
    if isinstance(exc, TimeoutError) or isinstance(exc.__context__, TimeoutError):
        return MailFailure("timeout", str(exc) or "timed out")
    if isinstance(exc, OSError | smtplib.SMTPServerDisconnected):
        return MailFailure("unreachable", str(exc) or type(exc).__name__)
    return MailFailure("smtp", str(exc) or type(exc).__name__)


def _reply(code_name: str, code: int, words: bytes | str) -> MailFailure:
    """A refusing reply: permanent for 5xx, ``deferred`` (try later) for 4xx."""
    if 500 <= code < 600:
        return MailFailure(code_name, _words(code, words), permanent=True)
    return MailFailure("deferred", _words(code, words))


def _words(code: int, words: bytes | str) -> str:
    text = words.decode(errors="replace") if isinstance(words, bytes) else str(words)
    return f"{code} {text}"
