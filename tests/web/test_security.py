"""The headers every answer carries, the session cookie over HTTPS, and ``TRUSTED_PROXIES``
(imtheboss.web.app.security), through the app's test client on the test database. The same seen
through a real gunicorn, nginx and chromium: tests/e2e/test_https.py."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from flask import Flask, request
from imtheboss.web import create_app
from imtheboss.web.app.security import CSP
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import db
from imtheboss.web.players.links import seat_link, unsubscribe_link
from support.deal import PLAYERS

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
HTTPS = "https://testserver"


def variant(app: Flask, **changes) -> Flask:
    """Another app on the same database and settings as ``app``, with ``changes``."""
    return create_app({**app.config, **changes})


def _game(app: Flask) -> tuple[str, list[str], str, str, str]:
    """A new game: its id, seat tokens, admin token, a mailed link's and an unsubscribe
    link's path for seat 0."""
    with app.app_context():
        created = create_game("Headers", PLAYERS)
        seat = seats_of(created.game_id)[0]
        mailed = urlsplit(seat_link(created.game_id, seat)).path
        unsubscribe = urlsplit(unsubscribe_link(created.game_id, seat)).path
        db.session.remove()
    return created.game_id, created.seat_tokens, created.admin_token, mailed, unsubscribe


def _cookie_flags(response) -> list[list[str]]:
    return [
        [part.strip().lower() for part in cookie.split(";")[1:]]
        for cookie in response.headers.getlist("Set-Cookie")
    ]


def test_every_answer_has_the_policy_headers(client) -> None:
    for path in ("/", "/new", "/static/style.css", "/api/games/nope", "/g/nope"):
        answer = client.get(path)
        assert answer.headers["Content-Security-Policy"] == CSP, path
        assert answer.headers["X-Frame-Options"] == "DENY", path
        assert answer.headers["X-Content-Type-Options"] == "nosniff", path
        assert answer.headers["Referrer-Policy"] == "same-origin", path
        assert "Strict-Transport-Security" not in answer.headers, path  # plain http
    policy = dict(part.split(" ", 1) for part in CSP.split("; "))
    assert policy["script-src"] == policy["style-src"] == "'self'"  # nothing inline, no eval
    assert policy["frame-ancestors"] == "'none'" and policy["object-src"] == "'none'"
    assert client.get("/new").headers["Cache-Control"] == "no-store"


def test_urls_with_a_secret_send_no_referrer(app, client) -> None:
    """Sign-in links, mailed links, unsubscribe pages and ``?token=`` answer with
    ``no-referrer`` (their URL must not reach the next request); the pages they lead to, with
    no secret in their URL, with ``same-origin`` (their forms' CSRF check needs it)."""
    gid, tokens, admin, mailed, unsubscribe = _game(app)
    for path in (
        f"/g/{gid}/s/{tokens[0]}",
        f"/g/{gid}/admin/{admin}",
        mailed,
        unsubscribe,
        f"/g/{gid}/s/{'x' * 30}",  # a bad link's error page too
        "/operator/mail?token=" + "y" * 30,
    ):
        answer = client.get(path)
        assert answer.headers["Referrer-Policy"] == "no-referrer", (path, answer.status_code)
        assert answer.headers["Cache-Control"] == "no-store", path
    for path in (f"/g/{gid}", f"/g/{gid}/settings", f"/g/{gid}/admin", f"/g/{gid}/history"):
        answer = client.get(path)
        assert answer.status_code == 200, path
        assert answer.headers["Referrer-Policy"] == "same-origin", path


def test_over_https_the_cookie_is_secure_and_hsts_is_sent(app, client) -> None:
    gid, tokens, *_ = _game(app)
    plain = client.get(f"/g/{gid}/s/{tokens[0]}")
    assert _cookie_flags(plain) and all("secure" not in f for f in _cookie_flags(plain))
    secure = app.test_client().get(f"/g/{gid}/s/{tokens[1]}", base_url=HTTPS)
    assert secure.status_code == 303
    flags = _cookie_flags(secure)
    assert flags and all("secure" in f and "httponly" in f for f in flags)
    assert secure.headers["Strict-Transport-Security"] == "max-age=31536000"


