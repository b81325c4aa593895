"""The local mail outbox (``/operator/mail``) holds every invitation, so every seat's link: it
needs the operator token (``Authorization: Bearer``, or a session signed in by a form that posts
it), never in the query string. Without a token it is open only to the embedded default
(``EMBEDDED``) on loopback with no proxy trusted."""

from __future__ import annotations

import json
from typing import Any

import pytest
from imtheboss.web.models import OutboxMail, db
from support.app import client_at
from support.organiser import csrf_of

TOKEN = "operator-token-of-the-tests-0123456789"
LINK = "http://testserver/g/abc/s/the-secret-seat-token-of-a-player"
FAR = "203.0.113.5"  # an address that is not loopback


@pytest.fixture
def outbox(app) -> None:
    """One kept mail holding a seat's link."""
    with app.app_context():
        db.session.add(
            OutboxMail(
                to="amy@example.org",
                subject="you are invited",
                message=f"Subject: you are invited\n\nYour link: {LINK}\n",
                created_at=app.config["CLOCK"](),
            )
        )
        db.session.commit()


def _get(app, address: str = "127.0.0.1", **kwargs: Any):
    return client_at(app, address).get("/operator/mail", **kwargs)


def _shown(answer) -> bool:
    return answer.status_code == 200 and LINK in answer.text


def _closed(answer) -> bool:
    return answer.status_code == 403 and LINK not in answer.text


@pytest.mark.parametrize("app_config", [{"OPERATOR_TOKEN": ""}])
def test_without_a_token_only_the_embedded_default_on_loopback(app, outbox) -> None:
    assert _closed(_get(app))  # loopback, no SMTP, but not the embedded default
    app.config["EMBEDDED"] = True
    assert _shown(_get(app))
    assert _closed(_get(app, FAR))
    for name in ("localhost:5000", "127.0.0.1:5000", "[::1]:5000"):
        assert _shown(_get(app, headers={"Host": name})), name
    # a page of another site reaching loopback through DNS rebinding sends its own name
    assert _closed(_get(app, headers={"Host": "rebind.attacker.example:5000"}))
    app.config["TRUSTED_PROXIES"] = 1  # behind a proxy on this host, everyone is loopback
    assert _closed(_get(app))
    assert _closed(_get(app, headers={"X-Forwarded-For": "127.0.0.1"}))


@pytest.mark.parametrize("app_config", [{"OPERATOR_TOKEN": TOKEN}])
def test_the_token_in_a_header(app, outbox) -> None:
    assert _shown(_get(app, FAR, headers={"Authorization": f"Bearer {TOKEN}"}))
    assert _closed(_get(app, FAR, headers={"Authorization": f"Bearer {TOKEN[:-1]}x"}))
    assert _closed(_get(app, FAR, headers={"Authorization": TOKEN}))
    assert _closed(_get(app, FAR, query_string={"token": TOKEN}))  # never in the URL
    assert _closed(_get(app, FAR))


@pytest.mark.parametrize("app_config", [{"OPERATOR_TOKEN": TOKEN}])
def test_signing_in_with_the_token(app, outbox) -> None:
    browser = client_at(app, FAR)
    closed = browser.get("/operator/mail")
    assert _closed(closed) and "/operator/sign-in" in closed.text
    page = browser.get("/operator/sign-in")
    assert page.status_code == 200 and 'type="password"' in page.text
    token = csrf_of(page.text)
    assert browser.post("/operator/sign-in", data={"token": TOKEN}).status_code == 400  # CSRF
    wrong = browser.post("/operator/sign-in", data={"csrf_token": token, "token": "guess"})
    assert wrong.status_code == 403
    assert _closed(browser.get("/operator/mail"))
    right = browser.post("/operator/sign-in", data={"csrf_token": token, "token": TOKEN})
    assert right.status_code == 303 and right.headers["Location"].endswith("/operator/mail")
    assert _shown(browser.get("/operator/mail"))
    session = app.session_interface.get_signing_serializer(app).loads(
        browser.get_cookie("session").value
    )
    assert TOKEN not in json.dumps(session)  # the cookie holds no token
    app.config["OPERATOR_TOKEN"] = "another-operator-token-0123456789"  # a new token
    assert _closed(browser.get("/operator/mail"))  # ends the sessions of the old one


@pytest.mark.parametrize("app_config", [{"OPERATOR_TOKEN": ""}])
def test_no_token_set_signs_nobody_in(app, outbox) -> None:
    browser = client_at(app, FAR)
    token = csrf_of(browser.get("/operator/sign-in").text)
    for guess in ("", " "):
        answer = browser.post("/operator/sign-in", data={"csrf_token": token, "token": guess})
        assert answer.status_code in (400, 403)
    assert _closed(browser.get("/operator/mail"))
    assert _closed(_get(app, FAR, headers={"Authorization": "Bearer "}))
