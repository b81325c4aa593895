"""A seat's phones on the web side (PostgreSQL, no worker): the settings page's button with the
server's VAPID key, ``POST /g/<gid>/push/subscribe`` (CSRF as every post; bad keys, a plain
http or private push service, another game's browser: refused, nothing stored), the service
worker from the root, the manifest; push off without a key; the embedded default's own key.
tests/worker/test_outbound.py pushes through a real worker."""

from __future__ import annotations

import base64
import random
import re

import pytest
from flask_babel import force_locale, gettext
from imtheboss.engine.bots import SensibleBot
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.mail.kinds import PUSHED
from imtheboss.web.models import Notification, Seat, db
from imtheboss.web.outbound import push
from imtheboss.web.outbound.outbox import OutboundPost, PushSubscription
from imtheboss.web.say import decisions, display
from py_vapid import Vapid
from sqlalchemy import func, select, update
from support.app import make_app
from support.hook_server import Browser
from support.play import play_to_end

PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla")]
CSRF = re.compile(r'data-csrf="([^"]+)"')
ENDPOINT = "https://localhost:8443/push/1"


@pytest.fixture(scope="module")
def vapid_pem() -> str:
    key = Vapid()
    key.generate_keys()
    return key.private_pem().decode()


@pytest.fixture
def app_config(vapid_pem: str) -> dict:
    return {"WEBHOOK_ALLOW_LOOPBACK": True, "OUTBOUND_TASKS": False, "VAPID_PRIVATE_KEY": vapid_pem}


def seat_client(app, gid: str, token: str):
    client = app.test_client()
    assert client.get(f"/g/{gid}/s/{token}").status_code == 303
    page = client.get(f"/g/{gid}/settings").get_data(as_text=True)
    match = CSRF.search(page)
    headers = {"Accept": "application/json"}  # as static/push.js asks
    return client, {**headers, "X-CSRFToken": match.group(1)} if match else headers, page


def phones(app) -> list[tuple[str, int, str]]:
    with app.app_context():
        rows = db.session.execute(
            select(
                PushSubscription.game_id, PushSubscription.seat_index, PushSubscription.endpoint
            ).order_by(PushSubscription.id)
        ).all()
        return [tuple(row) for row in rows]


def test_a_seat_allows_notifications_on_its_phone(app) -> None:
    with app.app_context():
        created = create_game("Phones", PLAYERS)
        key = push.public_key()
    gid = created.game_id
    client, headers, page = seat_client(app, gid, created.seat_tokens[1])
    assert f'data-key="{key}"' in page and "push.js" in page
    subscription = Browser().subscription(ENDPOINT)
    answer = client.post(f"/g/{gid}/push/subscribe", json=subscription, headers=headers)
    assert answer.status_code == 201
    again = client.post(f"/g/{gid}/push/subscribe", json=subscription, headers=headers)
    assert again.status_code == 201  # the same phone again: still one
    assert phones(app) == [(gid, 1, ENDPOINT)]
    assert "1 phone gets notifications" in client.get(f"/g/{gid}/settings").get_data(as_text=True)
    off = client.post(f"/g/{gid}/push/unsubscribe", json={"endpoint": ENDPOINT}, headers=headers)
    assert off.status_code == 200 and phones(app) == []


def test_a_subscription_is_refused_unless_it_is_sound_and_the_seats_own(app) -> None:
    with app.app_context():
        created = create_game("Phones", PLAYERS)
        other = create_game("Another", PLAYERS)
    gid = created.game_id
    client, headers, _page = seat_client(app, gid, created.seat_tokens[0])
    good = Browser().subscription(ENDPOINT)
    bad = [
        {**good, "endpoint": "http://localhost/push"},  # not https
        {**good, "endpoint": "https://10.0.0.8/push"},  # a private network
        {**good, "endpoint": "https://[fec0::1]/push"},  # site-local
        {**good, "endpoint": "https://[3fff::1]/push"},  # documentation
        {**good, "keys": {"p256dh": "AAAA", "auth": good["keys"]["auth"]}},  # not a P-256 key
        {**good, "keys": {"p256dh": good["keys"]["p256dh"], "auth": "c2hvcnQ"}},  # 5 bytes
        {"endpoint": ENDPOINT},
        ["not", "an", "object"],
    ]
    for body in bad:
        answer = client.post(f"/g/{gid}/push/subscribe", json=body, headers=headers)
        assert answer.status_code == 400, body
        assert answer.get_json()["error"]["message"]
    assert client.post(f"/g/{gid}/push/subscribe", json=good).status_code == 400  # no CSRF token
    stranger = app.test_client()
    assert stranger.post(f"/g/{gid}/push/subscribe", json=good).status_code in (400, 403)
    outsider, outsider_headers, _page = seat_client(app, other.game_id, other.seat_tokens[0])
    answer = outsider.post(f"/g/{gid}/push/subscribe", json=good, headers=outsider_headers)
    assert answer.status_code == 403
    assert phones(app) == []


