"""The history as a story (``imtheboss.web.threads``, ``/g/<gid>/story``): every event a seat
may see lands once, in its place (the start, a negotiation's thread for its provider and
letter, its card's window, the ending with lineup, returned family cards and payouts, the end
roll, the end); a tie reads as a shared win; other seats' draws stay counts; and the page reads
in English, 简体中文 and 繁體中文 without raw ids."""

from __future__ import annotations

import random
import re

import pytest
from helpers_api import signed_in
from helpers_deal import PLAYERS
from helpers_play import play_to_end
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.events import Event
from imtheboss.engine.simulate import START, simulate
from imtheboss.web import threads
from imtheboss.web.service import create_game, get_game, load_state

GAMES = [simulate(5, 3, bots="mixed"), simulate(4, 5, idle_seats=frozenset({2})), simulate(3, 1)]
RAW = re.compile(r"\b(investor|family|travel|recruit|boss|stop):|\bw\d+\b|\b[a-z]+_[a-z_]+\b")


def _records(events: list[Event]) -> list[threads.Record]:
    return [(i, START, e) for i, e in enumerate(events, 1)]


def _all_lines(told: threads.Story) -> list[threads.Line]:
    out = [told.start.line] if told.start else []
    for ch in told.chapters:
        out += ch.turns
        n = ch.negotiation
        if n is None:
            continue
        out += [n.opened, *n.family, *n.other]
        out += [line for t in n.threads for line in t.lines]
        for w in n.windows:
            out += [w.opened, *w.answers, *w.ended]
        out += [x for x in (n.ended, n.end_roll) if x is not None]
    return out + ([told.end.line] if told.end else [])


@pytest.mark.parametrize("game", GAMES, ids=["mixed5", "idle4", "sensible3"])
@pytest.mark.parametrize("seat", [None, 0, 1])
def test_every_event_lands_once_in_its_place(game, seat) -> None:
    records = _records(game.events)
    told = threads.story(records, seat)
    seqs = sorted(line.seq for line in _all_lines(told))
    visible = [s for s, _a, e in records if not (e.type == "orders_set" and e.by != seat)]
    assert seqs == visible
    assert told.start.holdings and told.start.seed_hash == game.events[0].data["seed_hash"]
    deals = [ch.negotiation for ch in told.chapters if ch.negotiation]
    opened = [e for e in game.events if e.type == "deal_opened"]
    assert [n.space for n in deals] == [e.data["space"] for e in opened]
    assert [n.number for n in deals] == list(range(1, len(deals) + 1))
    by_seq = dict((s, e) for s, _a, e in records)
    for n in deals:
        for t in n.threads:  # one thread per provider and letter, its outcome the last word
            keys = {
                (by_seq[x.seq].data["provider"], by_seq[x.seq].data.get("letter")) for x in t.lines
            }
            assert keys == {(t.provider, t.letter)}
            last = by_seq[t.lines[-1].seq]
            want = {"terms_set": "open", "agreement_made": "agreed"}.get(last.type)
            assert t.outcome == (want or last.data["reason"])
        for w in n.windows:
            window = by_seq[w.opened.seq].data["window"]
            assert all(by_seq[x.seq].data["window"] == window for x in w.answers)
        if n.outcome == "closed":
            end = by_seq[n.ended.seq].data
            assert n.payments == [(int(s), m) for s, m in end["payments"].items()]
            assert sorted(f.letter for f in n.lineup) == sorted(x["letter"] for x in end["lineup"])
            assert sum(len(c) for _s, c in n.returned) == sum(
                len(c) for c in end["returned"].values()
            )
    rolls = [e for e in game.events if e.type == "die_rolled" and e.data["purpose"] == "end"]
    assert [n.end_roll_value for n in deals if n.end_roll] == [e.data["value"] for e in rolls]
    assert told.end.winners == game.events[-1].data["winners"]


def test_others_draws_stay_counts() -> None:
    told = threads.story(_records(GAMES[0].events), 1)
    drawn = [x for x in _all_lines(told) if x.msg.id in ("drew", "drew_for")]
    assert drawn
    for x in drawn:
        own = x.msg.params["player"] == 1
        assert isinstance(x.msg.params["cards"], list) == own


def test_a_tie_is_a_shared_win() -> None:
    events = list(GAMES[2].events[:-1])
    end = GAMES[2].events[-1]
    tied = Event("game_ended", {**end.data, "winners": [0, 2]}, None)
    told = threads.story(_records(events + [tied]), 0)
    assert told.end.shared and told.end.line.msg.id == "game_over_shared"
    alone = Event("game_ended", {**end.data, "winners": [1]}, None)
    told = threads.story(_records(events + [alone]), 0)
    assert not told.end.shared and told.end.line.msg.id == "game_over"


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_the_story_page_in_each_language(app, clock, lang: str) -> None:
    with app.app_context():
        created = create_game("told", PLAYERS, {}, seed="story-seed-1")
        state = load_state(get_game(created.game_id))
    bots = [SensibleBot() for _ in PLAYERS]
    play_to_end(app, clock, created.game_id, state, bots, random.Random(3))
    gid = created.game_id
    browser, _csrf = signed_in(app, gid, created.seat_tokens[0])
    page = browser.get(f"/g/{gid}/story?lang={lang}")
    assert page.status_code == 200
    text = page.text
    body = re.sub(r"<[^>]+>", " ", text[text.index("<main") : text.index("</main>")])
    for needle in ('id="start"', 'id="deal-1"', 'class="thread', 'id="end"', 'id="now"'):
        assert needle in text
    assert text.index('id="start"') < text.index('id="deal-1"') < text.index('id="end"')
    assert not RAW.search(body), RAW.search(body)
    if lang != "en":
        bare = re.sub(r"Amy|Bill|Carla|[0-9a-f]{64}|#\d+|\b[CDGLSWM]\b|UTC", "", body)
        bare = re.sub(r"I'm the Boss!?", "", bare)
        assert not re.search(r"[A-Za-z]{2,}", bare), re.search(r".{40}[A-Za-z]{2,}.{40}", bare)
    other = signed_in(app, gid, created.seat_tokens[1])[0].get(f"/g/{gid}/story").text
    assert other.count("story-line") == text.count("story-line")  # the same events, each redacted


def test_the_story_needs_a_seat_or_the_organiser(app, client) -> None:
    with app.app_context():
        created = create_game("told", PLAYERS, {})
    assert client.get(f"/g/{created.game_id}/story").status_code == 403
    assert client.get("/g/nosuchgame/story").status_code == 404
