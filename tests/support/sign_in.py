"""What the tests of signing in by email and of ``/me`` share: asking for a link through the
form, the link the mail would hold, and signing a test client in with it."""

from __future__ import annotations

from typing import Any

from imtheboss.web.models import Seat, db
from imtheboss.web.players.people import SignInLink
from imtheboss.web.players.signin import sign_in_link
from sqlalchemy import select, update

from support.organiser import csrf_of


def ask_link(client: Any, email: str) -> Any:
    """Post the sign-in form for ``email`` (with the page's CSRF token); the answer."""
    page = client.get("/sign-in")
    assert page.status_code == 200
    return client.post("/sign-in", data={"csrf_token": csrf_of(page.text), "email": email})


def newest_link(app: Any, email: str) -> str:
    """The link the newest sign-in mail for ``email`` would hold (relative to the server)."""
    with app.app_context():
        row = db.session.execute(
            select(SignInLink)
            .where(SignInLink.email == email)
            .order_by(SignInLink.created_at.desc())
            .limit(1)
        ).scalar_one()
        return sign_in_link(row).removeprefix(app.config["BASE_URL"])


def press(client: Any, link: str) -> Any:
    """Open ``link`` (the GET a browser makes), follow it to the page with the button, and press
    it (the POST). Returns the POST's answer."""
    opened = client.get(link)
    assert opened.status_code == 303, opened.text[:500]
    page = client.get(opened.headers["Location"])
    assert page.status_code == 200, page.text[:500]
    return client.post("/sign-in/confirm", data={"csrf_token": csrf_of(page.text)})


def signed_in_client(app: Any, email: str) -> Any:
    """A test client signed in as ``email`` through the form and its link."""
    client = app.test_client()
    assert ask_link(client, email).status_code == 200
    answer = press(client, newest_link(app, email))
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/me")
    return client


def give_seat(app: Any, gid: str, seat: int, email: str) -> None:
    """Seat ``seat`` of ``gid`` belongs to ``email`` from now on (the test's arrangement)."""
    with app.app_context():
        db.session.execute(
            update(Seat).where(Seat.game_id == gid, Seat.seat_index == seat).values(email=email)
        )
        db.session.commit()
