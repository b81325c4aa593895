"""The organiser's more time (A13) and the deadlines workers: the extended deadline is claimed
and fired at its new time, never at the old one, also when a firing thread had claimed it
before it moved (its timeout is then refused as not due, and the row waits for the new time).
"""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import pytest
from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.organiser import extend
from imtheboss.web.models import Deadline, db
from sqlalchemy import select
from support.worker import players, timed_out_windows

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


@pytest.fixture
def ahead(local_app, clock, worker):
    """``(app, clock)``: an app on the workers' database whose clock starts an hour and a
    minute ahead, past the first deadline of a ``SLOW`` game."""
    importlib.import_module("imtheboss.worker.celery_app")
    application = local_app()
    clock.now = datetime.now(UTC) + timedelta(hours=1, minutes=1)
    return application, clock


def test_an_extended_deadline_fires_at_its_new_time(quiet_app, ahead):
    from imtheboss.worker.firing import claim_due
    from imtheboss.worker.tasks import fire

    app, clock = ahead
    with quiet_app.app_context():
        early, claimed = (
            create_game(f"more time {i}", players(f"more{i}"), SLOW, seed=i).game_id
            for i in range(2)
        )
    with app.app_context():
        (due,) = db.session.execute(select(Deadline.due_at).where(Deadline.game_id == early)).one()
        db.session.rollback()
        extend(early, "a", 120, "a long weekend", window="w0")
        assert claim_due(now_utc(), 10) == [(claimed, "w0")]  # the other game only
        active = load_state(get_game(claimed)).active
        extend(claimed, "b", 120, "a long weekend", seat=active)  # moved after its claim
        assert fire(claimed, "w0") == ("not_due", False)
        assert timed_out_windows(early) == timed_out_windows(claimed) == []
        row = db.session.execute(select(Deadline).where(Deadline.game_id == early)).scalar_one()
        assert (row.due_at, row.state, row.scheduled_at) == (due + timedelta(hours=2), "open", None)
        db.session.rollback()
        clock.advance(hours=2)
        got = sorted(claim_due(now_utc(), 10))
        assert got == sorted([(early, "w0"), (claimed, "w0")])
        for game_id, window_id in got:
            assert fire(game_id, window_id)[0] == "fired"
        assert timed_out_windows(early) == timed_out_windows(claimed) == ["w0"]
