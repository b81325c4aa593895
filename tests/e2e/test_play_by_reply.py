"""Five seats play a whole game where three act only by replying to their mail, with real
processes: gunicorn, the mail worker, the deadlines worker, beat, Redis, PostgreSQL, an aiosmtpd
server standing in for the world's mail, and our inbound SMTP receiver (the Procfile's
``mail:`` line).

The organiser makes the game on the real ``/new`` page and confirms it by mail. Seats 0 and 1
play by the web (the JSON API with their secret tokens). Seats 2, 3 and 4 only answer the
latest mail they got that has a ``Reply-To``: ``SensibleBot`` chooses among the moves a reply
word names (a discard, which no word names, is left to its window's end), and the reply is
written as a real client would: seat 2 plain text with a signature above a quote, seat 3
HTML-only in GBK with 简体 words, seat 4 Big5 with 繁體 words under a "於 … 寫道：" line. The
reply goes over SMTP to the receiver, from the seat's address.

At the end: the game is over; its final money and winners equal a replay of the stored log;
each mail seat made moves, every one marked ``via: mail``; no web seat's move is.
"""

from __future__ import annotations

import base64
import os
import random
import re
import shlex
import smtplib
import sys
import time
from collections.abc import Iterator
from email.utils import make_msgid
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from helpers_db import own_database
from helpers_e2e import Mail, Mailbox, Process, free_port, page_forms, wait_for
from helpers_organiser import confirm, confirm_link
from helpers_redis import own_redis_db
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.state import GameState, replay
from imtheboss.web import create_app
from imtheboss.web.models import db
from imtheboss.web.reply_choices import VERB_COMMAND, verbs_that_work
from imtheboss.web.reply_words import WORDS
from imtheboss.web.service import get_game, load_events, load_state

ROOT = Path(__file__).resolve().parents[2]
REDIS_DB = 10
SECRET = "e2e-play-by-reply-secret"
DOMAIN = "replies.e2e.example.org"
NAMES = ["Ann", "Ben", "Cat", "Dan", "Eve"]
EMAILS = [f"seat{i}@e2e.example.org" for i in range(5)]
ORGANISER = "organiser@e2e.example.org"
WEB, BY_MAIL = (0, 1), (2, 3, 4)
WINDOWS = {"turn": 8, "stop": 5, "last_call": 5, "negotiation": 15}  # seconds
PLAY_LIMIT = 1200.0
STUCK = 120.0
CELERY = "celery -A imtheboss.worker.celery_app"
DO_VERB = {do: verb for verb, do in VERB_COMMAND.items()}


def _procfile(kind: str) -> list[str]:
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() == kind:
            argv = shlex.split(command.strip())
            return [sys.executable, *argv[1:]] if argv[0] == "python" else argv
    raise AssertionError(f"no {kind}: line in the Procfile")


class Stack:
    """The processes, the mail of the world (``mailbox``) and the receiver's port."""

    def __init__(self, base: str, app: Any, mailbox: Mailbox, inbound: int) -> None:
        self.base, self.app, self.mailbox, self.inbound = base, app, mailbox, inbound


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    name = f"imtheboss_e2e_reply_{os.getpid()}"
    processes: list[Process] = []
    mailbox = Mailbox()
    with own_redis_db(REDIS_DB, wait=300) as redis_url, own_database(name) as pg_url:
        app = None
        try:
            port, inbound = free_port(), free_port()
            base = f"http://127.0.0.1:{port}"
            app = create_app(
                {
                    "SQLALCHEMY_DATABASE_URI": pg_url,
                    "SECRET_KEY": SECRET,
                    "BASE_URL": base,
                    "TASKS": False,
                    "AUTO_MIGRATE": True,
                }
            )
            mailbox.start()
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("SMTP_", "MAIL_", "CELERY", "IMTHEBOSS_BROKER", "IMAP_"))
            }
            env.update(
                PYTHONPATH=str(ROOT),
                DATABASE_URL=pg_url.replace("postgresql+psycopg://", "postgresql://"),
                REDIS_URL=redis_url,
                SMTP_HOST="127.0.0.1",
                SMTP_PORT=str(mailbox.port),
                SECRET_KEY=SECRET,
                BASE_URL=base,
                MAIL_REPLIES="1",
                MAIL_DOMAIN=DOMAIN,
                MAIL_INBOUND_PORT=str(inbound),
                SWEEP_SECONDS="1",
                BATCH_DELAY_SECONDS="1",
                MAIL_RETRY_MAX_SECONDS="2",
                BEAT_SCHEDULE_FILE=str(tmp_path / "celerybeat-schedule"),
                IMTHEBOSS_INSTANCE=str(tmp_path),
                MIN_WINDOW_SECONDS="1",
                RATELIMIT_ENABLED="0",
            )
            py = sys.executable
            processes = [
                Process(
                    "worker",
                    [py, "-m", *CELERY.split(), "worker", "--loglevel", "info", "-c", "4"]
                    + ["-n", f"e2e-reply-{os.getpid()}@%h", "--without-mingle", "--without-gossip"],
                    env,
                    ROOT,
                    tmp_path / "worker.log",
                ),
                Process(
                    "beat",
                    [py, "-m", *CELERY.split(), "beat", "--loglevel", "info"],
                    env,
                    ROOT,
                    tmp_path / "beat.log",
                ),
                Process(
                    "gunicorn",
                    [py, "-m", "gunicorn", "--preload", "--workers", "2"]
                    + ["--bind", f"127.0.0.1:{port}", "imtheboss.web:create_app()"],
                    env,
                    ROOT,
                    tmp_path / "web.log",
                ),
                Process("mail", _procfile("mail"), env, ROOT, tmp_path / "mail.log"),
            ]
            for process in processes:
                process.start()
            processes[0].wait_log([" ready."], 60)
            wait_for(lambda: _serving(base), 60, what="gunicorn")
            wait_for(lambda: _smtp_up(inbound), 60, what="the inbound receiver")
            yield Stack(base, app, mailbox, inbound)
        finally:
            for process in reversed(processes):
                process.stop()
            for process in processes:
                print(f"---- {process.name} log (tail) ----\n{process.tail(30)}")
            mailbox.stop()
            if app is not None:
                with app.app_context():
                    db.session.remove()
                    db.engine.dispose()


