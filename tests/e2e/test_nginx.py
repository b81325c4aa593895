"""The shipped nginx example, ``deploy/nginx.conf``, for real: Debian's nginx runs that very file
(with the test's ports, certificate and folders: ``support.tls_proxy.site_conf``) in front of
gunicorn (``TRUSTED_PROXIES=1``), TLS on a port that is not 443.

Through it a game is created by the JSON API, a seat signs in by its secret link and places the
marker with a form post (CSRF: the ``Host`` passed on keeps its port), the organiser's link, a
mailed link and a plain-http link (redirected to https) are opened; then nginx's access log holds
every request and none of the secrets: the secret path segments are written ``[hidden]``.

The same file with nginx's textbook ``Host $host`` (the port dropped) refuses the form, and
the refusal names the cause: the server is set up wrongly, not "the form has expired".
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import db
from imtheboss.web.players.links import seat_link
from support.deal import NAMES, PLAYERS, find_setup
from support.e2e import page_forms
from support.tls_proxy import NGINX, TlsProxy

pytestmark = pytest.mark.skipif(
    not Path(NGINX).exists(), reason="Debian's nginx is needed (.ci/run installs it)"
)
HTTP_TIMEOUT = 20
API_GAME = {
    "title": "Through the example",
    "players": [{"name": n, "email": e} for n, e in PLAYERS],
    "creator_email": PLAYERS[0][1],
}


class Browser(requests.Session):
    """A client that trusts the test's CA (given on each request: ``REQUESTS_CA_BUNDLE`` in the
    environment would win over a session's ``verify``) and follows no redirect."""

    def __init__(self, ca: str) -> None:
        super().__init__()
        self.ca = ca

    def request(self, method, url, **kwargs):  # type: ignore[override]
        kwargs.setdefault("verify", self.ca)
        kwargs["allow_redirects"] = False  # get() would ask for them
        kwargs.setdefault("timeout", HTTP_TIMEOUT)
        return super().request(method, url, **kwargs)


def _post_marker(browser: Browser, base: str, gid: str) -> requests.Response:
    """The seat's page through nginx, then its first place-marker form posted as a browser
    does (the page's own address as ``Referer``: ``same-origin``)."""
    page = browser.get(f"{base}/g/{gid}")
    assert page.status_code == 200, page.text[:2000]
    forms = [f for f in page_forms(page.text) if f.cmd and f.cmd.get("do") == "place_marker"]
    assert forms, "the first player's page has the marker forms"
    action = urljoin(f"{base}/g/{gid}", forms[0].action)
    return browser.post(action, data=forms[0].hidden, headers={"Referer": f"{base}/g/{gid}"})


def _place_marker(browser: Browser, base: str, gid: str, name: str) -> None:
    moved = _post_marker(browser, base, gid)
    assert moved.status_code == 303, moved.text[:2000]
    after = browser.get(f"{base}/g/{gid}")
    assert f"{name} places the marker on space" in after.text


def test_the_example_serves_a_game_over_tls_and_logs_no_secret(app, gunicorn, tmp_path: Path):
    proxy = TlsProxy.prepare(tmp_path / "nginx")
    assert urlsplit(proxy.base).port != 443
    upstream = gunicorn(BASE_URL=proxy.base, TRUSTED_PROXIES="1")
    proxy.start(upstream)
    try:
        browser = Browser(str(tmp_path / "nginx" / "ca.pem"))
        made = browser.post(f"{proxy.base}/api/games", json=API_GAME)
        assert made.status_code == 201, made.text
        admin = made.json()["admin_token"]
        organiser = browser.get(f"{proxy.base}/g/{made.json()['game_id']}/admin/{admin}")
        assert organiser.status_code in (200, 303), organiser.text[:2000]

        s = find_setup()
        with app.app_context():
            created = create_game("Behind the example", PLAYERS, seed=s.seed)
            gid, token = created.game_id, created.seat_tokens[s.boss]
            mailed = urlsplit(seat_link(gid, seats_of(gid)[(s.boss + 1) % len(PLAYERS)])).path
            db.session.remove()
        signed_in = browser.get(f"{proxy.base}/g/{gid}/s/{token}")
        assert signed_in.status_code == 303, signed_in.text[:2000]
        _place_marker(browser, proxy.base, gid, NAMES[s.boss])
        assert "/m/" in mailed
        assert browser.get(proxy.base + mailed).status_code in (200, 303)

        plain = f"http://127.0.0.1:{proxy.http_port}/g/{gid}/s/{token}?token={token}"
        redirected = requests.get(plain, allow_redirects=False, timeout=HTTP_TIMEOUT)
        assert redirected.status_code == 301
        assert redirected.headers["Location"].startswith("https://")
    finally:
        proxy.stop()

    logged = proxy.access_log()
    secrets = [token, admin, mailed.rsplit("/", 1)[1]]
    assert [s for s in secrets if s in logged] == []
    assert '"POST /api/games HTTP/1.1" 201' in logged
    assert f'"GET /g/{gid}/s/[hidden] HTTP/1.1" 303' in logged
    assert f'"GET /g/{gid}/s/[hidden] HTTP/1.1" 301' in logged  # plain http, query dropped
    assert f'"POST /g/{gid}/act HTTP/1.1" 303' in logged
    assert f'"GET /g/{gid}/m/[hidden] HTTP/1.1"' in logged


def test_the_textbook_host_header_is_named_as_the_cause(app, gunicorn, tmp_path: Path):
    proxy = TlsProxy.prepare(tmp_path / "nginx")
    upstream = gunicorn(BASE_URL=proxy.base, TRUSTED_PROXIES="1")
    textbook = (
        ("proxy_set_header Host $http_host;", "proxy_set_header Host $host;"),
        ("proxy_set_header X-Forwarded-Host $http_host;", ""),
    )
    proxy.start(upstream, textbook)
    try:
        s = find_setup()
        with app.app_context():
            created = create_game("Textbook", PLAYERS, seed=s.seed)
            gid, token = created.game_id, created.seat_tokens[s.boss]
            db.session.remove()
        browser = Browser(str(tmp_path / "nginx" / "ca.pem"))
        assert browser.get(f"{proxy.base}/g/{gid}/s/{token}").status_code == 303
        refused = _post_marker(browser, proxy.base, gid)
    finally:
        proxy.stop()
    assert refused.status_code == 400
    assert "This server is set up wrongly" in refused.text
    assert "The form has expired" not in refused.text
