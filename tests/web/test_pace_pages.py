"""The table's pace on the pages and in the mail, on PostgreSQL: the new-game form offers it
with the default chosen, the invitation and the game page say it in one sentence, and one tap
changes a seat's orders to another pace (its turn pre-move kept); a bad pace changes nothing."""

from __future__ import annotations

import re

from helpers_organiser import csrf_of
from imtheboss.engine.orders import BRISK, DEFAULT_PACE, RECOMMENDED, pace_orders
from imtheboss.web.models import EventRecord, Notification, Seat, db
from imtheboss.web.service import create_game, get_game, load_state, submit
from sqlalchemy import select

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]
PREMOVE = {"in_place": {"when": "never"}, "after_roll": {"when": "needs_mine"}}


def _state(app, gid: str):
    with app.app_context():
        return load_state(get_game(gid))


def _events(app) -> int:
    with app.app_context():
        return db.session.scalar(select(db.func.count()).select_from(EventRecord))


def test_the_new_game_form_offers_the_paces_with_the_default_chosen(app):
    page = app.test_client().get("/new").get_data(as_text=True)
    for pace in ("brisk", "standard", "relaxed"):
        assert f'value="{pace}"' in page
    checked = re.findall(r'<input checked[^>]*name="pace"[^>]*value="(\w+)"', page)
    assert checked == [DEFAULT_PACE]


def test_the_invitation_and_the_game_page_say_the_pace_and_one_tap_changes_it(app):
    with app.app_context():
        created = create_game("Pace", PLAYERS, seed=5, starting_orders=DEFAULT_PACE)
        gid, tokens = created.game_id, created.seat_tokens
        row = db.session.scalars(
            select(Notification).where(
                Notification.game_id == gid,
                Notification.kind == "invited",
                Notification.seat_index == 1,
            )
        ).one()
        seat = db.session.scalars(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 1)
        ).one()
        from imtheboss.worker.mail import compose

        mail = compose(get_game(gid), seat, [row]).get_body(("plain",)).get_content()
    assert _state(app, gid).orders == [pace_orders(DEFAULT_PACE)] * 3 == [BRISK] * 3
    assert "Your standing orders follow the brisk pace:" in mail
    assert "You can change it in one tap on the game page." in mail
    bill = app.test_client()
    assert bill.get(f"/g/{gid}/s/{tokens[1]}").status_code == 303
    page = bill.get(f"/g/{gid}").get_data(as_text=True)
    assert "Your standing orders follow the brisk pace:" in page
    assert "the fair price" in page  # the summary of the brisk orders
    before = _events(app)
    bad = bill.post(f"/g/{gid}/pace", data={"pace": "turbo", "csrf_token": csrf_of(page)})
    assert bad.status_code == 400 and _events(app) == before
    orders = {**BRISK.to_json(), "turn": PREMOVE}
    form = bill.get(f"/g/{gid}/orders").get_data(as_text=True)
    assert "the fair price" in form
    with app.app_context():  # Bill also pre-moves his turn
        submit(gid, 1, {"do": "orders", "orders": orders}, "orders:premove")
    tapped = bill.post(f"/g/{gid}/pace", data={"pace": "standard", "csrf_token": csrf_of(page)})
    assert tapped.status_code == 303
    after = _state(app, gid).orders[1].to_json()
    assert after == {**RECOMMENDED.to_json(), "turn": PREMOVE}
    assert "Your standing orders follow the standard pace:" in bill.get(f"/g/{gid}").get_data(
        as_text=True
    )
    assert _state(app, gid).orders[0] == BRISK  # the others keep theirs
