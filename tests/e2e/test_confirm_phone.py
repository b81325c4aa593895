"""The question before a move that cannot be taken back, on a 360 x 740 phone in zh_Hans.

A 4-seat game is played by the bots through ``imtheboss.web.games.submit.submit`` (the test's
clock, the test PostgreSQL database). The first time a seat may make each of the moves that ask
first (``imtheboss.web.say.commands.CONFIRM``: a boss card, close, fail, a travel card, a recruit),
that seat's browser (Debian's chromium, JavaScript on, reading the pages in zh_Hans) taps the
move's button where it stands on the page, scrolled down to it as a phone would be. The
question must then be on the screen (its heading and its "Yes" inside the viewport) and hold
the focus, with "Yes, do it" the next Tab; the one live region (``#announce``) stays on the page.
"No, go back" leaves the game as it was. Screenshots go to ``tests/e2e/screenshots/``.
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path
from typing import Any

import pytest
from imtheboss.engine.bots import RandomBot, SensibleBot
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting, legal_commands
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.say.commands import CONFIRM
from playwright.sync_api import Browser, Page, expect
from support.bots import Hoarder
from support.play import play_to_end

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium (.ci/run installs it)",
)

PHONE = {"width": 360, "height": 740}
NAMES = ["Ann", "Bo", "Cai", "Dana"]
SEED = 4

# Where the question stands once it has been asked, and what holds the focus.
WHERE = """() => {
  const box = document.querySelector("#confirm");
  const yes = box.querySelector("button[type=submit]");
  const b = box.getBoundingClientRect(), y = yes.getBoundingClientRect();
  return {top: b.top, yesTop: y.top, yesBottom: y.bottom, inner: window.innerHeight,
          scrollY: window.scrollY, focused: document.activeElement === box,
          announce: !!document.querySelector("#announce")};
}"""


class AllAsked(Exception):
    """Every move that asks first has been tried: the game need not go on."""


def ask(page: Page, base: str, gid: str, kind: str, shots: Path) -> dict[str, Any]:
    """Open the game page, tap the first button of a ``kind`` move and measure the question."""
    page.goto(f"{base}/g/{gid}")
    button = page.locator(f"#live form.cmd-{kind} button[type=submit]").first
    button.scroll_into_view_if_needed()
    before = page.evaluate("window.scrollY")
    button.click()
    page.locator("#confirm").wait_for()
    # app.js moves the focus once htmx has settled the swap; where it is not, the test fails
    # below saying so
    with contextlib.suppress(AssertionError):
        expect(page.locator("#confirm")).to_be_focused(timeout=3_000)
    found = page.evaluate(WHERE)
    found["before"] = before
    page.screenshot(path=str(shots / f"confirm-phone-{kind}.png"))
    page.keyboard.press("Tab")
    found["tab_to_yes"] = page.evaluate(
        "document.activeElement === document.querySelector('#confirm button[type=submit]')"
    )
    page.locator("#confirm a.button").click()  # "No, go back": nothing is sent
    page.wait_for_load_state()
    return found


def test_every_question_is_on_the_phone_screen_and_focused(
    app, clock, live_server: str, browser: Browser, screenshots: Path
) -> None:
    players = [(n, f"{n.lower()}@example.org") for n in NAMES]
    with app.app_context():
        created = create_game("Phone questions", players, {"proxy_hours": 48}, seed=SEED)
        state = load_state(get_game(created.game_id))
    gid = created.game_id
    pages: list[Page] = []
    for token in created.seat_tokens:
        context = browser.new_context(viewport=PHONE, locale="zh-CN")
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto(f"{live_server}/g/{gid}/s/{token}")
        page.goto(f"{live_server}/g/{gid}?lang=zh_Hans")  # the session keeps it
        pages.append(page)

    measured: dict[str, dict[str, Any]] = {}

    def after(state: GameState) -> None:
        for seat in range(state.n):
            kinds = {c["do"] for c in legal_commands(state, seat)} & CONFIRM
            for kind in sorted(kinds - set(measured)):
                measured[kind] = ask(pages[seat], live_server, gid, kind, screenshots)
                measured[kind]["seat"] = seat
        if set(measured) == CONFIRM:
            raise AllAsked

    bots = [Hoarder(), SensibleBot(), RandomBot(), SensibleBot()]
    with pytest.raises(AllAsked):
        play_to_end(app, clock, gid, state, bots, random.Random(SEED), after)

    wrong = []
    for kind, m in sorted(measured.items()):
        print(
            f"{kind:8s} seat {m['seat']}: scrollY {m['before']} -> {m['scrollY']}, "
            f"box top {m['top']:.0f}, yes {m['yesTop']:.0f}-{m['yesBottom']:.0f} "
            f"of {m['inner']}, focused {m['focused']}, Tab to yes {m['tab_to_yes']}"
        )
        if not (0 <= m["top"] < m["inner"] and m["yesBottom"] <= m["inner"]):
            wrong.append(f"{kind}: off screen {m}")
        if not (m["focused"] and m["tab_to_yes"] and m["announce"]):
            wrong.append(f"{kind}: focus {m}")
    assert not wrong, "\n".join(wrong)
    for page in pages:
        page.context.close()


# Where the first button of a form of each kind stands on the screen now.
BUTTONS = """(kinds) => kinds.map((k) => {
  const b = document.querySelector(`#live form.cmd-${k} button[type=submit]`);
  if (!b) return null;
  const r = b.getBoundingClientRect();
  return {kind: k, top: r.top, bottom: r.bottom, inner: window.innerHeight};
}).filter((x) => x)"""


def test_a_mails_link_lands_with_the_decisions_buttons_on_the_first_screen(
    app, clock, live_server: str, browser: Browser
) -> None:
    """The link of a "terms for you" mail (``#asked``) and of a stop window's mail
    (``#window-<id>``): the buttons that answer are on the 360 x 740 screen it opens on."""
    players = [(n, f"{n.lower()}@example.org") for n in NAMES]
    with app.app_context():
        created = create_game("Phone links", players, {"proxy_hours": 48}, seed=SEED)
        state = load_state(get_game(created.game_id))
    gid = created.game_id
    pages: list[Page] = []
    for token in created.seat_tokens:
        context = browser.new_context(viewport=PHONE, locale="zh-CN")
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto(f"{live_server}/g/{gid}/s/{token}")
        page.goto(f"{live_server}/g/{gid}?lang=zh_Hans")
        pages.append(page)
    seen: dict[str, list[dict[str, Any]]] = {}

    def land(seat: int, anchor: str, kinds: list[str], label: str) -> None:
        page = pages[seat]
        page.goto(f"{live_server}/g/{gid}#{anchor}")
        page.reload()  # a fresh load of the link, which jumps to the anchor
        seen[label] = page.evaluate(BUTTONS, kinds)

    def after(state: GameState) -> None:
        for seat in range(state.n):
            legal = {c["do"] for c in legal_commands(state, seat)}
            if "accept" in legal and "terms" not in seen and state.pending is None:
                land(seat, "asked", ["accept", "reject"], "terms")
            for a in awaiting(state):
                if a["seat"] == seat and a["for"] == "stop" and "stop" not in seen:
                    land(seat, f"window-{a['window']}", ["allow", "stop"], "stop")
        if {"terms", "stop"} <= set(seen):
            raise AllAsked

    bots = [Hoarder(), SensibleBot(), RandomBot(), SensibleBot()]
    with pytest.raises(AllAsked):
        play_to_end(app, clock, gid, state, bots, random.Random(SEED), after)
    for label, buttons in seen.items():
        print(label, buttons)
        assert buttons, f"{label}: no answering button on the page"
        for b in buttons:
            assert b["top"] >= 0 and b["bottom"] <= b["inner"], f"{label}: off screen {b}"
    for page in pages:
        page.context.close()
