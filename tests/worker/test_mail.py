"""Email with a real Celery worker, Redis, PostgreSQL and an aiosmtpd server.

Each email: a plain-text and an HTML part, a first line (and, outside a negotiation, a subject)
saying what is needed and by when (in the seat's time zone), ``Date``, ``Message-ID``,
``List-Unsubscribe`` and one-click ``List-Unsubscribe-Post``. One email per notification row,
even when a task runs twice; mail waits for an SMTP server that is down; news is batched;
reminders at 80% of a window; ``GET`` and ``HEAD`` on emailed links change nothing.
"""

from __future__ import annotations

import importlib
import re
import threading
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from imtheboss.engine.views import legal_commands
from imtheboss.web.app import tasks_out
from imtheboss.web.games.create import create_game
from imtheboss.web.games.seats import mark_seen, seats_of, set_status
from imtheboss.web.models import CommandRecord, Deadline, EventRecord, Game, Notification, Seat, db
from imtheboss.web.replies.choices import has_stop_card
from imtheboss.web.say import messages
from sqlalchemy import func, select, update
from support.worker import (
    act,
    card_plays,
    find_opening,
    legal,
    open_deal_on,
    players,
    rows_of,
    settled,
    timed_out_windows,
    uninvolved,
    wait_for,
)

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
LINK = re.compile(r"http://testserver/[^\s\"'<>]+")


def said(app, row: Notification) -> str:
    """What the row says to its seat in English, its first part (the mail gives the parts after
    it, such as a deal's facts, lines of their own)."""
    with app.test_request_context():
        return messages.row_parts(row, [seat.name for seat in seats_of(row.game_id)])[0]


def well_formed(msg: EmailMessage) -> None:
    """The parts and headers every email must have."""
    assert msg.get_content_type() == "multipart/alternative"
    types = [part.get_content_type() for part in msg.iter_parts()]
    assert types == ["text/plain", "text/html"], types
    assert str(msg["Subject"]).startswith("[I'm the Boss!] ")
    assert parsedate_to_datetime(str(msg["Date"])).tzinfo is not None
    assert re.fullmatch(r"<[^<>@\s]+@[^<>@\s]+>", str(msg["Message-ID"]))
    assert re.fullmatch(r"<http://testserver/u/[^>]+>", str(msg["List-Unsubscribe"]))
    assert str(msg["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"


def body(msg: EmailMessage, kind: str) -> str:
    part = msg.get_body((kind,))
    assert part is not None
    return part.get_content()


def what(msg: EmailMessage) -> str:
    """What the email is about and by when: its first line, lower case (a negotiation's mails
    share one subject, so the subject may not say it)."""
    return body(msg, "plain").splitlines()[0].lower()


def links(msg: EmailMessage) -> set[str]:
    """Every link in the email: both parts and the unsubscribe header."""
    found = set(LINK.findall(body(msg, "plain"))) | set(LINK.findall(body(msg, "html")))
    found.add(str(msg["List-Unsubscribe"]).strip("<>"))
    return {link.replace("&amp;", "&") for link in found}


def all_sent(game_id: str) -> bool:
    return settled(rows_of(game_id))


def seat_row(game_id: str, seat: int) -> Seat:
    out = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat)
    ).scalar_one()
    db.session.rollback()
    return out


def task_done(worker: Any, task_id: str) -> bool:
    return f"[{task_id}] succeeded" in worker.log_since()


