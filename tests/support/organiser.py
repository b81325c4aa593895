"""Helpers for games made through the pages or the API: the organiser confirms their address by
the link in their mail before any invitation goes out. Works with Flask's test client and with
``requests.Session`` alike (both have ``get``/``post`` answering ``status_code`` and ``text``)."""

from __future__ import annotations

import re
from typing import Any

CONFIRM = re.compile(r"https?://[^\s\"'<>]+/g/([\w-]+)/confirm/[\w.-]+")
ADMIN = re.compile(r"https?://[^\s\"'<>]+/g/([\w-]+)/admin/[\w-]+")


def csrf_of(html: str) -> str:
    """The CSRF token of the (first) form on a page."""
    found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html)
    assert found, "the page has no CSRF token"
    return found.group(1)


def confirm_link(text: str, game_id: str | None = None) -> str:
    """The confirm link in a mail's text (of ``game_id`` when given)."""
    links = [m for m in CONFIRM.finditer(text) if game_id is None or m.group(1) == game_id]
    assert len({m.group(0) for m in links}) == 1, f"not one confirm link in:\n{text}"
    return links[0].group(0)


def confirm(browser: Any, link: str) -> Any:
    """Open the confirm link (a page with a button: a ``GET`` confirms nothing), then press the
    button (a ``POST`` with the page's CSRF token). Returns the answer to the ``POST``."""
    page = browser.get(link)
    assert page.status_code == 200, page.text[:2000]
    assert "<form" in page.text and 'method="post"' in page.text
    answer = browser.post(link, data={"csrf_token": csrf_of(page.text)})
    assert answer.status_code == 200, answer.text[:2000]
    return answer


def mail_text(msg: Any) -> str:
    """The plain-text and HTML parts of an email, decoded, one after the other."""
    return msg.get_body(("plain",)).get_content() + msg.get_body(("html",)).get_content()


def new_game_form(browser: Any, players: list[tuple[str, str]], **fields: str) -> dict[str, str]:
    """What the ``/new`` form posts for ``players`` (``[(name, email)]``): the page's CSRF
    token, windows of a day or so, the default board; ``fields`` on top (``creator_email``,
    ``turn_hours``...)."""
    page = browser.get("/new")
    assert page.status_code == 200
    data = {
        "csrf_token": csrf_of(page.text),
        "turn_hours": "24",
        "stop_hours": "6",
        "last_call_hours": "12",
        "negotiation_hours": "48",
        "board_choice": "default",
    }
    for i, (name, email) in enumerate(players):
        data[f"players-{i}-name"] = name
        data[f"players-{i}-email"] = email
    return {**data, **fields}


def open_deadlines(app: Any, gid: str) -> dict[str, Any]:
    """The game's open deadline rows: ``{window id: due_at}``."""
    from imtheboss.web.models import Deadline, db
    from sqlalchemy import select

    with app.app_context():
        rows = db.session.execute(
            select(Deadline.window_id, Deadline.due_at).where(
                Deadline.game_id == gid, Deadline.state == "open"
            )
        ).all()
        db.session.rollback()
        return dict(rows)
