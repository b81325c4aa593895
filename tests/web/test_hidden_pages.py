"""A8: no page, fragment or API answer shows a seat anything docs/rules.md A8
hides (other seats' hands, the draw pile's order, the seed before the end, other seats' money
without ``open_money``, other seats' standing orders, A10).

A whole 4-player game is played by the engine's bots THROUGH ``imtheboss.web.games.submit.submit``
on the test PostgreSQL database. At sampled moments (the first time the game is in each phase, then
every few commands, and at the end) every seat (and the organiser, a spectator) fetches every page
and fragment it can reach and the API's answers, and two checks run:

- the scramble (as in tests/engine/test_hidden_information.py): everything hidden from the
  viewer is rearranged in the database — the state snapshot the pages load (other hands dealt
  anew from the draw pile, the pile reordered, the seed replaced, others' money changed) and the
  event log (other seats' drawn cards and starting hands, the dealt and reshuffled piles, the
  seed and forced dice, others' starting money, others' standing orders) — and every answer must
  stay exactly the same;
- direct checks of what is on the page: the hand shown is the viewer's own, other seats show
  only counts and (unless ``open_money`` or the end) hidden money, the long string seed never
  appears before the end, no secret link token appears, the inbox holds only the seat's rows,
  and the API's view and events are redacted.

Event rows never change once written (and their redaction does not depend on the moment), so
the last sample (game over) renders every negotiation, every history page and the story for
every seat and compares all of them under the scramble; the samples before render the newest
negotiation, the newest and oldest history pages, the story, the inbox, the settings and the
API's events for the direct checks, and compare the answers built from the live state (game
page, fragment, the API's view, whose "Latest" list also comes from the event log) under the
scramble.

The bots' game (fixed seed, fixed bot choices) visits every phase; the test asserts that it did.
"""

from __future__ import annotations

import html
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from imtheboss.engine.bots import RandomBot, SensibleBot
from imtheboss.engine.cards import CARD_NAMES, DECK_SIZE
from imtheboss.engine.orders import Orders
from imtheboss.engine.state import GameState, state_to_json
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import EventRecord, Notification, db
from imtheboss.web.replies.choices import has_stop_card
from imtheboss.web.say import messages
from imtheboss.web.say.display import card_text
from sqlalchemy import func, select
from support.bots import Hoarder
from support.orders import random_orders_json
from support.play import PHASES, play_to_end
from support.scramble import normalized, store_log

SEED = "seed-c0ffee-XYZ"  # long and unusual: any occurrence on a page is a leak
PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla", "Dan")]
EVERY = 60  # commands between samples, besides the first time in each phase
SECRET_EVENTS = ("game_started", "cards_drawn", "pile_reshuffled", "orders_set")


@dataclass
class Table:
    """The game under test and one signed-in browser (test client) per viewer; ``None`` is the
    organiser, who sees the game as a spectator."""

    app: Any
    gid: str
    tokens: list[str]
    admin_token: str
    open_money: bool
    clients: dict[int | None, Any] = field(default_factory=dict)

    def token(self, viewer: int | None) -> str:
        return self.admin_token if viewer is None else self.tokens[viewer]

    @property
    def secrets(self) -> list[str]:
        return [*self.tokens, self.admin_token]


# -- the scramble ----------------------------------------------------------------------------


def scrambled_state(state: GameState, viewer: int | None, rng: random.Random) -> GameState:
    """``state`` with everything hidden from ``viewer`` changed, hand sizes kept."""
    other = state.clone()
    pool = list(other.draw_pile)
    for s in range(other.n):
        if s != viewer:
            pool += other.hands[s]
    rng.shuffle(pool)
    for s in range(other.n):
        if s != viewer:
            size = len(other.hands[s])
            other.hands[s], pool = pool[:size], pool[size:]
    other.draw_pile = pool
    if state.phase != "game_over":  # A9, R7.1: the end reveals the seed and every total
        other.seed = f"scrambled-{rng.random()}"
        if not state.options.open_money:
            other.money = [m if s == viewer else m + 7 for s, m in enumerate(other.money)]
        other.orders = [  # A10: private to each seat until the end
            o if s == viewer else Orders.from_json(random_orders_json(rng))
            for s, o in enumerate(other.orders)
        ]
    return other


