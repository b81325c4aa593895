"""The replay (``/g/<gid>/replay?at=N``), the money chart and the record of a finished server
game (``/api/games/<gid>/export``, ``/g/<gid>/export``; docs/export.md) that ``imtheboss
verify`` checks. Games are played by bots through ``submit`` on the test PostgreSQL database."""

from __future__ import annotations

import html
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.record import RECORD_FORMAT
from imtheboss.engine.state import GameState, replay
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.say.display import card_text
from support.api_client import signed_in
from support.deal import PLAYERS
from support.play import play_to_end

CLI = str(Path(sys.executable).with_name("imtheboss"))


def _finished(app: Any, clock: Any, options: dict[str, Any] | None = None, seed: Any = None):
    """A 3-seat game created as the server creates one (a random seed unless given), played to
    its end. Returns (created, final state)."""
    with app.app_context():
        created = create_game("replayed", PLAYERS, options or {}, seed=seed)
        state = load_state(get_game(created.game_id))
    bots = [SensibleBot() for _ in PLAYERS]
    state = play_to_end(app, clock, created.game_id, state, bots, random.Random(5))
    return created, state


def _events(app: Any, gid: str) -> list:
    with app.app_context():
        return load_events(gid)


def _verify(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "verify", str(path), *args], capture_output=True, text=True, timeout=120
    )


# -- the record ------------------------------------------------------------------------------


