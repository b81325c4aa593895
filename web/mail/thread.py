"""Which thread a mail to a seat belongs to, so that a player's mail app keeps it with the
others: one per negotiation (the ``negotiations`` table's number: its mails share a subject,
``[I'm the Boss!] Friday: Negotiation #3 on space 5``, and an anchor), one per game for the
rest (turns, invitations, the end). The anchors are ``Message-ID``-shaped names no mail
carries (``<code.deal-3@MAIL_DOMAIN>``, ``<code.game@MAIL_DOMAIN>``), put in ``References`` and
``In-Reply-To``: Thunderbird threads by them, Gmail by them and the subject, Outlook by the
subject. Only public facts are named (a negotiation's number and space, A8).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage

from babel.dates import format_datetime
from flask import current_app
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.web.games.names import DEFAULT_TITLE
from imtheboss.web.mail.kinds import is_game_matter
from imtheboss.web.models import Game, NegotiationRecord, Notification, db
from imtheboss.web.say.display import page_time, space_number, utc_offset, zone
from sqlalchemy import or_, select

# Kinds that are never a negotiation's matter, even when written with the event that ended one.
TITLE_CHARS = 24  # of a game's title in a subject: the rest says what and by when
WEEK = timedelta(days=6)  # a deadline closer than this is told by its weekday in a subject


@dataclass(frozen=True)
class Thread:
    """``number``: the negotiation's (1, 2, ...), ``0`` for the game's own thread; ``space``:
    the negotiation's space index (0-15), ``-1`` for the game's."""

    number: int = 0
    space: int = -1


def thread_of(game_id: str, rows: list[Notification]) -> Thread:
    """The thread of a mail about ``rows``: the negotiation that spans its newest row's event
    (``seq``), unless that row's kind is a game matter (``kinds.is_game_matter``), else the
    game's."""
    newest = max(rows, key=lambda row: row.seq)
    if is_game_matter(newest.kind):
        return Thread()
    found = db.session.execute(
        select(NegotiationRecord.number, NegotiationRecord.space).where(
            NegotiationRecord.game_id == game_id,
            NegotiationRecord.first_seq <= newest.seq,
            or_(NegotiationRecord.end_seq.is_(None), NegotiationRecord.end_seq >= newest.seq),
        )
    ).first()
    return Thread(found.number, found.space) if found else Thread()


def short_title(title: str) -> str:
    """``title`` cut to ``TITLE_CHARS`` (with ``…``) for a subject."""
    title = " ".join(title.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


def subject(game: Game, thread: Thread, what: str, until: str | None) -> str:
    """The subject, in the current language: a negotiation's stays the same for all its mails
    (what happened is the body's first line); the game's says what is asked and by when
    (``until``: ``subject_time``)."""
    title = short_title(game.title)
    if thread.number:
        what = _(
            "Negotiation #%(n)d on space %(space)d",
            n=thread.number,
            space=space_number(thread.space),
        )
        until = None
    if game.title == DEFAULT_TITLE:  # the game's name is the brand already
        text = _("[I'm the Boss!] %(what)s", what=what)
    else:
        text = _("[I'm the Boss!] %(title)s: %(what)s", title=title, what=what)
    return text + " " + _("(by %(time)s)", time=until) if until else text


def subject_time(due: datetime, tz: str, now: datetime) -> str:
    """A deadline (aware) for a subject, in zone ``tz`` and the current language: its weekday,
    time and offset when it is less than ``WEEK`` after ``now`` (``Tue 14:00 UTC+1``, ``周二
    14:00 UTC+8``), else as the pages write it (``display.page_time``): the body has it in
    full either way."""
    if due - now >= WEEK:
        return page_time(due, tz)
    short = format_datetime(due, "EEE HH:mm", tzinfo=zone(tz), locale=get_locale())
    return f"{short} {utc_offset(due, tz)}"


def anchor(game: Game, thread: Thread) -> str:
    """The thread's anchor: ``<code.deal-N@MAIL_DOMAIN>`` or ``<code.game@MAIL_DOMAIN>``."""
    name = f"deal-{thread.number}" if thread.number else "game"
    return f"<{game.id.lower()}.{name}@{current_app.config['MAIL_DOMAIN']}>"


def thread_headers(msg: EmailMessage, game: Game, thread: Thread) -> None:
    """``In-Reply-To``: the thread's anchor; ``References``: the game's anchor, then the
    negotiation's (a negotiation is a branch of the game's thread)."""
    game_anchor = anchor(game, Thread())
    own = anchor(game, thread)
    msg["In-Reply-To"] = own
    msg["References"] = game_anchor if own == game_anchor else f"{game_anchor} {own}"


def list_id(game: Game) -> str:
    """The ``List-Id`` (RFC 2919) of a game's mail to its seats: the title as its phrase, the
    game's code under ``MAIL_DOMAIN`` as its id (``"Friday" <abc123.imtheboss.local>``)."""
    ident = f"<{game.id.lower()}.{current_app.config['MAIL_DOMAIN']}>"
    title = " ".join(game.title.replace('"', "'").replace("\\", "/").split())
    return f'"{title}" {ident}' if title.isascii() else ident
