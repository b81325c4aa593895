"""Webhooks on the web side (PostgreSQL, no worker): the organiser's page, the SSRF guard's
checks, and the outbox rows a whole game writes, one per (webhook, event), public information
only (the spectator's scramble of the log leaves them as they are). tests/worker/test_outbound.py
posts them to an HTTPS endpoint of the tests' own through a real worker."""

from __future__ import annotations

import importlib
import json
import random
import re

import pytest
from imtheboss.engine.bots import RandomBot, SensibleBot
from imtheboss.engine.views import legal_commands
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.outbound import ssrf, webhooks
from imtheboss.web.outbound.outbox import OutboundPost, Webhook
from sqlalchemy import func, select
from support.app import make_app
from support.bots import Hoarder
from support.hook_server import Receiver, logged_posts, new_ca, posted_kinds
from support.play import play_to_end
from support.wait import free_port

PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla", "Dan")]
SEED = "seed-webhooks-c0ffee-QQQ"  # long and unusual: any occurrence in a post is a leak
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def app_config() -> dict:
    return app_config_of()


def organiser(app, gid: str, admin_token: str):
    client = app.test_client()
    assert client.get(f"/g/{gid}/admin/{admin_token}").status_code == 303
    return client


def add(client, gid: str, url: str, kind: str = "json", **extra):
    page = client.get(f"/g/{gid}/admin/hooks")
    token = CSRF.search(page.get_data(as_text=True)).group(1)
    form = {"csrf_token": token, "url": url, "kind": kind, "locale": "en", "timezone": "UTC"}
    return client.post(f"/g/{gid}/admin/hooks", data={**form, **extra})


def hook_count(app) -> int:
    with app.app_context():
        return (
            app.extensions["sqlalchemy"]
            .session.execute(select(func.count()).select_from(Webhook))
            .scalar_one()
        )


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/hook",  # not https
        "https://10.1.2.3/hook",  # private
        "https://192.168.0.7/hook",
        "https://169.254.169.254/latest/meta-data",  # link-local (cloud metadata)
        "https://[::ffff:10.0.0.1]/hook",  # IPv4-mapped IPv6 of a private address
        "https://[fd00::1]/hook",  # unique local IPv6
        "https://user:pw@localhost/hook",  # user info
        "not a url",
    ],
)
def test_the_organiser_cannot_add_an_address_the_guard_refuses(app, url: str) -> None:
    with app.app_context():
        created = create_game("Hooks", PLAYERS)
    client = organiser(app, created.game_id, created.admin_token)
    answer = add(client, created.game_id, url)
    assert answer.status_code == 400
    assert "error-box" in answer.get_data(as_text=True)
    assert hook_count(app) == 0


def test_only_the_organiser_sees_and_changes_the_webhooks(app) -> None:
    with app.app_context():
        created = create_game("Hooks", PLAYERS)
    gid = created.game_id
    player = app.test_client()
    assert player.get(f"/g/{gid}/s/{created.seat_tokens[0]}").status_code == 303
    assert player.get(f"/g/{gid}/admin/hooks").status_code == 403
    assert player.post(f"/g/{gid}/admin/hooks", data={"url": "https://localhost/"}).status_code in (
        400,
        403,
    )
    assert hook_count(app) == 0
    client = organiser(app, gid, created.admin_token)
    answer = add(client, gid, "https://localhost:8443/hook?x=1", "discord")
    assert answer.status_code == 200
    page = answer.get_data(as_text=True)
    with app.app_context():
        (hook,) = webhooks.hooks_of(gid)
        secret = hook.secret
    assert secret in page  # shown once, on the answer
    again = client.get(f"/g/{gid}/admin/hooks").get_data(as_text=True)
    assert secret not in again and "Discord" in again
    token = CSRF.search(again).group(1)
    removed = client.post(f"/g/{gid}/admin/hooks/{hook.id}/remove", data={"csrf_token": token})
    assert removed.status_code == 303
    assert hook_count(app) == 0


def test_the_admin_page_links_to_the_webhooks(app) -> None:
    with app.app_context():
        created = create_game("Hooks", PLAYERS)
    client = organiser(app, created.game_id, created.admin_token)
    page = client.get(f"/g/{created.game_id}/admin").get_data(as_text=True)
    assert f"/g/{created.game_id}/admin/hooks" in page


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "127.0.0.1",
        "0.0.0.0",
        "100.64.0.1",  # shared address space
        "169.254.1.1",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:192.168.1.1",
        "::ffff:127.0.0.1",
        "2002:a00:1::",  # 6to4 of 10.0.0.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "fec0::1",  # deprecated site-local
        "feff::1",
        "3fff::1",  # documentation (RFC 9637)
        "3fff:fff::1",
        "2001:db8::1",
        "5f00::1",  # SRv6 SIDs
        "::127.0.0.1",  # IPv4-compatible loopback
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo of 10.0.0.1
        "198.18.0.1",  # benchmarking
        "2001:2::1",
        "0x7f000001",  # loopback spelled otherwise
        "2130706433",
        "127.1",
        "0177.0.0.1",
        "0:0:0:0:0:0:0:1",
        "::ffff:7f00:1",
        "64:ff9b:1::a00:1",  # local-use NAT64
    ],
)
def test_the_guard_refuses_every_address_that_is_not_public(address: str) -> None:
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(ssrf.Refused) as refused:
        ssrf.check_url(f"https://{host}/hook")
    assert refused.value.code == "not_public"


