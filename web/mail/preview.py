"""``imtheboss mail preview --lang LANG --out DIR``: one ``.eml`` file per kind of mail, named
after the kind (``your_turn.eml``), exactly as the worker mails it (``compose``: headers,
``Reply-To``, both parts), from a sample game the engine's bots play. For translators reading a
language's mail, operators checking their mail settings (``MAIL_FROM``, ``MAIL_DOMAIN``,
``BASE_URL``... are this server's), the tests and the spam-score check
(``docs/deliverability.md``).

Every kind the server mails is written (``KINDS``): the sample game is made through the pages'
path (``organiser``: it waits for its organiser's confirmation), bots play it (a boss card
whenever one may be played: ``boss_changed``; one seat rolls and draws until it holds more than
the limit: ``discard``), the server's reminders run on its deadlines (``reminder``), a seat
stays silent until the server plays for it (``played_for``, ``marked_away``), its organiser
changes an address (``email_changed``) and passes a seat to another player (``seat_passed``),
a player replies to a mail with words the server cannot read (``reply_answer``) and asks for a
sign-in link (``sign_in``); ``news`` is a batch of news rows in one mail, as a seat that
reads a digest gets it.

No server is needed: the game lives in a SQLite file in a temporary folder, its broker too
(nothing is sent, nothing reaches this server's database or queues), and is thrown away.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import tempfile
from datetime import UTC, datetime, timedelta
from email import policy
from email.parser import BytesParser
from pathlib import Path
from typing import Any

from imtheboss.engine import languages
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.views import legal_commands, next_deadline
from imtheboss.web import create_app
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import confirm_game, create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.organiser import replace_player
from imtheboss.web.games.seats import set_seat_email
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.mail.kinds import ADDRESSED
from imtheboss.web.mail.kinds import KINDS as MAIL_KINDS
from imtheboss.web.mail.reminders import claim_reminders, plan_reminders, write_reminders
from imtheboss.web.mail.sign_in import compose_sign_in
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.players.people import SignInLink
from imtheboss.web.replies.answer import answer, thread_of
from imtheboss.web.settings import Settings
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
ORGANISER = "organiser@example.org"
# Every kind written: the seats' kinds, the mails to an address, a batch of news.
KINDS = frozenset(MAIL_KINDS) | set(ADDRESSED) | {"news"}
SILENT = 3  # the seat that never answers: the server plays for it (A6)
HOARDER = 2  # the seat that rolls and draws whenever it may: it ends over the hand limit (R6.6)
ORGANISER_ACTS_AT = 40  # the command after which the organiser changes an address, passes a seat


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
    """Create the sample game as the pages do (its organiser confirms it), its seats speaking
    ``lang``, and let bots play it to the end (``_step``), writing each kind's first mail into
    ``out`` as it comes (``_write``), then the mails no game move makes (``_extras``);
    returns the files."""

    created = create_game("Preview", PLAYERS, creator_email=ORGANISER, seed=seed, confirmed=False)
    game_id = created.game_id
    for row in db.session.execute(select(Notification).where(Notification.game_id == game_id)):
        row[0].body = {**row[0].body, "locale": lang}  # as if asked for on /new in ``lang``
    for seat in db.session.execute(select(Seat).where(Seat.game_id == game_id)).scalars():
        seat.locale = lang
    db.session.commit()
    confirm_game(game_id)

    state = load_state(get_game(game_id))
    rng, bot = random.Random(f"preview:{seed}"), SensibleBot()
    written: dict[str, Path] = {}
    for number in range(MAX_COMMANDS):
        _write(game_id, out, written)
        if state.phase == "game_over":
            break
        if number == ORGANISER_ACTS_AT:
            _organiser_acts(game_id, lang)
        state = _step(clock, game_id, state, bot, rng, number)
    _write(game_id, out, written)
    _extras(game_id, lang, out, written)
    return list(written.values())


def _step(
    clock: _Clock, game_id: str, state: Any, bot: SensibleBot, rng: random.Random, number: int
) -> Any:
    """One move of the sample game (a bot's, or a deadline's once it passed) at the clock's
    time, the server's reminders run first; returns the state after it."""
    plan_reminders()
    claims = claim_reminders(clock.now, 100)
    if claims:
        write_reminders(claims, clock.now)
    seat, command = _next(state, bot, rng, clock.now)
    if command is None:
        due = next_deadline(state)
        if due is None:
            clock.now += timedelta(hours=1)
        else:  # a minute before the deadline first: its reminders are written then
            before = due - timedelta(minutes=1)
            clock.now = before if clock.now < before else max(clock.now, due)
        return state
    with contextlib.suppress(ServiceError):  # a move the rules refuse: bots choose again
        state = submit(game_id, seat, command, f"preview-{number}", clock.now).state
    clock.now += timedelta(minutes=rng.randint(1, 45))
    return state


def _organiser_acts(game_id: str, lang: str) -> None:
    """The organiser moves Bill's seat to another address and passes Carla's to Cleo."""
    set_seat_email(game_id, 1, "bill@example.net")
    replace_player(game_id, 2, "Cleo", "cleo@example.org", "preview-replace")
    db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == 2)
    ).scalar_one().locale = lang
    db.session.commit()


def _extras(game_id: str, lang: str, out: Path, written: dict[str, Path]) -> None:
    """The mails no game move makes: the answer to a reply by mail Amy wrote to her last
    mail (words the server cannot read), her sign-in link, and a batch of her news in one
    mail (``news``)."""
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == 0)
    ).scalar_one()
    last = max(written.values(), key=lambda path: path.stat().st_mtime_ns)
    mail = BytesParser(policy=policy.default).parsebytes(last.read_bytes())
    answer(game_id, seat, "preview-reply", "unclear", thread_of(mail), line="maybe later")
    _write(game_id, out, written)
    link = SignInLink(id="preview", email=seat.email, locale=lang, created_at=START)
    written["sign_in"] = out / "sign_in.eml"
    written["sign_in"].write_bytes(compose_sign_in(link).as_bytes())
    news = db.session.execute(
        select(Notification)
        .where(Notification.game_id == game_id, Notification.seat_index == 0)
        .where(Notification.urgent.is_(False))
        .order_by(Notification.id)
        .limit(4)
    ).scalars()
    written["news"] = out / "news.eml"
    written["news"].write_bytes(compose(get_game(game_id), seat, list(news)).as_bytes())
    db.session.rollback()


def _next(state: Any, bot: SensibleBot, rng: random.Random, now: datetime) -> tuple:
    """The seat and command that come next: a deadline that passed, else a boss card whenever
    one may be played, else a bot's choice (the ``SILENT`` seat never chooses, the ``HOARDER``
    draws whenever it may)."""
    due = next_deadline(state)
    if due is not None and due <= now:
        return None, {"do": "timeout"}
    for seat in rng.sample(range(state.n), state.n):
        if seat == SILENT:
            continue
        legal = legal_commands(state, seat)
        hoards = ("roll", "draw") if seat == HOARDER else ()
        wanted = [c for c in legal if c["do"] == "boss" or c["do"] in hoards]
        if wanted:  # a boss card whenever one may be played (``boss_changed``)
            return seat, wanted[0]
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