def _serving(base: str) -> bool:
    try:
        return requests.get(f"{base}/", timeout=2).status_code == 200
    except requests.ConnectionError:
        return False


def _smtp_up(port: int) -> bool:
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=5) as client:
            return client.noop()[0] == 250
    except OSError:
        return False


def _create_game(stack: Stack) -> str:
    """The real ``/new`` page, then the organiser's confirm link."""
    organiser = requests.Session()
    page = organiser.get(f"{stack.base}/new", timeout=20)
    form = next(f for f in page_forms(page.text) if "csrf_token" in f.hidden)
    data = [("csrf_token", form.hidden["csrf_token"]), ("title", "Reply game")]
    data.append(("creator_email", ORGANISER))
    for i, (name, address) in enumerate(zip(NAMES, EMAILS, strict=True)):
        data += [(f"players-{i}-name", name), (f"players-{i}-email", address)]
    data += [(f"{kind}_hours", f"{s / 3600:.9f}") for kind, s in WINDOWS.items()]
    data += [("variants", "V7"), ("board_choice", "default")]
    created = organiser.post(urljoin(page.url, form.action or "/new"), data=data, timeout=20)
    gid = re.search(r"/g/([\w-]+)/admin", created.text).group(1)
    (mail,) = wait_for(lambda: stack.mailbox.to(ORGANISER), 60, what="the organiser's mail")
    confirm(organiser, confirm_link(mail.text, gid))
    return gid


def _token(stack: Stack, gid: str, address: str) -> str:
    invited = wait_for(
        lambda: [m for m in stack.mailbox.to(address) if "invited" in m.subject], 60, what="invite"
    )
    return next(
        urlsplit(x).path.rsplit("/", 1)[1]
        for x in invited[0].links
        if urlsplit(x).path.startswith(f"/g/{gid}/s/")
    )


# -- replies as clients write them -----------------------------------------------------------


def _words(verb: str, price: dict[str, int] | None, lang: str) -> str:
    word = WORDS[verb][lang][0]
    if verb == "offer" and price:
        ((kind, n),) = price.items()
        share = {"en": "shares", "zh_Hans": "股", "zh_Hant": "股"}[lang]
        return f"{word} {n}" + (f" {share}" if kind == "shares" else "")
    return word


def _reply_bytes(seat: int, mail: Mail, line: str) -> bytes:
    """The reply of ``seat`` to ``mail``: plain + signature (2), HTML-only GBK (3), Big5 (4)."""
    original = "\n".join("> " + x for x in mail.text.splitlines())
    if seat == 2:
        body, charset, subtype = (
            f"{line}\n\n-- \nCat\nSent with care\n\n{original}",
            "utf-8",
            "plain",
        )
    elif seat == 3:
        quote = mail.text.replace("&", "&amp;").replace("<", "&lt;").replace("\n", "<br>")
        body = (
            f'<div dir="ltr">{line}</div><br><div class="gmail_quote"><div class="gmail_attr">'
            f'在 2026年12月1日 15:00，I\'m the Boss! 写道：</div><blockquote class="gmail_quote">'
            f"{quote}</blockquote></div>"
        )
        charset, subtype = "gbk", "html"
    else:
        body = f"{line}\n\n於 2026年12月1日 15:00，I'm the Boss! 寫道：\n{original}"
        charset, subtype = "big5", "plain"
    msgid = str(mail.message["Message-ID"])
    head = [
        f"From: {NAMES[seat]} <{EMAILS[seat]}>",
        f"To: {mail.message['Reply-To']}",
        f"Subject: Re: {mail.subject}",
        f"Message-ID: {make_msgid(domain='client.e2e.example.org')}",
        f"In-Reply-To: {msgid}",
        f"References: {msgid}",
        "MIME-Version: 1.0",
        f"Content-Type: text/{subtype}; charset={charset}",
        "Content-Transfer-Encoding: base64",
    ]
    data = base64.encodebytes(body.replace("\n", "\r\n").encode(charset, errors="replace"))
    data = data.replace(b"\n", b"\r\n")  # smtplib sends bytes as they are
    return "\r\n".join(head).encode() + b"\r\n\r\n" + data


