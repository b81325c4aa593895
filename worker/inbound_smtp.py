"""The inbound SMTP receiver (the Procfile's ``mail:``): replies to our mail, for servers that
receive their own mail (point the MX of ``MAIL_DOMAIN`` at it, or relay to it).

aiosmtpd on ``MAIL_INBOUND_HOST:MAIL_INBOUND_PORT``. At ``RCPT`` only our reply addresses
(``MAIL_REPLY_LOCAL+…@MAIL_DOMAIN``) whose signature holds are accepted (550 for any other, a
tampered or forged token too: no open relay, no backscatter, and no mail is read for an address
that acts for nobody); mail over ``MAIL_INBOUND_MAX_BYTES`` is refused with 552 (at
``MAIL FROM`` when the client announces its ``SIZE``, else at the end of ``DATA``). Accepted
mail is applied by ``imtheboss.web.replies.apply.apply_reply`` in a thread; the SMTP answer is
250 whatever the reply said (the seat hears from us by mail; a refusal is never a bounce), but
451 4.3.0 when the database failed on it (``imtheboss.web.store.outage.transient``): the sending
server keeps the mail and delivers it again later, and a mail delivered again acts once.

Run: ``python -m imtheboss.worker.inbound_smtp``.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import Any

from aiosmtpd.controller import Controller
from flask import Flask
from imtheboss.web import create_app
from imtheboss.web.replies import inbound

OK = "250 2.0.0 OK"
TRY_LATER = "451 4.3.0 The game server cannot take your mail right now; try again later"


class ReplyHandler:
    """aiosmtpd handler: checks recipients at ``RCPT``, applies each mail after ``DATA``."""

    def __init__(self, app: Flask) -> None:
        self.app = app

    async def handle_RCPT(  # noqa: N802 - aiosmtpd's hook name
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        """250 for one of our reply addresses whose signature holds, 550 for any other (counted
        in ``imtheboss_replies`` as ``refused``/``not_ours``: it never reaches ``DATA``)."""
        with self.app.app_context():
            try:
                inbound.read_address(address)
            except inbound.BadReplyAddress:
                inbound.count_reply("refused", "not_ours")
                return "550 5.1.1 No such reply address here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        """Apply the mail (in a thread: the database is not async); the answer of ``apply``."""
        raw = envelope.original_content or b""
        rcpts, mail_from = list(envelope.rcpt_tos), envelope.mail_from
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.apply, raw, rcpts, mail_from)

    def apply(self, raw: bytes, rcpts: list[str], mail_from: str | None) -> str:
        """``apply_reply`` in an app context of its own; the SMTP answer: 451 (try again
        later) when the database failed (``outage.transient``), else 250 (any other failure
        is logged: sent again, the mail would fail again)."""
        with self.app.app_context():
            try:
                outcome = inbound.apply_reply(raw, rcpts, mail_from)
            except Exception as exc:
                if inbound.transient(exc):
                    self.app.logger.warning("a reply by mail waits: %s", inbound.reason(exc))
                    return TRY_LATER
                self.app.logger.exception("a reply by mail could not be applied")
                return OK
            self.app.logger.info("reply by mail: %s %s", outcome.status, outcome.reason)
            return OK


def controller(app: Flask, host: str | None = None, port: int | None = None) -> Controller:
    """The receiver of ``app``'s settings (not started)."""
    config = app.config
    return Controller(
        ReplyHandler(app),
        hostname=host or config["MAIL_INBOUND_HOST"],
        port=port or int(config["MAIL_INBOUND_PORT"]),
        data_size_limit=int(config["MAIL_INBOUND_MAX_BYTES"]),
        ident="imtheboss",
    )


def main() -> None:
    """Serve until SIGTERM or SIGINT."""
    app = create_app()
    # aiosmtpd logs every recipient at INFO: a reply address is a capability, kept out of logs
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    receiver = controller(app)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    receiver.start()
    app.logger.info("receiving replies on %s:%s", app.config["MAIL_INBOUND_HOST"], receiver.port)
    stop.wait()
    receiver.stop()


if __name__ == "__main__":
    main()