def test_an_https_base_url_makes_the_cookie_secure_everywhere(app) -> None:
    """With ``BASE_URL=https://...`` the cookie is Secure even on a request the proxy did not
    mark as secure."""
    served = variant(app, BASE_URL="https://boss.example.org")
    assert served.config["SESSION_COOKIE_SECURE"] is True
    gid, tokens, *_ = _game(served)
    answer = served.test_client().get(f"/g/{gid}/s/{tokens[0]}")
    assert answer.status_code == 303
    assert all("secure" in f for f in _cookie_flags(answer)) and _cookie_flags(answer)
    with served.app_context():
        db.engine.dispose()


def _whoami(app: Flask) -> Flask:
    """``app`` with a route that shows what the request looks like to the app."""
    app.add_url_rule(
        "/test-whoami",
        "test_whoami",
        lambda: {"addr": request.remote_addr, "secure": request.is_secure, "host": request.host},
    )
    return app


# Each value: what the client claimed, then what the proxy next to the app saw.
FORWARDED = {
    "X-Forwarded-For": "198.51.100.1, 203.0.113.7",
    "X-Forwarded-Proto": "http, https",
    "X-Forwarded-Host": "claimed.example, boss.example.org",
}


@pytest.mark.parametrize(
    ("proxies", "seen"),
    [
        (0, {"addr": "127.0.0.1", "secure": False, "host": "localhost"}),
        (1, {"addr": "203.0.113.7", "secure": True, "host": "boss.example.org"}),
        (2, {"addr": "198.51.100.1", "secure": False, "host": "claimed.example"}),
    ],
)
def test_trusted_proxies(app, proxies: int, seen: dict) -> None:
    """``TRUSTED_PROXIES=n`` believes the last ``n`` forwarded values (the client's address,
    scheme and host); 0, the default, believes none."""
    served = _whoami(variant(app, TRUSTED_PROXIES=proxies))
    answer = served.test_client().get(
        "/test-whoami", headers=FORWARDED, environ_base={"REMOTE_ADDR": "127.0.0.1"}
    )
    assert answer.get_json() == seen
    assert ("Strict-Transport-Security" in answer.headers) is seen["secure"]
    with served.app_context():
        db.engine.dispose()


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "an inline <script>"),
    (re.compile(r"<style\b", re.I), "a <style> element"),
    (re.compile(r"\sstyle\s*=", re.I), "a style= attribute"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "an event handler attribute"),
    (re.compile(r"javascript:", re.I), "a javascript: URL"),
    (re.compile(r"\s(data-)?hx-on", re.I), "an hx-on attribute (needs eval)"),
    (re.compile(r"hx-trigger=\"[^\"]*\[", re.I), "an htmx trigger filter (needs eval)"),
    (re.compile(r"\s(data-)?hx-vals\s*=\s*['\"]\s*js:", re.I), "hx-vals with js: (needs eval)"),
]


def test_pages_have_no_inline_script_or_style() -> None:
    """The CSP allows neither; mail (``templates/email``) is not a web page and keeps the
    inline styles mail programs need."""
    found = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        if "email" in path.relative_to(TEMPLATES).parts:
            continue
        text = path.read_text()
        found += [f"{path.name}: {what}" for pattern, what in INLINE if pattern.search(text)]
    assert found == []


@pytest.mark.parametrize("path", ["/%5Cevil.example/login", "//evil.example/login"])
def test_no_link_of_a_page_leads_to_another_site(client, path: str) -> None:
    """A path that starts with ``/\\`` or ``//`` (a browser reads both as another site's
    address): the error page's language links stay on this site."""
    page = client.get(path)
    assert page.status_code == 404
    links = re.findall(r'href="([^"]+)"', page.text)
    assert any("lang=" in link for link in links)
    for link in links:
        assert not link.startswith(("//", "/\\")) and not urlsplit(link).netloc, link