def test_the_guard_takes_public_addresses_and_loopback_only_when_allowed() -> None:
    assert ssrf.check_url("https://1.1.1.1/x?y=1").addresses == ("1.1.1.1",)
    assert ssrf.check_url("https://[2606:4700::1111]:8443/").host_header == "[2606:4700::1111]:8443"
    past_documentation = ssrf.check_url("https://[3fff:1000::1]/")  # just past 3fff::/20
    assert past_documentation.addresses == ("3fff:1000::1",)
    with pytest.raises(ssrf.Refused):
        ssrf.check_url("https://localhost/")
    target = ssrf.check_url("https://localhost:9/p", allow_loopback=True)
    assert target.host == "localhost" and target.path == "/p" and target.addresses
    with pytest.raises(ssrf.Refused) as refused:
        ssrf.check_url("https://[::ffff:10.0.0.1]/", allow_loopback=True)
    assert refused.value.code == "not_public"
    with pytest.raises(ssrf.Refused) as refused:
        ssrf.check_url("http://1.1.1.1/")
    assert refused.value.code == "not_https"


def test_a_whole_game_writes_one_post_per_event_and_webhook_with_public_information_only(
    app, clock
) -> None:
    with app.app_context():
        created = create_game("Hooks", PLAYERS, {"proxy_hours": 48}, seed=SEED)
        gid = created.game_id
        first = get_game(gid).last_seq
        json_hook, _secret = webhooks.add_hook(gid, "json", "https://localhost/a", "en", "UTC")
        chat_hook, _secret = webhooks.add_hook(
            gid, "slack", "https://localhost/b", "zh_Hant", "Asia/Taipei"
        )
        state = load_state(get_game(gid))
    bots = [Hoarder(), SensibleBot(), SensibleBot(), RandomBot()]
    play_to_end(app, clock, gid, state, bots, random.Random(3))
    with app.app_context():
        session = app.extensions["sqlalchemy"].session
        rows = session.execute(select(OutboundPost).order_by(OutboundPost.id)).scalars().all()
        expected = posted_kinds(gid, after=first)
        original = logged_posts(gid)
        scrambled = logged_posts(gid, random.Random(5))
        players = [p for p, _e in PLAYERS]
        game = get_game(gid)
        texts = {
            row.id: webhooks.payload(row, session.get(Webhook, row.webhook_id), game, players)
            for row in rows
        }
    kinds = {kind for _seq, kind in expected}
    assert kinds == {
        "turn",
        "deal_opened",
        "window_opened",
        "deal_closed",
        "deal_failed",
        "game_over",
    }
    for hook_id in (json_hook, chat_hook):
        mine = [(r.seq, r.kind) for r in rows if r.webhook_id == hook_id]
        assert mine == expected  # one per event, in order, none twice
    assert original == scrambled  # the spectator's scramble changes no post
    for row in rows:
        assert row.body == original[(row.seq, row.kind)]
        assert row.state == "pending" and row.subscription_id is None
    dumped = json.dumps([row.body for row in rows] + list(texts.values()), ensure_ascii=False)
    assert SEED not in dumped
    assert '"hands"' not in dumped and '"draw_pile"' not in dumped
    zh = [t["text"] for r, t in zip(rows, texts.values(), strict=True) if r.webhook_id == chat_hook]
    assert all(re.search(r"[\u4e00-\u9fff]", text) for text in zh)  # in the webhook's language
    assert all(t["game"]["url"] == f"http://testserver/g/{gid}" for t in texts.values())


def test_the_page_says_in_plain_words_why_a_hook_fails(app, _migrated, clock, tmp_path) -> None:
    """Posts made by the worker's task body here (``post_game.run``), to a port nobody listens
    on and to a server of the test's own that answers 500: the list says why in plain words,
    the organiser may open the technical detail."""
    importlib.import_module("imtheboss.worker.celery_app")
    from imtheboss.worker.outbound import post_game

    ca, ca_file = new_ca(tmp_path)
    receiver = Receiver(ca_file, answer=lambda path, n: (500, {}))
    receiver.start(ca)
    config = {"WEBHOOK_CA_FILE": str(ca_file), "WEBHOOK_MAX_ATTEMPTS": 1}
    posting = make_app(_migrated, clock, **app_config_of(), **config)
    try:
        with posting.app_context():
            created = create_game("Failing", PLAYERS)
            gid = created.game_id
            webhooks.add_hook(gid, "json", f"https://localhost:{free_port()}/gone", "en", "UTC")
            webhooks.add_hook(gid, "json", receiver.url("/err"), "en", "UTC")
            first = load_state(get_game(gid)).active
            space = next(
                c["space"]
                for c in legal_commands(load_state(get_game(gid)), first)
                if c["do"] == "place_marker"
            )
            submit(gid, first, {"do": "place_marker", "space": space}, "fail-marker")
            submit(gid, first, {"do": "open_deal"}, "fail-open")  # a post: deal_opened
            assert set(post_game.run(gid)) == {"failed"}
    finally:
        receiver.stop()
    assert receiver.at("/err")  # it was asked, and answered 500
    client = organiser(posting, gid, created.admin_token)
    page = client.get(f"/g/{gid}/admin/hooks").get_data(as_text=True)
    assert "Last failure" in page
    assert "the server refused the connection" in page
    assert "the server answered with an error" in page
    words = re.sub(r"<details.*?</details>", "", page, flags=re.S)
    assert "500" not in re.sub(r"<[^>]+>", " ", words)  # no HTTP code outside the detail
    assert "Technical detail" in page and "500" in page  # the organiser's short detail


def app_config_of() -> dict:
    return {"WEBHOOK_ALLOW_LOOPBACK": True, "OUTBOUND_TASKS": False}
