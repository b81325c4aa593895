"""A seat's first turn mail never arrives before its invitation: both are urgent and each has
a ``deliver`` task of its own, side by side, so the turn's task that runs first leaves its row
pending (``after_invitation``) until the invitation is out, and the sweep sends it then.

The worker's delivery code runs in this process (``deliver.run``) against a real aiosmtpd
server and the tests' PostgreSQL database."""

from __future__ import annotations

from imtheboss.web.app import tasks_out
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.models import Notification, db
from sqlalchemy import select
from support.wait import free_port
from support.worker import Mailbox, deliver_here, invitation, players, wait_for

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def test_the_first_turn_mail_waits_for_the_invitation(local_app) -> None:
    box = Mailbox(free_port())
    box.start()
    try:
        app = local_app(SMTP_HOST="127.0.0.1", SMTP_PORT=box.port)
        with app.app_context():
            gid = create_game("first", players("first"), SLOW, seed=7).game_id
            first = load_state(get_game(gid)).active
            turn = db.session.execute(
                select(Notification.id).where(
                    Notification.game_id == gid,
                    Notification.seat_index == first,
                    Notification.kind != "invited",
                    Notification.urgent.is_(True),
                )
            ).scalar_one()
            db.session.rollback()
            assert deliver_here(turn) == "after_invitation"
            assert box.messages == []
            assert db.session.get(Notification, turn).email_state == "pending"
            db.session.rollback()
            assert deliver_here(invitation(gid, first).id) == "sent"
            assert deliver_here(turn) == "sent"
        subjects = [str(m["Subject"]) for m in box.messages]
        assert len(subjects) == 2 and "invited" in subjects[0].lower(), subjects
    finally:
        box.stop()


def test_with_the_worker_the_first_player_reads_the_invitation_first(quiet_app, smtp, worker):
    """Through the running worker (both tasks queued at once): the first player's mails come
    invitation first, and the turn mail does not wait for the sweep."""
    with quiet_app.app_context():
        gid = create_game("Order", players("order"), SLOW, seed=4).game_id
        first = load_state(get_game(gid)).active
        tasks_out.send("imtheboss.worker.tasks.game_changed", gid)
        to = players("order")[first][1]
        mails = wait_for(lambda: len(smtp.about("Order")) >= 4 and smtp.about("Order"), 20)
    theirs = [str(m["Subject"]) for m in mails if str(m["To"]) == to]
    assert len(theirs) == 2 and theirs[0].endswith(": you are invited"), theirs
