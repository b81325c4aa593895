"""What a reply's headers say before its body is read: whether it is automatic (never read,
never answered), whether a trusted relay found its sender forged, who sent it, which of our
reply addresses it was sent to, its idempotency key, and whether its body is small and simple
enough to be parsed at all. Pure: a parsed message (its headers only: ``head``) or bytes in,
values out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from email import policy
from email.errors import InvalidHeaderDefect
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses

import authres
from imtheboss.engine import languages

PRECEDENCE_AUTOMATIC = frozenset({"bulk", "junk", "list", "auto_reply"})
AUTO_HEADERS = (
    "X-Autoreply",
    "X-Autorespond",
    "X-Autoresponder",
    "X-Auto-Reply",
    "X-Auto-Response-Suppress",
)
# The subjects auto-replies start with, for those that send none of the headers above (every
# language's ``auto_replies`` in ``imtheboss.engine.languages``; compared without case; a trailing
# ":" also matches the full-width "："). docs/mail-replies.md shows them.
AUTO_SUBJECTS = tuple(s for row in languages.LANGUAGES for s in row.auto_replies)
DAEMONS = re.compile(r"^(mailer-daemon|postmaster|noreply|no-reply|do-not-reply)@", re.I)
AUTH_FAIL = re.compile(r"\b(dkim|spf|dmarc)\s*=\s*(fail|permerror)\b", re.I)
ADDRESS_LIKE = re.compile(r"[^\s<>\"'(),;:\[\]]+@[^\s<>\"'(),;:\[\]]+")
RECIPIENT_HEADERS = ("Delivered-To", "X-Original-To", "Envelope-To", "To", "Cc")
MAX_HEAD = 256 * 1024  # bytes of a mail's header block read; past it, the rest is body
MAX_BOUNDARIES = 200  # lines starting with "--" a mail may have: bounds its parts
MAX_CONTAINERS = 20  # "multipart/" and "message/" types: bounds its depth


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
    if any(str(v).strip() in ("", "<>") for v in message.get_all("Return-Path") or []):
        return True
    return bool(DAEMONS.match(sender(message))) or auto_subject(str(message.get("Subject", "")))


def auto_subject(subject: str) -> bool:
    """Whether ``subject`` starts as auto-replies' subjects do (``AUTO_SUBJECTS``)."""
    text = " ".join(subject.split()).lower().replace("：", ":")
    return any(text.startswith(prefix.lower()) for prefix in AUTO_SUBJECTS)


@dataclass(frozen=True)
class AuthVerdict:
    """What the trusted relay's ``Authentication-Results`` say: ``found`` (at least one header
    of its authserv-id), ``failed`` (one of them reports a DKIM, SPF or DMARC ``fail`` or
    ``permerror``, or cannot be read)."""

    found: bool
    failed: bool


def auth_results(message: EmailMessage, servid: str) -> AuthVerdict:
    """Read the ``Authentication-Results`` headers (RFC 8601, parsed by ``authres``: a version
    after the id, comments anywhere) of the trusted relay ``servid`` (its authserv-id, compared
    without case). Headers of other ids are not trusted and not read; an empty ``servid`` reads
    none. A header that names ``servid`` but does not parse counts as a failure."""
    found = failed = False
    if not servid:
        return AuthVerdict(False, False)
    for header in message.get_all("Authentication-Results") or []:
        text = " ".join(str(header).split())
        try:
            parsed = authres.AuthenticationResultsHeader.parse_value(text)
        except (authres.AuthResError, ValueError):
            if _first_word(text) == servid.lower():
                found = failed = True
            continue
        if str(parsed.authserv_id).lower() != servid.lower():
            continue
        found = True
        failed = failed or any(
            str(r.method).lower() in ("dkim", "spf", "dmarc")
            and str(r.result).lower() in ("fail", "permerror")
            for r in parsed.results
        )
    return AuthVerdict(found, failed)


def auth_failed(message: EmailMessage, servid: str) -> bool:
    """Whether the trusted relay ``servid`` reports a failure (``auth_results``)."""
    return auth_results(message, servid).failed


def _first_word(text: str) -> str:
    """The first word of a header value, comments ``( … )`` dropped, lower case."""
    plain = re.sub(r"\([^()]*\)", " ", text)
    return (plain.replace(";", " ").split() or [""])[0].lower()


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


def head(raw: bytes) -> EmailMessage:
    """``raw``'s header block (at most ``MAX_HEAD`` bytes) parsed: what every check before the
    body reads, at a cost that does not grow with the body."""
    cut = raw[:MAX_HEAD]
    ends = [i for i in (cut.find(b"\r\n\r\n"), cut.find(b"\n\n")) if i >= 0]
    block = cut[: min(ends)] if ends else cut
    return BytesParser(policy=policy.default).parsebytes(block + b"\r\n\r\n", headersonly=True)


def parseable(raw: bytes, max_bytes: int) -> bool:
    """Whether the whole of ``raw`` may be parsed: at most ``max_bytes`` bytes, at most
    ``MAX_BOUNDARIES`` lines starting with ``--`` (an upper bound of its parts) and
    ``MAX_CONTAINERS`` multipart and message types (an upper bound of its depth). Counts bytes
    only: its cost grows with the size, not the shape of the mail."""
    if len(raw) > max_bytes or raw.count(b"\n--") > MAX_BOUNDARIES:
        return False
    lower = raw.lower()
    return lower.count(b"multipart/") + lower.count(b"message/") <= MAX_CONTAINERS
