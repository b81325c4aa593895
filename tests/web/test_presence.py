"""Presence-aware mail (imtheboss.web.games.presence and the mail worker's use of it): a seat whose
live game page polled within ``PRESENCE_SECONDS`` of a notification gets no mail of that news;
a question waits while the seat looks, is dropped if it answers, and is mailed if it leaves
without answering. The edge is tested just inside and just outside, on the injectable clock;
the worker's task bodies run here (``.run``), mailing to the local outbox."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from imtheboss.web.games import presence
from imtheboss.web.games.create import create_game
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Notification, OutboxMail, Seat, db
from sqlalchemy import select, update
from support.deal import PLAYERS, find_setup

TINY = timedelta(microseconds=1)


@pytest.fixture
def tasks():
    importlib.import_module("imtheboss.worker.celery_app")
    from imtheboss.worker import tasks as worker_tasks

    return worker_tasks


def _table(app):
    """The known deal's game, one signed-in client per seat, and the setup."""
    s = find_setup()
    with app.app_context():
        created = create_game("Presence", PLAYERS, seed=s.seed)
        db.session.execute(update(Notification).values(email_state="sent"))  # invitations
        db.session.commit()
    clients = []
    for token in created.seat_tokens:
        client = app.test_client()
        assert client.get(f"/g/{created.game_id}/s/{token}").status_code == 303
        clients.append(client)
    return created.game_id, s, clients


def _open_deal(app, gid: str, s) -> None:
    """The boss places the marker and opens the deal (news for the others)."""
    with app.app_context():
        submit(gid, s.boss, {"do": "place_marker", "space": s.space}, "marker")
        submit(gid, s.boss, {"do": "open_deal"}, "open")


def _travel(app, gid: str, s) -> None:
    """The traveller plays the travel card: a stop window for the boss and the provider."""
    travel = {"do": "travel", "card": s.travel_card, "target": f"investor:{s.letter}"}
    with app.app_context():
        submit(gid, s.traveller, travel, "travel")


def _present_at(app, gid: str, seat: int):
    with app.app_context():
        return db.session.execute(
            select(Seat.present_at).where(Seat.game_id == gid, Seat.seat_index == seat)
        ).scalar_one()


def _rows(app, gid: str, seat: int, kind: str) -> list[int]:
    with app.app_context():
        return list(
            db.session.execute(
                select(Notification.id).where(
                    Notification.game_id == gid,
                    Notification.seat_index == seat,
                    Notification.kind == kind,
                )
            ).scalars()
        )


def _mails(app) -> int:
    with app.app_context():
        return len(db.session.execute(select(OutboxMail.id)).all())


def test_only_a_seat_polling_its_live_page_counts_as_present(app, clock):
    gid, s, clients = _table(app)
    seat = clients[s.provider]
    assert seat.get(f"/g/{gid}").status_code == 200  # the page once (no polling yet)
    assert seat.head(f"/g/{gid}/fragment").status_code == 200
    assert _present_at(app, gid, s.provider) is None
    assert app.test_client().get(f"/g/{gid}/fragment").status_code == 403  # nobody's
    assert seat.get(f"/g/{gid}/fragment").status_code == 200
    assert _present_at(app, gid, s.provider) == clock.now
    assert _present_at(app, gid, s.boss) is None
    with app.app_context():
        row = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == s.provider)
        ).scalar_one()
        window = presence.window()
        assert presence.present(row, clock.now + window)  # just inside
        assert not presence.present(row, clock.now + window + TINY)  # just outside


def test_news_is_not_mailed_to_a_seat_looking_at_the_page_when_it_was_made(app, clock, tasks):
    gid, s, clients = _table(app)
    window = timedelta(seconds=app.config["PRESENCE_SECONDS"])
    outside = s.traveller
    clients[outside].get(f"/g/{gid}/fragment")  # looked a moment too early
    clock.advance(microseconds=1)
    clients[s.provider].get(f"/g/{gid}/fragment")
    clock.now += window  # the deal opens just inside the provider's presence
    _open_deal(app, gid, s)
    assert _rows(app, gid, s.provider, "deal_opened") and _rows(app, gid, outside, "deal_opened")
    clock.advance(seconds=3600)  # the batch delays are over
    with app.app_context():
        assert tasks.send_batch.run(gid, s.provider) == "seen"
        assert tasks.send_batch.run(gid, outside).startswith("sent ")  # its news, in one mail
    assert _mails(app) == 1


def test_a_question_waits_while_the_seat_looks_and_is_dropped_once_answered(app, clock, tasks):
    gid, s, clients = _table(app)
    _open_deal(app, gid, s)
    clients[s.provider].get(f"/g/{gid}/fragment")
    clock.advance(seconds=10)
    _travel(app, gid, s)
    (looking,) = _rows(app, gid, s.provider, "stop")
    (away,) = _rows(app, gid, s.boss, "stop")
    before = _mails(app)
    with app.app_context():
        assert tasks.deliver.run(away) == "sent"  # not looking: mailed at once
        assert tasks.deliver.run(looking) == "present"
    assert _mails(app) == before + 1
    assert clients[s.provider].get(f"/g/{gid}").status_code == 200
    with app.app_context():
        window = db.session.execute(
            select(Notification.body).where(Notification.id == looking)
        ).scalar_one()["window"]
        submit(gid, s.provider, {"do": "allow", "window": window}, "allow")
    clock.advance(seconds=app.config["PRESENCE_SECONDS"] + 60)
    with app.app_context():
        assert tasks.deliver.run(looking) == "skipped"  # answered while looking
    assert _mails(app) == before + 1


def test_a_question_is_mailed_once_the_seat_leaves_without_answering(app, clock, tasks):
    gid, s, clients = _table(app)
    _open_deal(app, gid, s)
    clients[s.provider].get(f"/g/{gid}/fragment")
    look = clock.now
    _travel(app, gid, s)
    (row,) = _rows(app, gid, s.provider, "stop")
    window = timedelta(seconds=app.config["PRESENCE_SECONDS"])
    clock.now = look + window  # still looking, just
    with app.app_context():
        assert tasks.deliver.run(row) == "present"
    clock.now = look + window + TINY  # gone, without an answer
    before = _mails(app)
    with app.app_context():
        assert tasks.deliver.run(row) == "sent"
    assert _mails(app) == before + 1


def test_the_admin_page_counts_a_seat_that_looked_as_opened(app, clock):
    """A seat that opened its link and whose page polled (presence) has opened the game, though
    it has made no move and its page has not been marked seen."""
    with app.app_context():
        created = create_game("Opened", PLAYERS)
    gid = created.game_id
    organiser = app.test_client()
    assert organiser.get(f"/g/{gid}/admin/{created.admin_token}").status_code == 303
    page = organiser.get(f"/g/{gid}/admin").get_data(as_text=True)
    assert page.count("has not opened the game yet") == 3
    seat = app.test_client()
    assert seat.get(f"/g/{gid}/s/{created.seat_tokens[1]}").status_code == 303
    with app.app_context():
        presence.record_look(gid, 1, clock())  # what its page's poll writes
        assert (
            db.session.execute(
                select(Seat.last_seen_at).where(Seat.game_id == gid, Seat.seat_index == 1)
            ).scalar_one()
            is None
        )
    page = organiser.get(f"/g/{gid}/admin").get_data(as_text=True)
    assert page.count("has not opened the game yet") == 2
    assert page.count("last seen") == 1
