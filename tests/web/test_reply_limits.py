"""Replies are limited per sender address (``RATELIMIT_MAIL_REPLIES``): past the limit a reply
is ignored, neither read nor answered, so a looping mailer cannot run up mail."""

from __future__ import annotations

import pytest
from imtheboss.web.replies.apply import apply_reply
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import raw_mail


@pytest.fixture
def app_config():
    return {**REPLY_CONFIG, "RATELIMIT_ENABLED": True, "RATELIMIT_MAIL_REPLIES": "2 per hour"}


def test_replies_past_the_limit_are_ignored(app) -> None:
    a = asked(app)
    outcomes = []
    with app.app_context():
        for n in range(3):
            raw = raw_mail(f"hello {n}", to=a.address, sender=a.email, message_id=f"<{n}@c>")
            outcomes.append(apply_reply(raw))
    assert [o.reason for o in outcomes] == ["unclear", "unclear", "rate_limited"]
    assert len(answers(app)) == 2