def _off_curve(good: dict) -> str:
    """A p256dh of the right shape (65 bytes, starting 0x04) that is no point of P-256."""
    raw = base64.urlsafe_b64decode(good["keys"]["p256dh"] + "==")
    x, y = raw[1:33], bytearray(raw[33:])
    y[-1] ^= 1  # the same x with another y: off the curve
    return base64.urlsafe_b64encode(b"\x04" + x + bytes(y)).rstrip(b"=").decode()


def test_a_key_off_the_curve_is_refused_in_json_without_asking_for_it(app) -> None:
    with app.app_context():
        created = create_game("Phones", PLAYERS)
    gid = created.game_id
    client, headers, _page = seat_client(app, gid, created.seat_tokens[0])
    plain = {"X-CSRFToken": headers["X-CSRFToken"]}  # no Accept: JSON all the same
    good = Browser().subscription(ENDPOINT)
    off = {**good, "keys": {**good["keys"], "p256dh": _off_curve(good)}}
    answer = client.post(f"/g/{gid}/push/subscribe", json=off, headers=plain)
    assert answer.status_code == 400 and answer.is_json
    assert answer.get_json()["error"]["message"] == "This browser's push keys are not valid."
    assert phones(app) == []
    stranger = app.test_client().post(f"/g/{gid}/push/subscribe", json=good)
    assert stranger.status_code in (400, 403) and stranger.is_json


def test_unsubscribe_removes_only_a_phone_of_this_seat_and_says_when_there_is_none(app) -> None:
    with app.app_context():
        created = create_game("Phones", PLAYERS)
    gid = created.game_id
    amy, amy_headers, _page = seat_client(app, gid, created.seat_tokens[0])
    bill, bill_headers, _page = seat_client(app, gid, created.seat_tokens[1])
    sub = Browser().subscription(ENDPOINT)
    assert amy.post(f"/g/{gid}/push/subscribe", json=sub, headers=amy_headers).status_code == 201
    plain = {"X-CSRFToken": bill_headers["X-CSRFToken"]}
    for body in ({"endpoint": ENDPOINT}, {"endpoint": ""}, {}, ["x"], {"endpoint": 5}):
        answer = bill.post(f"/g/{gid}/push/unsubscribe", json=body, headers=plain)
        assert answer.status_code in (400, 404) and answer.is_json, body
        assert answer.get_json()["error"]["message"]
    none = bill.post(f"/g/{gid}/push/unsubscribe", json={"endpoint": ENDPOINT}, headers=plain)
    assert none.status_code == 404
    assert none.get_json()["error"]["message"] == (
        "This phone does not get notifications for your seat."
    )
    assert phones(app) == [(gid, 0, ENDPOINT)]  # Amy's phone is still hers
    off = amy.post(f"/g/{gid}/push/unsubscribe", json={"endpoint": ENDPOINT}, headers=amy_headers)
    assert off.status_code == 200 and phones(app) == []
    again = amy.post(f"/g/{gid}/push/unsubscribe", json={"endpoint": ENDPOINT}, headers=amy_headers)
    assert again.status_code == 404


class Enough(Exception):
    pass


def test_every_question_is_pushed_to_its_own_seats_phones_only(app, clock) -> None:
    """The rows written with the events for phones: one per question a subscribed seat is
    asked (the mail's rows of ``ASKING``) or "you are next" (``PUSHED``) and phone, with that
    row's own body; none for a seat without a phone."""
    with app.app_context():
        created = create_game("Phones", PLAYERS, {"proxy_hours": 48})
        state = load_state(get_game(created.game_id))
        first = get_game(created.game_id).last_seq  # asked before the phones: not pushed
    gid = created.game_id
    for seat in (0, 1):
        client, headers, _page = seat_client(app, gid, created.seat_tokens[seat])
        sub = Browser().subscription(f"{ENDPOINT}/{seat}")
        assert client.post(f"/g/{gid}/push/subscribe", json=sub, headers=headers).status_code == 201
    done = []

    def after(_state) -> None:
        done.append(1)
        if len(done) == 80:
            raise Enough

    with pytest.raises(Enough):
        play_to_end(app, clock, gid, state, [SensibleBot()] * 3, random.Random(2), after=after)
    with app.app_context():
        subs = dict(
            db.session.execute(select(PushSubscription.seat_index, PushSubscription.id)).all()
        )
        notes = db.session.execute(
            select(Notification).where(Notification.kind.in_(sorted(PUSHED)))
        ).scalars()
        expected = {
            f"p:{subs[n.seat_index]}:{n.dedupe_key}": (n.kind, n.seat_index, n.body)
            for n in notes
            if n.seat_index in subs and n.seq > first
        }
        rows = db.session.execute(select(OutboundPost)).scalars().all()
        got = {r.dedupe_key: (r.kind, r.body["seat"], r.body["body"]) for r in rows}
        nxt = next(r for r in rows if r.kind == "you_are_next")
        seat = db.session.scalars(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == nxt.body["seat"])
        ).one()
        shown = push.payload(nxt, get_game(gid), seat, [n for n, _e in PLAYERS])
    assert got == expected
    assert {seat for _kind, seat, _body in got.values()} == {0, 1}
    dated = {"offer", "you_are_next"}  # new terms, and "you are next", have no deadline
    assert all(body.get("until") for kind, _seat, body in got.values() if kind not in dated)
    after = PLAYERS[nxt.body["body"]["after"]][0]
    assert shown["body"].startswith(f"You are next, after {after}.")
    assert shown["url"].endswith(f"/g/{gid}") and shown["tag"] == f"{gid}:you_are_next"


