"""Webhooks and push through the real worker (``-Q mail``), to HTTPS endpoints of the tests' own
(``support.hook_server.Receiver``: a certificate for ``localhost`` from a CA of the test's own,
which the worker trusts through ``WEBHOOK_CA_FILE``; loopback allowed for the tests only).

- a whole game's webhook posts: one per event (a refused delivery is tried again), each signed,
  in the webhook's language, with the game's link, and nothing a spectator may not see (each
  text is the one the spectator's scramble of the log gives);
- the guard at delivery: a redirect is not followed, a certificate for another name is not
  taken, loopback is refused when not allowed;
- push: encrypted payloads the test decrypts with the browser keys it made (``http_ece``),
  signed with the server's VAPID key; a 410 drops the subscription.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib
import json
import random
import re
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils
from flask_babel import force_locale
from imtheboss.engine.bots import RandomBot, SensibleBot
from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.seats import set_status
from imtheboss.web.models import Seat, db
from imtheboss.web.outbound import push, webhooks
from imtheboss.web.outbound.outbox import OutboundPost, PushSubscription
from imtheboss.web.outbound.writer import queue_written, write
from sqlalchemy import delete, select
from support.bots import Hoarder
from support.hook_server import Browser, Dripper, Receiver, logged_posts, posted_kinds
from support.play import play_to_end
from support.wait import wait_for

PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla", "Dan")]
SEED = "seed-posted-c0ffee-ZZZ"  # long and unusual: any occurrence in a post is a leak
BASE_URL = "http://testserver"
CSRF = re.compile(r'data-csrf="([^"]+)"')
KEY = re.compile(r'data-key="([^"]+)"')


@pytest.fixture(autouse=True)
def _posts_cleared(app):
    """After each test, its posts are gone: the session's worker retries none of them later
    (in another test's quiet minute)."""
    yield
    with app.app_context():
        db.session.execute(delete(OutboundPost))
        db.session.commit()


@pytest.fixture
def receiver(outbound):
    made = Receiver(outbound.ca_file)
    made.start(outbound.ca)
    yield made
    made.stop()


@pytest.fixture
def sim_clock(clock):
    """The bots' clock a day ahead of the real one: the worker's firing threads (real time)
    find none of the game's deadlines due."""
    clock.now = datetime.now(UTC) + timedelta(days=1)
    return clock


def unsettled(app, gid: str) -> int:
    with app.app_context():
        rows = db.session.execute(
            select(OutboundPost.state).where(OutboundPost.game_id == gid)
        ).scalars()
        return sum(1 for state in rows if state in ("pending", "sending"))


def rows_of(app, gid: str) -> list[OutboundPost]:
    with app.app_context():
        rows = db.session.execute(
            select(OutboundPost).where(OutboundPost.game_id == gid).order_by(OutboundPost.id)
        ).scalars()
        out = list(rows)
        db.session.expunge_all()
        return out


def test_a_whole_game_posts_each_event_once_signed_and_public(
    app, worker, receiver, sim_clock
) -> None:
    refused: list[str] = []

    def answer(path: str, n: int) -> tuple[int, dict[str, str]]:
        if path == "/json" and n == 3:  # the fourth post is refused once: it comes again
            refused.append(path)
            return 503, {}
        return 200, {}

    receiver.answer = answer
    with app.app_context():
        created = create_game("Posted", PLAYERS, {"proxy_hours": 48}, seed=SEED)
        gid = created.game_id
        first = get_game(gid).last_seq
        url = receiver.url("/json")
        json_hook, secret = webhooks.add_hook(gid, "json", url, "zh_Hans", "Asia/Shanghai")
        webhooks.add_hook(gid, "discord", receiver.url("/discord"), "en", "UTC")
        state = load_state(get_game(gid))
    bots = [Hoarder(), SensibleBot(), SensibleBot(), RandomBot()]
    play_to_end(app, sim_clock, gid, state, bots, random.Random(3))
    wait_for(lambda: unsettled(app, gid) == 0, 180, what="every post to be made")

    with app.app_context():
        expected = posted_kinds(gid, after=first)
        scrambled = logged_posts(gid, random.Random(11))
        players = [name for name, _email in PLAYERS]
    rows = rows_of(app, gid)
    assert {row.state for row in rows} == {"sent"}
    taken = [r for r in receiver.at("/json") if r.status == 200]
    bodies = [json.loads(r.body) for r in taken]
    assert sorted((b["seq"], b["event"]) for b in bodies) == expected  # each event once
    assert refused == ["/json"]
    refused_one = next(r for r in receiver.at("/json") if r.status == 503)
    delivery = refused_one.headers["x-imtheboss-delivery"]
    again = [r for r in taken if r.headers["x-imtheboss-delivery"] == delivery]
    assert len(again) == 1 and again[0].body == refused_one.body  # tried again, the same post
    with app.app_context(), force_locale("zh_Hans"):
        zone = "Asia/Shanghai"
        public = {key: webhooks.text_of(post, players, zone) for key, post in scrambled.items()}
    for request, data in zip(taken, bodies, strict=True):
        expect = "sha256=" + hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(request.headers["x-imtheboss-signature"], expect)
        assert request.headers["x-imtheboss-event"] == data["event"]
        assert data["text"] == public[(data["seq"], data["event"])]  # the scramble's text
        assert data["game"] == {"id": gid, "title": "Posted", "url": f"{BASE_URL}/g/{gid}"}
        assert data["language"] == "zh_Hans" and re.search(r"[\u4e00-\u9fff]", data["text"])
    everything = b"".join(r.body for r in receiver.received).decode()
    assert SEED not in everything
    assert not any(token in everything for token in [*created.seat_tokens, created.admin_token])
    discord = [json.loads(r.body) for r in receiver.at("/discord")]
    assert len(discord) == len(expected)
    assert all(d["allowed_mentions"] == {"parse": []} for d in discord)
    assert all(d["content"].endswith(f"<{BASE_URL}/g/{gid}>") for d in discord)
    assert json_hook in {row.webhook_id for row in rows}


def _posts_for_start(app, gid: str) -> None:
    """The game's first events posted to its webhooks (the writer the service calls)."""
    with app.app_context():
        write(gid, 1, load_events(gid, 0, 1), [], now_utc())
        db.session.commit()


def test_the_guard_refuses_a_redirect_another_name_and_loopback_at_delivery(
    local_app, receiver
) -> None:
    importlib.import_module("imtheboss.worker.celery_app")  # the current Celery app
    from imtheboss.worker.outbound import post_one

    receiver.answer = lambda path, n: (302, {"Location": receiver.url("/other")})
    app = local_app(OUTBOUND_TASKS=False)
    strict = local_app(OUTBOUND_TASKS=False, WEBHOOK_ALLOW_LOOPBACK=False)
    with app.app_context():
        gid = create_game("Guarded", PLAYERS).game_id
        redirect_hook, _ = webhooks.add_hook(gid, "json", receiver.url("/redirect"), "en", "UTC")
        other_name, _ = webhooks.add_hook(
            gid, "json", receiver.url("/ip", "127.0.0.1"), "en", "UTC"
        )
        loopback, _ = webhooks.add_hook(gid, "json", receiver.url("/loopback"), "en", "UTC")
    _posts_for_start(app, gid)
    by_hook = {row.webhook_id: row.id for row in rows_of(app, gid)}
    with app.app_context():
        assert post_one.run(by_hook[redirect_hook]) == "failed"
        assert post_one.run(by_hook[other_name]) == "retry"
    with strict.app_context():
        assert post_one.run(by_hook[loopback]) == "failed"
    errors = {row.webhook_id: (row.state, row.error) for row in rows_of(app, gid)}
    assert errors == {
        redirect_hook: ("failed", "redirect"),
        other_name: ("pending", "tls"),  # the certificate is for localhost, not 127.0.0.1
        loopback: ("failed", "not_public"),
    }
    assert [r.path for r in receiver.received] == ["/redirect"]  # the redirect is not followed


def _vapid_claims(authorization: str, public_key: str) -> dict:
    """The claims of a VAPID ``Authorization`` header, its ES256 signature checked with the
    server's public key ``k`` (which must be ``public_key``)."""
    scheme, _space, params = authorization.partition(" ")
    assert scheme == "vapid"
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    assert fields["k"] == public_key
    head, claims, signature = fields["t"].split(".")

    def raw(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    point = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw(public_key))
    sig = raw(signature)
    r, s = int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big")
    der = utils.encode_dss_signature(r, s)
    try:
        point.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        pytest.fail("the VAPID signature does not verify")
    return json.loads(raw(claims))


class Enough(Exception):
    """Every seat has been asked something: the game need not go on."""


def test_pushes_are_encrypted_for_the_phone_and_a_410_drops_it(
    app, worker, receiver, sim_clock, monkeypatch
) -> None:
    receiver.answer = lambda path, n: (410, {}) if path == "/push/3" else (201, {})
    with app.app_context():
        created = create_game("Pushed", PLAYERS, {"proxy_hours": 48})
        gid = created.game_id
        taiwan = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 1)
        ).scalar_one()
        taiwan.locale, taiwan.timezone = "zh_Hant", "Asia/Taipei"
        db.session.commit()
        state = load_state(get_game(gid))
        vapid_public = push.public_key()
    browsers = {seat: Browser() for seat in range(4)}
    for seat, token in enumerate(created.seat_tokens):
        client = app.test_client()
        assert client.get(f"/g/{gid}/s/{token}").status_code == 303
        page = client.get(f"/g/{gid}/settings").get_data(as_text=True)
        assert KEY.search(page).group(1) == vapid_public  # the button and the server's key
        subscription = browsers[seat].subscription(receiver.url(f"/push/{seat}"))
        headers = {"X-CSRFToken": CSRF.search(page).group(1)}
        answer = client.post(f"/g/{gid}/push/subscribe", json=subscription, headers=headers)
        assert answer.status_code == 201, answer.get_data(as_text=True)
        assert client.post(f"/g/{gid}/push/subscribe", json=subscription).status_code == 400

    def after(state) -> None:
        if {row.body["seat"] for row in rows_of(app, gid)} == {0, 1, 2, 3}:
            raise Enough  # every seat's phone was asked something

    bots = [SensibleBot(), SensibleBot(), RandomBot(), SensibleBot()]
    with pytest.raises(Enough):
        play_to_end(app, sim_clock, gid, state, bots, random.Random(4), after=after)
    wait_for(lambda: unsettled(app, gid) == 0, 120, what="every push to be made")

    rows = rows_of(app, gid)
    sent = [row for row in rows if row.state == "sent"]
    with app.app_context():
        game = get_game(gid)
        found = db.session.execute(select(Seat).where(Seat.game_id == gid)).scalars()
        seats = {seat.seat_index: seat for seat in found}
        players = [name for name, _email in PLAYERS]
        shown = {}  # a stop window's words follow the stop cards the seat held at the send
        for holds in (True, False):
            with monkeypatch.context() as patched:
                patched.setattr(push, "has_stop_card", lambda *_args, holds=holds: holds)
                for row in sent:
                    made = push.payload(row, game, seats[row.body["seat"]], players)
                    shown.setdefault(row.id, set()).add(json.dumps(made, sort_keys=True))
        left = (
            db.session.execute(
                select(PushSubscription.seat_index).where(PushSubscription.game_id == gid)
            )
            .scalars()
            .all()
        )
    for seat in range(3):
        received = receiver.at(f"/push/{seat}")
        mine = [row for row in sent if row.body["seat"] == seat]
        assert received and len(received) == len(mine)
        datas = []
        for request in received:
            assert request.headers["content-encoding"] == "aes128gcm"
            assert int(request.headers["ttl"]) > 0
            claims = _vapid_claims(request.headers["authorization"], vapid_public)
            assert claims["aud"] == f"https://localhost:{receiver.port}"
            data = browsers[seat].decrypt(request.body)  # the phone's own keys open it
            assert data["url"].startswith(f"{BASE_URL}/g/{gid}")
            assert not any(token in data["url"] for token in created.seat_tokens)
            if seat == 1:
                assert re.search(r"[\u4e00-\u9fff]", data["body"])  # the seat's own language
            datas.append(json.dumps(data, sort_keys=True))
        for row in mine:  # each sent row arrived once, as the phone shows it
            arrived = next((data for data in datas if data in shown[row.id]), None)
            assert arrived is not None, (row.kind, shown[row.id], datas)
            datas.remove(arrived)
        assert datas == []
    dropped = receiver.at("/push/3")
    gone = [row for row in rows if row.error == "gone"]
    assert dropped and len(dropped) == len(gone)  # each answered 410; then nothing more
    assert all(row.state == "failed" for row in gone)
    assert sorted(left) == [0, 1, 2]  # the phone that answered 410 is dropped
    assert all(row.state in ("sent", "failed", "skipped") for row in rows)


