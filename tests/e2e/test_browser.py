"""A real browser (Debian's chromium driven by Playwright) plays the deal of
tests/web/test_pages.py through the pages, served for real on the test PostgreSQL database.

Each seat has a browser context of its own (its own cookies) and signs in by its seat link.
JavaScript is on: every move is a click on the page's real button (prices typed into the real
inputs), sent by htmx, which swaps the live part of the page in place. The test reads what a
person sees (the text on the page) and saves screenshots of the game page (phone and desktop)
and of the negotiation's history to ``tests/e2e/screenshots/`` (gitignored).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from imtheboss.engine.board import default_board
from imtheboss.web.games.create import create_game
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from support.deal import NAMES, PLAYERS, find_setup

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium (.ci/run installs it; "
    "Playwright never downloads a browser here)",
)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
WAIT_MS = 10_000

INVESTORS = {"C": "Cashman", "D": "Dougherty", "G": "Goldman", "L": "Liebgeld", "S": "Sacks"}
INVESTORS["W"] = "Wadsworth"


def named(letter: str) -> str:
    """How the pages name an investor card: ``Sacks (S)``."""
    return f"{INVESTORS[letter]} ({letter})"


def travel_words(card: str) -> str:
    """How the pages name a travel card (``travel:S``, ``travel:*``)."""
    letter = card.split(":")[1]
    return "wild travel card" if letter == "*" else f"a travel card for {named(letter)}"


@dataclass
class Player:
    """One seat in a browser context of its own."""

    name: str
    page: Page
    problems: list[str] = field(default_factory=list)  # CSP violations, uncaught errors

    @property
    def live(self) -> Locator:
        return self.page.locator("#live")

    def refresh(self) -> None:
        """Click the page's own "Refresh" link (a person would; htmx also polls every 15 s)."""
        self.page.get_by_role("link", name="Refresh", exact=True).click()
        self.page.wait_for_load_state()
        expect(self.page.locator("h1.game-title")).to_contain_text(f"you are {self.name}")

    def act(self, button: Locator, shows: str) -> None:
        """Click ``button`` of a command form: htmx posts it and swaps the live part in place
        (no page load: a marker set on ``window`` survives), which then shows ``shows``."""
        self.page.evaluate("window.__samePage = true")
        with self.page.expect_response(
            lambda r: r.url.endswith("/act") and r.request.method == "POST"
        ) as answer:
            button.click()
        response = answer.value
        assert response.request.headers.get("hx-request") == "true", "htmx did not send it"
        assert response.status == 200, response.text()[:2000]
        expect(self.live).to_contain_text(shows, timeout=WAIT_MS)
        assert self.page.evaluate("window.__samePage === true"), "the page was reloaded"
        expect(self.live.locator(".error-box")).to_have_count(0)
        # the focus goes to the question, else to the notices, which the one live region says
        if self.live.locator("#confirm").count():
            expect(self.live.locator("#confirm")).to_be_focused()
        else:
            expect(self.live.locator(".notice")).to_be_focused()
            expect(self.page.locator("#announce")).to_contain_text(shows)

    def confirm(self, button: Locator, shows: str) -> None:
        """A move that asks first: its button brings the question into the live part (no page
        load, and the live part stops polling meanwhile); "Yes, do it" makes the move."""
        self.act(button, "Are you sure?")
        polled = self.live.get_attribute("data-hx-trigger")
        assert polled is None, "the question would be polled away"
        self.act(self.live.locator("#confirm").get_by_role("button", name="Yes, do it"), shows)

    def form(self, kind: str, text: str) -> Locator:
        """The command form of kind ``kind`` (``offer``, ``propose``...) whose text has ``text``."""
        form = self.live.locator(f"form.cmd-{kind}", has_text=text)
        expect(form).to_have_count(1)
        return form

    def button(self, name: str) -> Locator:
        return self.live.get_by_role("button", name=name, exact=True)

    def price(self, kind: str, text: str, amount: int, button: str, shows: str) -> None:
        """Type a price in M into the form's inputs and press its button."""
        form = self.form(kind, text)
        form.locator("input[name=price]").fill(str(amount))
        form.locator("select[name=price_kind]").select_option("cash")
        # the button is named for its form's card too: "Offer Offer investor S for"
        named = re.compile(rf"^{re.escape(button)} ")
        self.act(form.get_by_role("button", name=named), shows)


