"""``imtheboss mail preview --lang LANG --out DIR``: one ``.eml`` file per kind of mail, named
after the kind (``your_turn.eml``), exactly as the worker composes it (``compose``: headers,
``Reply-To``, both parts), from a sample game the engine's bots play. For translators reading a
language's mail, operators checking their mail settings (``MAIL_FROM``, ``MAIL_DOMAIN``,
``BASE_URL``... are this server's), and the tests.

No server is needed: the game lives in a SQLite file in a temporary folder, its broker too
(nothing is sent, nothing reaches this server's database or queues), and is thrown away.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from imtheboss.engine import languages
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.web import create_app
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.service import ServiceError, create_game, get_game, load_state, submit
from imtheboss.web.settings import Settings
from imtheboss.worker.mail import compose
from sqlalchemy import select

LANGUAGES = languages.CODES
PLAYERS = [
    ("Amy", "amy@example.org"),
    ("Bill", "bill@example.org"),
    ("Carla", "carla@example.org"),
    ("Dan", "dan@example.org"),
]
START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MAX_COMMANDS = 5000


class _Clock:
    """The sample game's clock (the app's ``CLOCK``): moved by the game, never real time."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def preview(lang: str, out: Path, seed: str = "preview") -> list[Path]:
    """Write one ``<kind>.eml`` per kind of mail a sample four-seat game sent (each seat
    speaking ``lang``, one of ``LANGUAGES``) into ``out`` (made when missing); returns the
    files, sorted. Raises ``ValueError`` for an unknown language."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")
    out.mkdir(parents=True, exist_ok=True)
    clock, settings = _Clock(), Settings.load()
    with tempfile.TemporaryDirectory(prefix="imtheboss-preview-") as tmp:
        app = create_app(
            {
                # this server's settings where set; else a key of this run, the local address
                "SECRET_KEY": settings.secret_key or secrets.token_hex(32),
                "BASE_URL": settings.base_url or "http://127.0.0.1:5000",
                "MAIL_REPLIES": True if settings.mail_replies is None else settings.mail_replies,
                "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp}/preview.sqlite3",
                "AUTO_MIGRATE": True,
                "CLOCK": clock,
                "REDIS_URL": "",
                "BROKER_DIR": str(Path(tmp) / "broker"),
                "RATELIMIT_ENABLED": False,
                "RATELIMIT_STORAGE_URI": "memory://",
            }
        )
        with app.app_context():
            written = _play(clock, lang, seed, out)
            db.session.remove()
            db.engine.dispose()
    return sorted(written)


def _play(clock: _Clock, lang: str, seed: str, out: Path) -> list[Path]:
    """Create the sample game, its seats speaking ``lang``, and let bots play it to the end,
    writing each kind's first mail into ``out`` as it comes (``_write``); returns the files."""

    created = create_game("Preview", PLAYERS, seed=seed)
    game_id = created.game_id
    for seat in db.session.execute(select(Seat).where(Seat.game_id == game_id)).scalars():
        seat.locale = lang
    db.session.commit()

    state = load_state(get_game(game_id))
    rng, bot = random.Random(f"preview:{seed}"), SensibleBot()
    written: dict[str, Path] = {}
    for number in range(MAX_COMMANDS):
        _write(game_id, out, written)
        if state.phase == "game_over":
            break
        seat, command = _next(state, bot, rng, clock.now)
        if command is None:
            due = next_deadline(state)
            clock.now = max(clock.now, due) if due else clock.now + timedelta(hours=1)
            continue
        with contextlib.suppress(ServiceError):  # a move the rules refuse: bots choose again
            state = submit(game_id, seat, command, f"preview-{number}", clock.now).state
        clock.now += timedelta(minutes=rng.randint(1, 45))
    _write(game_id, out, written)
    return list(written.values())


def _next(state: Any, bot: SensibleBot, rng: random.Random, now: datetime) -> tuple:
    """The seat and command that come next: a deadline that passed, else a bot's choice."""
    due = next_deadline(state)
    if due is not None and due <= now:
        return None, {"do": "timeout"}
    for seat in rng.sample(range(state.n), state.n):
        legal = legal_commands(state, seat)
        choice = bot.choose(state, seat, legal, rng) if legal else None
        if choice is not None:
            return seat, choice
    return None, None


def _write(game_id: str, out: Path, written: dict[str, Path]) -> None:
    """Compose each kind's first row not yet in ``written`` as the worker would now (the reply
    words are those that work now) and write it as ``<kind>.eml``."""

    query = select(Notification).where(
        Notification.game_id == game_id, Notification.kind.not_in(list(written))
    )
    for row in db.session.execute(query.order_by(Notification.id)).scalars().all():
        if row.kind in written:
            continue
        seat = None
        if not row.to_email:
            seat = db.session.execute(
                select(Seat).where(Seat.game_id == game_id, Seat.seat_index == row.seat_index)
            ).scalar_one()
        path = out / f"{row.kind}.eml"
        path.write_bytes(compose(db.session.get(Game, game_id), seat, [row]).as_bytes())
        written[row.kind] = path
    db.session.rollback()
