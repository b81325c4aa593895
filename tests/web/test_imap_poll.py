"""Replies read from a mailbox over IMAP, against a real dovecot started by the test: unseen
mail is applied and marked seen (a mail read twice acts once), screened as the receiver's
(auto-replies, bad signatures, a mail too deep to parse); IDLE wakes the poller as soon as
a reply is delivered; a reply read while the database is down stays unseen and is acted on,
once, at the first round after the outage."""

from __future__ import annotations

import threading

import pytest
from imtheboss.web.games.load import load_events
from imtheboss.worker.imap_poll import connect, poll_once, run, wait
from sqlalchemy.engine import make_url
from support.dovecot import Dovecot
from support.logs import written
from support.postgres import allow_connections, refuse_connections
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import nested_mail, quoted, raw_mail
from support.wait import wait_for


@pytest.fixture
def dovecot():
    server = Dovecot()
    yield server
    server.stop()


@pytest.fixture
def imap_app(app, dovecot):
    app.config.update(REPLY_CONFIG, **dovecot.settings())
    return app


def _placed(app, gid: str) -> list:
    with app.app_context():
        return [e for e in load_events(gid) if e.type == "marker_placed"]


def test_unseen_replies_are_applied_once_and_marked_seen(imap_app, dovecot) -> None:
    app = imap_app
    a = asked(app)
    raw = raw_mail("place 2\n\n" + quoted(), to=a.address, sender=a.email, message_id="<i@c>")
    dovecot.append(raw)
    dovecot.append(raw)  # delivered twice
    dovecot.append(
        raw_mail(
            "I am away", to=a.address, sender=a.email, headers={"Auto-Submitted": "auto-replied"}
        )
    )
    imap = connect(app)
    try:
        assert poll_once(app, imap) == 3
        assert poll_once(app, imap) == 0
    finally:
        imap.logout()
    assert [e.data["via"] for e in _placed(app, a.game_id)] == ["mail"]
    assert dovecot.unseen() == 0 and len(answers(app)) == 1


def test_mail_read_by_imap_is_screened_as_the_receiver_s(imap_app, dovecot) -> None:
    app = imap_app
    a = asked(app)
    subject = "自动回复：Re: [I'm the Boss!] Friday"  # a webmail auto-reply: no header says so
    dovecot.append(raw_mail("我在休假", to=a.address, sender=a.email, subject=subject))
    dovecot.append(raw_mail("place 2", to=a.address.replace("+", "+x", 1), sender=a.email))
    dovecot.append(nested_mail(3000, to=a.address, sender=a.email))
    imap = connect(app)
    try:
        with written() as log:
            assert poll_once(app, imap) == 3
    finally:
        imap.logout()
    assert "Traceback" not in log.getvalue()
    assert _placed(app, a.game_id) == [] and dovecot.unseen() == 0
    assert [row.body["answer"] for row in answers(app)] == ["unreadable"]


def test_idle_wakes_the_poller_for_a_new_reply(imap_app, dovecot) -> None:
    app = imap_app
    a = asked(app)
    imap = connect(app)
    assert "IDLE" in imap.capabilities
    imap.logout()
    stop = threading.Event()
    poller = threading.Thread(target=run, args=(app, stop), daemon=True)
    poller.start()
    try:
        dovecot.append(raw_mail("place 4", to=a.address, sender=a.email))
        # IMAP_POLL_SECONDS is 30: a move much sooner is IDLE's doing, but the check is
        # only that it comes (no timed assertion)
        [event] = wait_for(lambda: _placed(app, a.game_id), timeout=25, what="the move")
        assert event.data["space"] == 3  # the space players read as 4
    finally:
        stop.set()
        poller.join(timeout=10)


def test_mail_that_came_between_the_search_and_idle_ends_the_wait(imap_app, dovecot) -> None:
    """A reply appended after a round's search but before IDLE starts is told before IDLE's
    "+" (RFC 2177): the wait ends at once for it, not after IMAP_POLL_SECONDS."""
    app = imap_app
    a = asked(app)
    imap = connect(app)
    stop, watchdog_fired = threading.Event(), threading.Event()

    def watchdog() -> None:  # ends a wait that missed the mail (long before the 30 s poll)
        if not stop.wait(20):
            watchdog_fired.set()
            stop.set()

    try:
        assert poll_once(app, imap) == 0
        dovecot.append(raw_mail("place 4", to=a.address, sender=a.email))
        guard = threading.Thread(target=watchdog, daemon=True)
        guard.start()
        wait(imap, float(app.config["IMAP_POLL_SECONDS"]), stop)
        assert not watchdog_fired.is_set(), "the wait missed the mail told before IDLE began"
        stop.set()
        assert poll_once(app, imap) == 1
    finally:
        stop.set()
        imap.logout()


def test_mail_told_during_the_round_ends_the_wait(imap_app, dovecot) -> None:
    """A reply that arrives while a round talks to the server is told by an untagged
    ``EXISTS`` among that round's answers (here a ``NOOP``'s), which the server does not repeat
    in IDLE: the wait ends at once for it, not after IMAP_POLL_SECONDS."""
    app = imap_app
    a = asked(app)
    imap = connect(app)
    stop, watchdog_fired = threading.Event(), threading.Event()

    def watchdog() -> None:  # ends a wait that missed the mail (long before the 30 s poll)
        if not stop.wait(20):
            watchdog_fired.set()
            stop.set()

    try:
        assert poll_once(app, imap) == 0
        dovecot.append(raw_mail("place 4", to=a.address, sender=a.email))
        imap.noop()  # the server tells the new mail in this command's answer
        assert "EXISTS" in imap.untagged_responses
        guard = threading.Thread(target=watchdog, daemon=True)
        guard.start()
        wait(imap, float(app.config["IMAP_POLL_SECONDS"]), stop)
        assert not watchdog_fired.is_set(), "the wait missed the mail told during the round"
        stop.set()
        assert poll_once(app, imap) == 1
    finally:
        stop.set()
        imap.logout()


def test_a_reply_read_during_a_database_outage_stays_unseen_until_after_it(
    imap_app, dovecot, pg_url
) -> None:
    app = imap_app
    a = asked(app)
    dovecot.append(raw_mail("place 2\n\n" + quoted(), to=a.address, sender=a.email))
    name = make_url(pg_url).database
    imap = connect(app)
    try:
        refuse_connections(name)
        try:
            assert poll_once(app, imap) == 0
            assert poll_once(app, imap) == 0  # the next round during the outage: still waiting
            assert dovecot.unseen() == 1
        finally:
            allow_connections(name)
        assert poll_once(app, imap) == 1  # the first round after the outage
        assert poll_once(app, imap) == 0
    finally:
        imap.logout()
    assert [e.data["space"] for e in _placed(app, a.game_id)] == [1]
    assert dovecot.unseen() == 0 and len(answers(app)) == 1