# Reports every Content-Security-Policy violation of every page the context opens.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) =>
  window.reportViolation(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} ` +
                         `at ${e.sourceFile}:${e.lineNumber}`));
"""


def watch_problems(context: BrowserContext, page: Page, problems: list[str]) -> None:
    """Collect into ``problems`` the CSP violations (the ``securitypolicyviolation`` event and
    the browser's console messages about the policy) and uncaught errors of ``page``."""
    context.expose_function("reportViolation", lambda text: problems.append(f"csp: {text}"))
    context.add_init_script(REPORT_VIOLATIONS)
    page.on(
        "console",
        lambda m: (
            problems.append(f"console: {m.text}")
            if "Content Security Policy" in m.text or "Content-Security-Policy" in m.text
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"error: {error}"))


def sign_in(browser: Browser, base: str, gid: str, token: str, name: str, **options: Any) -> Player:
    """A new browser context (``options``: Playwright's context options) signed in by the seat
    link, on the game page; its ``problems`` collect CSP violations from the start."""
    context = browser.new_context(viewport=DESKTOP, locale="en-US", **options)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    player = Player(name, page)
    watch_problems(context, page, player.problems)
    page.goto(f"{base}/g/{gid}/s/{token}")
    assert page.url == f"{base}/g/{gid}", "the seat link leads on to the game page"
    expect(page.locator("h1.game-title")).to_contain_text(f"you are {name}")
    assert page.evaluate("typeof htmx") == "object", "htmx is loaded"
    return player


def shoot(page: Page, path: Path, viewport: dict[str, int]) -> None:
    """A full-page screenshot at ``viewport``; the page must not scroll sideways."""
    page.set_viewport_size(viewport)
    page.wait_for_timeout(100)  # let the layout settle after the resize
    wider = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wider <= 0, f"{path.name}: the page is {wider}px wider than the screen"
    page.screenshot(path=str(path), full_page=True)


def test_a_deal_in_the_browser(app, live_server: str, browser: Browser, screenshots) -> None:
    """Marker, deal, offer, counter, accept, a travel card answered by a stop, close with a
    last call everyone passes; then the payouts on the game page and the negotiation page."""
    s = find_setup()
    with app.app_context():
        created = create_game("Browser deal", PLAYERS, seed=s.seed)
    gid = created.game_id
    players = [
        sign_in(browser, live_server, gid, token, name)
        for token, name in zip(created.seat_tokens, NAMES, strict=True)
    ]
    boss, provider = players[s.boss], players[s.provider]
    traveller, stopper = players[s.traveller], players[s.stopper]
    letter = s.letter
    proceeds = default_board().spaces[s.space].shares * 2

    # Nobody else may move yet; the first player places the marker and opens the deal.
    expect(provider.live.locator("section.waiting")).to_contain_text(
        f"{boss.name} to place the marker"
    )
    expect(provider.live.locator("form.cmd-place_marker")).to_have_count(0)
    expect(boss.live).to_contain_text("Place the marker on a space to start the game:")
    expect(boss.live.locator("#board .board-picks form")).to_have_count(16)  # every space
    on_board = boss.live.locator("#board .board-picks").get_by_role(
        "button", name=f"Place the marker on space {s.space + 1}", exact=True
    )  # the square over the space on the board's picture, clicked where it is drawn
    boss.act(on_board, f"{boss.name} places the marker on space {s.space + 1}")
    expect(boss.live.locator(f"#space-{s.space}.has-marker")).to_have_count(1)
    boss.act(
        boss.live.get_by_role("button", name=re.compile(r"^Open a deal on space")),
        f"{boss.name} opens a deal on space {s.space + 1}",
    )
    expect(boss.live.locator("#deal")).to_contain_text(f"Negotiation on space {s.space + 1}")

    # The provider offers its investor for 3 M; the boss counters with 2 M; the provider
    # accepts exactly those terms.
    provider.refresh()
    expect(provider.live.locator("#deal dl.facts dd").first).to_have_text(boss.name)
    provider.price(
        "offer", f"Offer investor {letter} for", 3, "Offer", f"offers {named(letter)} for 3 M"
    )
    expect(provider.live.locator("table.terms")).to_contain_text("3 M")
    boss.refresh()
    expect(boss.live.locator("table.terms")).to_contain_text(f"offer by {provider.name}")
    boss.price(
        "propose",
        f"Propose to {provider.name} for investor {letter}:",
        2,
        "Propose",
        f"The boss proposes 2 M to {provider.name}",
    )
    provider.refresh()
    expect(provider.live.locator("table.terms")).to_contain_text("counter by the boss")
    provider.act(
        provider.button(f"Accept {boss.name}'s terms: investor {letter} for 2 M"),
        f"Agreement: {provider.name} gets 2 M for {named(letter)}",
    )
    boss.refresh()
    expect(boss.live.locator("#deal")).to_contain_text(f"committed 2 of {proceeds} M")

    # A travel card on the provider's investor; the stopper stops it in the stop window.
    traveller.refresh()
    traveller.confirm(
        traveller.live.get_by_role(
            "button", name=re.compile(rf"^Send investor {letter} on travel")
        ),
        f"{traveller.name} plays {travel_words(s.travel_card)} on {named(letter)}",
    )
    stopper.refresh()
    window = stopper.live.locator(".window.pending")
    expect(window).to_contain_text(f"Card waiting: {traveller.name}'s")
    expect(window).to_contain_text("Still to answer (stop or let it happen):")
    shoot(stopper.page, screenshots / "game-stop-window-phone.png", PHONE)
    shoot(stopper.page, screenshots / "game-stop-window-desktop.png", DESKTOP)
    stopper.confirm(  # a stop card cannot be taken back: it asks first
        stopper.live.get_by_role("button", name=re.compile(r"^Stop ")),
        f"{stopper.name} plays a stop card: the pending card is cancelled",
    )

    # The boss closes; the other two pass the last call; the deal closes.
    boss.refresh()
    boss.confirm(
        boss.button("Close the deal (the others get a last call)"),
        f"{boss.name} calls the deal closed: last call",
    )
    others = [p for p in players if p is not boss]
    for i, player in enumerate(others):
        player.refresh()
        expect(player.live.locator(".window.last-call")).to_contain_text(
            "Last call: the boss wants to close"
        )
        last = i == len(others) - 1
        player.act(
            player.button("Pass (let the deal close)"),
            "Deal closed on space" if last else f"{player.name} passes",
        )

    # The payouts on the game page: the boss's share and money, the provider's 2 M.
    boss.refresh()
    latest = boss.page.locator("section.recent")
    expect(latest).to_contain_text(f"Deal closed on space {s.space + 1}")
    expect(latest).to_contain_text(f"{boss.name}: +{proceeds - 2} M")
    expect(latest).to_contain_text(f"{provider.name}: +2 M")
    expect(boss.live.locator("section.you")).to_contain_text(f"Your money: {proceeds - 2} M")
    expect(boss.live.locator("#deal")).to_have_count(0)  # the negotiation is over
    provider.refresh()
    expect(provider.live.locator("section.you")).to_contain_text("Your money: 2 M")
    seats = provider.live.locator("section.seats tbody tr")
    expect(seats).to_have_count(3)
    for row in range(3):
        money = "2 M" if row == s.provider else "hidden"  # R7.1: others' money stays hidden
        expect(seats.nth(row).locator("td").nth(3)).to_have_text(money)
    shoot(boss.page, screenshots / "game-phone.png", PHONE)
    shoot(boss.page, screenshots / "game-desktop.png", DESKTOP)

    # The negotiation's history, reached through the page's links.
    page = provider.page
    page.get_by_role("navigation", name="Game").get_by_role("link", name="Deals").click()
    expect(page.locator("h1")).to_have_text("Deals")  # the nav's word is the page's title
    item = page.locator("li.deal-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("closed:")
    expect(item).to_contain_text(f"{boss.name}: +{proceeds - 2} M")
    expect(item).to_contain_text(f"{provider.name}: +2 M")
    item.get_by_role("link", name=re.compile(r"#1")).click()
    expect(page.locator("h1")).to_have_text(f"Negotiation #1 on space {s.space + 1}")
    payouts = page.locator("table.payouts tbody tr")
    expect(payouts).to_have_count(2)
    expect(payouts.filter(has_text=boss.name)).to_contain_text(f"+{proceeds - 2} M")
    expect(payouts.filter(has_text=provider.name)).to_contain_text("+2 M")
    timeline = page.locator("ol.timeline")
    for line in (
        f"{boss.name} opens a deal on space {s.space + 1}",
        f"{provider.name} offers {named(letter)} for 3 M",
        f"The boss proposes 2 M to {provider.name} for {named(letter)}",
        f"Agreement: {provider.name} gets 2 M for {named(letter)}",
        f"{traveller.name} plays {travel_words(s.travel_card)} on {named(letter)}",
        f"{stopper.name}: stopped it",
        f"{boss.name} calls the deal closed: last call",
        "Result: stopped",
        "Result: the deal closed",
        f"Deal closed on space {s.space + 1}",
    ):
        expect(timeline).to_contain_text(line)
    for player in others:
        expect(timeline).to_contain_text(f"{player.name}: passed")
    shoot(page, screenshots / "deal-history-phone.png", PHONE)
    shoot(page, screenshots / "deal-history-desktop.png", DESKTOP)
    for player in players:
        assert player.problems == [], f"{player.name}'s pages broke their CSP"
        player.page.context.close()


def test_the_zone_is_guessed_from_the_browser(app, live_server: str, browser: Browser) -> None:
    """A browser in another zone than the seat's is offered its own: one tap and the page's
    times are in it. A browser that keeps the seat's zone is not asked again; a browser in
    the seat's zone is never asked."""
    with app.app_context():
        created = create_game("Zones", PLAYERS, seed=find_setup().seed)
    gid, tokens = created.game_id, created.seat_tokens
    taipei = sign_in(browser, live_server, gid, tokens[0], NAMES[0], timezone_id="Asia/Taipei")
    offer = taipei.page.locator("#zone-guess")
    expect(offer).to_be_visible()
    expect(offer).to_contain_text("These pages show times in UTC")
    expect(offer.locator("[data-browser-zone]")).to_have_text("UTC+8, Taipei")
    latest = taipei.live.locator("section.recent li .meta").first
    expect(latest).to_have_text(re.compile(r" 09:00 UTC$"))  # the game started at 09:00 UTC
    offer.get_by_role("button", name="Show times in my zone").click()
    expect(taipei.page.locator(".notice")).to_contain_text("Times are now shown in UTC+8, Taipei.")
    expect(taipei.page.locator("#zone-guess")).to_be_hidden()
    expect(latest).to_have_text(re.compile(r" 17:00 UTC\+8$"))

    lima = sign_in(browser, live_server, gid, tokens[1], NAMES[1], timezone_id="America/Lima")
    offer = lima.page.locator("#zone-guess")
    expect(offer).to_be_visible()
    offer.get_by_role("button", name="Keep UTC").click()
    expect(offer).to_be_hidden()
    lima.page.reload()
    expect(lima.page.locator("h1.game-title")).to_contain_text(NAMES[1])
    expect(lima.page.locator("#zone-guess")).to_be_hidden()

    utc = sign_in(browser, live_server, gid, tokens[2], NAMES[2], timezone_id="UTC")
    expect(utc.page.locator("#zone-guess")).to_be_hidden()
    for player in (taipei, lima, utc):
        assert player.problems == [], f"{player.name}'s pages broke their CSP"
        player.page.context.close()


def test_a_browser_zone_of_the_same_offset_is_not_offered(
    app, live_server: str, browser: Browser
) -> None:
    """A seat in Asia/Taipei read in an Asia/Shanghai browser: both are UTC+8 and the times are
    the same, so the page offers no zone; a browser in Asia/Tokyo (UTC+9) is offered its own."""
    from imtheboss.web.models import Seat, db
    from sqlalchemy import update

    with app.app_context():
        created = create_game("Zones", PLAYERS, seed=find_setup().seed)
        db.session.execute(
            update(Seat).where(Seat.game_id == created.game_id).values(timezone="Asia/Taipei")
        )
        db.session.commit()
    gid, tokens = created.game_id, created.seat_tokens
    shanghai = sign_in(browser, live_server, gid, tokens[0], NAMES[0], timezone_id="Asia/Shanghai")
    shanghai.page.wait_for_timeout(300)  # the offer is made when the page has loaded
    expect(shanghai.page.locator("#zone-guess")).to_be_hidden()
    tokyo = sign_in(browser, live_server, gid, tokens[1], NAMES[1], timezone_id="Asia/Tokyo")
    expect(tokyo.page.locator("#zone-guess")).to_be_visible()
    for player in (shanghai, tokyo):
        assert player.problems == [], f"{player.name}'s pages broke their CSP"
        player.page.context.close()


def test_my_games_without_a_zone_are_in_the_browser_s(
    app, live_server: str, browser: Browser
) -> None:
    """/me of a player who chose no zone: the server writes UTC, and the browser (Asia/Shanghai)
    writes every time in its own zone and says so."""
    from flask import session
    from imtheboss.web.models import Seat, db
    from imtheboss.web.players import people as players_
    from sqlalchemy import update

    email = "zone.player@players.imtheboss.net"
    with app.app_context():
        created = create_game("Zones", PLAYERS, seed=find_setup().seed)
        db.session.execute(update(Seat).where(Seat.game_id == created.game_id).values(email=email))
        db.session.commit()
    with app.test_request_context():
        players_.sign_in(email)
        cookie = app.session_interface.get_signing_serializer(app).dumps(dict(session))
    context = browser.new_context(viewport=DESKTOP, locale="en-US", timezone_id="Asia/Shanghai")
    context.set_default_timeout(WAIT_MS)
    context.add_cookies(
        [{"name": app.config["SESSION_COOKIE_NAME"], "value": cookie, "url": live_server}]
    )
    page = context.new_page()
    problems: list[str] = []
    watch_problems(context, page, problems)
    page.goto(f"{live_server}/me")
    expect(page.locator(".zone-note")).to_contain_text(
        "Times are in this browser's zone, UTC+8, Shanghai."
    )
    times = page.locator("time[data-browser-time]")
    expect(times.first).to_have_text(re.compile(r"^\w{3} \d{4}-\d\d-\d\d \d\d:\d\d UTC\+8$"))
    assert "UTC+8" in page.locator("ul.my-games").inner_text()
    assert " UTC " not in page.locator("ul.my-games").inner_text() + " "
    assert problems == [], "the page broke its CSP"
    context.close()
