"""The history as a story (``imtheboss.web.say.chapters``, ``/g/<gid>/story``): every event a seat
may see lands once, in its place (the start, a negotiation's thread for its provider and
letter, its card's window, the ending with lineup, returned family cards and payouts, the end
roll, the end); a tie reads as a shared win; other seats' draws stay counts; and the page reads
in English, 简体中文 and 繁體中文 without raw ids."""

from __future__ import annotations

import random
import re

import pytest
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.events import Event
from imtheboss.engine.simulate import START, simulate
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.say import chapters, story_read
from imtheboss.web.store import negotiations
from support.api_client import signed_in
from support.deal import PLAYERS
from support.play import play_to_end

GAMES = [simulate(5, 3, bots="mixed"), simulate(4, 5, idle_seats=frozenset({2})), simulate(3, 1)]
RAW = re.compile(r"\b(investor|family|travel|recruit|boss|stop):|\bw\d+\b|\b[a-z]+_[a-z_]+\b")


def _records(events: list[Event]) -> list[chapters.Record]:
    return [(i, START, e) for i, e in enumerate(events, 1)]


def _all_lines(told: chapters.Story) -> list[chapters.Line]:
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
    told = chapters.story(records, seat)
    seqs = sorted(line.seq for line in _all_lines(told))
    visible = [s for s, _a, e in records if not (e.type == "orders_set" and e.by != seat)]
    assert seqs == visible
    assert told.start.holdings and told.start.seed_hash == game.events[0].data["seed_hash"]
    dealt = game.events[0].data["investors"]  # R2.2: the letters no seat was dealt
    assert told.start.side_pool == sorted(k for k, v in dealt.items() if not isinstance(v, int))
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
    told = chapters.story(_records(GAMES[0].events), 1)
    drawn = [x for x in _all_lines(told) if x.msg.id in ("drew", "drew_for")]
    assert drawn
    for x in drawn:
        own = x.msg.params["player"] == 1
        assert isinstance(x.msg.params["cards"], list) == own


def test_a_tie_is_a_shared_win() -> None:
    events = list(GAMES[2].events[:-1])
    end = GAMES[2].events[-1]
    tied = Event("game_ended", {**end.data, "winners": [0, 2]}, None)
    told = chapters.story(_records(events + [tied]), 0)
    assert told.end.shared and told.end.line.msg.id == "game_over_shared"
    alone = Event("game_ended", {**end.data, "winners": [1]}, None)
    told = chapters.story(_records(events + [alone]), 0)
    assert not told.end.shared and told.end.line.msg.id == "game_over"


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_the_story_page_in_each_language(app, clock, lang: str) -> None:
    created, browser = _played(app, clock, "story-seed-1", 3)
    gid = created.game_id
    pages = _story_pages(browser, gid, lang)
    assert len(pages) > 1  # a whole game's story comes a page at a time
    text = "".join(pages)
    body = " ".join(
        re.sub(r"<[^>]+>", " ", t[t.index("<main") : t.index("</main>")]) for t in pages
    )
    for needle in ('id="start"', 'id="deal-1"', 'class="thread', 'id="end"', 'id="now"'):
        assert needle in text
    assert text.index('id="start"') < text.index('id="deal-1"') < text.index('id="end"')
    assert not RAW.search(body), RAW.search(body)
    if lang != "en":
        bare = re.sub(r"Amy|Bill|Carla|[0-9a-f]{12}…|#\d+|\b[CDGLSWM]\b|UTC", "", body)
        bare = re.sub(r"I'm the Boss!?", "", bare)
        assert not re.search(r"[A-Za-z]{2,}", bare), re.search(r".{40}[A-Za-z]{2,}.{40}", bare)
    other = "".join(_story_pages(signed_in(app, gid, created.seat_tokens[1])[0], gid, lang))
    assert other.count("story-line") == text.count("story-line")  # the same events, each redacted


def _played(app, clock, seed: str, bots_seed: int):
    """A game played to its end by bots; the game and the first seat's signed-in browser."""
    with app.app_context():
        created = create_game("told", PLAYERS, {}, seed=seed)
        state = load_state(get_game(created.game_id))
    bots = [SensibleBot() for _ in PLAYERS]
    play_to_end(app, clock, created.game_id, state, bots, random.Random(bots_seed))
    return created, signed_in(app, created.game_id, created.seat_tokens[0])[0]


def _story_pages(browser, gid: str, lang: str) -> list[str]:
    """Every page of the story, oldest first, reached from the first (the newest) by its
    "older" links alone (plain links: no script)."""
    pages = []
    url: str | None = f"/g/{gid}/story?lang={lang}"
    while url:
        response = browser.get(url)
        assert response.status_code == 200
        pages.append(response.text)
        older = re.search(r'<a href="([^"]+)" rel="prev">', response.text)
        url = older.group(1).replace("&amp;", "&") if older else None
    return pages[::-1]