def test_every_email_has_both_parts_the_headers_and_what_is_needed_by_when(quiet_app, smtp, worker):
    from imtheboss.web.mail.compose import local_time
    from imtheboss.web.mail.thread import subject_time

    zones = ["Asia/Shanghai", "America/New_York", "Europe/Paris"]
    with quiet_app.app_context():
        gid = create_game("Headers", players("headers"), SLOW, seed=4).game_id
        for seat, zone in enumerate(zones):
            db.session.execute(
                update(Seat)
                .where(Seat.game_id == gid, Seat.seat_index == seat)
                .values(timezone=zone)
            )
        db.session.commit()
        tasks_out.send("imtheboss.worker.tasks.game_changed", gid)
        mails = wait_for(lambda: len(smtp.about("Headers")) >= 4 and smtp.about("Headers"), 20)
        due = db.session.execute(
            select(Deadline.due_at).where(Deadline.game_id == gid, Deadline.window_id == "w0")
        ).scalar_one()
        (marker,) = [r for r in rows_of(gid) if r.kind == "place_marker"]
    assert len(mails) == 4
    for msg in mails:
        well_formed(msg)
        assert "http://testserver/" in body(msg, "plain") and "href=" in body(msg, "html")
    invitations = [m for m in mails if str(m["Subject"]).endswith(": you are invited")]
    assert sorted(str(m["To"]) for m in invitations) == sorted(e for _, e in players("headers"))
    (asked,) = [m for m in mails if "place the marker" in str(m["Subject"])]
    zone = zones[marker.seat_index]
    with quiet_app.app_context():
        when = local_time(due, zone)
        short = subject_time(due, zone, due)  # within the week: its weekday, time and offset
    assert str(asked["To"]) == players("headers")[marker.seat_index][1]
    assert str(asked["Subject"]).endswith(f"place the marker to start (by {short})")
    assert short.split()[0] == when.split()[0] and short.split()[1:] == when.split()[2:]
    local = due.astimezone(ZoneInfo(zone))
    assert local.strftime("%H:%M") in when  # in the seat's zone, which the offset names
    assert when.split()[-1].startswith("UTC") and when.split()[-1] != "UTC"
    assert when in body(asked, "plain") and when in body(asked, "html")


def test_one_click_unsubscribe_without_a_session_stops_mail_to_that_seat(app, smtp, worker):
    with app.app_context():
        gid = create_game("Unsub", players("unsub"), {"windows": {"turn": 2}}, seed=5).game_id
        address = players("unsub")[0][1]
        (invite,) = wait_for(lambda: smtp.to(address), 20, what="the invitation")
        well_formed(invite)
        url = str(invite["List-Unsubscribe"]).strip("<>")
        client = app.test_client()  # no session, no CSRF token: RFC 8058 one-click
        answer = client.post(
            urlsplit(url).path,
            data="List-Unsubscribe=One-Click",
            content_type="application/x-www-form-urlencoded",
        )
        assert answer.status_code == 200, answer.get_data(as_text=True)
        stopped = datetime.now(UTC)
        assert seat_row(gid, 0).notify == "off"

        def later_rows_settled() -> list[Notification]:
            later = [r for r in rows_of(gid, 0) if r.created_at > stopped]
            return later if later and settled(later) else []

        # Turns go round every 2 s: seat 0 is asked again (and reminded) while unsubscribed.
        later = wait_for(later_rows_settled, 20, what="seat 0 to be asked again")
        set_status(gid, "paused")
        assert {r.email_state for r in later} == {"skipped"}
        wait_for(lambda: all_sent(gid), 10, what="the rest of the mail")
        sent = [r for r in rows_of(gid, 0) if r.email_state == "sent"]
        assert len(smtp.to(address)) == len(sent)  # nothing after the unsubscribe
        others = smtp.to(players("unsub")[1][1])
        assert others, "the other seats still get mail"


