"""The worker's Redis transport: kombu's, with a close that survives losing the broker.

When Redis goes away under a consuming worker (a restart, a crash), Celery closes the broken
connection twice: ``Connection.collect()`` closes its channels, then ``Connection.close()``
closes them again. kombu's Redis channel does network work first in ``close()`` (it reads the
pending ``BRPOP`` reply, deletes auto-delete fanout queues); with the broker gone that raises a
connection error, which kombu ignores, and the channel stays half-open. ``collect()`` then
detaches the transport from its connection, and the second close gets as far as giving the
unacknowledged messages back (``restore_unacked``), which needs the detached connection's
address: ``AttributeError: 'NoneType' object has no attribute 'hostname'``, not a connection
error, so the worker stops for good ("Unrecoverable error").

``Channel.close`` here turns the restore off for a channel whose close was cut by a connection
error (``do_restore``, kombu's switch for it): the broker cannot take the messages back anyway.

A task that was running when the broker went away is acknowledged (late acks) on its old
channel once it ends, after that channel was closed: kombu looks for the closed channel's
connection (``AttributeError: 'NoneType' object has no attribute 'client'``) and the worker
stops the same way. ``Channel.basic_ack`` and ``basic_reject`` here skip a closed channel with
a warning: its message, if the broker kept it, comes back after the visibility timeout and runs
again, which every task allows (a mail row is claimed before it is sent).
Nothing is lost: each unacknowledged message stays in Redis' unacked index (``QoS.append``) and
kombu gives it back after the visibility timeout (``imtheboss.web.app.tasks_out``); mail that
was not sent is queued again by the mail sweep (``imtheboss.worker.tasks.sweep_mail``) and sent once
(its row is claimed). A normal close (a warm shutdown) still restores at once.
"""

from __future__ import annotations

import logging

from kombu.transport import redis

log = logging.getLogger(__name__)

TRANSPORT = "imtheboss.worker.broker:Transport"  # Celery's ``broker_transport`` for Redis


class Channel(redis.Channel):
    """kombu's Redis channel; a close cut by a lost broker restores nothing (module doc)."""

    def close(self) -> None:
        """Close the channel; on a connection error (raised again for kombu, which ignores it),
        leave the unacknowledged messages to the broker's unacked index."""
        try:
            super().close()
        except self.connection_errors:
            if self.do_restore:
                log.warning(
                    "the broker went away while closing a channel: its unacknowledged"
                    " messages are left to the broker (given back after the visibility"
                    " timeout; the mail sweep queues unsent mail again)"
                )
            self.do_restore = False
            raise

    def basic_ack(self, delivery_tag: int, multiple: bool = False) -> None:
        """Acknowledge the message, unless this channel is closed (module doc)."""
        if self._lost("acknowledged"):
            return
        super().basic_ack(delivery_tag, multiple=multiple)

    def basic_reject(self, delivery_tag: int, requeue: bool = False) -> None:
        """Reject the message, unless this channel is closed (module doc)."""
        if self._lost("rejected"):
            return
        super().basic_reject(delivery_tag, requeue=requeue)

    def _lost(self, what: str) -> bool:
        if not self.closed:
            return False
        log.warning(
            "a message could not be %s: its broker connection is gone (the broker gives it"
            " back after the visibility timeout)",
            what,
        )
        return True


class Transport(redis.Transport):
    """kombu's Redis transport with ``Channel`` above."""

    Channel = Channel
