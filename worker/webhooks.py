"""A webhook's post (``imtheboss.web.outbound.hooks``): the body in the webhook's shape, signed with
its secret, posted through the SSRF guard (``imtheboss.worker.posting.post``)."""

from __future__ import annotations

from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import Game, db
from imtheboss.web.outbound import hooks
from imtheboss.web.outbound.outbox import OutboundPost, Webhook
from imtheboss.worker.posting import Outcome, Request, post

USER_AGENT = "imtheboss-webhook/1"


def request_for(row: OutboundPost, hook: Webhook, game: Game) -> Request:
    """The request that posts ``row`` to ``hook``: the body (``hooks.body``) and the headers
    ``X-Imtheboss-Event``, ``X-Imtheboss-Delivery`` and ``X-Imtheboss-Signature``."""
    players = [seat.name for seat in seats_of(game.id)]
    raw = hooks.encode(hooks.body(hook.kind, hooks.payload(row, hook, game, players)))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Imtheboss-Event": row.kind,
        "X-Imtheboss-Delivery": str(row.id),
        "X-Imtheboss-Signature": hooks.sign(hook.secret, raw),
    }
    return Request(hook.url, raw, headers)


def deliver(row: OutboundPost, game: Game) -> Outcome:
    """Post ``row`` to its webhook (gone meanwhile: ``failed``, ``removed``)."""
    hook = db.session.get(Webhook, row.webhook_id)
    if hook is None:
        return Outcome("failed", "removed")
    request = request_for(row, hook, game)
    db.session.rollback()  # no transaction stays open while the endpoint answers
    return post(request)