def scrambled_body(
    kind: str,
    body: dict[str, Any],
    viewer: int | None,
    money_hidden: bool,
    rng: random.Random,
) -> dict[str, Any] | None:
    """The stored event ``body`` with what ``viewer`` may not see changed (``None``: nothing
    hidden in it); others' money only while ``money_hidden`` (R7.1: hidden money, before the
    end: the end reveals every total, and the money chart draws everyone's from the log)."""
    new = json.loads(json.dumps(body))
    if kind == "game_started":
        new["hands"] = [
            h if i == viewer else rng.sample(range(DECK_SIZE), len(h))
            for i, h in enumerate(new["hands"])
        ]
        new["draw_pile"] = rng.sample(new["draw_pile"], len(new["draw_pile"]))
        new["seed"] = f"scrambled-{rng.random()}"
        new["forced_dice"] = [rng.randint(1, 6) for _ in range(4)]
        if money_hidden:
            new["money"] = [m if i == viewer else m + 7 for i, m in enumerate(new["money"])]
        return new
    if kind == "cards_drawn" and new["seat"] != viewer:
        new["cards"] = rng.sample(range(DECK_SIZE), len(new["cards"]))
        return new
    if kind == "pile_reshuffled":
        new["draw_pile"] = rng.sample(new["draw_pile"], len(new["draw_pile"]))
        return new
    if kind == "orders_set" and new["seat"] != viewer:  # A10: another seat's standing orders
        new["orders"] = Orders.from_json(random_orders_json(rng)).to_json()
        return new
    return None


def _store(table: Table, state_json: dict, bodies: dict[int, dict]) -> None:
    store_log(table.app, table.gid, state_json, bodies)


@contextmanager
def scrambled(
    table: Table, state: GameState, viewer: int | None, rng: random.Random
) -> Iterator[None]:
    """The database rearranged for ``viewer`` (snapshot at the last event, event bodies), then
    put back exactly as it was."""
    with table.app.app_context():
        rows = db.session.execute(
            select(EventRecord.id, EventRecord.type, EventRecord.body).where(
                EventRecord.game_id == table.gid, EventRecord.type.in_(SECRET_EVENTS)
            )
        ).all()
    originals = {id_: body for id_, _type, body in rows}
    changed = {}
    for id_, kind, body in rows:
        hidden = not table.open_money and state.phase != "game_over"
        new = scrambled_body(kind, body, viewer, hidden, rng)
        if new is not None:
            changed[id_] = new
    _store(table, state_to_json(scrambled_state(state, viewer, rng)), changed)
    try:
        yield
    finally:
        _store(table, state_to_json(state), {i: originals[i] for i in changed})


# -- rendering everything a viewer can reach -------------------------------------------------


