"""Stored snapshots of another format or other engine code are ignored: the state is rebuilt from
the events, pages and API answer as usual, and the next write stores a current snapshot."""

from __future__ import annotations

import pytest
from imtheboss.engine.state import replay, snapshot_is_current
from imtheboss.web.games.create import CreatedGame, create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import db
from support.api_client import Api

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


def _time_out(gid: str, clock, key: str) -> None:
    clock.advance(days=2)
    submit(gid, None, {"do": "timeout"}, key)


@pytest.fixture
def game(app, clock) -> CreatedGame:
    """A game with a stored snapshot and events after it, still going."""
    with app.app_context():
        created = create_game("Snapshots", PLAYERS)
        gid = created.game_id
        n = 0
        while (
            get_game(gid).snapshot is None or get_game(gid).last_seq == get_game(gid).snapshot_seq
        ):
            _time_out(gid, clock, f"t{n}")
            n += 1
        assert load_state(get_game(gid)).phase != "game_over"
    return created


def _store(gid: str, snapshot: dict) -> None:
    row = get_game(gid)
    row.snapshot = snapshot
    db.session.commit()


def _everything_answers(app, game: CreatedGame) -> None:
    gid = game.game_id
    browser = app.test_client()
    assert browser.get(f"/g/{gid}/s/{game.seat_tokens[0]}").status_code == 303
    for path in (f"/g/{gid}", f"/g/{gid}/history", f"/g/{gid}/deals"):
        assert browser.get(path).status_code == 200, path
    assert Api(app.test_client(), gid).game(game.seat_tokens[1]).status_code == 200


def test_a_snapshot_from_before_a_field_existed_is_replayed_then_rewritten(app, clock, game):
    """A real game's snapshot as an older build stored it: no format, no fingerprint, and
    without a field (``away``) that build did not have."""
    gid = game.game_id
    with app.app_context():
        old = {k: v for k, v in get_game(gid).snapshot.items() if k not in ("format", "engine")}
        del old["away"]
        _store(gid, old)
        assert load_state(get_game(gid)) == replay(load_events(gid))
    _everything_answers(app, game)
    with app.app_context():
        assert get_game(gid).snapshot == old  # reading writes nothing
        _time_out(gid, clock, "after-deploy")
        row = get_game(gid)
        assert snapshot_is_current(row.snapshot)
        assert row.snapshot_seq == row.last_seq
        assert load_state(row) == replay(load_events(gid))


def test_a_snapshot_of_other_engine_code_is_ignored(app, game):
    """Same format, another fingerprint: even a readable snapshot is not trusted (here it says
    seat 0 has 999 M, which the events never gave it)."""
    gid = game.game_id
    with app.app_context():
        snapshot = dict(get_game(gid).snapshot)
        snapshot["engine"] = "0" * 64
        snapshot["money"] = [999, *snapshot["money"][1:]]
        _store(gid, snapshot)
        truth = replay(load_events(gid))
        assert load_state(get_game(gid)) == truth
    answer = Api(app.test_client(), gid).game(game.seat_tokens[0])
    assert answer.status_code == 200
    assert answer.get_json()["view"]["you"]["money"] == truth.money[0] != 999
    _everything_answers(app, game)
