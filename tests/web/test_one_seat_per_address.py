"""One address, one seat per game, whatever the case of the address: creation (the service,
so the form and the API), the organiser's admin form and passing a seat to a new player refuse
a second seat for an address (400, nothing changed); ``/me`` would otherwise open both hands."""

from __future__ import annotations

import pytest
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.models import Game, Seat, db
from sqlalchemy import func, select
from support.organiser import csrf_of

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]


def _emails(app, gid: str) -> list[str]:
    with app.app_context():
        seats = db.session.execute(
            select(Seat.email).where(Seat.game_id == gid).order_by(Seat.seat_index)
        )
        return list(seats.scalars())


@pytest.mark.parametrize("second", ["amy@example.org", "AMY@example.org", "Amy@Example.org"])
def test_creation_refuses_one_address_twice_in_any_case(app, second) -> None:
    with app.app_context():
        with pytest.raises(ServiceError) as refused:
            create_game("Twice", [PLAYERS[0], ("Dan", second), PLAYERS[2]])
        assert refused.value.status == 400
        assert "already plays another seat" in refused.value.message
        assert db.session.execute(select(func.count()).select_from(Game)).scalar_one() == 0


def test_the_api_refuses_one_address_twice(app) -> None:
    body = {
        "title": "Twice",
        "creator_email": "org@example.org",
        "players": [
            {"name": "Amy", "email": "a@example.org"},
            {"name": "Al", "email": "A@example.org"},
            {"name": "Cy", "email": "cy@example.org"},
        ],
    }
    answer = app.test_client().post("/api/games", json=body)
    assert answer.status_code == 400, answer.text
    assert "already plays another seat" in answer.get_json()["error"]["message"]
    with app.app_context():
        assert db.session.execute(select(func.count()).select_from(Game)).scalar_one() == 0


@pytest.mark.parametrize("moved_to", ["bill@example.org", "BILL@example.org"])
def test_the_admin_form_refuses_another_seats_address(app, moved_to) -> None:
    with app.app_context():
        created = create_game("Moved", PLAYERS)
    gid = created.game_id
    organiser = app.test_client()
    assert organiser.get(f"/g/{gid}/admin/{created.admin_token}").status_code == 303
    token = csrf_of(organiser.get(f"/g/{gid}/admin").text)
    answer = organiser.post(
        f"/g/{gid}/admin/seat/0/email", data={"csrf_token": token, "email": moved_to}
    )
    assert answer.status_code == 400
    assert "That address already plays another seat here." in answer.text
    assert _emails(app, gid) == [email for _name, email in PLAYERS]
    # the seat's own address in another case, or a new one, is still taken
    answer = organiser.post(
        f"/g/{gid}/admin/seat/0/email", data={"csrf_token": token, "email": "dan@example.org"}
    )
    assert answer.status_code == 303
    assert _emails(app, gid)[0] == "dan@example.org"


@pytest.mark.parametrize("taken", ["bill@example.org", "BILL@Example.org"])
def test_passing_a_seat_to_another_seats_address_is_refused(app, taken) -> None:
    """The organiser's replace (A13, here by the API) is a path too: a new player at another
    seat's address, in any case, is refused and nothing changes."""
    with app.app_context():
        created = create_game("Passed", PLAYERS)
    gid = created.game_id
    body = {"seat": 0, "name": "Dan", "email": taken, "idempotency_key": "r1"}
    answer = app.test_client().post(
        f"/api/games/{gid}/organiser/replace",
        json=body,
        headers={"Authorization": f"Bearer {created.admin_token}"},
    )
    assert answer.status_code == 400, answer.text
    assert "already plays another seat" in answer.get_json()["error"]["message"]
    assert _emails(app, gid) == [email for _name, email in PLAYERS]
