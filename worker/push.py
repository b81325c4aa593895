"""A push to a phone: the request web/ makes of the row (``imtheboss.web.outbound.requests.
push_request``: the payload encrypted for the browser's keys, signed with the VAPID key), posted
through the SSRF guard. A subscription the push service no longer knows (404, 410) is dropped."""

from __future__ import annotations

from imtheboss.web.models import Game, Seat, db
from imtheboss.web.outbound.requests import OutboundPost, PushSubscription, push_request
from imtheboss.worker.posting import Outcome, post
from sqlalchemy import delete, select

GONE = (404, 410)


def deliver(row: OutboundPost, game: Game) -> Outcome:
    """Push ``row``; on 404 or 410 the subscription is dropped (``failed``, ``gone``)."""
    sub = db.session.get(PushSubscription, row.subscription_id)
    if sub is None:
        return Outcome("failed", "removed")
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game.id, Seat.seat_index == sub.seat_index)
    ).scalar_one()
    request = push_request(row, sub, game, seat)
    sub_id = sub.id
    db.session.rollback()
    outcome = post(request, gone=GONE)
    if outcome.code == "gone":
        db.session.execute(delete(PushSubscription).where(PushSubscription.id == sub_id))
        db.session.commit()
    return outcome
