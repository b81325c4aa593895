"""The zone picker in a real browser (chromium, JavaScript on, the browser in Asia/Taipei, a
360-px phone screen): the create form fills the organiser's and every player's zone with the
browser's own and puts it first in the list; without JavaScript the boxes stay empty (the server
then uses UTC or the player's own default) and the list is there all the same. The rules page
and the create form fit the phone in each language, and so does a seat's game page with the
Rules link and its card and space help open."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium (.ci/run installs it)",
)
PHONE = {"width": 360, "height": 740}
FIRST_OPTION = "document.querySelector('#zone-list option').value"
WIDER = "document.documentElement.scrollWidth > window.innerWidth"


def test_the_create_form_takes_the_browser_s_zone(live_server: str, browser: Browser) -> None:
    context = browser.new_context(viewport=PHONE, timezone_id="Asia/Taipei")
    page = context.new_page()
    page.goto(f"{live_server}/new")
    assert page.input_value("input[name='creator_timezone']") == "Asia/Taipei"
    for i in range(6):
        assert page.input_value(f"input[name='players-{i}-timezone']") == "Asia/Taipei"
    assert page.evaluate(FIRST_OPTION) == "Asia/Taipei"
    assert not page.evaluate(WIDER)
    context.close()
    bare = browser.new_context(viewport=PHONE, timezone_id="Asia/Taipei", java_script_enabled=False)
    page = bare.new_page()
    page.goto(f"{live_server}/new")
    assert page.input_value("input[name='players-0-timezone']") == ""
    assert page.locator("#zone-list option[value='Asia/Taipei']").count() == 1
    bare.close()


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_the_rules_page_fits_a_phone(live_server: str, browser: Browser, lang: str) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{live_server}/rules?lang={lang}")
    assert page.locator("li#R5\\.1").count() == 1
    assert not page.evaluate(WIDER), page.evaluate("document.documentElement.scrollWidth")
    context.close()


@pytest.mark.parametrize("lang", ["en", "zh_Hant"])
def test_a_seat_s_game_page_with_the_help_fits_a_phone(
    app, live_server: str, browser: Browser, lang: str
) -> None:
    """The header's Rules link, the card help under the hand and the space help under the
    board, opened, on a seat's game page."""
    from imtheboss.web.games.create import create_game
    from support.deal import PLAYERS

    with app.app_context():
        created = create_game("Help", PLAYERS, seed=4)
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{live_server}/g/{created.game_id}/s/{created.seat_tokens[0]}?lang={lang}")
    page.goto(f"{live_server}/g/{created.game_id}?lang={lang}")
    for box in ("details.card-help", "details.space-help"):
        page.locator(f"{box} summary").click()
        assert page.locator(box).get_attribute("open") is not None
    assert page.locator("header a[href='/rules']").count() == 1
    assert not page.evaluate(WIDER), page.evaluate("document.documentElement.scrollWidth")
    context.close()
