"""``MailFailure``: a message that was not handed over, or cannot be written. Composing raises it
(an address no server could take: ``imtheboss.web.mail.compose``), and so does sending
(``imtheboss.worker.smtp``, which the worker's tasks catch); plain data, so web/ and the worker
share it without web/ importing the worker."""

from __future__ import annotations


class MailFailure(Exception):
    """A message that was not handed over. ``code``: ``refused``, ``rejected``, ``deferred``,
    ``bad_address``, ``no_smtputf8``, ``cannot_compose``, ``tls``, ``timeout``,
    ``unreachable``, ``login``, ``smtp`` (``imtheboss.web.mail.undelivered.REASONS`` says each
    in plain words); ``detail``: the server's or library's words (at most 200 characters);
    ``permanent``: trying again cannot help."""

    def __init__(self, code: str, detail: str, permanent: bool = False) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = " ".join(detail.split())[:200]
        self.permanent = permanent
