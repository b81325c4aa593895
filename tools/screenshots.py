"""Remake the phone-size screenshots in docs/screenshots/ (``SHOTS``, each a PNG 360 px wide):
the story of a game (``/g/<gid>/story``) and the replay at a running negotiation
(``/g/<gid>/replay?at=N``, with the board) in 简体中文 and 繁體中文; the question the game page
asks before the boss closes a deal (the box the player confirms, scrolled onto the screen and
focused) in 简体中文 and English; the help on the game page (what the cards in your hand do,
what each space asks) and the rules page (``/rules``) in 简体中文; a deal-closed mail in 简体中文
and 繁體中文; and a decision-ready mail (a deal opened: what the space needs and pays, what you
could bring, until when the negotiation runs) in each language: English, 简体中文, 繁體中文, 日本語.

    .venv/bin/python tools/screenshots.py [--out docs/screenshots] [--seed 7]

A 4-seat game (its seats reading ``SEAT_LANGS``) is made and played to its end by the engine's
bots through ``imtheboss.web.games.submit.submit`` on a SQLite file in a temporary folder, on a
virtual clock (no waiting); the app is served on a free local port and Debian's chromium
(``/usr/bin/chromium``, driven by Playwright) takes the pictures: the questions and the help
while the game runs (the first moment their seat may close a deal; holds three kinds of card),
the rest once it is over. The mails are the game's own outbox rows, composed as the server
mails them (``imtheboss.web.mail.compose.compose``, the mail ``imtheboss mail preview`` writes);
their HTML part is what is shot. Each picture is then made smaller by ``pngquant`` and
``optipng`` where they are installed (Debian's packages of those names). Needs CJK fonts (Debian
``fonts-noto-cjk``; ``.ci/run`` installs them): without them the pictures would show boxes, so
the script stops (exit 2).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands, next_deadline

CHROMIUM = Path("/usr/bin/chromium")
PHONE = {"width": 360, "height": 740}
PLAYERS = [("王芳", "wang@example.org"), ("陳靜", "chen@example.org"), ("Bill", "bill@example.org")]
PLAYERS += [("佐藤", "sato@example.org")]
SEAT_LANGS = ("zh_Hans", "zh_Hant", "en", "ja")  # what each seat reads
ZONES = ("Asia/Shanghai", "Asia/Taipei", "Europe/London", "Asia/Tokyo")
LANGS = ("zh_Hans", "zh_Hant")  # the story, the replay and the deal-closed mail
ASKED = {"zh_Hans": 0, "en": 2}  # the seats whose question before a close is shot
TALL = 2400  # the pictures' height at most (CSS px): the top of a long page
# Every picture the script makes: its file name in docs/screenshots/.
SHOTS = (
    *(f"story-{lang}.png" for lang in LANGS),
    *(f"replay-{lang}.png" for lang in LANGS),
    *(f"confirm-close-{lang}.png" for lang in ASKED),
    "card-help-zh_Hans.png",
    "space-help-zh_Hans.png",
    "rules-zh_Hans.png",
    *(f"mail-deal_closed-{lang}.png" for lang in LANGS),
    *(f"mail-deal_opened-{lang}.png" for lang in SEAT_LANGS),
)


class Clock:
    """The virtual clock the app reads (``CLOCK``) and the bots' moves advance."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def main(argv: list[str] | None = None) -> int:
    """Make the pictures (``SHOTS``) in ``--out``; returns the exit code (2: no CJK fonts or no
    chromium; 1: the game never gave a moment a picture needs)."""
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    missing = _missing_tools()
    if missing:
        print(f"screenshots: {missing}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as p:
        clock = Clock()
        app = _app(Path(folder), clock)
        server = _serve(app)
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            base = f"http://127.0.0.1:{server.server_port}"
            gid, tokens = _created(app, args.seed)
            during = Moments(browser, base, gid, tokens, args.out)
            replay_at = _played(app, clock, gid, args.seed, during.after)
            during.close()
            mails = _mails(app, gid, Path(folder))
            _shoot(browser, base, gid, tokens, replay_at, mails, args.out)
        finally:
            browser.close()
            server.shutdown()
    made = [args.out / name for name in SHOTS]
    lacking = [path.name for path in made if not path.exists()]
    if lacking:
        print(f"screenshots: the game gave no moment for {', '.join(lacking)}", file=sys.stderr)
        return 1
    _optimise(made)
    for path in made:
        print(path)
    return 0


def _missing_tools() -> str:
    if not CHROMIUM.exists():
        return "Debian's chromium is not at /usr/bin/chromium"
    fonts = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, check=False)
    if not fonts.stdout.strip():
        return "no CJK font (install Debian's fonts-noto-cjk)"
    return ""