def test_get_and_head_on_every_emailed_link_change_nothing(app, smtp, worker):
    """Mail scanners prefetch links: ``GET`` and ``HEAD`` on every link in every email (the
    seat's sign-in link, the decision link, the unsubscribe link) change no event, no
    notification and no seat setting."""
    seed, space = find_opening(3, lambda state, space: len(uninvolved(state, space)) >= 1)
    with app.app_context():
        created = create_game("Links", players("links"), SLOW, seed=seed)
        gid = created.game_id
        active = open_deal_on(gid, space, 3)
        act(gid, active, {"do": "fail"}, "k3")
        wait_for(lambda: all_sent(gid), 20, what="the mail")
        mails = smtp.about("Links")
        assert len(mails) >= 6  # 3 invitations, the marker, the next turn, news

        def snapshot() -> tuple:
            out = (
                db.session.execute(
                    select(func.count()).select_from(EventRecord).where(EventRecord.game_id == gid)
                ).scalar_one(),
                db.session.execute(
                    select(func.count())
                    .select_from(CommandRecord)
                    .where(CommandRecord.game_id == gid)
                ).scalar_one(),
                [
                    (r.id, r.kind, r.email_state, r.read_at, r.emailed_at, r.attempts)
                    for r in rows_of(gid)
                ],
                [
                    tuple(getattr(s, c.key) for c in Seat.__table__.columns)
                    for s in db.session.execute(
                        select(Seat).where(Seat.game_id == gid).order_by(Seat.seat_index)
                    ).scalars()
                ],
                db.session.execute(select(Game.status, Game.last_seq).where(Game.id == gid)).one(),
            )
            db.session.rollback()
            return out

        before = snapshot()
        seen: set[str] = set()
        for msg in mails:
            well_formed(msg)
            seat = next(i for i, (_, e) in enumerate(players("links")) if e == str(msg["To"]))
            for link in links(msg):
                seen.add(link)
                path = urlsplit(link).path
                for method in ("GET", "HEAD"):
                    client = app.test_client()  # a scanner: no session
                    answer = client.open(path, method=method)
                    assert answer.status_code < 400, (method, link, answer.status_code)
                    if "/m/" in path and method == "GET":  # the link signs that seat in
                        assert answer.status_code == 303
                        with client.session_transaction() as session:
                            entry = session["seats"][gid]  # [seat, token fingerprint]
                        assert (entry[0] if isinstance(entry, list) else entry) == seat
        assert any("/m/" in s for s in seen) and any("/u/" in s for s in seen)
        assert snapshot() == before
        tokens = created.seat_tokens
        for msg in mails:  # no seat's secret token in another seat's mail (A8)
            seat = next(i for i, (_, e) in enumerate(players("links")) if e == str(msg["To"]))
            text = body(msg, "plain") + body(msg, "html")
            assert not any(t in text for i, t in enumerate(tokens) if i != seat)


def test_one_email_per_notification_row_when_delivery_runs_twice(quiet_app, smtp, worker):
    importlib.import_module(
        "imtheboss.worker.celery_app"
    )  # the current Celery app: the tests' Redis db
    from imtheboss.worker.tasks import deliver

    with quiet_app.app_context():  # nothing enqueued after commit: the tasks are ours
        gid = create_game("Twice", players("twice"), SLOW, seed=6).game_id
        invites = {r.seat_index: r.id for r in rows_of(gid) if r.kind == "invited"}
        # Twice through the worker, at once (four threads: both run together).
        ids = [
            tasks_out.client().send_task("imtheboss.worker.tasks.deliver", args=(invites[0],)).id
            for _ in range(2)
        ]
        wait_for(lambda: all(task_done(worker, i) for i in ids), 20, what="both deliveries")
        # Twice here, in two threads at the same moment, then once more.
        results: list[str] = []
        gate = threading.Barrier(2)

        def run() -> None:
            with quiet_app.app_context():
                gate.wait()
                results.append(deliver.run(invites[1]))
                db.session.remove()

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        results.append(deliver.run(invites[1]))
        assert sorted(results) == ["done", "done", "sent"]
        states = {r.seat_index: r.email_state for r in rows_of(gid) if r.kind == "invited"}
        assert states[0] == states[1] == "sent"
    assert len(smtp.to(players("twice")[0][1])) == 1
    assert len(smtp.to(players("twice")[1][1])) == 1


def test_mail_waits_for_the_smtp_server_and_goes_out_once_it_is_back(app, smtp, worker):
    seed, space = find_opening(4, lambda state, space: len(uninvolved(state, space)) >= 1)
    smtp.stop()
    with app.app_context():
        gid = create_game("Outage", players("outage", 4), SLOW, seed=seed).game_id
        active = open_deal_on(gid, space, 4)
        act(gid, active, {"do": "fail"}, "k3")

        def retried() -> bool:  # every row tried and failed at least twice (news included)
            rows = rows_of(gid)
            return all(r.email_state == "pending" and r.attempts >= 2 for r in rows)

        wait_for(retried, 30, what="failed attempts while the server is down")
        smtp.start()
        wait_for(lambda: all_sent(gid), 30, what="the mail once the server is back")
        rows = rows_of(gid)
        assert {r.email_state for r in rows} == {"sent"}
    mails = smtp.about("Outage")
    ids = [str(m["Message-ID"]) for m in mails]
    assert len(ids) == len(set(ids))
    for seat, (_, address) in enumerate(players("outage", 4)):
        urgent = [r for r in rows if r.seat_index == seat and r.urgent]
        news = [r for r in rows if r.seat_index == seat and not r.urgent]
        got = smtp.to(address)
        assert len(got) == len(urgent) + (1 if news else 0), (seat, [m["Subject"] for m in got])
        for msg in got:
            well_formed(msg)
        subjects = sorted((str(m["Subject"]), what(m)) for m in got)
        assert len(subjects) == len(set(subjects))  # no email twice