def test_the_service_worker_and_the_manifest(app) -> None:
    client = app.test_client()
    worker = client.get("/sw.js")
    assert worker.status_code == 200
    assert worker.headers["Content-Type"].startswith("text/javascript")
    assert b"showNotification" in worker.data
    home = client.get("/").get_data(as_text=True)
    assert 'rel="manifest"' in home
    manifest = client.get("/static/manifest.webmanifest")
    assert manifest.status_code == 200 and b'"display": "standalone"' in manifest.data


def test_without_a_key_push_is_off(_migrated, clock) -> None:
    app = make_app(_migrated, clock, OUTBOUND_TASKS=False, WEBHOOK_ALLOW_LOOPBACK=True)
    with app.app_context():
        created = create_game("No push", PLAYERS)
        assert push.public_key() is None
    gid = created.game_id
    client = app.test_client()
    assert client.get(f"/g/{gid}/s/{created.seat_tokens[0]}").status_code == 303
    page = client.get(f"/g/{gid}/settings").get_data(as_text=True)
    assert "data-push" not in page
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    sub = Browser().subscription(ENDPOINT)
    answer = client.post(f"/g/{gid}/push/subscribe", json=sub, headers={"X-CSRFToken": token})
    assert answer.status_code == 409
    with app.app_context():
        assert db.session.execute(select(func.count()).select_from(PushSubscription)).scalar() == 0


def test_the_embedded_default_makes_its_key_once(tmp_path, clock) -> None:
    url = f"sqlite:///{tmp_path / 'e.sqlite3'}"
    keys = []
    for _ in range(2):
        app = make_app(url, clock, EMBEDDED=True, INSTANCE_DIR=str(tmp_path), AUTO_MIGRATE=False)
        with app.app_context():
            keys.append(push.public_key())
    assert keys[0] and keys[0] == keys[1]
    path = tmp_path / push.KEY_FILE
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_reminder_is_pushed_with_what_is_asked_and_by_when_in_the_seats_language(
    app, clock
) -> None:
    """The reminder at 80% of a window (the worker's ``write_reminders``, run here) is pushed at
    once to the phones of the seat that owes the answer, and to no other seat's; its words are
    what the seat is still asked and by when, in the seat's language and zone."""
    from imtheboss.web.mail.reminders import claim_reminders, plan_reminders, write_reminders

    with app.app_context():
        created = create_game("Phones", PLAYERS, {"windows": {"turn": 3600}})
        gid = created.game_id
        first = load_state(get_game(gid)).active
        other = (first + 1) % len(PLAYERS)
        db.session.execute(
            update(Seat)
            .where(Seat.game_id == gid, Seat.seat_index == first)
            .values(locale="zh_Hans", timezone="Asia/Shanghai")
        )
        db.session.commit()
    for seat in (first, other):
        client, headers, _page = seat_client(app, gid, created.seat_tokens[seat])
        sub = Browser().subscription(f"{ENDPOINT}/{seat}")
        assert client.post(f"/g/{gid}/push/subscribe", json=sub, headers=headers).status_code == 201
    clock.advance(minutes=47)
    with app.app_context():
        plan_reminders()
        assert claim_reminders(clock(), 10) == []  # not yet: 80% is 48 minutes
        clock.advance(minutes=1)
        made = write_reminders(claim_reminders(clock(), 10), clock())
        assert len(made) == 1
        rows = (
            db.session.execute(select(OutboundPost).where(OutboundPost.kind == "reminder"))
            .scalars()
            .all()
        )
        assert [r.body["seat"] for r in rows] == [first]  # the other seat owes nothing
        (row,) = rows
        sub = db.session.get(PushSubscription, row.subscription_id)
        assert sub.seat_index == first and row.state == "pending"
        game = get_game(gid)
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == first)
        ).scalar_one()
        names = [name for name, _email in PLAYERS]
        shown = push.payload(row, game, seat, names)
        with force_locale("zh_Hans"):
            asked = str(decisions._WAITS["place_marker"])
            until = display.page_time(row.body["body"]["until"], "Asia/Shanghai")
            reminder = gettext("Reminder: %(asked)s", asked=asked)
    assert reminder != f"Reminder: {asked}"  # the catalog's Chinese
    assert shown["body"].startswith(reminder) and until in shown["body"]
    assert shown["url"].endswith(f"/g/{gid}#window-{row.body['body']['window']}")
