"""The sign-in mail (``imtheboss.web.players.signin``): one task, ``send_sign_in(link_id)``, on the
``mail`` queue.

The web writes a ``sign_in_links`` row for every well-formed address asked for and queues this
task either way; here the address is looked up: one with a seat in a game that has started
gets the link, any other gets nothing (``skipped``), so the web's answer and its time never
say which. At most once: the row is committed ``sending`` before the SMTP server is spoken to
(a send cut off half-way is not repeated; the player may ask again), then ``sent`` or
``failed``.
"""

from __future__ import annotations

from celery import shared_task
from flask import current_app
from imtheboss.web.mail.outgoing import SignInLink, compose_sign_in, has_seat
from imtheboss.web.models import db
from imtheboss.worker.smtp import MailFailure, send
from sqlalchemy import select

TASK = "imtheboss.worker.signin_mail.send_sign_in"


@shared_task(name=TASK)
def send_sign_in(link_id: str) -> str:
    """Mail the sign-in link of row ``link_id`` if its address has a seat. Returns ``done``
    (not pending), ``skipped``, ``sent`` or ``failed``."""
    row = db.session.execute(
        select(SignInLink).where(SignInLink.id == link_id).with_for_update()
    ).scalar_one_or_none()
    if row is None or row.mail_state != "pending":
        db.session.rollback()
        return "done"
    if not has_seat(row.email):
        row.mail_state = "skipped"
        db.session.commit()
        return "skipped"
    try:
        message = compose_sign_in(row)
    except MailFailure:
        row.mail_state = "failed"
        db.session.commit()
        return "failed"
    row.mail_state = "sending"
    db.session.commit()
    try:
        send(message)
    except MailFailure as failure:
        current_app.logger.warning("a sign-in mail failed: %s", failure.code)
        return _settle(link_id, "failed")
    return _settle(link_id, "sent")


def _settle(link_id: str, state: str) -> str:
    db.session.execute(
        SignInLink.__table__.update().where(SignInLink.id == link_id).values(mail_state=state)
    )
    db.session.commit()
    return state
