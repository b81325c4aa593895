"""A8 for the replay: the page of every event, for every seat and the organiser, shows no more
than that viewer could see at that moment.

A whole 3-seat game is played by bots THROUGH ``submit`` on the test PostgreSQL database (a
hoarder among them, so hands go over the limit and the draw pile is reshuffled). Then, for each
viewer, the replay page of every event is fetched, checked directly (the hand shown is the
viewer's own at that moment, others' money hidden before the end, the seed absent before the
end, no secret link), and compared with the same page after what is hidden from the viewer is
rearranged in the database (tests/web/test_hidden_pages.py's scramble, made consistent so the
rearranged log is still a game that replays):

- the card ids that the viewer has not seen up to a given event (never in its hand, on the
  table, in the discard pile or a discard it saw: only in others' hands and the draw pile) are
  permuted across the whole log, which deals other hands and draws anew;
- before the end, the seed and forced dice change, and (without open money) every other seat
  starts with 7 M more, so all their totals differ;
- every other seat's standing orders are replaced.

Each rearrangement holds for a run of events (until one of its cards is seen), so the log is
rewritten once per run and every page of the run compared.
"""

from __future__ import annotations

import html
import json
import random
import re
from collections import Counter
from contextlib import contextmanager
from typing import Any

from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.cards import CARD_NAMES, DECK_SIZE
from imtheboss.engine.events import Event
from imtheboss.engine.orders import Orders
from imtheboss.engine.state import GameState, apply_in_place, every_card, replay, state_to_json
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import EventRecord, db
from imtheboss.web.say.display import card_text
from sqlalchemy import select
from support.api_client import signed_in
from support.bots import Hoarder
from support.orders import random_orders_json
from support.play import PHASES, play_to_end
from support.scramble import normalized, store_log

SEED = "seed-replay-7-QZ"  # long and unusual: any occurrence before the end is a leak
PLAYERS = [(n, f"{n.lower()}@example.org") for n in ("Amy", "Bill", "Carla")]
RUN = 60  # events per rearrangement at most


# -- the consistent scramble -----------------------------------------------------------------


def seen_by(events: list[Event], viewer: int | None) -> list[set[int]]:
    """For each event N (index N-1), the card ids ``viewer`` has seen up to it: every card
    that was anywhere but in another seat's hand or the draw pile after some event up to N."""
    out: list[set[int]] = []
    seen: set[int] = set()
    state = replay(events[:1])
    for i, event in enumerate(events):
        if i:
            apply_in_place(state, event)
        hidden = set(state.draw_pile)
        for seat in range(state.n):
            if seat != viewer:
                hidden |= set(state.hands[seat])
        seen |= set(every_card(state)) - hidden
        out.append(set(seen))
    return out


def _relabel_cards(kind: str, body: dict[str, Any], perm: dict[int, int]) -> dict[str, Any]:
    """``body`` of an event of ``kind`` with every card id ``c`` replaced by ``perm[c]``."""
    new = json.loads(json.dumps(body))

    def ids(cards: list[int]) -> list[int]:
        return [perm.get(c, c) for c in cards]

    if kind == "game_started":
        new["hands"] = [ids(h) for h in new["hands"]]
        new["draw_pile"], new["discard_pile"] = ids(new["draw_pile"]), ids(new["discard_pile"])
    elif kind in ("cards_drawn", "cards_discarded", "card_pending"):
        new["cards"] = ids(new["cards"])
        target = new.get("target")
        if isinstance(target, str) and target.startswith("family:"):
            new["target"] = f"family:{perm.get(int(target[7:]), int(target[7:]))}"
    elif kind == "pile_reshuffled":
        new["draw_pile"] = ids(new["draw_pile"])
    elif kind in ("family_played", "card_stopped"):
        new["card"] = perm.get(new["card"], new["card"])
    elif kind in ("deal_closed", "deal_failed"):
        new["returned"] = {s: ids(c) for s, c in new["returned"].items()}
        new["discarded"] = ids(new["discarded"])
    return new


def scrambled_log(
    rows: list[tuple[int, str, dict, int | None]],
    viewer: int | None,
    unseen: set[int],
    over: bool,
    open_money: bool,
    rng: random.Random,
) -> dict[int, dict]:
    """New bodies ``{row id: body}`` for the rearranged log: ``unseen`` cards permuted (the
    names they stand for differ), and before the end the seed, the forced dice and others'
    money; others' orders always."""
    cards = sorted(unseen)
    shuffled = rng.sample(cards, len(cards))
    perm = dict(zip(cards, shuffled, strict=True))
    out: dict[int, dict] = {}
    for id_, kind, body, _by in rows:
        new = _relabel_cards(kind, body, perm)
        if kind == "game_started":
            if not over:
                new["seed"] = f"scrambled-{rng.random()}"
                new["forced_dice"] = [rng.randint(1, 6) for _ in range(4)]
                if not open_money:
                    new["money"] = [m if s == viewer else m + 7 for s, m in enumerate(new["money"])]
            if "orders" in new:
                new["orders"] = [
                    o if s == viewer else Orders.from_json(random_orders_json(rng)).to_json()
                    for s, o in enumerate(new["orders"])
                ]
        elif kind == "orders_set" and new["seat"] != viewer:
            new["orders"] = Orders.from_json(random_orders_json(rng)).to_json()
        if new != body:
            out[id_] = new
    return out


def _events_of(rows: list[tuple[int, str, dict, int | None]], bodies: dict[int, dict]) -> list:
    return [
        Event.from_json({**bodies.get(id_, body), "type": kind, "by": by})
        for id_, kind, body, by in rows
    ]


