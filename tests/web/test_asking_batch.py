"""A question batched with news (new terms, ``BATCHED_ANSWERS``) never waits behind the news:
its batch goes out ``ASK_DELAY`` after the last row of a burst and ``ASK_MAX_WAIT`` after
the question at most, while news alone waits ``BATCH_DELAY`` (here three minutes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from imtheboss.web.models import Notification
from imtheboss.worker.tasks import ASK_DELAY, ASK_MAX_WAIT, _still_coming

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {"BATCH_DELAY_SECONDS": "180"}


def _row(kind: str, seconds: float) -> Notification:
    return Notification(kind=kind, created_at=T0 + timedelta(seconds=seconds))


def test_news_alone_waits_the_batch_delay(app):
    with app.app_context():
        rows = [_row("deal_opened", 0), _row("agreement", 1)]
        assert _still_coming(rows, T0 + timedelta(seconds=30))
        assert not _still_coming(rows, T0 + timedelta(seconds=182))


def test_new_terms_go_out_soon_after_the_burst_even_with_news(app):
    with app.app_context():
        rows = [_row("deal_opened", 0), _row("offer", 1)]
        assert _still_coming(rows, T0 + timedelta(seconds=2))  # a burst may follow
        assert not _still_coming(rows, T0 + timedelta(seconds=1) + ASK_DELAY)


def test_a_steady_stream_of_news_does_not_hold_a_question(app):
    with app.app_context():
        rows = [_row("offer", 0)] + [_row("deal_opened", s) for s in range(1, 60)]
        assert not _still_coming(rows, T0 + ASK_MAX_WAIT)
        assert timedelta(seconds=30) >= ASK_MAX_WAIT + ASK_DELAY
