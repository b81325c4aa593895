"""The limits of signing in by email: links asked for per client address and per address
asked for, whatever the address (so a refusal says nothing of its games); a refusal writes
nothing."""

from __future__ import annotations

from typing import Any

import pytest
from helpers_app import client_at
from helpers_home import ask_link
from imtheboss.web.models import db
from imtheboss.web.players import SignInLink
from imtheboss.web.service import create_game
from sqlalchemy import func, select


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": "memory://",
        "RATELIMIT_SIGN_IN": "4 per hour",
        "RATELIMIT_SIGN_IN_ADDRESS": "2 per hour",
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
    assert ask_link(other, "amy@example.org").status_code == 429  # the address's own limit
    assert _links(app) == 5


def test_the_address_limit_counts_the_player_whatever_the_case(app):
    first, second = client_at(app, "192.0.2.1"), client_at(app, "192.0.2.2")
    assert ask_link(first, "eve@example.org").status_code == 200
    assert ask_link(first, "eve@example.org").status_code == 200
    for spelling in ("EVE@example.org", "Eve@Example.org"):
        assert ask_link(second, spelling).status_code == 429, spelling
    assert _links(app) == 2
