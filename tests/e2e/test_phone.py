"""Every page of a whole game on a 360-px phone screen: no page may scroll sideways.

A 4-seat game whose title and two players' names are 40 letters without a break, and whose
first deal carries a chat line of one 300-letter word, is played to its end by the engine's
bots through ``imtheboss.web.games.submit.submit`` (on the test PostgreSQL database, the clock the
test's own). At the first running deal with open terms, the first stop window, the first last
call, the first discard step, the first closed deal and at the end, real chromium (Playwright,
JavaScript on, a 360 x 740 viewport) opens every page each seat can reach and measures
``document.documentElement.scrollWidth`` against ``window.innerWidth``: the game page of every
seat (the boss's forms among them), the live part as htmx swaps it in, the history (first and
last page), the replay (at the first event, at the long chat line, at the end), the story, the
deals list, each kind of negotiation page, the inbox, settings, standing
orders; the organiser's admin page, created page and resend page; the new-game form (empty
and refused), the confirm page, the unsubscribe page; signing in by email (the form, its
answer, the link's button) and the signed-in address's list of games and defaults (during the
first deal and at the end); and the error pages (404, 403 and,
without JavaScript, a refused move's 409). Every width is printed; the test fails listing each
page that is wider than the screen and the elements that stick out. Screenshots of a few
pages go to ``tests/e2e/screenshots/phone-*.png``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from imtheboss.engine.bots import RandomBot, SensibleBot
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Seat, db
from imtheboss.web.players.links import confirm_link, unsubscribe_link
from imtheboss.web.players.people import SignInLink
from imtheboss.web.players.signin import sign_in_link
from playwright.sync_api import Browser, BrowserContext, Page
from sqlalchemy import select
from support.bots import Hoarder

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium (.ci/run installs it)",
)

PHONE = {"width": 360, "height": 740}
TITLE = "Donaudampfschifffahrtsgesellschaftskapit"  # 40 letters, no place to break
LONG = "Wolfeschlegelsteinhausenbergerdorffvoral"  # a 40-letter name
LONGER = "Hubertblainewolfeschlegelsteinhausenberg"  # another one
NAMES = [LONG, "Bo", LONGER, "Dana"]
MOMENTS = {"question", "stop_window", "last_call", "discard", "closed"}
LANGS = ["en", "zh_Hant", "en", "zh_Hans"]  # the language each seat reads the pages in
WORD = ("Rindfleischetikettierungsueberwachungsaufgabenuebertragungsgesetz" * 5)[:300]
SEED = 4
MAX_COMMANDS = 3000
SHOOT = {  # the pages saved as screenshots (tests/e2e/screenshots/phone-*.png)
    "open terms: game page of seat 0",
    "open terms: game page of seat 1",
    "open terms: negotiation page",
    "the question before failing the deal",
    "stop_window: game page of seat 2",
    "end: game page of seat 0",
    "end: a closed negotiation",
    "end: history page 1",
    "end: inbox of seat 0",
    "end: admin page",
    "open terms: my games",
    "end: my defaults",
}

# The page's width and the elements whose right edge passes the screen's (deepest first).
MEASURE = """() => {
  const inner = window.innerWidth;
  const right = (e) => e.getBoundingClientRect().left + Math.max(e.scrollWidth, e.offsetWidth);
  const wide = [];
  for (const e of document.querySelectorAll("body *")) {
    if (right(e) > inner + 0.5 && ![...e.children].some((c) => right(c) > inner + 0.5)) {
      wide.push(`${e.tagName.toLowerCase()}.${[...e.classList].join(".")} ${Math.round(right(e))}`);
    }
  }
  const actions = document.querySelector("#actions");
  // a finger's targets: the header's links 44 px tall, a seat's Bot box on one line
  const small = [...document.querySelectorAll(".top a")]
    .filter((a) => a.offsetParent && a.getBoundingClientRect().height < 44)
    .map((a) => `${a.textContent.trim()} ${Math.round(a.getBoundingClientRect().height)}`);
  const em = (e) => parseFloat(getComputedStyle(e).fontSize);
  const broken = [...document.querySelectorAll(".player-row label.check")]
    .filter((l) => l.offsetParent && l.getBoundingClientRect().height > 3 * em(l))
    .map((l) => `${l.textContent.trim()} ${Math.round(l.getBoundingClientRect().height)}`);
  return {scroll: document.documentElement.scrollWidth, inner, wide: wide.slice(0, 6),
          actions: actions ? actions.offsetHeight : 0, small, broken};
}"""

# The live part as htmx swaps it in every 15 s (the marker on the old one goes with it).
SWAP = """(url) => {
  document.querySelector("#live").dataset.swapped = "no";
  htmx.ajax("GET", url, {target: "#live", swap: "outerHTML"});
}"""

assert len(TITLE) == len(LONG) == len(LONGER) == 40 and len(WORD) == 300


@dataclass
class Phone:
    """The browsers of the test, each at phone size, and every width measured."""

    browser: Browser
    base: str
    gid: str
    pages: dict[int | None, Page] = field(default_factory=dict)  # seat (None: organiser)
    shots: Path | None = None  # where to save screenshots of the pages in SHOOT
    widths: dict[str, int] = field(default_factory=dict)
    actions: dict[str, int] = field(default_factory=dict)  # the height of "What you can do now"
    too_wide: list[str] = field(default_factory=list)
    small: list[str] = field(default_factory=list)  # targets a finger misses (MEASURE)

    def context(self, **options: Any) -> BrowserContext:
        context = self.browser.new_context(viewport=PHONE, locale="en-US", **options)
        context.set_default_timeout(15_000)
        return context

    def sign_in(self, viewer: int | None, token: str, lang: str = "en") -> None:
        """A browser of its own for ``viewer``, reading the pages in ``lang``."""
        page = self.context().new_page()
        where = f"s/{token}" if viewer is not None else f"admin/{token}"
        page.goto(f"{self.base}/g/{self.gid}/{where}")
        page.goto(f"{self.base}/g/{self.gid}?lang={lang}")  # the session keeps it
        self.pages[viewer] = page

    def measure(self, label: str, page: Page) -> None:
        """The width of what ``page`` shows now, kept under ``label``."""
        found = page.evaluate(MEASURE)
        if self.shots is not None and label in SHOOT:
            name = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
            page.screenshot(path=str(self.shots / f"phone-{name}.png"), full_page=True)
        self.widths[label] = found["scroll"]
        self.actions[label] = found["actions"]
        self.small.extend(f"{label}: {text}" for text in found["small"] + found["broken"])
        if found["scroll"] > found["inner"]:
            self.too_wide.append(
                f"{label}: {found['scroll']} px > {found['inner']}: {found['wide']}"
            )

    def visit(self, label: str, path: str, viewer: int | None = None, status: int = 200) -> Page:
        page = self.pages[viewer]
        response = page.goto(f"{self.base}{path}")
        assert response is not None and response.status == status, (label, response.status)
        self.measure(label, page)
        return page


@dataclass
class Game:
    """The bots' game: its state, the clock, and the moves made."""

    app: Any
    clock: Any
    gid: str
    state: GameState
    rng: random.Random = field(default_factory=lambda: random.Random(SEED))
    bots: list = field(
        default_factory=lambda: [Hoarder(), SensibleBot(), RandomBot(), SensibleBot()]
    )
    commands: int = 0

    def move(self) -> None:
        """One bot move, or the server's ``timeout`` once a deadline has passed."""
        state = self.state
        due = next_deadline(state)
        seat, command = None, None
        if due is not None and due <= self.clock.now:
            command = {"do": "timeout"}
        else:
            for candidate in self.rng.sample(range(state.n), state.n):
                legal = legal_commands(state, candidate)
                choice = self.bots[candidate].choose(state, candidate, legal, self.rng)
                if legal and choice is not None:
                    seat, command = candidate, choice
                    break
        if command is None:
            self.clock.now = (
                max(self.clock.now, due) if due else self.clock.now + timedelta(hours=1)
            )
            return
        self.submit(seat, command)
        self.clock.now += timedelta(minutes=self.rng.randint(1, 45))

    def submit(self, seat: int | None, command: dict[str, Any]) -> None:
        self.commands += 1
        assert self.commands < MAX_COMMANDS, "the game did not end"
        with self.app.app_context():
            try:
                result = submit(self.gid, seat, command, f"m{self.commands}", self.clock.now)
            except ServiceError as exc:
                assert exc.status == 409, exc.to_dict()
                self.clock.now += timedelta(minutes=1)
                return
        self.state = result.state

    def moves(self) -> Iterator[GameState]:
        while self.state.phase != "game_over":
            self.move()
            yield self.state


