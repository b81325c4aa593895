"""Remake the phone-size screenshots in docs/screenshots/: the story of a game (``/g/<gid>/story``),
the replay at a running negotiation (``/g/<gid>/replay?at=N``, with the board) and one mail (a
deal-closed mail with payouts), each in 简体中文 and 繁體中文, 360 px wide.

    .venv/bin/python tools/screenshots.py [--out docs/screenshots] [--seed 7]

A 4-seat game is made and played to its end by the engine's bots through
``imtheboss.web.service.submit`` on a SQLite file in a temporary folder, on a virtual clock (no
waiting); the app is served on a free local port and Debian's chromium (``/usr/bin/chromium``,
driven by Playwright) takes the pictures. Needs CJK fonts (Debian ``fonts-noto-cjk``; ``.ci/run``
installs them): without them the pictures would show boxes, so the script stops (exit 2).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands, next_deadline

CHROMIUM = Path("/usr/bin/chromium")
PHONE = {"width": 360, "height": 740}
PLAYERS = [("王芳", "wang@example.org"), ("陳靜", "chen@example.org"), ("Bill", "bill@example.org")]
PLAYERS += [("Dana", "dana@example.org")]
LANGS = ("zh_Hans", "zh_Hant")  # seat 0 reads 简体中文, seat 1 繁體中文
TALL = 2400  # the pictures' height at most (CSS px): the top of a long page


class Clock:
    """The virtual clock the app reads (``CLOCK``) and the bots' moves advance."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def main(argv: list[str] | None = None) -> int:
    """Make the pictures; returns the exit code (2: no CJK fonts or no chromium)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    missing = _missing_tools()
    if missing:
        print(f"screenshots: {missing}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        clock = Clock()
        app = _app(Path(folder), clock)
        gid, tokens, replay_at = _played(app, clock, args.seed)
        mails = _mails(app, gid, Path(folder))
        server = _serve(app)
        try:
            base = f"http://127.0.0.1:{server.server_port}"
            _shoot(base, gid, tokens, replay_at, mails, args.out)
        finally:
            server.shutdown()
    for path in sorted(args.out.glob("*.png")):
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
    from imtheboss.web.health import MIGRATIONS
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
        stamp(directory=str(MIGRATIONS))  # the schema is current (web/health.py)
    return app


def _played(app: Any, clock: Clock, seed: int) -> tuple[str, list[str], int]:
    """A game played to its end; returns its id, the seats' tokens and an event number in a
    running negotiation with open terms (for the replay)."""
    from imtheboss.web.models import Seat, db
    from imtheboss.web.service import ServiceError, create_game, get_game, load_state, submit

    with app.app_context():
        created = create_game("周末牌局", PLAYERS, {}, seed=f"screenshots-{seed}")
        for seat in db.session.query(Seat).filter_by(game_id=created.game_id):
            seat.locale = LANGS[seat.seat_index] if seat.seat_index < len(LANGS) else "en"
            seat.timezone = "Asia/Shanghai" if seat.seat_index == 0 else "Asia/Taipei"
        db.session.commit()
        state = load_state(get_game(created.game_id))
    rng, bots = random.Random(seed), [SensibleBot() for _ in PLAYERS]
    replay_at, count = 0, 0
    while state.phase != "game_over" and count < 3000:
        seat, command, due = _next_move(state, bots, rng, clock.now)
        if command is None:
            clock.now = max(clock.now, due) if due else clock.now + timedelta(hours=1)
            continue
        try:
            with app.app_context():
                result = submit(created.game_id, seat, command, f"shot-{count}", clock.now)
        except ServiceError:
            clock.now += timedelta(minutes=1)
            continue
        count, state = count + 1, result.state
        running = state.deal is not None and len(state.deal.terms) >= 2
        if not replay_at and state.deals_closed >= 4 and running:
            with app.app_context():
                replay_at = get_game(created.game_id).last_seq
        clock.now += timedelta(minutes=rng.randint(5, 90))
    return created.game_id, created.seat_tokens, replay_at or 1


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


def _mails(app: Any, gid: str, folder: Path) -> dict[str, Path]:
    """The HTML of one deal-closed mail (with payouts) to seats 0 and 1, as files by language."""
    from imtheboss.web.models import Game, Notification, Seat, db
    from imtheboss.worker.mail import compose

    out: dict[str, Path] = {}
    for index, lang in enumerate(LANGS):
        with app.app_context():  # one context per mail: the locale is the context's
            game = db.session.get(Game, gid)
            seat = db.session.query(Seat).filter_by(game_id=gid, seat_index=index).one()
            row = (
                db.session.query(Notification)
                .filter_by(game_id=gid, seat_index=index, kind="deal_closed")
                .order_by(Notification.id)
                .first()
            )
            msg = compose(game, seat, [row])
        html = msg.get_body(("html",)).get_content()
        page = folder / f"mail-{lang}.html"
        page.write_text(
            f'<!doctype html><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width"><p style="font:600 15px sans-serif;'
            f'border-bottom:1px solid #ccc;padding:0 0 8px">{_escape(str(msg["Subject"]))}</p>'
            f"{html}",
            encoding="utf-8",
        )
        out[lang] = page
    return out


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _serve(app: Any) -> Any:
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _shoot(
    base: str, gid: str, tokens: list[str], at: int, mails: dict[str, Path], out: Path
) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            for index, lang in enumerate(LANGS):
                context = browser.new_context(viewport=PHONE, device_scale_factor=2, locale=lang)
                page = context.new_page()
                page.goto(f"{base}/g/{gid}/s/{tokens[index]}")
                page.goto(f"{base}/g/{gid}/story?lang={lang}")
                _picture(page, out / f"story-{lang}.png")
                page.goto(f"{base}/g/{gid}/replay?at={at}&lang={lang}")
                _picture(page, out / f"replay-{lang}.png", ".board-card")
                page.goto(mails[lang].as_uri())
                _picture(page, out / f"mail-{lang}.png")
                context.close()
        finally:
            browser.close()


def _picture(page: Any, path: Path, down_to: str = "") -> None:
    """The top of the page, ``TALL`` px at most, or down to the end of ``down_to``."""
    height = min(TALL, page.evaluate("document.documentElement.scrollHeight"))
    if down_to:
        box = page.locator(down_to).bounding_box()
        height = int(box["y"] + box["height"] + 8) if box else height
    clip = {"x": 0, "y": 0, "width": PHONE["width"], "height": height}
    page.screenshot(path=str(path), full_page=True, clip=clip)


if __name__ == "__main__":
    sys.exit(main())
