"""The server behind a TLS-terminating proxy on the same host, for real.

- gunicorn (the Procfile's web command) trusts ``X-Forwarded-Proto`` from 127.0.0.1, so a
  request a same-host proxy forwards is a secure one, and Flask-WTF's CSRF check then wants a
  same-origin ``Referer``. The first test plays a seat's form posts the way a browser behind the
  proxy sends them (the ``Referer`` a browser sends is the one the page's referrer policy allows)
  straight to gunicorn with ``X-Forwarded-Proto: https``.
- Then Debian's nginx, with a self-signed certificate made by the test, terminates TLS in front
  of gunicorn, and Debian's chromium (Playwright) signs in by a seat link, plays a move (htmx),
  posts a plain form and the unsubscribe page's form over ``https://``, while the test checks
  the session cookie is ``Secure``, HSTS and the Content-Security-Policy are sent, and the page
  breaks no part of that policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import db
from imtheboss.web.players.links import unsubscribe_link
from playwright.sync_api import Browser, Page, expect
from support.deal import NAMES, PLAYERS, find_setup
from support.e2e import Form, page_forms
from support.tls_proxy import NGINX, TlsProxy
from test_browser import CHROMIUM, sign_in

HTTP_TIMEOUT = 20
FORWARDED = {"X-Forwarded-Proto": "https"}  # what the same-host proxy adds
META_REFERRER = re.compile(r"""<meta\s+name=["']referrer["']\s+content=["']([^"']+)["']""", re.I)
# Policies that send the whole URL to the page's own origin (a form post to the same server).
FULL_URL = {
    "same-origin",
    "strict-origin-when-cross-origin",
    "origin-when-cross-origin",
    "no-referrer-when-downgrade",
    "unsafe-url",
}


def referer_for(page: requests.Response, page_url: str) -> str | None:
    """The ``Referer`` a browser sends with a form posted from ``page`` (at ``page_url``) to the
    same origin: a ``<meta name="referrer">`` in the page wins over the ``Referrer-Policy``
    header (whose last known token counts); the default is ``strict-origin-when-cross-origin``."""
    found = META_REFERRER.search(page.text)
    header = [t.strip() for t in page.headers.get("Referrer-Policy", "").split(",") if t.strip()]
    policy = found.group(1).strip() if found else (header[-1] if header else "")
    if policy == "no-referrer":
        return None
    if policy in ("origin", "strict-origin"):
        parts = urlsplit(page_url)
        return f"{parts.scheme}://{parts.netloc}/"
    assert policy in FULL_URL or policy == "", f"unexpected referrer policy {policy!r}"
    return page_url


@dataclass
class BehindProxy:
    """A browser at ``https://<host>`` as the app sees it through a same-host proxy: requests go
    to gunicorn's ``http://`` address with ``X-Forwarded-Proto: https``. Cookies are kept by
    hand (an HTTP client would not send a ``Secure`` cookie over ``http://``)."""

    server: str  # gunicorn's own http://127.0.0.1:port
    cookies: dict[str, str] = field(default_factory=dict)
    set_cookies: list[str] = field(default_factory=list)  # every Set-Cookie header received

    @property
    def origin(self) -> str:
        return "https://" + urlsplit(self.server).netloc

    def send(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {**FORWARDED, **kwargs.pop("headers", {})}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        answer = requests.request(
            method,
            self.server + path,
            headers=headers,
            allow_redirects=False,
            timeout=HTTP_TIMEOUT,
            **kwargs,
        )
        self.set_cookies += answer.raw.headers.getlist("Set-Cookie")
        self.cookies.update(answer.cookies.get_dict())
        return answer

    def post_form(self, page: requests.Response, page_path: str, form: Form, **change):
        """Post ``form`` of ``page`` as a browser would (with the Referer its policy allows);
        ``change`` replaces or, with ``None``, drops fields and ``referer``."""
        data = {**form.hidden}
        referer = referer_for(page, self.origin + page_path)
        for name, value in change.items():
            if name == "referer":
                referer = value
            elif value is None:
                data.pop(name, None)
            else:
                data[name] = value
        headers = {"Referer": referer} if referer else {}
        return self.send(
            "POST", urlsplit(urljoin(page_path, form.action)).path, data=data, headers=headers
        )


def _first_move(page: requests.Response) -> Form:
    forms = [f for f in page_forms(page.text) if f.cmd and f.cmd.get("do") == "place_marker"]
    assert forms, "the first player's page has the marker forms"
    return forms[0]


def _events(app, gid: str) -> int:
    with app.app_context():
        last = get_game(gid).last_seq
        db.session.remove()
    return last


def test_forms_post_behind_a_same_host_https_proxy(app, gunicorn) -> None:
    """A seat signs in by its link and places the marker through gunicorn with
    ``X-Forwarded-Proto: https`` from 127.0.0.1: the post with the page's CSRF token succeeds;
    without the token, or with another site's Referer, it is refused (400) and nothing is
    written. The cookie set over the secure request is ``Secure``; HSTS is sent."""
    s = find_setup()
    with app.app_context():
        created = create_game("Behind a proxy", PLAYERS, seed=s.seed)
    gid, token = created.game_id, created.seat_tokens[s.boss]
    browser = BehindProxy(gunicorn())

    signed_in = browser.send("GET", f"/g/{gid}/s/{token}")
    assert signed_in.status_code == 303, signed_in.text
    assert signed_in.headers["Location"].endswith(f"/g/{gid}")
    # The sign-in URL holds the seat's secret: its answer sends no Referer anywhere.
    assert signed_in.headers["Referrer-Policy"] == "no-referrer"
    page = browser.send("GET", f"/g/{gid}")
    assert page.status_code == 200
    form = _first_move(page)
    before = _events(app, gid)

    without_token = browser.post_form(page, f"/g/{gid}", form, csrf_token=None)
    assert without_token.status_code == 400 and "The form has expired" in without_token.text
    other_site = browser.post_form(page, f"/g/{gid}", form, referer="https://evil.example/g/x")
    assert other_site.status_code == 400 and "The form has expired" in other_site.text
    no_referer = browser.post_form(page, f"/g/{gid}", form, referer=None)
    assert no_referer.status_code == 400 and "The form has expired" in no_referer.text
    assert _events(app, gid) == before, "a refused post wrote nothing"

    moved = browser.post_form(page, f"/g/{gid}", form)
    assert moved.status_code == 303, moved.text[:2000]
    assert _events(app, gid) > before
    after = browser.send("GET", f"/g/{gid}")
    assert f"{NAMES[s.boss]} places the marker on space" in after.text

    assert browser.set_cookies, "the sign-in set the session cookie"
    for cookie in browser.set_cookies:
        flags = [part.strip().lower() for part in cookie.split(";")[1:]]
        assert "secure" in flags and "httponly" in flags, cookie
    assert after.headers["Strict-Transport-Security"].startswith("max-age=")


# -- through nginx with TLS, in a browser ----------------------------------------------------

needs_browser_and_nginx = pytest.mark.skipif(
    not CHROMIUM.exists() or not Path(NGINX).exists(),
    reason="Debian's chromium and nginx are needed (.ci/run installs both)",
)


@pytest.fixture
def proxied(gunicorn, tmp_path: Path) -> Iterator[str]:
    """nginx with TLS on a free port in front of gunicorn (``TRUSTED_PROXIES=1``, ``BASE_URL``
    the proxy's https address); yields that address."""
    proxy = TlsProxy.prepare(tmp_path / "nginx")
    upstream = gunicorn(BASE_URL=proxy.base, TRUSTED_PROXIES="1")
    try:
        proxy.start(upstream)
        yield proxy.base
    finally:
        proxy.stop()


def _refreshes_wait_for_typing(page: Page) -> None:
    """The live part refreshes itself every 15 s (htmx, no eval: ``static/app.js``), but not
    while the player has typed something there."""
    refreshes: list[str] = []
    page.on("request", lambda r: refreshes.append(r.url) if "/fragment" in r.url else None)
    chat = page.locator("#live textarea[name=text]").first
    chat.fill("half a sentence")
    page.clock.fast_forward("00:31")
    page.evaluate("document.activeElement.blur()")
    page.clock.fast_forward("00:31")
    assert refreshes == [], "the page refreshed over what the player was typing"
    expect(chat).to_have_value("half a sentence")
    chat.fill("")
    page.evaluate("document.activeElement.blur()")
    with page.expect_request(lambda r: "/fragment" in r.url):
        page.clock.fast_forward("00:16")


@needs_browser_and_nginx
def test_a_move_in_the_browser_through_nginx_with_tls(app, proxied: str, browser: Browser):
    """Sign in by the seat link, place the marker (htmx), save the settings (a plain form post)
    and stop email on the unsubscribe page, all over https through nginx; the session cookie is
    Secure, HSTS and CSP are sent, and nothing on the pages breaks the CSP."""
    s = find_setup()
    with app.app_context():
        created = create_game("Through nginx", PLAYERS, seed=s.seed)
        gid = created.game_id
        seat = seats_of(gid)[s.boss]
        unsubscribe = urlsplit(unsubscribe_link(gid, seat)).path
        db.session.remove()
    boss = sign_in(
        browser, proxied, gid, created.seat_tokens[s.boss], NAMES[s.boss], ignore_https_errors=True
    )
    page = boss.page
    page.clock.install()  # the page's timers (htmx's 15 s refresh) run on the test's clock

    answer = page.goto(f"{proxied}/g/{gid}")
    assert answer is not None and answer.status == 200
    headers = answer.headers
    assert headers["strict-transport-security"].startswith("max-age=")
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin"

    number = s.space + 1  # players count spaces from 1
    boss.act(boss.button(f"Space {number}"), f"{boss.name} places the marker on space {number}")
    _refreshes_wait_for_typing(page)

    page.get_by_role("navigation", name="Game").get_by_role("link", name="Settings").click()
    page.get_by_role("radio", name=re.compile("^Only when I must act")).check()
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.get_by_role("button", name="Save").click()
    assert posted.value.status == 303, posted.value.text()[:2000]
    expect(page.locator(".notice")).to_contain_text("Settings saved.")

    page.goto(proxied + unsubscribe)
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.get_by_role("button", name="Stop email").click()
    assert posted.value.status == 200, posted.value.text()[:2000]
    expect(page.locator("body")).to_contain_text("you will get no more email for this game")

    cookies = [c for c in page.context.cookies() if c["name"] == "session"]
    assert len(cookies) == 1
    assert cookies[0]["secure"] and cookies[0]["httpOnly"] and cookies[0]["sameSite"] == "Lax"
    assert boss.problems == [], "the pages broke their Content-Security-Policy"
    page.context.close()