def game_pages(phone: Phone, moment: str, seats: range) -> None:
    """The game page of every seat in ``seats`` and the live fragment of the first."""
    base = f"/g/{phone.gid}"
    for seat in seats:
        phone.visit(f"{moment}: game page of seat {seat}", base, seat)
    page = phone.pages[seats[0]]
    with page.expect_response(lambda r: r.url.endswith("/fragment")):
        page.evaluate(SWAP, f"{base}/fragment")
    page.wait_for_function("document.querySelector('#live').dataset.swapped === undefined")
    phone.measure(f"{moment}: the live part, swapped in by htmx", page)


def question(phone: Phone, boss: int) -> None:
    """The question before the boss declares the deal failed, in the live part (htmx) and as
    a page of its own (without JavaScript); the boss goes back without failing it."""
    page = phone.pages[boss]
    page.goto(f"{phone.base}/g/{phone.gid}")
    page.locator("form.cmd-fail button").click()
    page.locator("#confirm").wait_for()
    phone.measure("the question before failing the deal", page)
    page.locator("#confirm a.button").click()
    page.wait_for_load_state()
    context = phone.context(java_script_enabled=False, storage_state=page.context.storage_state())
    plain = context.new_page()
    plain.goto(f"{phone.base}/g/{phone.gid}")
    with plain.expect_navigation():
        plain.locator("form.cmd-fail button").click()
    assert plain.locator("#confirm").count() == 1
    phone.measure("the question before failing, without JavaScript", plain)
    context.close()


