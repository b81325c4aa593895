"""Reading and using the game page's forms as a browser would, with Flask's test client (the page
tests: tests/web/test_pages.py, tests/web/test_decisions.py)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from imtheboss.web.models import db
from imtheboss.web.say.commands import CONFIRM
from sqlalchemy import func, select

# -- reading pages ---------------------------------------------------------------------------


class _Forms(HTMLParser):
    """Collects every form: action, method and the values of its inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.current = {"action": a.get("action"), "method": a.get("method"), "fields": {}}
            self.forms.append(self.current)
        elif tag in ("input", "select", "textarea", "button") and self.current is not None:
            name = a.get("name")
            if name and a.get("type") in ("hidden", None, "text", "number", "email"):
                self.current["fields"].setdefault(name, a.get("value") or "")
            if name and a.get("type") == "checkbox":
                self.current["fields"].setdefault(f"{name}[]", []).append(a.get("value"))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.current = None


def forms_of(html: str) -> list[dict[str, Any]]:
    parser = _Forms()
    parser.feed(html)
    for form in parser.forms:
        raw = form["fields"].get("cmd")
        form["cmd"] = json.loads(raw) if raw else None
    return parser.forms


def commands_on(client, gid: str) -> list[dict[str, Any]]:
    return [f["cmd"] for f in forms_of(client.get(f"/g/{gid}").text) if f["cmd"]]


def form_for(client, gid: str, **match: Any) -> dict[str, Any]:
    page = client.get(f"/g/{gid}")
    assert page.status_code == 200
    forms = [f for f in forms_of(page.text) if f["cmd"]]
    for form in forms:
        if all(form["cmd"].get(k) == v for k, v in match.items()):
            return form
    raise AssertionError(f"no form for {match}; the page offers {[f['cmd'] for f in forms]}")


def act(client, gid: str, match: dict[str, Any], expect: int = 303, **inputs: Any):
    """Post the game page's own form for the command matching ``match`` (and, for a move that
    asks first, the "Yes, do it" form of the page that asks)."""
    form = form_for(client, gid, **match)
    data = {k: v for k, v in form["fields"].items() if not k.endswith("[]")}
    data.update(inputs)
    response = client.post(form["action"], data=data)
    if match["do"] in CONFIRM and response.status_code == 200:
        (yes,) = [f for f in forms_of(response.text) if f["fields"].get("confirmed") == "yes"]
        response = client.post(yes["action"], data=yes["fields"])
    assert response.status_code == expect, response.text[:2000]
    return response


def post(client, url: str, token: str, **fields: Any):
    """A POST with the session's CSRF token."""
    return client.post(url, data={"csrf_token": token, **fields})


def count(model) -> int:
    return db.session.execute(select(func.count()).select_from(model)).scalar_one()
