"""Strangers cannot lock a player out of signing in by email (imtheboss.web.players.signin):
asks for one address from many client addresses fill the mailbox's limit
(``RATELIMIT_SIGN_IN_MAILBOX``); past it the owner is not refused, no new mail is sent, and the
newest link mailed keeps working; the mailbox gets no more mails than the limit from strangers'
asks; the answer is the same whether or not the address has games. The limits are the
settings' defaults, behind one trusted proxy; the worker's task is run here."""

from __future__ import annotations

import email
import importlib
import re
from email import policy
from typing import Any

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.models import OutboxMail, db
from imtheboss.web.players.people import SignInLink
from sqlalchemy import select
from support.sign_in import ask_link, press

CARLA = "carla@example.org"
NOBODY = "nobody@example.org"
MAILBOX_LIMIT = 20  # the hour's part of RATELIMIT_SIGN_IN_MAILBOX below
_CSRF = re.compile(r'name="csrf_token"[^>]*value="[^"]+"')
_LINK = re.compile(r"http://testserver(/sign-in/[A-Za-z0-9_.\-]+)")


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": "memory://",
        "RATELIMIT_SIGN_IN": "10 per hour; 30 per day",
        "RATELIMIT_SIGN_IN_ADDRESS": "5 per hour; 10 per day",
        "RATELIMIT_SIGN_IN_MAILBOX": "20 per hour; 50 per day",
        "TRUSTED_PROXIES": 1,
    }


@pytest.fixture
def carla_plays(app) -> None:
    with app.app_context():
        create_game("A game", [("Carla", CARLA), ("Bill", "bill@example.org")])


def _behind_proxy(app, address: str) -> Any:
    """A new browser whose requests the proxy says come from ``address``."""
    client = app.test_client()
    client.environ_base["HTTP_X_FORWARDED_FOR"] = address
    return client


def _ask(app, client: Any, address: str) -> Any:
    """A second on, ask for a link for ``address`` from ``client``, then run the worker on what
    it queued."""
    app.config["CLOCK"].advance(seconds=1)
    answer = ask_link(client, address)
    importlib.import_module("imtheboss.worker.celery_app")
    from imtheboss.worker.signin_mail import send_sign_in

    with app.app_context():
        pending = select(SignInLink.id).where(SignInLink.mail_state == "pending")
        for row_id in db.session.execute(pending).scalars().all():
            send_sign_in.run(row_id)
    return answer


def _mails(app) -> list[str]:
    """The sign-in mails sent to Carla, oldest first (their text)."""
    with app.app_context():
        rows = db.session.execute(
            select(OutboxMail).where(OutboxMail.to == CARLA).order_by(OutboxMail.id)
        ).scalars()
        return [
            email.message_from_string(row.message, policy=policy.default)
            .get_body(("plain",))
            .get_content()
            for row in rows
        ]


def _link_of(mail: str) -> str:
    found = _LINK.search(mail)
    assert found, mail
    return found.group(1)


def _strangers_fill_the_mailbox(app, who: str = CARLA) -> None:
    """Five asks for ``who`` from each of four client addresses: the mailbox's hour, spent."""
    for n in range(1, 5):
        stranger = _behind_proxy(app, f"10.0.0.{n}")
        for _ in range(5):
            answer = _ask(app, stranger, who)
            assert answer.status_code == 200 and "Too many" not in answer.text


def test_strangers_on_four_addresses_do_not_lock_the_owner_out(app, carla_plays):
    """Five asks from each of four client addresses spend the mailbox's hour; the owner, in a
    fresh browser on a fifth, is not refused and the last mail's link signs her in."""
    _strangers_fill_the_mailbox(app)
    assert len(_mails(app)) == MAILBOX_LIMIT
    owner = _behind_proxy(app, "192.0.2.50")
    answer = _ask(app, owner, CARLA)
    assert answer.status_code == 200, answer.text[:300]
    assert "Too many" not in answer.text
    mails = _mails(app)
    assert len(mails) == MAILBOX_LIMIT  # no new mail: the newest one in the mailbox is used
    signed_in = press(owner, _link_of(mails[-1]))
    assert signed_in.status_code == 303 and signed_in.headers["Location"].endswith("/me")
    assert owner.get("/me").status_code == 200


def test_the_newest_link_works_while_the_mailbox_limit_holds_mails_back(app, carla_plays, clock):
    """More strangers go on asking; the mailbox gets no more than the limit's mails. Long after
    the last mail's own lifetime (the limit's day can hold new mails back that long), the owner's
    ask renews that link, and it signs her in."""
    _strangers_fill_the_mailbox(app)
    for n in range(5, 13):
        stranger = _behind_proxy(app, f"10.0.0.{n}")
        for _ in range(5):
            assert _ask(app, stranger, CARLA).status_code == 200
    assert len(_mails(app)) == MAILBOX_LIMIT
    clock.advance(seconds=3 * app.config["SIGN_IN_LINK_SECONDS"])
    owner = _behind_proxy(app, "192.0.2.50")
    answer = _ask(app, owner, CARLA)
    assert answer.status_code == 200 and "Too many" not in answer.text
    mails = _mails(app)
    assert len(mails) == MAILBOX_LIMIT
    signed_in = press(owner, _link_of(mails[-1]))
    assert signed_in.status_code == 303 and signed_in.headers["Location"].endswith("/me")


def test_a_used_newest_link_gets_one_more_mail_and_no_more(app, carla_plays):
    """The owner used the newest link in one browser; in another (a fresh one, elsewhere) she
    asks again: one more mail goes out. Strangers asking after it get no further mail (only the
    owner's own sign-ins let the mailbox get more), and its link signs her in there."""
    _strangers_fill_the_mailbox(app)
    laptop = _behind_proxy(app, "192.0.2.50")
    assert _ask(app, laptop, CARLA).status_code == 200
    assert press(laptop, _link_of(_mails(app)[-1])).status_code == 303
    phone = _behind_proxy(app, "198.51.100.9")
    answer = _ask(app, phone, CARLA)
    assert answer.status_code == 200 and "Too many" not in answer.text
    assert len(_mails(app)) == MAILBOX_LIMIT + 1
    stranger = _behind_proxy(app, "10.0.0.9")
    for _ in range(5):
        assert _ask(app, stranger, CARLA).status_code == 200
    mails = _mails(app)
    assert len(mails) == MAILBOX_LIMIT + 1
    signed_in = press(phone, _link_of(mails[-1]))
    assert signed_in.status_code == 303 and phone.get("/me").status_code == 200


def test_past_the_mailbox_limit_the_answer_says_nothing_of_the_games(app, carla_plays):
    """An address with games and one without, each past its mailbox's limit: the same page."""
    _strangers_fill_the_mailbox(app, CARLA)
    _strangers_fill_the_mailbox(app, NOBODY)
    known = _ask(app, _behind_proxy(app, "192.0.2.50"), CARLA)
    unknown = _ask(app, _behind_proxy(app, "192.0.2.51"), NOBODY)
    assert known.status_code == unknown.status_code == 200
    assert _CSRF.sub("", known.text) == _CSRF.sub("", unknown.text)
    assert "Too many" not in known.text