def seat_pages(phone: Phone, seat: int) -> None:
    base = f"/g/{phone.gid}"
    for name, path in (
        ("inbox", "/inbox"),
        ("settings", "/settings"),
        ("standing orders", "/orders"),
    ):
        phone.visit(f"end: {name} of seat {seat}", base + path, seat)


def deal_pages(phone: Phone, moment: str, game: Game, viewer: int = 0) -> None:
    """The deals list and the newest negotiation's page; at the end one page of each outcome."""
    base = f"/g/{phone.gid}"
    page = phone.visit(f"{moment}: deals list", f"{base}/deals", viewer)
    items = page.locator("li.deal-item")
    if moment != "end":
        phone.visit(f"{moment}: negotiation page", f"{base}/deals/{items.count()}", viewer)
        return
    for outcome in ("closed", "failed"):
        item = page.locator(f"li.deal-item.outcome-{outcome} a").first
        href = item.get_attribute("href")
        phone.visit(f"end: a {outcome} negotiation", href, viewer)
        page = phone.visit(f"{moment}: deals list", f"{base}/deals", viewer)


def history_pages(phone: Phone, viewer: int = 0) -> None:
    base = f"/g/{phone.gid}/history"
    page = phone.visit("end: history page 1", base, viewer)
    last = page.locator("nav.pager span").inner_text().rsplit(" ", 1)[-1]
    phone.visit(f"end: history page {last}", f"{base}?page={last}", viewer)


def replay_and_story(phone: Phone, app: Any, talked_at: int, viewer: int = 0) -> None:
    """The replay at the first event, at the long chat line in a running deal and at the end,
    and the story of the whole game."""
    with app.app_context():
        total = get_game(phone.gid).last_seq
    for at in (1, talked_at, total):
        phone.visit(f"end: replay at event {at}", f"/g/{phone.gid}/replay?at={at}", viewer)
    phone.visit("end: the story", f"/g/{phone.gid}/story", viewer)


def organiser_pages(phone: Phone, app: Any, created: Any) -> None:
    base = f"/g/{phone.gid}"
    phone.visit("end: admin page", f"{base}/admin", None)
    phone.visit("end: created page", f"{base}/created", None)
    phone.visit("end: game page of the organiser", base, None)
    page = phone.pages[None]
    page.goto(f"{phone.base}{base}/admin")
    page.locator("form[action$='/resend'] button").first.click()
    page.wait_for_load_state()
    phone.measure("end: invitation resent", page)
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == phone.gid, Seat.seat_index == 0)
        ).scalar_one()
        unsubscribe = unsubscribe_link(phone.gid, seat)
        waiting = create_game(
            TITLE,
            [(n, f"{n.lower()}@example.org") for n in NAMES],
            creator_email=f"{LONG.lower()}@example.org",
            confirmed=False,
        )
        confirm = confirm_link(get_game(waiting.game_id))
    phone.visit("confirm page", confirm.replace("http://testserver", ""), None)
    phone.visit("unsubscribe page", unsubscribe.replace("http://testserver", ""), None)


def stranger_pages(phone: Phone) -> None:
    """What a browser with no seat sees: home, the new-game form, its refusal, error pages."""
    page = phone.context().new_page()
    phone.pages[-1] = page
    phone.visit("home", "/", -1)
    phone.visit("new-game form", "/new", -1)
    page.locator("input[name='title']").fill(TITLE)
    page.locator("input[name='players-0-name']").fill(LONG)
    page.locator("input[name='players-0-email']").fill("not-an-address-" + WORD[:60])
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_load_state()
    phone.measure("new-game form refused", page)
    phone.visit("404 page", f"/g/{phone.gid}/deals/999", 0, status=404)
    phone.visit("403 page", f"/g/{phone.gid}", -1, status=403)