def _app(folder: Path, clock: Clock) -> Any:
    from flask_migrate import stamp
    from imtheboss.web import create_app
    from imtheboss.web.app.health import MIGRATIONS
    from imtheboss.web.models import db

    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder / 'shots.sqlite3'}",
            "SECRET_KEY": "screenshots",
            "BASE_URL": "http://127.0.0.1",
            "CLOCK": clock,
            "TASKS": False,
            "AUTO_MIGRATE": False,
            "RATELIMIT_ENABLED": False,
        }
    )
    with app.app_context():
        db.create_all()
        stamp(directory=str(MIGRATIONS))  # the schema is current (web/app/health.py)
    return app


def _created(app: Any, seed: int) -> tuple[str, list[str]]:
    """The game, its seats reading ``SEAT_LANGS`` in ``ZONES``; returns its id and the seats'
    secret links' tokens."""
    from imtheboss.web.games.create import create_game
    from imtheboss.web.models import Seat, db

    with app.app_context():
        created = create_game("周末牌局", PLAYERS, {}, seed=f"screenshots-{seed}")
        for seat in db.session.query(Seat).filter_by(game_id=created.game_id):
            seat.locale = SEAT_LANGS[seat.seat_index]
            seat.timezone = ZONES[seat.seat_index]
        db.session.commit()
    return created.game_id, created.seat_tokens


def _played(app: Any, clock: Clock, gid: str, seed: int, after: Callable[[GameState], None]) -> int:
    """Plays the game to its end, calling ``after`` with the state after each move; returns an
    event number in a running negotiation with open terms (for the replay)."""
    from imtheboss.web.games.basics import ServiceError
    from imtheboss.web.games.load import get_game, load_state
    from imtheboss.web.games.submit import submit

    with app.app_context():
        state = load_state(get_game(gid))
    rng, bots = random.Random(seed), [SensibleBot() for _ in PLAYERS]
    replay_at, count = 0, 0
    while state.phase != "game_over" and count < 3000:
        seat, command, due = _next_move(state, bots, rng, clock.now)
        if command is None:
            clock.now = max(clock.now, due) if due else clock.now + timedelta(hours=1)
            continue
        try:
            with app.app_context():
                result = submit(gid, seat, command, f"shot-{count}", clock.now)
        except ServiceError:
            clock.now += timedelta(minutes=1)
            continue
        count, state = count + 1, result.state
        after(state)
        running = state.deal is not None and len(state.deal.terms) >= 2
        if not replay_at and state.deals_closed >= 4 and running:
            with app.app_context():
                replay_at = get_game(gid).last_seq
        clock.now += timedelta(minutes=rng.randint(5, 90))
    return replay_at or 1


def _next_move(state: GameState, bots: list, rng: random.Random, now: datetime) -> tuple:
    due = next_deadline(state)
    if due is not None and due <= now:
        return None, {"do": "timeout"}, due
    for seat in rng.sample(range(state.n), state.n):
        legal = legal_commands(state, seat)
        choice = bots[seat].choose(state, seat, legal, rng) if legal else None
        if choice is not None:
            return seat, choice, due
    return None, None, due


