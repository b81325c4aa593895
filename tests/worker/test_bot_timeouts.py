"""Bot seats after a timeout (A13): when a person's window runs out and the worker's firing
hands the turn to a bot seat, the bot plays at once (``firing.bots_after_timeouts``), in the
batch path (``timeouts.submit_timeouts``, which does not go through ``submit.submit``) as in
hands the turn to a bot seat, the bot plays at once (``timeouts.bots_after_timeouts``), in the
batch path (``timeouts.submit_timeouts``, which does not go through ``service.submit``) as in
the service path. Real PostgreSQL, the firing code run in this process on a clock of the
test's own."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

from imtheboss.engine.board import default_board
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import replay
from imtheboss.web.games.create import create_game
from imtheboss.web.models import EventRecord, db
from sqlalchemy import select
from support.worker import SLOW, players


def _bot_events(game_id: str) -> list[str]:
    rows = db.session.execute(
        select(EventRecord.type, EventRecord.body)
        .where(EventRecord.game_id == game_id)
        .order_by(EventRecord.seq)
    ).all()
    db.session.rollback()
    return [t for t, body in rows if body.get("via") == "bot"]


def test_a_timeout_that_hands_a_bot_its_turn_lets_it_play(local_app, clock) -> None:
    from imtheboss.worker.firing import fire_round

    importlib.import_module("imtheboss.worker.celery_app")
    clock.now = datetime.now(UTC) + timedelta(days=2)
    app = local_app()
    names = players("bots-after-timeout")
    made = []
    for seed in range(2):  # one game per path: the batch, then one by one
        first = replay(
            new_game(
                [n for n, _e in names], Options.from_json(SLOW), default_board(), seed, clock.now
            )
        ).active
        others = [s for s in range(3) if s != first]  # the person starts; the bots follow
        with app.app_context():
            created = create_game(f"bots {seed}", names, SLOW, seed=seed, bots=others)
            made.append(created.game_id)
            assert _bot_events(created.game_id) == []  # nothing to do before the person
    clock.now += timedelta(hours=1, minutes=1)
    with app.app_context():
        outcome = fire_round(10)
        assert outcome["fired"] >= 2
        for game_id in made:
            played = _bot_events(game_id)
            assert played, "the bot did not play its turn after the timeout"