def test_a_reminder_goes_to_each_seat_still_owing_an_answer_at_80_percent(app, smtp, worker):
    """A stop window of 15 s with two seats to answer; one answers, the other (holding a stop
    card: it has a choice) is reminded after 12 s, before the deadline; nobody else is."""

    def stoppable(state, space) -> bool:  # the first card play leaves both others a choice
        plays = card_plays(state)
        return bool(plays) and all(has_stop_card(state, s) for s in range(3) if s != plays[0][0])

    seed, space = find_opening(3, stoppable)
    windows = {"windows": {"turn": 3600, "stop": 15, "last_call": 3600, "negotiation": 7200}}
    with app.app_context():
        gid = create_game("Remind", players("remind"), windows, seed=seed).game_id
        open_deal_on(gid, space, 3)
        seat, card = next(
            (s, c) for s in range(3) for c in legal(gid, s, "travel") + legal(gid, s, "boss")
        )
        act(gid, seat, card, "k3")
        eligible = [s for s in range(3) if legal(gid, s, "allow")]
        assert len(eligible) == 2
        answered, owing = eligible
        (allow,) = legal(gid, answered, "allow")
        window = allow["window"]
        act(gid, answered, allow, "k4")
        deadline = db.session.execute(
            select(Deadline).where(Deadline.game_id == gid, Deadline.window_id == window)
        ).scalar_one()
        opened, due = deadline.opened_at, deadline.due_at
        db.session.rollback()
        address = players("remind")[owing][1]

        def reminded() -> list[EmailMessage]:
            return [m for m in smtp.to(address) if "reminder" in what(m)]

        (mail,) = wait_for(reminded, 20, what="the reminder")
        arrived = smtp.arrival(mail)
        set_status(gid, "paused")
        well_formed(mail)
        assert opened + (due - opened) * 0.8 <= arrived < due, (opened, arrived, due)
        assert " (by " in what(mail)
        rows = [r for r in rows_of(gid) if r.kind == "reminder"]
        assert [(r.seat_index, r.body["window"]) for r in rows] == [(owing, window)]
        for other in set(range(3)) - {owing}:
            mails = smtp.to(players("remind")[other][1])
            assert not [m for m in mails if "reminder" in what(m)]


def test_news_waits_and_goes_out_as_one_email_unless_the_seat_has_looked(app, smtp, worker):
    """Non-urgent rows (a deal opened elsewhere, a deal failed) wait ``BATCH_DELAY`` and go out
    as one email; a seat that looked at the game since gets none."""
    seed, space = find_opening(4, lambda state, space: len(uninvolved(state, space)) >= 2)
    with app.app_context():
        gid = create_game("News", players("news", 4), SLOW, seed=seed).game_id
        active = open_deal_on(gid, space, 4)
        act(gid, active, {"do": "fail"}, "k3")
        made = datetime.now(UTC)
        news = {}
        for row in rows_of(gid):
            if not row.urgent:
                news.setdefault(row.seat_index, []).append(row)
        quiet = [s for s, rows in news.items() if len(rows) >= 2]
        assert len(quiet) >= 2, news
        looked, waiting = quiet[:2]
        last_seq = db.session.execute(select(Game.last_seq).where(Game.id == gid)).scalar_one()
        mark_seen(gid, looked, last_seq)
        wait_for(lambda: all_sent(gid), 20, what="the news")
        states = {r.id: r.email_state for r in rows_of(gid)}
    assert {states[r.id] for r in news[looked]} == {"skipped"}
    assert {states[r.id] for r in news[waiting]} == {"sent"}
    mails = smtp.to(players("news", 4)[waiting][1])
    got = [m for m in mails if "things happened" in what(m)]
    assert len(got) == 1
    (batch,) = got
    well_formed(batch)
    assert f"{len(news[waiting])} things happened" in what(batch)
    for row in news[waiting]:
        assert said(app, row) in body(batch, "plain")
    assert smtp.arrival(batch) >= made + timedelta(seconds=1.5)  # it waited BATCH_DELAY
    looked_mail = smtp.to(players("news", 4)[looked][1])
    assert not [m for m in looked_mail if "things happened" in what(m)]
    assert all(not any(said(app, r) in body(m, "plain") for r in news[looked]) for m in looked_mail)