class Moments:
    """The pictures taken while the game runs, each once, at the first moment that has it: the
    question before a close, on the phone of each seat of ``ASKED`` once it may close a deal;
    the help on 王芳's game page once she holds three kinds of card."""

    def __init__(self, browser: Any, base: str, gid: str, tokens: list[str], out: Path) -> None:
        self.base, self.gid, self.out, self.done = base, gid, out, set()
        self.contexts, self.pages = [], {}
        for lang, seat in ASKED.items():
            context = browser.new_context(viewport=PHONE, locale=lang.replace("_", "-"))
            context.set_default_timeout(15_000)
            page = context.new_page()
            page.goto(f"{base}/g/{gid}/s/{tokens[seat]}")  # signs in: the seat's session
            self.contexts.append(context)
            self.pages[lang] = page

    def after(self, state: GameState) -> None:
        """Takes what ``state`` (the game after a move) is the first moment for."""
        for lang, seat in ASKED.items():
            name = f"confirm-close-{lang}.png"
            if name not in self.done and any(
                c["do"] == "close" for c in legal_commands(state, seat)
            ):
                self._question(self.pages[lang], lang, "close", self.out / name)
                self.done.add(name)
        kinds = {CARD_NAMES[card].split(":")[0] for card in state.hands[ASKED["zh_Hans"]]}
        if "help" not in self.done and len(kinds) >= 3:
            self._help(self.pages["zh_Hans"])
            self.done.add("help")

    def _question(self, page: Any, lang: str, kind: str, path: Path) -> None:
        """The game page with the question before the move ``kind``, as the player sees it
        once they tapped its button: the phone's screen, the question focused on it."""
        from playwright.sync_api import expect

        page.goto(f"{self.base}/g/{self.gid}?lang={lang}")
        button = page.locator(f"#live form.cmd-{kind} button[type=submit]").first
        button.scroll_into_view_if_needed()
        button.click()
        page.locator("#confirm").wait_for()
        expect(page.locator("#confirm")).to_be_focused()  # (no string to eval: the CSP)
        page.screenshot(path=str(path))

    def _help(self, page: Any) -> None:
        """王芳's hand with what her cards do, and the board with what each space asks, each
        help box opened by a tap on it."""
        page.goto(f"{self.base}/g/{self.gid}?lang=zh_Hans")
        for name, around in (("card-help", "section.you"), ("space-help", "figure")):
            details = page.locator(f"details.{name}").first
            details.locator("summary").click()
            box = page.locator(f"{around}:has(details.{name})").first
            _part(page, box, self.out / f"{name}-zh_Hans.png")
            self.done.add(f"{name}-zh_Hans.png")

    def close(self) -> None:
        """Closes the seats' browser windows."""
        for context in self.contexts:
            context.close()


def _mails(app: Any, gid: str, folder: Path) -> dict[str, Path]:
    """The HTML of the mails shot, as files by picture name: a deal-closed mail (with
    payouts) to the seats reading ``LANGS``, and to each seat the first deal-opened mail whose
    space it could bring something to (what deciding needs: the space's needs and proceeds,
    the reader's letters, the negotiation's end)."""
    from imtheboss.web.models import Notification, db

    chosen: list[tuple[str, int, int]] = []  # (picture, seat, row)
    with app.app_context():
        for index, lang in enumerate(SEAT_LANGS):
            rows = (
                db.session.query(Notification)
                .filter_by(game_id=gid, seat_index=index)
                .filter(Notification.kind.in_(("deal_closed", "deal_opened")))
                .order_by(Notification.id)
                .all()
            )
            closed = next((r for r in rows if r.kind == "deal_closed"), None)
            opened = next((r for r in rows if r.kind == "deal_opened" and _decides(r)), None)
            wanted = {"deal_opened": opened, "deal_closed": closed if lang in LANGS else None}
            chosen += [(f"mail-{k}-{lang}.png", index, r.id) for k, r in wanted.items() if r]
        db.session.rollback()
    # one context per mail: the locale is the context's
    return {name: _mail_page(app, gid, seat, row, folder) for name, seat, row in chosen}


def _decides(row: Any) -> bool:
    """The row says what deciding needs: the reader could bring something, and until when."""
    facts = (row.body or {}).get("facts") or {}
    return bool(facts.get("fits") and facts.get("until"))