def paths(table: Table, viewer: int | None, scope: str) -> list[str]:
    """What ``viewer`` can reach (``api:`` entries are the JSON API's answers). ``scope``:
    ``live`` the answers built from the state (game page, fragment, the API's view); ``sample``
    those plus the newest negotiation and history pages, the oldest history page, the story,
    the inbox, the settings and the API's events; ``full`` every negotiation and every history
    page."""
    gid = table.gid
    out = [f"/g/{gid}", f"/g/{gid}/fragment", "api:game"]
    if scope == "live":
        return out
    with table.app.app_context():
        last_seq = get_game(gid).last_seq
        deals = db.session.execute(
            select(func.count()).where(
                EventRecord.game_id == gid, EventRecord.type == "deal_opened"
            )
        ).scalar_one()
    history_pages = max(1, -(-last_seq // 100))
    full = scope == "full"
    numbers = range(1, deals + 1) if full else range(max(1, deals), deals + 1)
    pages = range(1, history_pages + 1) if full else sorted({1, history_pages})
    out += [f"/g/{gid}/deals", *(f"/g/{gid}/deals/{n}" for n in numbers)]
    out += [f"/g/{gid}/history?page={p}" for p in pages]
    out.append(f"/g/{gid}/story")
    if viewer is not None:
        out += [f"/g/{gid}/inbox", f"/g/{gid}/settings"]
    return [*out, "api:events"]


def fetch(table: Table, viewer: int | None, wanted: list[str]) -> dict[str, Any]:
    """``{path: normalized page text or JSON}`` as ``viewer`` gets them: pages with its
    signed-in browser, the API with its token alone (``Authorization: Bearer``)."""
    client, gid = table.clients[viewer], table.gid
    bearer = {"Authorization": f"Bearer {table.token(viewer)}"}
    api = table.app.test_client()  # no cookies
    out: dict[str, Any] = {}
    for path in wanted:
        if path == "api:game":
            response = api.get(f"/api/games/{gid}", headers=bearer)
            assert response.status_code == 200, (viewer, path, response.text[:500])
            out[path] = response.get_json()
        elif path == "api:events":
            after, events = 0, []
            while True:
                query = {"after": after, "limit": 1000}
                response = api.get(f"/api/games/{gid}/events", query_string=query, headers=bearer)
                assert response.status_code == 200, (viewer, path, response.text[:500])
                page = response.get_json()
                events += page["events"]
                if not page["more"]:
                    break
                after = page["events"][-1]["seq"]
            out[path] = events
        else:
            response = client.get(path)
            assert response.status_code == 200, (viewer, path, response.text[:500])
            out[path] = normalized(response.text)
    return out


# -- direct checks ---------------------------------------------------------------------------


def _cells(row_html: str) -> list[str]:
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row_html, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", " ", c)).split() for c in cells]


def check_page_text(
    table: Table, state: GameState, viewer: int | None, seen: dict[str, Any]
) -> None:
    over = state.phase == "game_over"
    money_shown = over or state.options.open_money
    for path, answer in seen.items():
        text = answer if isinstance(answer, str) else json.dumps(answer)
        for secret in table.secrets:  # secret links are never shown again after sign-in
            assert secret not in text, (viewer, path, "a secret link token")
        if not over:
            assert SEED not in text, (viewer, path, "the seed before the end (A9)")
    gid = table.gid
    with table.app.test_request_context():
        own = (
            [card_text(name) for name in sorted(CARD_NAMES[c] for c in state.hands[viewer])]
            if viewer is not None
            else None
        )
    for path in (f"/g/{gid}", f"/g/{gid}/fragment"):
        page = seen[path]
        hand = re.search(r'<ul class="hand">(.*?)</ul>', page, re.S)
        if viewer is None:
            assert "Your hand" not in page and hand is None, path
        elif own:
            shown = [html.unescape(x) for x in re.findall(r"<li[^>]*>(.*?)</li>", hand.group(1))]
            assert shown == own, (viewer, path, "the hand shown is not the seat's own")
        else:
            assert hand is None and "No cards in your hand." in page, (viewer, path)
        seats = re.search(r'<section class="card seats">.*?<tbody>(.*?)</tbody>', page, re.S)
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", seats.group(1), re.S)
        assert len(rows) == state.n
        for s, row in enumerate(rows):
            cells = _cells(row)
            assert cells[2] == [str(len(state.hands[s]))], (viewer, path, s, cells)
            if s == viewer or money_shown:
                assert cells[3] == [str(state.money[s]), "M"], (viewer, path, s, cells)
            else:
                assert cells[3] == ["hidden"], (viewer, path, s, "money (R7.1)", cells)
        assert ("Seed:" in page) == over, (viewer, path)
        if over:
            assert SEED in page  # the check string is the seed: the end reveals it (A9)
    if viewer is not None:
        with table.app.test_request_context():
            rows = db.session.execute(
                select(Notification)
                .where(Notification.game_id == gid, Notification.seat_index == viewer)
                .order_by(Notification.id.desc())
            ).scalars()
            can_stop = has_stop_card(state, viewer)  # a stop window says what the seat can do
            texts = [  # the inbox leaves the deal facts to the mail and the game page
                messages.row_text(row, list(state.players), "UTC", can_stop, facts=False)
                for row in rows
            ]
        inbox = seen[f"/g/{gid}/inbox"]
        shown = [
            html.unescape(re.sub(r"<[^>]+>", "", x).strip())
            for x in re.findall(r'<li class="note[^"]*">.*?<div>(.*?)</div>', inbox, re.S)
        ]
        assert shown == texts[: len(shown)] and len(shown) == min(len(texts), 200), viewer


def check_api(table: Table, state: GameState, viewer: int | None, seen: dict[str, Any]) -> None:
    over = state.phase == "game_over"
    money_shown = over or state.options.open_money
    v = seen["api:game"]["view"]
    assert ("seed" in v) == over and "draw_pile" not in v
    if viewer is None:
        assert v["you"] is None and seen["api:game"]["legal"] == []
    else:
        mine = Counter(CARD_NAMES[c] for c in state.hands[viewer])
        assert Counter(v["you"]["hand"]) == mine, viewer
    for entry in v["seats"]:
        s = entry["seat"]
        assert "hand" not in entry and entry["hand_count"] == len(state.hands[s])
        if s == viewer or money_shown:
            assert entry["money"] == state.money[s]
        else:
            assert entry["money"] is None, (viewer, s, "money (R7.1)")
    for event in seen["api:events"]:
        kind = event["type"]
        if kind == "game_started":
            assert "seed" not in event and "forced_dice" not in event
            assert isinstance(event["draw_pile"], int)
            for s, hand in enumerate(event["hands"]):
                assert isinstance(hand, list) == (s == viewer), (viewer, s, "a dealt hand")
            for s, money in enumerate(event["money"]):
                assert (money is None) == (s != viewer and not table.open_money)
        elif kind == "cards_drawn":
            assert isinstance(event["cards"], list) == (event["seat"] == viewer), viewer
        elif kind == "pile_reshuffled":
            assert isinstance(event["draw_pile"], int)


# -- the sweep -------------------------------------------------------------------------------


def sweep(table: Table, state: GameState, rng: random.Random, full: bool) -> int:
    """Every viewer's answers: direct checks, then the same answers with what is hidden from the
    viewer rearranged. Event rows never change once written, so the event-built pages are
    compared under the scramble in the ``full`` sweep at the end (every one of them), the
    state-built ones at every sample. Returns the number of answers compared."""
    with table.app.app_context():
        game = get_game(table.gid)  # a snapshot at the last event: what the scramble replaces
        game.snapshot, game.snapshot_seq = state_to_json(state), game.last_seq
        db.session.commit()
    compared = 0
    for viewer in [*range(state.n), None]:
        seen = fetch(table, viewer, paths(table, viewer, "full" if full else "sample"))
        check_page_text(table, state, viewer, seen)
        check_api(table, state, viewer, seen)
        again_paths = list(seen) if full else paths(table, viewer, "live")
        with scrambled(table, state, viewer, rng):
            again = fetch(table, viewer, again_paths)
        for path, answer in again.items():
            assert answer == seen[path], (
                f"{path} for seat {viewer} changed when information hidden from it changed "
                f"(phase {state.phase}): A8 leak"
            )
        compared += len(again)
    return compared


@pytest.mark.parametrize(
    ("open_money", "every"), [(False, EVERY), (True, None)], ids=["hidden-money", "open-money"]
)
def test_no_page_shows_what_a8_hides(app, clock, open_money: bool, every: int | None) -> None:
    """Samples: the first time the game is in each phase, every ``every`` commands, and the end
    (every page). Open money (R7.1: every total is public) changes only what the pages show of
    money, so that game is sampled only at the first time in each phase and at the end."""
    with app.app_context():
        created = create_game(
            "A8 sweep",
            PLAYERS,
            {"open_money": open_money, "proxy_hours": 48},
            seed=SEED,
        )
        for seat in (1, 2):  # A10: two seats with orders of their own, the others none
            orders = random_orders_json(random.Random(seat))
            submit(created.game_id, seat, {"do": "orders", "orders": orders}, f"orders-{seat}")
        state = load_state(get_game(created.game_id))
    table = Table(app, created.game_id, created.seat_tokens, created.admin_token, open_money)
    for seat, token in enumerate(created.seat_tokens):
        client = app.test_client()
        assert client.get(f"/g/{table.gid}/s/{token}").status_code == 303
        table.clients[seat] = client
    organiser = app.test_client()
    assert organiser.get(f"/g/{table.gid}/admin/{created.admin_token}").status_code == 303
    table.clients[None] = organiser

    rng = random.Random(1)  # the bots' choices: a game of ~400 commands with every kind of event
    scramble_rng = random.Random(6)  # the scramble's (samples do not change the game)
    bots = [Hoarder(), SensibleBot(), SensibleBot(), RandomBot()]
    sampled: Counter[str] = Counter()
    compared = sweep(table, state, scramble_rng, full=False)
    sampled[state.phase] += 1
    since = 0

    def sample(state: GameState) -> None:
        nonlocal compared, since
        since += 1
        over = state.phase == "game_over"
        if state.phase not in sampled or (every and since >= every) or over:
            compared += sweep(table, state, scramble_rng, full=over)
            sampled[state.phase] += 1
            since = 0

    play_to_end(app, clock, table.gid, state, bots, rng, after=sample)
    assert set(sampled) == PHASES, f"phases never sampled: {PHASES - set(sampled)}"
    assert compared > 100, compared
