"""Replies by mail as they come in (the inbound mail's door into web/, for the SMTP listener
``imtheboss.worker.inbound_smtp`` and the IMAP poller ``imtheboss.worker.imap_poll``): whether a
recipient is a reply address this server signed (``read_address``, ``BadReplyAddress``),
applying a reply (``apply_reply``: screened, read, turned into a command, answered), and whether
a failure was the database's, to try again later (``transient``, ``reason``), and the count
of replies the operator watches (``count_reply``: a recipient refused at ``RCPT``). The transports
stay in the worker; what a reply means is decided here.
"""

from __future__ import annotations

from imtheboss.web.app.metrics import count_reply
from imtheboss.web.replies.address import BadReplyAddress, read_address
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.store.outage import reason, transient

__all__ = ["BadReplyAddress", "apply_reply", "count_reply", "read_address", "reason", "transient"]