LANG = {2: "en", 3: "zh_Hans", 4: "zh_Hant"}


class Play:
    def __init__(self, stack: Stack, gid: str, tokens: dict[int, str]) -> None:
        self.stack, self.gid, self.tokens = stack, gid, tokens
        self.rng = random.Random(7)
        self.bots = [SensibleBot() for _ in NAMES]
        self.replied: dict[int, str] = {}  # seat -> Message-ID of the mail it last answered
        self.sent = {s: 0 for s in BY_MAIL}

    def state(self) -> tuple[GameState, int]:
        with self.stack.app.app_context():
            game = get_game(self.gid)
            state, seq = load_state(game), game.last_seq
            db.session.remove()
        return state, seq

    def web(self, seat: int, state: GameState) -> bool:
        from imtheboss.engine.views import legal_commands

        choice = self.bots[seat].choose(state, seat, legal_commands(state, seat), self.rng)
        if choice is None:
            return False
        answer = requests.post(
            f"{self.stack.base}/api/games/{self.gid}/commands",
            json={"command": choice, "idempotency_key": f"web-{time.monotonic_ns()}"},
            headers={"Authorization": f"Bearer {self.tokens[seat]}"},
            timeout=20,
        )
        return answer.status_code == 201

    def by_mail(self, seat: int, state: GameState) -> bool:
        from imtheboss.engine.views import legal_commands

        working = set(verbs_that_work(state, seat)) - {"chat"}
        legal = [c for c in legal_commands(state, seat) if DO_VERB.get(c["do"]) in working]
        choice = self.bots[seat].choose(state, seat, legal, self.rng) if legal else None
        asking = [m for m in self.stack.mailbox.to(EMAILS[seat]) if m.message["Reply-To"]]
        if choice is None or not asking:
            return False
        mail = asking[-1]
        if self.replied.get(seat) == str(mail.message["Message-ID"]):
            return False  # wait for the answer (or the next mail) before writing again
        verb = DO_VERB[choice["do"]]
        line = _words(verb, choice.get("price"), LANG[seat])
        if verb == "place":
            line += f" {choice['space']}"
        with smtplib.SMTP("127.0.0.1", self.stack.inbound, timeout=30) as client:
            client.sendmail(
                EMAILS[seat], [str(mail.message["Reply-To"])], _reply_bytes(seat, mail, line)
            )
        self.replied[seat] = str(mail.message["Message-ID"])
        self.sent[seat] += 1
        return True


def test_three_seats_play_a_whole_game_by_replying(stack: Stack) -> None:
    started = time.monotonic()
    gid = _create_game(stack)
    tokens = {seat: _token(stack, gid, EMAILS[seat]) for seat in WEB}
    play = Play(stack, gid, tokens)
    last_seq, progress = 0, time.monotonic()
    while True:
        state, seq = play.state()
        if state.phase == "game_over":
            break
        if seq != last_seq:
            last_seq, progress = seq, time.monotonic()
        assert time.monotonic() - progress < STUCK, f"stuck at event {seq} in {state.phase}"
        assert time.monotonic() - started < PLAY_LIMIT, "the game took too long"
        for seat in (*WEB, *BY_MAIL):
            acted = play.web(seat, state) if seat in WEB else play.by_mail(seat, state)
            if acted:
                break
        else:
            time.sleep(0.3)
    with stack.app.app_context():
        events = load_events(gid)
        final = load_state(get_game(gid))
        db.session.remove()
    replayed = replay(events)
    assert replayed.money == final.money and replayed.winners == final.winners
    by_mail = {s: [e for e in events if e.by == s and e.data.get("via") == "mail"] for s in BY_MAIL}
    assert all(by_mail[s] for s in BY_MAIL), {s: play.sent[s] for s in BY_MAIL}
    assert not [e for e in events if e.by in WEB and "via" in e.data]
    print({s: len(v) for s, v in by_mail.items()}, "moves by mail;", len(events), "events")
