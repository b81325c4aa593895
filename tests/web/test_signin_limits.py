"""The limits of signing in by email: links asked for per client address and per address
asked for, whatever the address (so a refusal says nothing of its games); a refusal writes
nothing."""

from __future__ import annotations

from typing import Any

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.models import db
from imtheboss.web.players.people import SignInLink
from sqlalchemy import func, select
from support.app import client_at
from support.sign_in import ask_link, newest_link, press


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": "memory://",
        "RATELIMIT_SIGN_IN": "4 per hour",
        "RATELIMIT_SIGN_IN_ADDRESS": "2 per hour",
        "RATELIMIT_SIGN_IN_MAILBOX": "6 per hour",
    }


def _links(app) -> int:
    with app.app_context():
        return db.session.execute(select(func.count()).select_from(SignInLink)).scalar_one()


def test_links_per_address_and_per_client(app):
    with app.app_context():
        create_game("A game", [("Amy", "amy@example.org"), ("Bill", "bill@example.org")])
    one = client_at(app, "192.0.2.1")
    for address in ("amy@example.org", "nobody@example.org"):
        assert ask_link(one, address).status_code == 200
        assert ask_link(one, address).status_code == 200
        third = ask_link(one, address)
        assert third.status_code == 429 and int(third.headers["Retry-After"]) >= 1
        assert "Too many sign-in links were asked for" in third.text
    assert _links(app) == 4
    # the client's own limit: 4 links in the hour, used up above
    assert ask_link(one, "cy@example.org").status_code == 429
    other = client_at(app, "192.0.2.2")
    assert ask_link(other, "cy@example.org").status_code == 200
    assert ask_link(other, "amy@example.org").status_code == 200  # one's asks are not the other's
    assert _links(app) == 6


def test_the_address_limit_counts_the_player_whatever_the_case(app):
    first = client_at(app, "192.0.2.1")
    assert ask_link(first, "eve@example.org").status_code == 200
    assert ask_link(first, "eve@example.org").status_code == 200
    for spelling in ("EVE@example.org", "Eve@Example.org"):
        assert ask_link(first, spelling).status_code == 429, spelling
    assert _links(app) == 2


def test_strangers_asks_never_refuse_the_owner(app):
    """Strangers on six other client addresses ask for Amy's links until every limit they can
    reach refuses them; Amy, asking from her own client address, is still mailed a link, and so
    is her browser that signed in with a link before from any client address (the mailbox's
    limit from all clients together does not count a browser that proved it reads the mail); a
    browser never signed in is not refused either: past the mailbox's limit it is told to use
    the newest mail."""
    with app.app_context():
        create_game("A game", [("Amy", "amy@example.org"), ("Bill", "bill@example.org")])
    owner = client_at(app, "198.51.100.7")
    assert ask_link(owner, "amy@example.org").status_code == 200
    assert press(owner, newest_link(app, "amy@example.org")).status_code == 303
    refused = 0
    for n in range(6):
        stranger = client_at(app, f"203.0.113.{n + 1}")
        answers = [
            ask_link(stranger, spelling).status_code
            for spelling in ("amy@example.org", "AMY@example.org", "Amy@example.org")
        ]
        refused += answers.count(429)
    assert refused > 0  # the strangers met the limits
    assert ask_link(owner, "amy@example.org").status_code == 200
    owner.environ_base["REMOTE_ADDR"] = "198.51.100.99"  # the owner's phone, elsewhere
    assert ask_link(owner, "amy@example.org").status_code == 200
    fresh = client_at(app, "198.51.100.7")  # a new browser on the owner's own client address
    assert ask_link(fresh, "amy@example.org").status_code == 429  # its own two asks, spent
    elsewhere = client_at(app, "198.51.100.8")  # a new browser, never signed in, elsewhere
    held = ask_link(elsewhere, "amy@example.org")  # past the mailbox's limit, yet not refused
    assert held.status_code == 200 and "open the newest sign-in mail" in held.text