def refused_without_js(phone: Phone, game: Game, token: str) -> None:
    """A seat without JavaScript presses a button of a page the game has moved on from: the
    refusal (409) is a page of its own."""
    context = phone.context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{phone.base}/g/{phone.gid}/s/{token}")
    form = page.locator("form.cmd-chat")
    form.locator("textarea").fill(WORD)
    for _state in game.moves():
        pass
    with page.expect_navigation():
        form.get_by_role("button").click()
    phone.measure("409 page (no JavaScript)", page)
    context.close()


def sign_in_by_email(phone: Phone, app: Any, email: str) -> None:
    """A browser of its own signs in as ``email`` through ``/sign-in`` and the link its mail
    holds (read from the database: the test's app sends no mail), measuring the pages."""
    page = phone.context().new_page()
    phone.pages[-2] = page
    phone.visit("sign-in form", "/sign-in", -2)
    page.locator("input[name='email']").fill(email)
    page.get_by_role("button", name="Mail me a sign-in link").click()
    page.wait_for_load_state()
    phone.measure("sign-in link sent", page)
    with app.app_context():
        row = db.session.execute(select(SignInLink).where(SignInLink.email == email)).scalar_one()
        link = sign_in_link(row).replace(app.config["BASE_URL"], "")
    phone.visit("sign-in button", link, -2)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    phone.measure("my games, signed in", page)


def home_pages(phone: Phone, moment: str) -> None:
    """The signed-in address's list of games and its defaults."""
    phone.visit(f"{moment}: my games", "/me", -2)
    phone.visit(f"{moment}: my defaults", "/me/settings", -2)


def test_every_page_fits_a_phone(
    app, clock, live_server: str, browser: Browser, screenshots: Path
) -> None:
    """The whole game; then every width is printed and the pages wider than 360 px listed."""
    players = [(n, f"{n.lower()}@example.org") for n in NAMES]
    with app.app_context():
        created = create_game(TITLE, players, {"proxy_hours": 48}, seed=SEED)
        state = load_state(get_game(created.game_id))
    game = Game(app, clock, created.game_id, state)
    phone = Phone(browser, live_server, created.game_id, shots=screenshots)
    for seat, token in enumerate(created.seat_tokens):
        phone.sign_in(seat, token, LANGS[seat])
    phone.sign_in(None, created.admin_token)
    sign_in_by_email(phone, app, players[0][1])

    seen: set[str] = set()
    talked, talked_at = False, 0
    for state in game.moves():
        deal = state.deal
        if deal is not None and deal.terms and not talked:
            game.submit(0, {"do": "chat", "text": f"{LONG}: {WORD}"})
            game.submit(2, {"do": "chat", "text": WORD})
            talked = True
            with app.app_context():
                talked_at = get_game(created.game_id).last_seq
            game_pages(phone, "open terms", range(state.n))
            deal_pages(phone, "open terms", game)
            home_pages(phone, "open terms")
        free = deal is not None and state.phase == "negotiation" and state.pending is None
        if talked and free and "question" not in seen:
            seen.add("question")
            question(phone, deal.boss)
        for moment in ("stop_window", "last_call", "discard"):
            if state.phase == moment and moment not in seen and talked:
                seen.add(moment)
                game_pages(phone, moment, range(state.n))
        if state.deals_closed and "closed" not in seen:
            seen.add("closed")
            deal_pages(phone, "first closed deal", game)
        if seen == MOMENTS:
            refused_without_js(phone, game, created.seat_tokens[1])
    assert seen == MOMENTS, seen

    game_pages(phone, "end", range(state.n))
    deal_pages(phone, "end", game)
    history_pages(phone)
    replay_and_story(phone, app, talked_at)
    for seat in range(state.n):
        seat_pages(phone, seat)
    stranger_pages(phone)
    organiser_pages(phone, app, created)
    home_pages(phone, "end")

    for label, width in phone.widths.items():
        actions = phone.actions[label]
        print(f"{width:5d} px  {label}" + (f" (its forms: {actions} px high)" if actions else ""))
    assert not phone.too_wide, "wider than a 360-px phone:\n" + "\n".join(phone.too_wide)
    assert not phone.small, "too small for a finger:\n" + "\n".join(phone.small)