def test_a_reminder_is_pushed_at_once_by_the_worker(app, worker, receiver) -> None:
    """The worker's reminder at 80% of a window (real time: a window of 6 s) is pushed to the
    phone of the seat that owes the answer as soon as it is written, not at the next sweep of
    lost posts; the phone reads what is asked."""
    with app.app_context():
        created = create_game("Reminded", PLAYERS, {"windows": {"turn": 6}})
        gid = created.game_id
        first = load_state(get_game(gid)).active
    browser = Browser()
    client = app.test_client()
    assert client.get(f"/g/{gid}/s/{created.seat_tokens[first]}").status_code == 303
    page = client.get(f"/g/{gid}/settings").get_data(as_text=True)
    headers = {"X-CSRFToken": CSRF.search(page).group(1)}
    subscription = browser.subscription(receiver.url("/push/reminded"))
    answer = client.post(f"/g/{gid}/push/subscribe", json=subscription, headers=headers)
    assert answer.status_code == 201

    def reminded() -> list[OutboundPost]:
        return [r for r in rows_of(app, gid) if r.kind == "reminder" and r.state == "sent"]

    try:
        # the window's 6 s, then the sweep and the post: a loaded machine takes longer
        wait_for(lambda: reminded(), 90, what="the reminder to be pushed")
    finally:
        with app.app_context():
            set_status(gid, "paused")
    (row,) = reminded()
    assert (row.tried_at - row.created_at).total_seconds() < 2  # queued with the reminder
    bodies = [browser.decrypt(r.body)["body"] for r in receiver.at("/push/reminded")]
    assert any(body.startswith("Reminder: ") and "(until " in body for body in bodies), bodies


