"""The answer to a reply: an outbox row to the seat's address (``reply_answer``), threaded on
the reply (``In-Reply-To``, ``References``), saying what was done or why nothing was, rendered
in the seat's language when it is composed for the worker (``imtheboss.web.mail.reply_answer``).

Written once per reply (its ``dedupe_key`` holds the reply's key): a mail delivered twice is
answered once.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from typing import Any

from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.commit_hooks import run_after_commit
from imtheboss.web.mail.kinds import KINDS
from imtheboss.web.models import Notification, Seat, db
from imtheboss.web.players import people as players
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

KIND = "reply_answer"
# What an answer can say (``Notification.body["answer"]``).
ANSWERS = (
    "done",
    "confirm_fail",
    "unclear",
    "not_now",
    "no_stop_card",
    "several",
    "terms_changed",
    "already_answered",
    "window_ended",
    "newer",
    "outdated",
    "unreadable",
    "refused",
    "over",
)


def thread_of(message: EmailMessage) -> dict[str, str]:
    """The threading headers an answer to ``message`` takes: ``in_reply_to`` (its Message-ID),
    ``references`` (its References and Message-ID), ``subject`` (``Re:`` once, whatever
    prefixes the client wrote; ``""`` when the reply had no subject: the mail writes its
    own)."""
    msgid = str(message.get("Message-ID", "")).strip()
    refs = " ".join(str(message.get("References", "")).split() + ([msgid] if msgid else []))
    subject = REPLY_PREFIX.sub("", " ".join(str(message.get("Subject", "")).split()))[:200]
    return {
        "in_reply_to": msgid,
        "references": refs[-900:],
        "subject": f"Re: {subject}" if subject else "",
    }


# What clients put before a subject they answer, once or many times: Re:, RE[2]:, AW:, SV:,
# 回复：, 回覆:, 答复： (a phone's mail app in Chinese writes its own).
REPLY_PREFIX = re.compile(
    r"^(\s*(re|aw|sv|antw|答复|答覆|回复|回覆|回應)\s*(\[\d+\]|\(\d+\))?\s*[:：])+\s*", re.I
)


def answer(
    game_id: str,
    seat: Seat,
    key: str,
    said: str,
    thread: dict[str, str],
    **details: Any,
) -> bool:
    """Write the answer ``said`` (one of ``ANSWERS``) to ``seat``'s reply with idempotency
    ``key``, commit and tell the worker. ``details``: ``line`` (what was read), ``messages``
    (the events done, as messages), ``refusal`` (``{"code", "message"}``), ``window``,
    ``shown`` and ``now`` (the terms the mail showed, and those open now, as messages:
    ``imtheboss.web.replies.terms``). Returns
    ``False`` when this reply was answered before (nothing is written)."""
    dedupe = f"{game_id}:-1:{KIND}:{seat.seat_index}:{key}"[:160]
    body = {
        "answer": said,
        "for_seat": seat.seat_index,
        "locale": players.seat_language(seat),
        **thread,
        **details,
    }
    db.session.add(
        Notification(
            game_id=game_id,
            seat_index=-1,
            to_email=seat.email,
            kind=KIND,
            body=body,
            text=f"Answer to a reply by mail: {said}",
            dedupe_key=dedupe,
            urgent=KINDS[KIND].urgent,
            seq=0,
            created_at=now_utc(),
        )
    )
    try:
        db.session.commit()
    except IntegrityError:  # the same reply, answered before (the dedupe key is unique)
        db.session.rollback()
        return False
    run_after_commit(game_id)
    return True


def seat_row(game_id: str, seat_index: int) -> Seat | None:
    """The seat ``seat_index`` of ``game_id``, or ``None``."""
    return db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index)
    ).scalar_one_or_none()


def asked_back(game_id: str, seat: Seat, window: str) -> bool:
    """Whether ``seat`` was asked back, by the answer to an earlier reply ``fail``, to confirm
    failing its deal of ``window`` (the deal's window id): a second ``fail`` is the yes."""
    rows = db.session.execute(
        select(Notification.body).where(
            Notification.game_id == game_id,
            Notification.kind == KIND,
            Notification.to_email == seat.email,
        )
    ).scalars()
    return any(
        body.get("answer") == "confirm_fail"
        and body.get("for_seat") == seat.seat_index
        and body.get("window") == window
        for body in rows
    )
