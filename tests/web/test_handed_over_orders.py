"""A13, A10: a seat's standing orders stay with the player who set them: after the organiser
passes the seat to a new player, the new player sees none of the old player's orders, nor the
marks of their orders acting, in the events API, the history page or the replay."""

from __future__ import annotations

import random

from imtheboss.web.games import organiser
from imtheboss.web.games.basics import hash_token
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.games.submit import submit
from imtheboss.web.models import db
from support.orders import random_orders_json

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]
NEW = "zoes-own-token-0123456789abcdef"


def handed_over(app) -> tuple[str, int]:
    """Bob sets orders, then his seat passes to Zoe; returns the game and the event number of
    Bob's orders."""
    with app.app_context():
        created = create_game("Hand-over", PLAYERS, {"proxy_hours": 48}, seed=5)
        gid = created.game_id
        orders = random_orders_json(random.Random(1))
        result = submit(gid, 1, {"do": "orders", "orders": orders}, "bob-orders")
        (orders_seq,) = [seq for seq, ev in result.events if ev.type == "orders_set"]
        assert organiser.replace_player(gid, 1, "Zoe", "zoe@example.org", "z")
        seats_of(gid)[1].token_hash = hash_token(NEW)  # Zoe's link, known to the test
        db.session.commit()
    return gid, orders_seq


def test_the_events_api_hides_the_old_players_orders(app):
    gid, orders_seq = handed_over(app)
    got = app.test_client().get(
        f"/api/games/{gid}/events", headers={"Authorization": f"Bearer {NEW}"}
    )
    assert got.status_code == 200
    (row,) = [e for e in got.get_json()["events"] if e["seq"] == orders_seq]
    assert row["type"] == "private" and "orders" not in row
    assert not any(e.get("order") for e in got.get_json()["events"])


def test_the_history_and_replay_hide_the_old_players_orders(app):
    gid, orders_seq = handed_over(app)
    zoe = app.test_client()
    assert zoe.get(f"/g/{gid}/s/{NEW}").status_code == 303
    zoe.get(f"/g/{gid}")  # the landing
    history = zoe.get(f"/g/{gid}/history").get_data(as_text=True)
    assert "Your standing orders" not in history
    replay = zoe.get(f"/g/{gid}/replay?at={orders_seq}").get_data(as_text=True)
    assert "Your standing orders" not in replay
    assert "only they can see" in replay