def test_a_reminder_whose_window_ended_before_it_could_go_out_is_dropped(app, smtp, worker):
    """The reminder for the first window is written while the SMTP server is down; the window
    times out before the server is back: the reminder is ``skipped``, never sent late."""
    # 10 s: the reminder is due from 8 s on, and the sweep (every second) finds it before 10 s.
    windows = {"windows": {"turn": 10, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
    smtp.stop()
    with app.app_context():
        gid = create_game("Late", players("late"), windows, seed=9).game_id

        def tried() -> list[Notification]:
            rows = [r for r in rows_of(gid) if r.kind == "reminder" and r.body["window"] == "w0"]
            return rows if rows and rows[0].attempts >= 1 else []

        (reminder,) = wait_for(tried, 20, what="a failed try at the reminder")
        wait_for(lambda: "w0" in timed_out_windows(gid), 20, what="the first window to time out")
        set_status(gid, "paused")
        smtp.start()

        def reminder_settled() -> Notification | None:
            row = next(r for r in rows_of(gid) if r.id == reminder.id)
            return row if settled([row]) else None

        row = wait_for(reminder_settled, 40, what="the reminder to be settled")
        wait_for(lambda: all_sent(gid), 40, what="the rest of the mail")
    assert row.email_state == "skipped"
    address = players("late")[reminder.seat_index][1]
    assert smtp.to(address), "the seat's other mail went out once the server was back"
    assert not [m for m in smtp.to(address) if "reminder" in what(m)]


def offers(state: Any) -> list[tuple[int, dict[str, Any]]]:
    """``(seat, command)`` for every offer a seat other than the boss can make now."""
    return [
        (seat, cmd)
        for seat in range(state.n)
        if seat != state.deal.boss
        for cmd in legal_commands(state, seat)
        if cmd["do"] == "offer"
    ]


def test_forty_new_terms_in_a_burst_give_each_side_one_mail(app, smtp, worker):
    """A provider re-offers 40 times and the boss answers each with new terms, in a burst: the
    boss gets one mail listing the offers, the provider one listing the boss's terms (batched
    like news); the inbox keeps every one."""
    seed, space = find_opening(3, lambda state, space: bool(offers(state)))
    with app.app_context():
        gid = create_game("Terms", players("terms"), SLOW, seed=seed).game_id
        boss = open_deal_on(gid, space, 3)
        provider, offer = next(
            (s, c) for s in range(3) if s != boss for c in legal(gid, s, "offer")
        )
        for i in range(40):
            act(gid, provider, {**offer, "price": {"cash": i % 9 + 1}}, f"offer-{i}")
            terms = {"do": "propose", "to": provider, "card": offer["card"]}
            act(gid, boss, {**terms, "price": {"cash": i % 7 + 1}}, f"propose-{i}")

        def terms_settled() -> list[Notification]:
            rows = [r for r in rows_of(gid) if r.kind == "offer"]
            return rows if settled(rows) else []

        rows = wait_for(terms_settled, 40, what="the mail about the terms")
    for seat in (boss, provider):
        terms_rows = [r for r in rows if r.seat_index == seat]
        assert len(terms_rows) == 40  # the inbox shows each
        assert {r.email_state for r in terms_rows} == {"sent"}
        about = [
            m
            for m in smtp.to(players("terms")[seat][1])
            if any(said(app, r) in body(m, "plain") for r in terms_rows)
        ]
        assert len(about) == 1, [str(m["Subject"]) for m in about]
        (mail,) = about
        well_formed(mail)
        assert all(said(app, r) in body(mail, "plain") for r in terms_rows)
