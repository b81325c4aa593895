"""A webhook's post: the request web/ makes of the row (``imtheboss.web.outbound.requests.
hook_request``: the body in the webhook's shape, signed with its secret), posted through the SSRF
guard (``imtheboss.worker.posting.post``)."""

from __future__ import annotations

from imtheboss.web.models import Game, db
from imtheboss.web.outbound.requests import OutboundPost, Webhook, hook_request
from imtheboss.worker.posting import Outcome, post


def deliver(row: OutboundPost, game: Game) -> Outcome:
    """Post ``row`` to its webhook (gone meanwhile: ``failed``, ``removed``)."""
    hook = db.session.get(Webhook, row.webhook_id)
    if hook is None:
        return Outcome("failed", "removed")
    request = hook_request(row, hook, game)
    db.session.rollback()  # no transaction stays open while the endpoint answers
    return post(request)
