"""The restore steps of docs/operations.md, run for real on the schema: after a restore, mail
and posts that were waiting at the dump would be sent again by the sweep (what went out after the
dump included); the documented SQL, run before any process starts, marks them skipped, and mail
written once the processes run again goes out.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from imtheboss.web.games.create import create_game
from imtheboss.web.models import Notification, db
from imtheboss.web.outbound.outbox import OutboundPost
from imtheboss.worker.tasks import requeue_statement
from sqlalchemy import select, text
from support.deal import PLAYERS

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def _restore_sql() -> list[str]:
    """The statements of the SQL block in the backup and restore section."""
    section = OPERATIONS.read_text(encoding="utf-8").partition("## Backup and restore")[2]
    block = re.search(r"```sql\n(.*?)```", section, re.S)
    assert block, "docs/operations.md has no SQL block in its backup and restore section"
    return [s.strip() for s in block.group(1).split(";") if s.strip()]


def _notification(gid: str, key: str, at) -> Notification:
    return Notification(
        game_id=gid, seat_index=0, kind="news", body={}, text="news", dedupe_key=key, created_at=at
    )


def test_the_documented_sql_keeps_a_restore_from_sending_again(app, clock) -> None:
    with app.app_context():
        gid = create_game("Restored", PLAYERS).game_id
        dumped_at = clock.advance(minutes=1)
        before = _notification(gid, "before-dump", dumped_at)  # in the dump's own second too
        at = before.created_at
        post = OutboundPost(game_id=gid, kind="event", body={}, dedupe_key="post", created_at=at)
        db.session.add_all([before, post])
        db.session.commit()
        later = clock.advance(days=2)
        due = set(db.session.execute(requeue_statement(later)).scalars())
        assert before.id in due, "a restored pending row would be sent (again)"

        for statement in _restore_sql():
            db.session.execute(text(statement))
        db.session.commit()
        after = _notification(gid, "after-restore", later)  # the processes run again
        db.session.add(after)
        db.session.commit()
        db.session.expire_all()
        due = set(db.session.execute(requeue_statement(later + timedelta(days=1))).scalars())
        assert before.id not in due and after.id in due
        assert db.session.get(Notification, before.id).email_state == "skipped"
        states = db.session.execute(select(OutboundPost.state)).scalars().all()
        assert states == ["skipped"]
