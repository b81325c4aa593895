"""What a reply's headers say before its body is read: whether it is automatic (never read,
never answered), whether a trusted relay found its sender forged, who sent it, which of our
reply addresses it was sent to, and its idempotency key. Pure: a parsed message in, values out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from email import policy
from email.errors import InvalidHeaderDefect
from email.message import EmailMessage
from email.utils import getaddresses

PRECEDENCE_AUTOMATIC = frozenset({"bulk", "junk", "list", "auto_reply"})
AUTO_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Autoresponder", "X-Auto-Reply")
DAEMONS = re.compile(r"^(mailer-daemon|postmaster|noreply|no-reply|do-not-reply)@", re.I)
AUTH_FAIL = re.compile(r"\b(dkim|spf|dmarc)\s*=\s*(fail|permerror)\b", re.I)
ADDRESS_LIKE = re.compile(r"[^\s<>\"'(),;:\[\]]+@[^\s<>\"'(),;:\[\]]+")
RECIPIENT_HEADERS = ("Delivered-To", "X-Original-To", "Envelope-To", "To", "Cc")


def automatic(message: EmailMessage, envelope_from: str | None = None) -> bool:
    """Whether ``message`` was sent by a machine: an auto-reply or out-of-office notice
    (``Auto-Submitted`` other than ``no``, ``Precedence: bulk/junk/list/auto_reply``,
    ``X-Autoreply`` and the like), a bounce or other report (``multipart/report``, a null
    envelope sender ``<>``, ``MAILER-DAEMON``). Such mail is never read as a move nor answered,
    so no loop can start."""
    auto = str(message.get("Auto-Submitted", "")).strip().lower()
    if auto and auto.split(";")[0].strip() != "no":
        return True
    if str(message.get("Precedence", "")).strip().lower() in PRECEDENCE_AUTOMATIC:
        return True
    if any(message.get(name) is not None for name in AUTO_HEADERS):
        return True
    if message.get_content_type() == "multipart/report":
        return True
    if envelope_from is not None and envelope_from.strip() in ("", "<>"):
        return True
    return bool(DAEMONS.match(sender(message)))


def auth_failed(message: EmailMessage, servid: str) -> bool:
    """Whether an ``Authentication-Results`` header of the trusted relay ``servid`` (its
    authserv-id, the header's first word) reports a DKIM, SPF or DMARC failure. Headers of other
    ids are not trusted and not read; an empty ``servid`` reads none."""
    if not servid:
        return False
    for header in message.get_all("Authentication-Results") or []:
        text = str(header)
        if text.split(";")[0].strip().lower() != servid.lower():
            continue
        if AUTH_FAIL.search(text):
            return True
    return False


def sender(message: EmailMessage) -> str:
    """The ``From`` address, lower case; ``""`` when there is none or it is not one unambiguous
    address: more than one ``From`` header or address, the policy's header registry and
    ``getaddresses`` reading the raw header differently (``eve@example.org <mallory@evil.org>``
    is Eve's to one, Mallory's to the other), a part it cannot read, or another address-like
    word anywhere in it (a display name or comment such as ``"eve@example.org"``)."""
    froms = [value for name, value in message.raw_items() if name.lower() == "from"]
    if len(froms) != 1:
        return ""
    raw = " ".join(str(froms[0]).split())  # unfolded
    header = policy.default.header_factory("From", raw)
    if any(isinstance(d, InvalidHeaderDefect) for d in header.defects):
        return ""
    registry = [a.addr_spec for a in header.addresses]
    plain = [address for _name, address in getaddresses([raw])]
    if len(registry) != 1 or len(plain) != 1 or registry[0].lower() != plain[0].lower():
        return ""
    address = registry[0].strip().lower()
    words = {w.lower() for text in (raw, str(header)) for w in ADDRESS_LIKE.findall(text)}
    if not address or words != {address}:
        return ""
    return address


def recipients(message: EmailMessage, envelope: Iterable[str] = ()) -> list[str]:
    """The addresses ``message`` was delivered to: the envelope's (SMTP ``RCPT``), then those
    the delivering server or the writer put in its headers (``Delivered-To``, ``To``, ``Cc``)."""
    found = [a.strip().strip("<>") for a in envelope]
    headers = [str(v) for name in RECIPIENT_HEADERS for v in (message.get_all(name) or [])]
    found += [address for _name, address in getaddresses(headers) if address]
    return found


def idempotency_key(message: EmailMessage, raw: bytes) -> str:
    """The command key of a reply: ``mail:`` and a hash of its ``Message-ID`` (of the whole mail
    when it has none), so a mail delivered twice acts once."""
    msgid = str(message.get("Message-ID", "")).strip()
    basis = msgid.encode() if msgid else raw
    return "mail:" + hashlib.sha256(basis).hexdigest()[:40]
