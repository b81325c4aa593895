"""A player with seats in three games signs in by email and plays from ``/me``, on real
processes: gunicorn, a Celery worker and beat on Redis, PostgreSQL, an aiosmtpd SMTP server
(the stack of tests/e2e/test_play_by_email.py).

The three games (tests/support/home_games.py) wait for the player with three deadlines. The
player asks for a link on ``/sign-in`` (so does an address with no games: the same page; only
the player gets mail). A mail scanner first fetches the mailed link (``HEAD``, then ``GET``
following the redirect to the page with the button): nothing is used up, nobody is signed in.
Then the player opens it and presses the button, sees the three games on ``/me`` in deadline
order (and in ``/api/me``), opens the first from the list, lets the travel card happen there,
and the list follows: that game waits for others now and moves below the two.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

import requests
from imtheboss.web.models import db
from imtheboss.web.players.people import SignInLink
from sqlalchemy import select
from support.e2e import page_forms, wait_for
from support.home_games import make_home_games
from support.organiser import csrf_of
from test_play_by_email import stack  # noqa: F401  (the fixture)

EMAIL = "home-player@e2e.example.org"
STRANGER = "no-games@e2e.example.org"
ENTRY = re.compile(r'<li class="my-game[^"]*" data-game="([^"]+)"')
TIMEOUT = 20


def _ask(base: str, email: str) -> requests.Response:
    http = requests.Session()
    form = http.get(f"{base}/sign-in", timeout=TIMEOUT)
    answer = http.post(
        f"{base}/sign-in",
        data={"csrf_token": csrf_of(form.text), "email": email},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text[:500]
    return answer


def _links(app) -> dict[str, tuple]:
    with app.app_context():
        rows = db.session.execute(select(SignInLink)).scalars().all()
        out = {r.email: (r.mail_state, r.used_at) for r in rows}
        db.session.rollback()
        return out


def _mailed_link(stack) -> str:  # noqa: F811
    def found() -> str | None:
        for mail in stack.mailbox.to(EMAIL):
            if "sign-in link" in mail.subject:
                return next(link for link in mail.links if "/sign-in/" in link)
        return None

    return wait_for(found, 60, what="the sign-in mail")


def test_sign_in_by_email_and_play_from_my_games(stack):  # noqa: F811
    base = stack.base
    games = make_home_games(stack.app, EMAIL)
    mine, strangers = _ask(base, EMAIL), _ask(base, STRANGER)
    csrf = re.compile(r'name="csrf_token"[^>]*value="[^"]+"')
    assert csrf.sub("", mine.text) == csrf.sub("", strangers.text)
    link = _mailed_link(stack)
    wait_for(lambda: _links(stack.app).get(STRANGER, ("",))[0] == "skipped", 30, what="skip")
    assert not stack.mailbox.to(STRANGER)

    # a mail scanner: HEAD, then GET following the redirect to the page with the button
    scanner = requests.Session()
    assert scanner.head(link, timeout=TIMEOUT).status_code == 303
    fetched = scanner.get(link, timeout=TIMEOUT)
    assert fetched.status_code == 200 and fetched.url.endswith("/sign-in/confirm")
    assert EMAIL in fetched.text
    assert _links(stack.app)[EMAIL] == ("sent", None)
    assert scanner.get(f"{base}/api/me", timeout=TIMEOUT).status_code == 401

    # the player
    http = requests.Session()
    page = http.get(link, timeout=TIMEOUT)
    assert page.status_code == 200 and page.url.endswith("/sign-in/confirm")
    me = http.post(page.url, data={"csrf_token": csrf_of(page.text)}, timeout=TIMEOUT)
    assert me.status_code == 200 and me.url == f"{base}/me", (me.status_code, me.url)
    assert _links(stack.app)[EMAIL][1] is not None
    assert ENTRY.findall(me.text) == games.order
    assert "<title>(3) My games" in me.text
    listed = http.get(f"{base}/api/me", timeout=TIMEOUT).json()
    assert [g["game"] for g in listed["games"]] == games.order

    # open the stop game from the list and let the travel card happen
    seat = games.seats[games.stop]
    (opener,) = [f for f in page_forms(me.text) if f.action == f"/me/open/{games.stop}/{seat}"]
    game_page = http.post(urljoin(me.url, opener.action), data=opener.hidden, timeout=TIMEOUT)
    assert game_page.status_code == 200 and game_page.url == f"{base}/g/{games.stop}"
    (allow,) = [f for f in page_forms(game_page.text) if (f.cmd or {}).get("do") == "allow"]
    moved = http.post(urljoin(game_page.url, allow.action), data=allow.hidden, timeout=TIMEOUT)
    assert moved.status_code == 200 and moved.url == f"{base}/g/{games.stop}"
    after = http.get(f"{base}/me", timeout=TIMEOUT)
    assert ENTRY.findall(after.text) == [games.soon, games.late, games.stop]
    assert "<title>(2) My games" in after.text
    listed = http.get(f"{base}/api/me", timeout=TIMEOUT).json()
    assert [g["waiting"] for g in listed["games"]] == [True, True, False]
    for process in stack.processes:
        assert not process.problems(), (process.name, process.problems())