def test_the_story_comes_a_page_at_a_time(app, clock) -> None:
    """Page 1 holds the newest chapters and the end; the last page the start; older and newer
    links lead from one to the next; each chapter is on exactly one page; a page out of range or
    not a number shows the nearest."""
    created, browser = _played(app, clock, "story-seed-2", 5)
    gid = created.game_id
    pages = _story_pages(browser, gid, "en")
    assert len(pages) >= 2
    newest, oldest = pages[-1], pages[0]
    assert 'id="end"' in newest and 'id="now"' in newest and 'rel="next"' not in newest
    assert 'id="start"' in oldest and 'rel="prev"' not in oldest and 'id="end"' not in oldest
    assert all('id="start"' not in p for p in pages[1:])
    deals = [re.findall(r'id="deal-(\d+)"', p) for p in pages]
    numbers = [int(n) for found in deals for n in found]
    assert numbers == list(range(1, len(numbers) + 1))  # each negotiation once, in order
    sections = [re.findall(r'<section class="chapter (?:deal|turns)', p) for p in pages]
    assert all(len(found) <= story_read.STORY_PAGE for found in sections)
    assert browser.get(f"/g/{gid}/story?page=999").text.count('id="start"') == 1  # the oldest
    assert 'id="end"' in browser.get(f"/g/{gid}/story?page=abc").text  # text: the newest
    newer = re.search(r'<a href="([^"]+)" rel="next">', oldest)
    assert newer and browser.get(newer.group(1).replace("&amp;", "&")).status_code == 200


class DealOpen(Exception):
    """A negotiation runs: the bots stop."""


def _chapters(told: chapters.Story) -> list[tuple[int | None, list[int]]]:
    """Each chapter as its negotiation's number and the seqs of its lines."""
    out = []
    for ch in told.chapters:
        part = chapters.Story(chapters=[ch])
        number = ch.negotiation.number if ch.negotiation else None
        out.append((number, sorted(line.seq for line in _all_lines(part))))
    return out


@pytest.mark.parametrize("seat", [None, 1])
def test_each_page_reads_only_its_chapters_and_tells_them_as_the_whole_story_does(
    app, clock, seat
) -> None:
    """The pages, read chapter range by chapter range (``story_read``), hold the whole story's
    chapters in order, each once and the same, numbered as in the whole story."""
    created, _browser = _played(app, clock, "story-seed-3", 7)
    gid = created.game_id
    with app.app_context():
        whole = chapters.story(negotiations.records(gid), seat)
        last = get_game(gid).last_seq
        first = story_read.read_page(gid, last, seat, "1")
        paged = []
        for page in range(first.pages, 0, -1):
            read = story_read.read_page(gid, last, seat, str(page))
            assert read.left_out == {}  # no chapter of this game has more chat than shown
            paged += _chapters(read.told)
            assert (read.told.start is not None) == (page == first.pages)
            assert (read.told.end is not None) == (page == 1)
    assert first.pages >= 2
    assert paged == _chapters(whole)


def test_a_chapter_shows_its_last_chat_and_says_how_much_is_left_out(app, clock) -> None:
    """A negotiation of 25 messages: its last ``CHAT_SHOWN`` are on the page, the others
    counted, with a link to the history."""
    with app.app_context():
        created = create_game("told", PLAYERS, {}, seed="story-seed-4")
        gid = created.game_id
        state = load_state(get_game(gid))
    bots = [SensibleBot() for _ in PLAYERS]

    def stop_at_a_deal(now) -> None:
        if now.deal is not None:
            raise DealOpen

    with pytest.raises(DealOpen):
        play_to_end(app, clock, gid, state, bots, random.Random(3), stop_at_a_deal)
    with app.app_context():
        for n in range(25):
            submit(gid, n % len(PLAYERS), {"do": "chat", "text": f"note {n}"}, f"note-{n}")
    browser = signed_in(app, gid, created.seat_tokens[0])[0]
    text = browser.get(f"/g/{gid}/story").text
    shown = [int(n) for n in re.findall(r"note (\d+)", text)]
    assert shown == list(range(25 - story_read.CHAT_SHOWN, 25))
    left = 25 - story_read.CHAT_SHOWN
    assert f"{left} earlier messages are not shown here" in text
    assert f'href="/g/{gid}/history"' in text


def test_the_story_needs_a_seat_or_the_organiser(app, client) -> None:
    with app.app_context():
        created = create_game("told", PLAYERS, {})
    assert client.get(f"/g/{created.game_id}/story").status_code == 403
    assert client.get("/g/nosuchgame/story").status_code == 404