@contextmanager
def rearranged(app: Any, gid: str, rows: list, bodies: dict[int, dict]):
    """The log (and the snapshot) rewritten with ``bodies``, then put back as it was."""
    events = _events_of(rows, bodies)
    state = replay(events)
    assert sorted(every_card(state)) == list(range(DECK_SIZE)), "the rearranged log is no game"
    originals = {id_: body for id_, _kind, body, _by in rows if id_ in bodies}
    true_state = state_to_json(replay(_events_of(rows, {})))
    store_log(app, gid, state_to_json(state), bodies)
    try:
        yield
    finally:
        store_log(app, gid, true_state, originals)


# -- the pages -------------------------------------------------------------------------------


def check_page(
    app: Any, page: str, state: GameState, viewer: int | None, at: int, secrets: list[str]
) -> None:
    """What the page shows directly: the viewer's own hand at that moment, others' money only
    when R7.1 allows, the seed only at the end, no secret link."""
    over = state.phase == "game_over"
    for secret in secrets:
        assert secret not in page, (viewer, at, "a secret link token")
    assert (SEED in page) == over, (viewer, at, "the seed before the end (A9)")
    hand = re.search(r'<ul class="hand">(.*?)</ul>', page, re.S)
    if viewer is None:
        assert hand is None and "Your hand" not in page, at
    else:
        with app.test_request_context():
            own = [card_text(n) for n in sorted(CARD_NAMES[c] for c in state.hands[viewer])]
        shown = (
            [html.unescape(x) for x in re.findall(r"<li[^>]*>(.*?)</li>", hand.group(1))]
            if hand
            else []
        )
        assert shown == own, (viewer, at, "the hand shown is not the seat's own at that moment")
    seats = re.search(r'<section class="card seats">.*?<tbody>(.*?)</tbody>', page, re.S)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", seats.group(1), re.S)
    for s, row in enumerate(rows):
        money = html.unescape(
            re.sub(r"<[^>]+>", " ", re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[3])
        )
        if s == viewer or over or state.options.open_money:
            assert money.split() == [str(state.money[s]), "M"], (viewer, at, s)
        else:
            assert money.split() == ["hidden"], (viewer, at, s, "money (R7.1)")


def _runs(total: int) -> list[tuple[int, int]]:
    """The runs of events ``(first, last)`` each rearrangement covers: at most ``RUN`` events,
    the last event (the end) alone."""
    out, first = [], 1
    while first < total:
        last = min(first + RUN - 1, total - 1)
        out.append((first, last))
        first = last + 1
    return [*out, (total, total)]


def test_no_replay_page_shows_what_a8_hides(app, clock) -> None:
    """Hidden money (R7.1): the game where the most is hidden (open money shows every total,
    and tests/web/test_replay.py checks the chart's lines under it)."""
    open_money = False
    with app.app_context():
        created = create_game("A8 replay", PLAYERS, {"open_money": open_money}, seed=SEED)
        gid = created.game_id
        orders = random_orders_json(random.Random(4))  # A10: one seat with orders of its own
        submit(gid, 1, {"do": "orders", "orders": orders}, "orders-1")
        state = load_state(get_game(gid))
    phases: Counter[str] = Counter([state.phase])
    bots = [Hoarder(), SensibleBot(), Hoarder()]  # with this seed: a reshuffle, a stop card
    visit = lambda s: phases.update([s.phase])  # noqa: E731
    play_to_end(app, clock, gid, state, bots, random.Random(1), after=visit)
    assert set(phases) >= PHASES, f"phases never visited: {PHASES - set(phases)}"
    with app.app_context():
        rows = [
            (id_, kind, body, by)
            for id_, kind, body, by in db.session.execute(
                select(EventRecord.id, EventRecord.type, EventRecord.body, EventRecord.seat)
                .where(EventRecord.game_id == gid)
                .order_by(EventRecord.seq)
            ).all()
        ]
    events = _events_of(rows, {})
    total = len(events)
    kinds = {e.type for e in events}
    assert {"pile_reshuffled", "cards_discarded", "card_stopped", "orders_set"} <= kinds, kinds
    secrets = [*created.seat_tokens, created.admin_token]
    rng = random.Random(9)
    compared = dealt_anew = runs = 0
    for viewer in [0, 1, 2, None]:
        token = created.admin_token if viewer is None else created.seat_tokens[viewer]
        browser, _csrf = signed_in(app, gid, token, admin=viewer is None)
        pages = {}
        for at in range(1, total + 1):
            response = browser.get(f"/g/{gid}/replay?at={at}")
            assert response.status_code == 200, (viewer, at, response.text[:300])
            pages[at] = normalized(response.text)
            check_page(app, pages[at], replay(events[:at]), viewer, at, secrets)
        seen = seen_by(events, viewer)
        for first, last in _runs(total):
            runs += 1
            unseen = set(range(DECK_SIZE)) - seen[last - 1]
            dealt_anew += len({CARD_NAMES[c] for c in unseen}) > 1
            bodies = scrambled_log(rows, viewer, unseen, last == total, open_money, rng)
            with rearranged(app, gid, rows, bodies):
                for at in range(first, last + 1):
                    again = normalized(browser.get(f"/g/{gid}/replay?at={at}").text)
                    assert again == pages[at], (
                        f"the replay at event {at} for seat {viewer} changed when information "
                        "hidden from it changed: A8 leak"
                    )
                    compared += 1
    assert compared == 4 * total
    assert dealt_anew >= runs * 3 // 4, (dealt_anew, runs)  # most runs deal cards anew
