"""The shipped Caddy example, ``deploy/Caddyfile``, for real: Debian's caddy runs that very file
(its host name replaced by ``https://127.0.0.1:<port>`` with the test's certificate, its log
folder by the test's) in front of gunicorn (``TRUSTED_PROXIES=1``). A game is made by the JSON
API, a seat signs in by its link and posts a form over TLS on a port that is not 443, a mailed
link and a ``?token=`` are opened; Caddy's access log holds those requests and none of the
secrets.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import seats_of
from imtheboss.web.models import db
from imtheboss.web.players.links import seat_link
from support.deal import NAMES, PLAYERS, find_setup
from support.e2e import Process, free_port, wait_for
from support.tls_proxy import issue_certificate
from test_nginx import API_GAME, Browser, _place_marker

CADDY = shutil.which("caddy") or "/usr/bin/caddy"
EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "Caddyfile"
pytestmark = pytest.mark.skipif(
    not Path(CADDY).exists(), reason="Debian's caddy is needed (.ci/run installs it)"
)
# The test's global options: no admin endpoint, no certificate management, its own ports.
GLOBAL = "{{\n\tadmin off\n\tauto_https off\n\thttp_port {http_port}\n}}\n\n"


def caddyfile(folder: Path, port: int, upstream: str) -> str:
    """``deploy/Caddyfile`` with the test's address, certificate, log folder and upstream."""
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in [
        (
            "boss.example.org {",
            f"https://127.0.0.1:{port} {{\n\ttls {folder}/cert.pem {folder}/key.pem",
        ),
        ("/var/log/caddy/", f"{folder}/"),
        ("127.0.0.1:8000", urlsplit(upstream).netloc),
    ]:
        assert old in text, f"deploy/Caddyfile no longer says {old!r}"
        text = text.replace(old, new)
    return GLOBAL.format(http_port=free_port()) + text


def test_the_caddy_example_serves_a_game_over_tls_and_logs_no_secret(
    app, gunicorn, tmp_path: Path
) -> None:
    folder = tmp_path / "caddy"
    folder.mkdir()
    issue_certificate(folder)
    port = free_port()
    base = f"https://127.0.0.1:{port}"
    upstream = gunicorn(BASE_URL=base, TRUSTED_PROXIES="1")
    (folder / "Caddyfile").write_text(caddyfile(folder, port, upstream))
    env = {**os.environ, "HOME": str(folder), "XDG_DATA_HOME": str(folder / "data")}
    env["XDG_CONFIG_HOME"] = str(folder / "config")
    argv = [CADDY, "run", "--config", str(folder / "Caddyfile"), "--adapter", "caddyfile"]
    caddy = Process("caddy", argv, env, folder, folder / "out.log")
    caddy.start()
    try:
        browser = Browser(str(folder / "ca.pem"))
        wait_for(lambda: _serves(browser, base, caddy), 30, what="caddy to serve")
        made = browser.post(f"{base}/api/games", json=API_GAME)
        assert made.status_code == 201, made.text
        s = find_setup()
        with app.app_context():
            created = create_game("Behind Caddy", PLAYERS, seed=s.seed)
            gid, token = created.game_id, created.seat_tokens[s.boss]
            mailed = urlsplit(seat_link(gid, seats_of(gid)[(s.boss + 1) % len(PLAYERS)])).path
            db.session.remove()
        assert browser.get(f"{base}/g/{gid}/s/{token}").status_code == 303
        _place_marker(browser, base, gid, NAMES[s.boss])
        assert browser.get(base + mailed).status_code in (200, 303)
        browser.get(f"{base}/g/{gid}?token={token}")
    finally:
        caddy.stop()
    logged = (folder / "imtheboss.access.log").read_text()
    secrets = [token, made.json()["admin_token"], mailed.rsplit("/", 1)[1]]
    assert [s for s in secrets if s in logged] == []
    assert "session=" not in logged  # Caddy hides Cookie and Set-Cookie itself
    assert f'"uri":"/g/{gid}/s/[hidden]"' in logged
    assert f'"uri":"/g/{gid}[hidden]"' in logged
    assert '"uri":"/api/games"' in logged and f'"uri":"/g/{gid}/act"' in logged


def _serves(browser: Browser, base: str, caddy: Process) -> bool:
    if not caddy.running:
        pytest.fail(f"caddy exited:\n{caddy.tail()}")
    try:
        return browser.get(f"{base}/").status_code == 200
    except OSError:
        return False
