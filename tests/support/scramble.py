"""What the hidden-information tests of the pages share (tests/web/test_hidden_pages.py,
tests/web/test_hidden_replay.py): rewriting a game's stored log and snapshot, and pages without
what differs on every render."""

from __future__ import annotations

import re
from typing import Any

from imtheboss.web.games.load import get_game
from imtheboss.web.models import EventRecord, db
from sqlalchemy import select

_KEY = re.compile(r"\b(text-)?[0-9a-f]{32}\b")  # idempotency keys made at render time
_CSRF = re.compile(r'<input[^>]*name="csrf_token"[^>]*>')
# What a look at the inbox changes (it marks the rows shown read): the count of unread rows on
# every page, and on the inbox the marks of the rows new at the first look.
_UNREAD = re.compile(
    r' <span class="badge">\d+</span>| unread(?=[ "])|<span class="tag">new</span>'
    r'|<p class="meta">\d+ new since you last looked[^<]*</p>'
)


def normalized(text: str) -> str:
    """A page without what differs on every render (form keys, CSRF tokens) or after a look
    at the inbox (the unread marks)."""
    return _UNREAD.sub("", _CSRF.sub("<CSRF>", _KEY.sub("KEY", text)))


def store_log(app: Any, gid: str, state_json: dict, bodies: dict[int, dict]) -> None:
    """Game ``gid``'s snapshot set to ``state_json`` at its last event, and the bodies of the
    event rows ``{row id: body}`` replaced."""
    with app.app_context():
        game = get_game(gid)
        game.snapshot, game.snapshot_seq = state_json, game.last_seq
        for row in db.session.execute(
            select(EventRecord).where(EventRecord.id.in_(list(bodies)))
        ).scalars():
            row.body = bodies[row.id]
        db.session.commit()
