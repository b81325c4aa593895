"""A seat link (``/g/<gid>/s/<token>``, the mail's ``/g/<gid>/m/<signed>``) opened by a browser
that is already someone else here (another seat of the game, or signed in as another player)
asks first, "You are signed in as X; open as Y?", and its GET changes nothing; the button's
POST (CSRF) switches. The first open, and the same seat again, stay one tap."""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from imtheboss.web.models import Seat, db
from imtheboss.web.players.links import seat_link
from sqlalchemy import select
from support.organiser import csrf_of
from support.sign_in import signed_in_client

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]


def _held(client, gid: str) -> int | None:
    with client.session_transaction() as session:
        entry = session.get("seats", {}).get(gid)
        return entry[0] if entry else None


def test_a_seat_link_asks_before_switching_the_browsers_seat(app, client) -> None:
    with app.app_context():
        created = create_game("Switch", PLAYERS)
        gid = created.game_id
        bill = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 1)
        ).scalar_one()
        mailed = seat_link(gid, bill).removeprefix(app.config["BASE_URL"])
    amy_link, bill_link = (f"/g/{gid}/s/{token}" for token in created.seat_tokens[:2])
    assert client.get(amy_link).status_code == 303  # the first open: one tap
    assert _held(client, gid) == 0
    assert client.get(amy_link).status_code == 303  # the same seat again
    for link in (bill_link, mailed):
        page = client.get(link)
        assert page.status_code == 200
        assert "You are signed in as Amy here. This link is for Bill." in page.text
        assert _held(client, gid) == 0  # a GET changes nothing
    assert client.post(bill_link).status_code == 400  # no CSRF token: refused
    assert _held(client, gid) == 0
    switched = client.post(bill_link, data={"csrf_token": csrf_of(page.text)})
    assert switched.status_code == 303 and switched.headers["Location"].endswith(f"/g/{gid}")
    assert _held(client, gid) == 1


def test_a_seat_link_of_another_player_asks_a_signed_in_browser(app) -> None:
    with app.app_context():
        created = create_game("Other", PLAYERS)
    gid = created.game_id
    browser = signed_in_client(app, "amy@example.org")
    page = browser.get(f"/g/{gid}/s/{created.seat_tokens[2]}")
    assert page.status_code == 200
    assert "You are signed in as amy@example.org here. This link is for Cy." in page.text
    assert _held(browser, gid) is None
    own = browser.get(f"/g/{gid}/s/{created.seat_tokens[0]}")  # Amy's own seat: one tap
    assert own.status_code == 303 and _held(browser, gid) == 0
