"""The replay in a real browser (Debian's chromium driven by Playwright) with JavaScript off, on
a phone-sized screen: a whole game is played by bots through ``submit``, then a seat steps
through it by the page's links and its event-number form, and opens the finished game's page
with the money chart and the download link. No page may scroll sideways at 360 px. Screenshots
of the replay in each language go to ``tests/e2e/screenshots/`` (gitignored)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from imtheboss.engine.bots import SensibleBot
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from playwright.sync_api import Browser, Page
from support.deal import PLAYERS
from support.play import play_to_end

CHROMIUM = Path("/usr/bin/chromium")
PHONE = {"width": 360, "height": 740}

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium (.ci/run installs it; "
    "Playwright never downloads a browser here)",
)


def fits(page: Page, what: str) -> None:
    wider = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wider <= 0, f"{what}: the page is {wider}px wider than the screen"


def test_stepping_through_a_game_without_script(
    app, clock, live_server: str, browser: Browser, screenshots: Path
) -> None:
    with app.app_context():
        created = create_game("Replayed", PLAYERS, {}, seed="browser-replay")
        state = load_state(get_game(created.game_id))
    gid = created.game_id
    play_to_end(app, clock, gid, state, [SensibleBot() for _ in PLAYERS], random.Random(5))
    with app.app_context():
        total = get_game(gid).last_seq
    context = browser.new_context(viewport=PHONE, java_script_enabled=False, locale="en-US")
    page = context.new_page()
    page.goto(f"{live_server}/g/{gid}/s/{created.seat_tokens[0]}")
    page.goto(f"{live_server}/g/{gid}/replay?at=1")
    assert page.locator("h1").first.inner_text() == f"Replay: event 1 of {total}"
    fits(page, "the replay at event 1")
    page.get_by_role("link", name="next →", exact=True).click()
    assert page.locator("h1").first.inner_text() == f"Replay: event 2 of {total}"
    page.get_by_role("link", name="+10", exact=True).click()
    assert page.locator("h1").first.inner_text() == f"Replay: event 12 of {total}"
    page.get_by_label("Event number").fill(str(total // 2))
    page.get_by_role("button", name="Show").click()
    assert page.locator("h1").first.inner_text() == f"Replay: event {total // 2} of {total}"
    assert re.search(rf"[?&]at={total // 2}\b", page.url)
    fits(page, "the replay mid-game")
    assert page.locator("svg.chart polyline").count() == 1  # only the seat's own money
    for lang in ("en", "zh_Hans", "zh_Hant"):
        page.goto(f"{live_server}/g/{gid}/replay?at={total // 2}&lang={lang}")
        fits(page, f"the replay in {lang}")
        page.screenshot(path=str(screenshots / f"replay-{lang}.png"), full_page=True)
    page.goto(f"{live_server}/g/{gid}?lang=en")
    fits(page, "the finished game's page")
    assert page.locator("svg.chart polyline").count() == len(PLAYERS)  # the end shows all
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the game's record (JSON)").click()
    assert download.value.suggested_filename == f"imtheboss-{gid}.json"
    page.get_by_role("link", name="Replay the game step by step").click()
    assert page.locator("h1").first.inner_text() == f"Replay: event 1 of {total}"
    context.close()