def test_receivers_dripping_headers_forever_delay_no_mail(app, worker, smtp, outbound) -> None:
    """Six games post to a receiver that answers a header line every 0.2 s and never ends
    (more posts than a worker has threads). Another game's mail still arrives while they drip
    (the posts run on a queue and worker of their own), and each post is cut at its deadline
    (``WEBHOOK_TIMEOUT``: the row goes back to pending with ``timeout``, to be tried again)."""
    dripper = Dripper(outbound.ca)
    hooked: list[str] = []
    try:
        with app.app_context():
            for n in range(6):
                gid = create_game(f"Dripped {n}", PLAYERS).game_id
                webhooks.add_hook(gid, "json", dripper.url(f"/drip/{n}"), "en", "UTC")
                hooked.append(gid)
        for gid in hooked:
            with app.app_context():
                write(gid, 1, load_events(gid, 0, 1), [], now_utc())
                db.session.commit()
                queue_written(gid)
        wait_for(lambda: dripper.dripping() >= 4, 60, what="the receiver to be dripping")
        with app.app_context():
            create_game("Mailed", [(n, f"mailed-{e}") for n, e in PLAYERS])
        wait_for(lambda: len(smtp.about("Mailed")) >= 4, 60, what="the other game's mail")
        assert dripper.dripping() >= 1  # the mail came while posts were still held

        def cut() -> bool:
            rows = [row for gid in hooked for row in rows_of(app, gid)]
            return bool(rows) and all(row.error == "timeout" for row in rows)

        wait_for(cut, 60, what="every post to be cut at its deadline")
    finally:
        dripper.stop()
        with app.app_context():
            for gid in hooked:
                set_status(gid, "paused")