def test_the_record_waits_for_the_end_then_verifies(app, clock, tmp_path: Path) -> None:
    """Before the end the export is refused in plain words (409, no seed); after it the API and
    the page give the same record, which ``imtheboss verify`` passes (with the seed hash the
    game page showed at the start) and fails on a copy with one roll or the seed changed."""
    with app.app_context():
        created = create_game("replayed", PLAYERS, {})
        gid = created.game_id
        state = load_state(get_game(gid))
    browser, _csrf = signed_in(app, gid, created.seat_tokens[1])
    organiser, _csrf = signed_in(app, gid, created.admin_token, admin=True)
    bearer = {"Authorization": f"Bearer {created.seat_tokens[0]}"}
    early = browser.get(f"/g/{gid}/export")
    assert early.status_code == 409 and "once the game is over" in early.text
    assert str(state.seed) not in early.text
    refused = app.test_client().get(f"/api/games/{gid}/export", headers=bearer)
    assert refused.status_code == 409 and refused.get_json()["error"]["code"] == "not_over"
    shown = re.search(r"<code>([0-9a-f]{12})…</code>", browser.get(f"/g/{gid}").text).group(1)

    state = play_to_end(app, clock, gid, state, [SensibleBot() for _ in PLAYERS], random.Random(5))
    api = app.test_client().get(f"/api/games/{gid}/export", headers=bearer)
    assert api.status_code == 200
    record = api.get_json()
    page = browser.get(f"/g/{gid}/export")
    assert page.status_code == 200 and page.mimetype == "application/json"
    assert page.headers["Content-Disposition"] == f'attachment; filename="imtheboss-{gid}.json"'
    assert json.loads(page.text) == record == json.loads(organiser.get(f"/g/{gid}/export").text)
    assert app.test_client().get(f"/api/games/{gid}/export").status_code == 401
    assert app.test_client().get(f"/g/{gid}/export").status_code == 403

    assert record["format"] == RECORD_FORMAT and record["seed"] == state.seed
    assert record["players"] == [name for name, _email in PLAYERS]
    assert record["game"]["id"] == gid and record["result"]["money"] == state.money
    assert len(record["events"]) == get_game_seq(app, gid) and record["events"][0]["at"]
    good = tmp_path / "game.json"
    good.write_text(page.text)
    done = _verify(good, "--hash", shown)
    assert done.returncode == 0, done.stderr

    rolls = [e for e in record["events"] if e["event"]["type"] == "die_rolled"]
    rolls[len(rolls) // 2]["event"]["value"] = rolls[len(rolls) // 2]["event"]["value"] % 6 + 1
    changed = tmp_path / "roll.json"
    changed.write_text(json.dumps(record))
    done = _verify(changed)
    assert done.returncode == 1
    assert f"Event {rolls[len(rolls) // 2]['seq']} (a die roll)" in done.stderr

    record = json.loads(page.text)
    record["seed"] = record["events"][0]["event"]["seed"] = "0" * 32
    changed.write_text(json.dumps(record))
    done = _verify(changed)
    assert done.returncode == 1 and "published seed hash" in done.stderr


def get_game_seq(app: Any, gid: str) -> int:
    with app.app_context():
        return get_game(gid).last_seq


# -- the replay page -------------------------------------------------------------------------


def _hand_shown(page: str) -> list[str]:
    hand = re.search(r'<ul class="hand">(.*?)</ul>', page, re.S)
    if hand is None:
        return []
    return [html.unescape(x) for x in re.findall(r"<li[^>]*>(.*?)</li>", hand.group(1))]


def _marker(page: str) -> int | None:
    found = re.search(r'<g class="sp[^"]* has-marker[^"]*" id="space-(\d+)"', page)
    return int(found.group(1)) if found else None


def test_the_replay_shows_each_moment_as_the_seat_saw_it(app, clock) -> None:
    """At event N the page shows the seat's hand, the marker and the step as they were after
    event N (the state replayed from events 1..N), no form and no polling; previous and next
    are links; the last event shows the end."""
    created, final = _finished(app, clock, seed="replay-seed-Qx8")
    gid = created.game_id
    events = _events(app, gid)
    total = len(events)
    browser, _csrf = signed_in(app, gid, created.seat_tokens[0])
    first_roll = next(i for i, e in enumerate(events, 1) if e.type == "die_rolled")
    first_deal = next(i for i, e in enumerate(events, 1) if e.type == "deal_opened")
    for at in (1, first_roll, first_deal + 1, total // 2, total):
        page = browser.get(f"/g/{gid}/replay?at={at}")
        assert page.status_code == 200, page.text[:300]
        text = page.text
        state: GameState = replay(events[:at])
        with app.test_request_context():
            own = [card_text(n) for n in sorted(CARD_NAMES[c] for c in state.hands[0])]
        assert _hand_shown(text) == own, at
        assert _marker(text) == state.marker, at
        assert f"event {at} of {total}" in text
        assert 'method="post"' not in text and "hx-get" not in text, at
        anchors = set(re.findall(r'href="#([\w-]+)"', text))  # each leads to a part it has
        assert all(f'id="{name}"' in text for name in anchors), (at, anchors)
        assert (f"at={at - 1}#step" in text) == (at > 1)
        assert (f"at={at + 1}#step" in text) == (at < total)
        assert ("Seed:" in text) == (at == total)
        if at < total:
            assert str(final.seed) not in text, at
    assert f"event {total} of {total}" in browser.get(f"/g/{gid}/replay").text  # the default
    history = browser.get(f"/g/{gid}/history").text
    assert f"/g/{gid}/replay?at={total}" in history


@pytest.mark.parametrize("at", ["0", "-1", "abc", "1.5", "²", "99999", " 3"])
def test_a_bad_event_number_is_a_clear_400(app, clock, at: str) -> None:
    with app.app_context():
        created = create_game("replayed", PLAYERS, {})
    browser, _csrf = signed_in(app, created.game_id, created.seat_tokens[0])
    page = browser.get(f"/g/{created.game_id}/replay", query_string={"at": at})
    assert page.status_code == 400 and "Choose an event number from 1 to 1" in page.text


def test_only_the_games_seats_and_organiser_see_the_replay(app, clock) -> None:
    with app.app_context():
        created = create_game("replayed", PLAYERS, {})
    gid = created.game_id
    assert app.test_client().get(f"/g/{gid}/replay").status_code == 403
    assert app.test_client().get("/g/nosuchgame1/replay").status_code == 404
    organiser, _csrf = signed_in(app, gid, created.admin_token, admin=True)
    page = organiser.get(f"/g/{gid}/replay?at=1")
    assert page.status_code == 200 and 'class="hand"' not in page.text


# -- the money chart -------------------------------------------------------------------------


def _legend(page: str) -> list[tuple[str, int]]:
    found = re.findall(r'<span class="legend-name">(.*?)</span>: (\d+) M', page)
    return [(html.unescape(name), int(m)) for name, m in found]


def _lines(page: str) -> int:
    chart = re.search(r'<svg class="chart".*?</svg>', page, re.S)
    return chart.group(0).count("<polyline") if chart else 0


@pytest.mark.parametrize("open_money", [False, True], ids=["hidden-money", "open-money"])
def test_the_money_chart_shows_what_the_seat_may_see(app, clock, open_money: bool) -> None:
    """In the replay before the end the chart has the seat's own line, and the others' only
    with open money (R7.1); the organiser without open money gets no chart. At the end (the
    finished game's page, the replay's last event) every seat's line, ending at its money."""
    created, final = _finished(app, clock, {"open_money": open_money}, seed="replay-seed-Qx8")
    gid = created.game_id
    events = _events(app, gid)
    names = [name for name, _email in PLAYERS]
    closed = [i for i, e in enumerate(events, 1) if e.type == "deal_closed"]
    at = closed[2]
    state = replay(events[:at])
    organiser, _csrf = signed_in(app, gid, created.admin_token, admin=True)
    for seat, token in enumerate(created.seat_tokens):
        browser, _csrf = signed_in(app, gid, token)
        page = browser.get(f"/g/{gid}/replay?at={at}").text
        shown = range(len(names)) if open_money else [seat]
        assert _legend(page) == sorted(
            ((names[s], state.money[s]) for s in shown), key=lambda x: -x[1]
        )
        assert _lines(page) == len(shown)
        for page in (browser.get(f"/g/{gid}").text, browser.get(f"/g/{gid}/replay").text):
            assert sorted(_legend(page)) == sorted(zip(names, final.money, strict=True))
            assert _lines(page) == len(names)
    page = organiser.get(f"/g/{gid}/replay?at={at}").text
    assert _lines(page) == (len(names) if open_money else 0)


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("zh_Hans", ["重播：第", "资金变化", "下一个 →", "事件编号", "已成交的交易"]),
        ("zh_Hant", ["重播：第", "資金變化", "下一個 →", "事件編號", "已成交的交易"]),
    ],
)
def test_the_replay_and_the_record_speak_the_readers_language(
    app, clock, lang: str, words: list[str]
) -> None:
    """The replay's frame and chart and the finished page's links in Chinese, no English left
    of them; the refusal before the end too."""
    with app.app_context():
        created = create_game("replayed", PLAYERS, {}, seed="replay-seed-Qx8")
    gid = created.game_id
    browser, _csrf = signed_in(app, gid, created.seat_tokens[0])
    early = browser.get(f"/g/{gid}/export?lang={lang}")
    assert early.status_code == 409 and "once the game is over" not in early.text
    with app.app_context():
        state = load_state(get_game(gid))
    play_to_end(app, clock, gid, state, [SensibleBot() for _ in PLAYERS], random.Random(5))
    page = browser.get(f"/g/{gid}/replay?at=60&lang={lang}").text
    for word in words:
        assert word in page, word
    english = ["Replay: event", "Money over time", "next →", "Event number", "deals closed"]
    english += ["The other players' money", "previous", "Step through the game"]
    for word in english:
        assert word not in page, word
    finished = browser.get(f"/g/{gid}?lang={lang}").text
    for word in ("Replay the game step by step", "Download the game's record", "imtheboss verify"):
        assert (word in finished) == (word == "imtheboss verify"), word
