"""The same reply (one Message-ID) delivered twice at the same moment (two receivers, or SMTP and
IMAP at once), in two threads against PostgreSQL: it acts once and is answered once, and the
answer says what was done. The claim of the reply (``reply_claims``' unique constraint) decides
which delivery acts, not a read before the write."""

from __future__ import annotations

import threading

import pytest
from imtheboss.web.models import CommandRecord, db
from imtheboss.web.replies.apply import apply_reply
from sqlalchemy import func, select
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


def _at_once(app, raw: bytes, copies: int = 2) -> list[str]:
    """``raw`` applied by ``copies`` threads released together; their outcomes' statuses."""
    start = threading.Barrier(copies)
    out: list[str] = []

    def deliver() -> None:
        with app.app_context():
            start.wait()
            out.append(apply_reply(raw).status)
            db.session.remove()

    threads = [threading.Thread(target=deliver) for _ in range(copies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return sorted(out)


@pytest.mark.parametrize("round_", range(6))
def test_one_mail_delivered_twice_at_once_acts_once_and_says_it_was_done(app, round_) -> None:
    a = asked(app)
    raw = raw_mail(
        "place 3\n\n" + quoted(),
        to=a.address,
        sender=a.email,
        message_id=f"<at-once-{round_}@client>",
    )
    assert _at_once(app, raw) == ["done", "duplicate"]
    with app.app_context():
        count = db.session.execute(select(func.count()).select_from(CommandRecord)).scalar_one()
    [row] = answers(app)
    assert count == 1 and row.body["answer"] == "done"


@pytest.mark.parametrize("round_", range(3))
def test_an_unclear_mail_delivered_at_once_is_answered_once(app, round_) -> None:
    a = asked(app)
    raw = raw_mail("maybe later", to=a.address, sender=a.email, message_id=f"<u-{round_}@c>")
    assert _at_once(app, raw) == ["answered", "duplicate"]
    assert len(answers(app)) == 1
