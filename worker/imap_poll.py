"""Polling a mailbox for replies (the Procfile's ``imap:``), for operators on hosted mail:
point ``MAIL_DOMAIN``'s reply addresses at a mailbox (``play+…@`` delivered to ``play@``) and
give its IMAP login (``IMAP_HOST``, ``IMAP_USER``, ``IMAP_PASSWORD``...).

Each round reads the unseen mail of ``IMAP_FOLDER`` (``BODY.PEEK[]``, so nothing is marked
before it was applied), applies each (``imtheboss.web.replies.apply.apply_reply``: a mail read
twice acts once, by its Message-ID) and marks it ``\\Seen``; when the database fails on one
(``imtheboss.web.store.outage.transient``), it and the rest stay unseen until the next round.
Between rounds it waits in IMAP IDLE (RFC 2177) where the server offers it, woken by new mail,
renewed every ``IMAP_POLL_SECONDS`` at most; else it sleeps ``IMAP_POLL_SECONDS``.

Run: ``python -m imtheboss.worker.imap_poll``.
"""

from __future__ import annotations

import contextlib
import imaplib
import select
import signal
import socket
import ssl
import threading
import time

from flask import Flask
from imtheboss.web import create_app
from imtheboss.web.replies import inbound

IDLE_MAX = 25 * 60  # seconds: below the 29 minutes after which servers may drop an idle client


def connect(app: Flask) -> imaplib.IMAP4:
    """A logged-in connection with ``IMAP_FOLDER`` selected. Raises ``imaplib.IMAP4.error``
    or ``OSError``."""
    config = app.config
    host, port = config["IMAP_HOST"], int(config["IMAP_PORT"])
    timeout = float(config.get("SMTP_TIMEOUT", 20))
    if config["IMAP_SSL"]:
        imap: imaplib.IMAP4 = imaplib.IMAP4_SSL(
            host, port, ssl_context=ssl.create_default_context(), timeout=timeout
        )
    else:
        imap = imaplib.IMAP4(host, port, timeout=timeout)
        if config["IMAP_STARTTLS"]:
            imap.starttls(ssl.create_default_context())
    imap.login(config["IMAP_USER"], config["IMAP_PASSWORD"])
    imap.select(config["IMAP_FOLDER"])
    return imap


def poll_once(app: Flask, imap: imaplib.IMAP4) -> int:
    """Apply the unseen mail of the selected folder and mark each seen. Stops at a mail the
    database failed on (``outage.transient``), left unseen with the rest for the next round.
    Returns how many were marked seen. A mail that arrives during the round is told by an
    untagged ``EXISTS`` imaplib keeps (``wait`` reads it): the ones before the round are dropped."""
    imap.untagged_responses.pop("EXISTS", None)
    status, data = imap.uid("SEARCH", None, "UNSEEN")
    if status != "OK":
        return 0
    uids = data[0].split() if data and data[0] else []
    for done, uid in enumerate(uids):
        status, parts = imap.uid("FETCH", uid, "(BODY.PEEK[])")
        raw = next((p[1] for p in parts if isinstance(p, tuple)), None)
        if status == "OK" and raw is not None and not _applied(app, raw):
            return done
        imap.uid("STORE", uid, "+FLAGS.SILENT", r"(\Seen)")
    return len(uids)


def _applied(app: Flask, raw: bytes) -> bool:
    """Apply one mail; ``False`` when the database failed on it (to be read again)."""
    with app.app_context():
        try:
            outcome = inbound.apply_reply(raw)
        except Exception as exc:
            if inbound.transient(exc):
                app.logger.warning("a reply by IMAP waits: %s", inbound.reason(exc))
                return False
            # logged; marked seen all the same: read again, it would fail again
            app.logger.exception("a reply by IMAP could not be applied")
            return True
        app.logger.info("reply by IMAP: %s %s", outcome.status, outcome.reason)
        return True


def wait(imap: imaplib.IMAP4, seconds: float, stop: threading.Event) -> None:
    """Wait for new mail: IMAP IDLE for at most ``seconds`` when the server has it (returns at
    the first ``EXISTS``), else sleep ``seconds`` (or until ``stop``). Returns at once when an
    ``EXISTS`` came with the round's own answers (a mail that arrived during its search or
    fetches: the server does not tell it again in IDLE)."""
    if imap.untagged_responses.pop("EXISTS", None):
        return
    if "IDLE" not in imap.capabilities:
        stop.wait(seconds)
        return
    tag = imap._new_tag()  # imaplib (before 3.14) has no IDLE: spoken here, by the RFC
    imap.send(tag + b" IDLE\r\n")
    news = False  # mail that came after the last search is told before the "+" (RFC 2177)
    while True:
        line = imap.readline()
        if not line:
            return
        if line.startswith(b"+"):
            break
        if line.startswith(tag):  # IDLE refused
            stop.wait(seconds)
            return
        news = news or b"EXISTS" in line
    end = time.monotonic() + min(seconds, IDLE_MAX)
    try:
        while not news and not stop.is_set() and time.monotonic() < end:
            if not _readable(imap, min(1.0, max(0.0, end - time.monotonic()))):
                continue
            line = imap.readline()
            if not line or b"EXISTS" in line:
                break
    finally:
        imap.send(b"DONE\r\n")
        while True:  # up to the IDLE command's tagged answer
            line = imap.readline()
            if not line or line.startswith(tag):
                break


def _readable(imap: imaplib.IMAP4, seconds: float) -> bool:
    """Whether ``imap`` has a line to read within ``seconds``: bytes already held by imaplib's
    buffered reader (the "+" and an ``EXISTS`` often come in one packet), decrypted TLS bytes,
    or bytes on the socket."""
    sock = imap.socket()
    if _held(imap, sock):
        return True
    return bool(select.select([sock], [], [], seconds)[0])


def _held(imap: imaplib.IMAP4, sock: socket.socket) -> bool:
    """Whether imaplib's buffered reader or the TLS layer holds unread bytes (never blocks: the
    peek runs with the socket non-blocking, so an empty buffer reads nothing)."""
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    timeout = sock.gettimeout()
    sock.settimeout(0.0)
    try:
        return bool(imap.file.peek(1))
    except (ssl.SSLWantReadError, BlockingIOError):
        return False
    finally:
        sock.settimeout(timeout)


def run(app: Flask, stop: threading.Event) -> None:
    """Poll until ``stop`` is set, reconnecting after a failure (``IMAP_POLL_SECONDS`` later)."""
    seconds = float(app.config["IMAP_POLL_SECONDS"])
    while not stop.is_set():
        try:
            imap = connect(app)
            try:
                while not stop.is_set():
                    poll_once(app, imap)
                    wait(imap, seconds, stop)
            finally:
                with contextlib.suppress(imaplib.IMAP4.error, OSError):
                    imap.logout()
        except (imaplib.IMAP4.error, OSError) as exc:
            app.logger.warning("IMAP %s: %s; trying again", app.config["IMAP_HOST"], exc)
            stop.wait(seconds)


def main() -> None:
    """Poll the mailbox of the settings until SIGTERM or SIGINT (without ``IMAP_HOST``, wait
    doing nothing, so a process manager that starts every Procfile line keeps running)."""
    app = create_app()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if not app.config["IMAP_HOST"]:
        app.logger.info("IMAP_HOST is not set: no mailbox to poll")
        stop.wait()
        return
    run(app, stop)


if __name__ == "__main__":
    main()
