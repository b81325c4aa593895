"""A player's defaults page keeps what only programmers need, the API token, folded away (a
``<details>``, no JavaScript), open only on the answer that shows a new token."""

from __future__ import annotations

import re

from support.organiser import csrf_of
from support.sign_in import signed_in_client


def _token_box(page: str) -> str:
    found = re.search(r"<details class=\"api-token\"[^>]*>.*?</details>", page, re.S)
    assert found, "no folded API token box"
    return found.group(0)


def test_the_api_token_is_folded_away_unless_just_made(app) -> None:
    client = signed_in_client(app, "amy@example.org")
    page = client.get("/me/settings").text
    box = _token_box(page)
    assert box.startswith('<details class="api-token">') and "GET /api/me" in box
    assert "GET /api/me" not in page.replace(box, "")
    made = client.post("/me/token", data={"csrf_token": csrf_of(page)})
    assert made.status_code == 200
    box = _token_box(made.text)
    assert box.startswith('<details class="api-token" open>') and 'class="token"' in box