def _mail_page(app: Any, gid: str, index: int, row_id: int, folder: Path) -> Path:
    """The mail of the outbox row ``row_id`` to seat ``index``, composed as the worker does,
    as a page: its subject over its HTML part. The game is over when it is shot, so the mail
    is composed as it went out while its negotiation ran: ``compose.as_true_now`` (which
    drops the facts of a negotiation that has ended from a mail sent after it) is left out,
    else the deal-opened mail would show no decision facts."""
    from unittest import mock

    from imtheboss.web.mail import compose as composing
    from imtheboss.web.models import Game, Notification, Seat, db

    with app.app_context(), mock.patch.object(composing, "as_true_now", lambda _s, rows: rows):
        game = db.session.get(Game, gid)
        seat = db.session.query(Seat).filter_by(game_id=gid, seat_index=index).one()
        msg = composing.compose(game, seat, [db.session.get(Notification, row_id)])
    html = msg.get_body(("html",)).get_content()
    page = folder / f"mail-{row_id}.html"
    page.write_text(
        f'<!doctype html><meta charset="utf-8"><meta name="viewport" '
        f'content="width=device-width"><p style="font:600 15px sans-serif;'
        f'border-bottom:1px solid #ccc;padding:0 0 8px">{_escape(str(msg["Subject"]))}</p>'
        f"{html}",
        encoding="utf-8",
    )
    return page


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _serve(app: Any) -> Any:
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _shoot(
    browser: Any,
    base: str,
    gid: str,
    tokens: list[str],
    at: int,
    mails: dict[str, Path],
    out: Path,
) -> None:
    """The pictures of the game once it is over: the story and the replay (``LANGS``), the
    rules page (简体中文), the mails (each in its reader's language)."""
    for index, lang in enumerate(LANGS):
        context = browser.new_context(viewport=PHONE, locale=lang.replace("_", "-"))
        page = context.new_page()
        page.goto(f"{base}/g/{gid}/s/{tokens[index]}")
        page.goto(f"{base}/g/{gid}/story?lang={lang}")
        _picture(page, out / f"story-{lang}.png")
        page.goto(f"{base}/g/{gid}/replay?at={at}&lang={lang}")
        _picture(page, out / f"replay-{lang}.png", ".board-card")
        if lang == "zh_Hans":
            page.goto(f"{base}/rules?lang={lang}")
            _picture(page, out / f"rules-{lang}.png")
        context.close()
    for name, html in mails.items():
        lang = name.rsplit("-", 1)[1].removesuffix(".png")
        context = browser.new_context(viewport=PHONE, locale=lang.replace("_", "-"))
        page = context.new_page()
        page.goto(html.as_uri())
        _picture(page, out / name, "body")
        context.close()


def _picture(page: Any, path: Path, down_to: str = "") -> None:
    """The top of the page, ``TALL`` px at most, or down to the end of ``down_to``."""
    height = min(TALL, page.evaluate("document.documentElement.scrollHeight"))
    if down_to:
        box = page.locator(down_to).bounding_box()
        height = int(box["y"] + box["height"] + 8) if box else height
    clip = {"x": 0, "y": 0, "width": PHONE["width"], "height": height}
    page.screenshot(path=str(path), full_page=True, clip=clip)


def _part(page: Any, box: Any, path: Path) -> None:
    """The band of the page (the phone's whole width) from 8 px above ``box`` (a locator) to
    8 px below it."""
    where = "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }"
    scroll = page.evaluate("scrollY")
    top, bottom = (at + scroll for at in box.evaluate(where))
    y = max(0, int(top) - 8)
    clip = {"x": 0, "y": y, "width": PHONE["width"], "height": int(bottom) + 8 - y}
    page.screenshot(path=str(path), full_page=True, clip=clip)


def _optimise(paths: list[Path]) -> None:
    """Makes each PNG smaller in place: 256 colours by ``pngquant`` (kept only where smaller
    and still faithful), then lossless ``optipng``; each step skipped where not installed."""
    quant, opti = shutil.which("pngquant"), shutil.which("optipng")
    for path in paths:
        if quant:
            args = [quant, "--force", "--skip-if-larger", "--quality", "60-95", "--strip"]
            subprocess.run([*args, "--output", str(path), str(path)], check=False)
        if opti:
            subprocess.run([opti, "-quiet", "-o2", "-strip", "all", str(path)], check=False)


if __name__ == "__main__":
    sys.exit(main())
