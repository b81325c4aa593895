"""What a player reads on the game page and in mail: the first terms a side names are an offer
and only the answer to the other side's terms a counter (R4.2, R4.3); during a stop window the
page says the boss can close once it ends, not that the boss may close now (A2); a time zone
reads as its offset from UTC and its city, never its raw name; a deal space has one number
everywhere (the one printed on the board's picture: 1 to 16), on the pages, in mail and in
reply words."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

from imtheboss.engine.board import default_board
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import replay
from imtheboss.web.models import Notification, db
from imtheboss.web.replies.choices import command_for
from imtheboss.web.replies.words import Reading, understand
from imtheboss.web.say import display, messages
from sqlalchemy import select
from support.page_forms import act

NAMES = ["Amy", "Bill", "Carla"]


def _who_named(page: str) -> list[str]:
    """The "Named by" cells of the page's open terms."""
    return [re.sub(r"\s+", " ", c).strip() for c in re.findall(r'<td class="who">(.*?)</td>', page)]


def _open_deal(created, s, clients) -> str:
    """The known deal opened by its boss; the game's id."""
    gid = created.game_id
    act(clients[s.boss], gid, {"do": "place_marker", "space": s.space})
    act(clients[s.boss], gid, {"do": "open_deal"})
    return gid


def test_the_first_terms_are_an_offer_and_an_answer_is_a_counter(app, game) -> None:
    created, s, clients = game
    gid = _open_deal(created, s, clients)
    boss, provider = clients[s.boss], clients[s.provider]
    name, card = NAMES[s.provider], f"investor:{s.letter}"
    for by, cmd, price, expected in (
        (boss, {"do": "propose", "to": s.provider}, "2", f"offer by the boss; {name} answers"),
        (provider, {"do": "offer"}, "4", f"counter by {name}; the boss answers"),
        (boss, {"do": "propose", "to": s.provider}, "3", f"counter by the boss; {name} answers"),
    ):
        act(by, gid, {**cmd, "card": card}, price=price, price_kind="cash")
        assert _who_named(boss.get(f"/g/{gid}").text) == [expected]


def test_during_a_stop_window_the_boss_can_close_once_it_ends(app, game) -> None:
    created, s, clients = game
    gid = _open_deal(created, s, clients)
    boss, provider, traveller = clients[s.boss], clients[s.provider], clients[s.traveller]
    investor = f"investor:{s.letter}"
    act(provider, gid, {"do": "offer", "card": investor}, price="2", price_kind="cash")
    act(boss, gid, {"do": "accept", "with": s.provider, "letter": s.letter, "price": {"cash": 2}})
    page = boss.get(f"/g/{gid}").text
    assert "met: the boss may close" in page and "cmd-close" in page
    act(traveller, gid, {"do": "travel", "card": s.travel_card, "target": investor})
    page = boss.get(f"/g/{gid}").text
    assert "cmd-close" not in page  # A2: no closing while the stop window is open
    assert "the boss may close" not in page
    assert "met: the boss can close once the stop window ends" in page


def test_a_zone_reads_as_its_offset_and_its_city(app) -> None:
    winter, summer = datetime(2026, 1, 15, 12, tzinfo=UTC), datetime(2026, 7, 15, 12, tzinfo=UTC)
    with app.test_request_context("/?lang=en"):
        assert display.zone_text("Asia/Shanghai", winter) == "UTC+8, Shanghai"
        assert display.zone_text("America/New_York", winter) == "UTC-5, New York"
        assert display.zone_text("America/New_York", summer) == "UTC-4, New York"
        assert display.zone_text("Asia/Kolkata", winter) == "UTC+5:30, Kolkata"
        assert display.zone_text("UTC", winter) == "UTC"
        assert display.zone_text("Etc/GMT-3", winter) == "UTC+3"
        assert display.zone_text("Mars/Olympus", winter) == "UTC"  # unknown: UTC, as page_time
        night = messages.fill(
            messages.TEXTS["night"],
            {"player": 0, "start": "23:00", "end": "07:00", "zone": "Asia/Shanghai"},
            NAMES,
        )
        assert "Asia/Shanghai" not in night and "UTC+8, Shanghai" in night
    with app.test_request_context("/?lang=zh_Hans"):
        text = display.zone_text("Asia/Shanghai", winter)
        assert text.startswith("UTC+8") and "上海" in text and "Asia" not in text


def test_a_space_has_one_number_on_the_board_the_pages_and_in_mail(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss, provider = clients[s.boss], clients[s.provider]
    number = s.space + 1  # the board picture's numbers run 1 to 16
    page = boss.get(f"/g/{gid}").text
    cell = re.search(rf'id="space-{s.space}".*?</g>\s*</g>', page, re.S)
    assert cell and re.search(rf'font-weight="700" fill="#222">{number}</text>', cell.group(0))
    assert f"<title>Space {number}," in cell.group(0)
    assert f'aria-label="Place the marker on space {number}"' in page
    act(boss, gid, {"do": "place_marker", "space": s.space})
    page = provider.get(f"/g/{gid}").text
    assert f"places the marker on space {number}" in page
    act(boss, gid, {"do": "open_deal"})
    page = provider.get(f"/g/{gid}").text
    assert f"Negotiation on space {number}" in page
    assert f"opens a deal on space {number}" in page
    story_page = provider.get(f"/g/{gid}/story").text
    assert f"Negotiation #1 on space {number}" in story_page
    with app.app_context():
        row = db.session.execute(
            select(Notification).where(
                Notification.kind == "deal_opened", Notification.seat_index == s.provider
            )
        ).scalar_one()
        with app.test_request_context("/?lang=en"):
            assert f"space {number}" in messages.row_text(row, NAMES)


def test_a_reply_names_the_space_by_the_number_players_read() -> None:
    state = replay(new_game(NAMES, Options(), default_board(), 4, datetime(2026, 3, 1, tzinfo=UTC)))
    reading = understand("place 5")
    assert reading == Reading("place", space=5)
    assert command_for(reading, state, state.active).command == {
        "do": "place_marker",
        "space": 4,
    }
    assert command_for(understand("放置第16格"), state, state.active).command == {
        "do": "place_marker",
        "space": 15,
    }
    assert command_for(understand("place 0"), state, state.active).problem == "not_now"


def _visible_text(page: str) -> str:
    """What a reader sees of ``page``: no scripts, styles, tags or attributes."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_the_game_page_says_no_rule_id_where_a_player_reads(app, game) -> None:
    """A deal's page, boss's view, in English and Chinese: the proposal for no card (R4.5) and
    the board's help links read as words, never as a rule id (the links still lead to it)."""
    created, s, clients = game
    gid = _open_deal(created, s, clients)
    for lang, no_card in (("en", "for no card:"), ("zh_Hans", "不要求出牌：")):
        page = clients[s.boss].get(f"/g/{gid}?lang={lang}").text
        text = _visible_text(page)
        assert no_card in text and "/rules#R1.4" in page
        assert re.findall(r"\b[RAV]\d+(?:\.\d+)?\b", text) == []


def test_a_digit_int_cannot_read_is_no_space() -> None:
    """``place ፩`` (an Ethiopic digit) or five thousand digits read as no word, never an error."""
    for line in ("place ፩", "place 1፩", "place space ፩", "置く ፩", "place " + "9" * 5000):
        assert understand(line) is None, line
    assert understand("place 5") == Reading("place", space=5)
