"""A seat is told when the server played for it or marked it away
(``imtheboss.web.games.server_moves``):
an outbox row (mailed as news) for each server act in its name, one when two missed deadlines
in a row mark it away, none for its own acts; and the game page lists the server's acts until
the seat moves again."""

from __future__ import annotations

from datetime import timedelta

from imtheboss.engine.simulate import START, simulate
from imtheboss.engine.state import apply_in_place, replay
from imtheboss.engine.views import legal_commands
from imtheboss.web.games import server_moves
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.mail import notify
from imtheboss.web.models import Notification, db
from sqlalchemy import select

IDLE = 2


def _rows_of_game() -> tuple[list, list]:
    """The simulated game with seat ``IDLE`` never acting (the server plays its turns and
    answers for it), and the outbox rows each of its events makes, one event at a time."""
    game = simulate(4, 5, idle_seats=frozenset({IDLE}))
    rows = []
    before = replay(game.events[:1])
    for seq, event in enumerate(game.events[1:], 2):
        after = before.clone()
        apply_in_place(after, event)
        rows += notify.notifications_for("g", before, [event], after, seq, START)
        before = after
    return game.events, rows


def test_rows_for_the_servers_acts_and_for_being_marked_away() -> None:
    events, rows = _rows_of_game()
    played = [r for r in rows if r["kind"] == "played_for"]
    assert played and {r["seat_index"] for r in played} == {IDLE}
    ids = {r["body"]["message"]["id"] for r in played}
    assert {"rolled_for", "drew_for", "timed_out_last_call"} <= ids
    for r in played:  # each names an act of the server, none of the seat itself
        event = events[r["seq"] - 1]
        assert event.by is None and IDLE in server_moves.served_seats(event)
    away = [r for r in rows if r["kind"] == "marked_away"]
    assert [r["seat_index"] for r in away] == [IDLE]  # once: it stays away, never comes back
    timeouts = [e for e in events[: away[0]["seq"]] if e.type == "timed_out"]
    assert sum(IDLE in e.data["missed"] for e in timeouts) == 2  # A6: the second miss
    assert all(not r["urgent"] for r in played + away)  # news: one mail for a burst


def test_the_servers_acts_since_the_seats_last_move() -> None:
    events, _rows = _rows_of_game()
    records = [(i, START, e) for i, e in enumerate(events, 1)]
    found = server_moves.since_own_move(records, IDLE)
    assert found and all(IDLE in server_moves.served_seats(e) for _s, _a, e in found)
    assert server_moves.since_own_move(records, 0) == [] or all(
        e.by is None for _s, _a, e in server_moves.since_own_move(records, 0)
    )
    own = max(i for i, e in enumerate(events, 1) if e.by == 0 and not e.data.get("order"))
    assert all(seq > own for seq, _a, _e in server_moves.since_own_move(records, 0))


def test_the_game_page_tells_the_seat_until_it_moves(app, game, clock) -> None:
    created, setup, clients = game
    gid = created.game_id
    assert 'id="served"' not in clients[setup.boss].get(f"/g/{gid}").text
    now = clock.advance(days=3)  # past the turn window: the server places the marker (A5)
    with app.app_context():
        submit(gid, None, {"do": "timeout"}, "timeout:w0", now)
        state = load_state(get_game(gid))
        rows = db.session.execute(
            select(Notification).where(Notification.kind == "played_for")
        ).scalars()
        assert {r.seat_index for r in rows} == {setup.boss}  # marker, roll, draw (A5)
    page = clients[setup.boss].get(f"/g/{gid}").text
    assert 'id="served"' in page
    box = page[page.index('id="served"') :]
    box = box[: box.index("</section>")]
    assert "the server placed the marker on space" in box and "The server rolled for" in box
    for other in range(3):
        if other != setup.boss:
            assert 'id="served"' not in clients[other].get(f"/g/{gid}").text
    assert "chat" in {c["do"] for c in legal_commands(state, setup.boss)}
    with app.app_context():  # any own move ends the list
        submit(gid, setup.boss, {"do": "chat", "text": "back"}, "mine", now + timedelta(minutes=1))
    assert 'id="served"' not in clients[setup.boss].get(f"/g/{gid}").text
