"""A whole game on real processes, for the end-to-end games (tests/e2e/test_play_by_email.py,
tests/e2e/test_play_by_reply.py): ``running_stack`` starts PostgreSQL and Redis databases of the
test's own, an aiosmtpd ``Mailbox`` standing in for the world's mail, a Celery worker, Celery
beat, gunicorn and any further Procfile line (the inbound SMTP receiver, the IMAP poller);
``create_game`` is the organiser on the real ``/new`` page; ``Play`` drives seats that act by
the links of their mail and the page's forms (``SensibleBot`` chooses the moves).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import random
import re
import shlex
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import psycopg
import pytest
import requests
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.state import GameState, replay
from imtheboss.engine.views import awaiting, legal_commands
from imtheboss.web import create_app
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.models import EventRecord, db
from sqlalchemy import func, select

from support.e2e import Form, Mail, Mailbox, Process, free_port, page_forms, wait_for
from support.organiser import confirm, confirm_link
from support.postgres import own_database
from support.redis_db import own_redis_db

ROOT = Path(__file__).resolve().parents[2]
HTTP_TIMEOUT = 20
CELERY = "celery -A imtheboss.worker.celery_app"

# The windows a move answers, by the kind of ``awaiting`` entry (its email names the window).
ANSWERS = {
    "place_marker": ("place_marker", "turn"),
    "roll": ("turn",),
    "open_deal": ("turn",),
    "draw": ("turn",),
    "discard": ("discard",),
    "allow": ("stop",),
    "stop": ("stop",),
    "pass": ("last_call",),
}


# -- the processes ---------------------------------------------------------------------------


@dataclass
class Stack:
    base: str
    pg_url: str
    mailbox: Mailbox
    app: Any  # a Flask app on the test database, for reading only (TASKS off)
    processes: list[Process]


@contextlib.contextmanager
def running_stack(
    tmp_path: Path,
    *,
    redis_db: int,
    secret: str,
    settings: dict[str, str] | None = None,
    procfile: tuple[str, ...] = (),
) -> Iterator[Stack]:
    """PostgreSQL database, Redis database ``redis_db``, SMTP server, worker, beat and gunicorn
    (and the Procfile's lines named in ``procfile``, such as ``mail`` or ``imap``), with
    ``settings`` added to the processes' environment: started here, stopped and removed after
    the block."""
    name = f"imtheboss_e2e_{os.getpid()}"
    processes: list[Process] = []
    mailbox = Mailbox()
    app = None
    with own_redis_db(redis_db, wait=300) as redis_url, own_database(name) as pg_url:
        try:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            app = create_app(  # runs the migrations once, before any server process starts
                {
                    "SQLALCHEMY_DATABASE_URI": pg_url,
                    "SECRET_KEY": secret,
                    "BASE_URL": base,
                    "TASKS": False,
                    "AUTO_MIGRATE": True,
                }
            )
            mailbox.start()
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(
                    ("SMTP_", "MAIL_", "IMAP_", "CELERY", "IMTHEBOSS_BROKER", "OPERATOR")
                )
            }
            env.update(
                PYTHONPATH=str(ROOT),
                DATABASE_URL=pg_url.replace("postgresql+psycopg://", "postgresql://"),
                REDIS_URL=redis_url,
                SMTP_HOST="127.0.0.1",
                SMTP_PORT=str(mailbox.port),
                SECRET_KEY=secret,
                BASE_URL=base,
                SWEEP_SECONDS="1",
                BATCH_DELAY_SECONDS="1",
                MAIL_RETRY_MAX_SECONDS="2",
                BEAT_SCHEDULE_FILE=str(tmp_path / "celerybeat-schedule"),
                IMTHEBOSS_INSTANCE=str(tmp_path),  # nothing of this test in the repository
                MIN_WINDOW_SECONDS="1",  # the windows of these tests last seconds
                RATELIMIT_ENABLED="0",
            )
            env.update(settings or {})
            py = sys.executable
            worker = Process(
                "worker",
                [py, "-m", *CELERY.split(), "worker", "--loglevel", "info", "--concurrency", "4"]
                + ["-n", f"e2e-{os.getpid()}@%h", "--without-mingle", "--without-gossip"],
                env,
                ROOT,
                tmp_path / "worker.log",
            )
            beat = Process(
                "beat",
                [py, "-m", *CELERY.split(), "beat", "--loglevel", "info"],
                env,
                ROOT,
                tmp_path / "beat.log",
            )
            web = Process(
                "gunicorn",
                [py, "-m", "gunicorn", "--preload", "--workers", "2", "--access-logfile", "-"]
                + ["--bind", f"127.0.0.1:{port}", "imtheboss.web:create_app()"],
                env,
                ROOT,
                tmp_path / "web.log",
            )
            extra = [
                Process(line, procfile_command(line), env, ROOT, tmp_path / f"{line}.log")
                for line in procfile
            ]
            processes = [worker, beat, web, *extra]
            for process in processes:
                process.start()
            worker.wait_log([" ready."], 60)
            beat.wait_log(["beat: Starting"], 60)
            wait_for(lambda: _up(base, web), 60, what="gunicorn to serve")
            if "mail" in procfile:
                receiver = extra[procfile.index("mail")]
                inbound = int(env.get("MAIL_INBOUND_PORT", "2525"))
                wait_for(lambda: _listening(inbound, receiver), 60, what="the mail receiver")
            yield Stack(base, pg_url, mailbox, app, processes)
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


def procfile_command(kind: str) -> list[str]:
    """The argv of the Procfile's ``kind:`` line (``python`` is this interpreter)."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() == kind:
            argv = shlex.split(command.strip())
            return [sys.executable if argv[0] == "python" else argv[0], *argv[1:]]
    raise AssertionError(f"the Procfile has no {kind}: line")


def _up(base: str, web: Process) -> bool:
    if not web.running:
        pytest.fail(f"gunicorn exited:\n{web.tail()}")
    try:
        return requests.get(f"{base}/", timeout=2).status_code == 200
    except requests.ConnectionError:
        return False


def _listening(port: int, process: Process) -> bool:
    if not process.running:
        pytest.fail(f"{process.name} exited:\n{process.tail()}")
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def pg(stack: Stack) -> psycopg.Connection:
    """A plain connection to the stack's database."""
    return psycopg.connect(stack.pg_url.replace("postgresql+psycopg://", "postgresql://"))


def rows(stack: Stack, sql: str, *params: Any) -> list[tuple]:
    """The rows ``sql`` (with ``%s`` for ``params``) reads from the stack's database."""
    with pg(stack) as conn:
        return conn.execute(sql, params).fetchall()


def all_mailed(stack: Stack) -> bool:
    """No notification is waiting to be mailed (every one sent or skipped)."""
    sql = "SELECT count(*) FROM notifications WHERE email_state IN ('pending', 'sending')"
    return rows(stack, sql)[0][0] == 0


# -- the game --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """Who plays: the game's title, the organiser's address, the seats' names and addresses,
    the windows (seconds, by kind), the pace (``relaxed``: no standing orders, so every
    decision is a seat's own, by page or by mail)."""

    title: str
    organiser: str
    names: list[str]
    emails: list[str]
    windows: dict[str, int]
    pace: str = "relaxed"


def create_game(stack: Stack, table: Table) -> str:
    """The organiser fills in the real ``/new`` page: the players, windows of seconds (in
    hours, as the form takes them), the short game (V7), the default board, the pace; then confirms
    their address by the link in the one mail they get. Returns the game's id."""
    organiser = requests.Session()
    page = organiser.get(f"{stack.base}/new", timeout=HTTP_TIMEOUT)
    assert page.status_code == 200
    form = next(f for f in page_forms(page.text) if "csrf_token" in f.hidden)
    data: list[tuple[str, str]] = [
        ("csrf_token", form.hidden["csrf_token"]),
        ("title", table.title),
        ("creator_email", table.organiser),
    ]
    for i, (name, address) in enumerate(zip(table.names, table.emails, strict=True)):
        assert f"players-{i}-name" in form.inputs
        data += [(f"players-{i}-name", name), (f"players-{i}-email", address)]
    for kind, seconds in table.windows.items():
        data.append((f"{kind}_hours", f"{seconds / 3600:.9f}"))
    data += [("variants", "V7"), ("board_choice", "default"), ("pace", table.pace)]
    created = organiser.post(urljoin(page.url, form.action or "/new"), data=data, timeout=20)
    assert created.status_code == 200, created.text[:2000]
    match = re.search(r"/g/([\w-]+)/admin", created.text)
    assert match, created.text[:2000]
    gid = match.group(1)
    with stack.app.app_context():
        game = get_game(gid)
        assert game.settings["options"]["windows"] == table.windows
        assert game.settings["options"]["variants"] == ["V7"]
        db.session.remove()
    (mail,) = wait_for(lambda: stack.mailbox.to(table.organiser), 30, what="the organiser's mail")
    assert not any(stack.mailbox.to(e) for e in table.emails)  # nobody is invited before that
    confirm(organiser, confirm_link(mail.text, gid))
    return gid


def stored_state(stack: Stack, gid: str) -> tuple[GameState, int, int]:
    """The stored state, the number of deals opened so far, and the last sequence number."""
    with stack.app.app_context():
        game = get_game(gid)
        state = load_state(game)
        deals = db.session.execute(
            select(func.count())
            .select_from(EventRecord)
            .where(EventRecord.game_id == gid, EventRecord.type == "deal_opened")
        ).scalar_one()
        last = game.last_seq
        db.session.remove()
    return state, deals, last


# -- seats that play by the web ------------------------------------------------------------


class DealCounter(Counter):
    """``SensibleBot`` counts its proposals per deal under ``id(deal)``; the test rebuilds the
    state from the database before every move, so the deal is keyed by its number instead."""

    deal = 0

    def __getitem__(self, key: Any) -> int:
        return super().__getitem__((self.deal, *key[1:]))

    def __setitem__(self, key: Any, value: int) -> None:
        super().__setitem__((self.deal, *key[1:]), value)


@dataclass
class Seat:
    """One player: an email address, a browser session of its own, a bot that decides."""

    index: int
    email: str
    http: requests.Session = field(default_factory=requests.Session)
    bot: SensibleBot = field(default_factory=SensibleBot)
    followed: list[tuple[str, int]] = field(default_factory=list)  # emailed links: (url, status)
    moves: Counter = field(default_factory=Counter)
    chatted: bool = False

    def __post_init__(self) -> None:
        self.bot.counters = DealCounter()


class Play:
    """The game as the test drives it: reading the stored state, the seats' mail, the pages."""

    def __init__(self, stack: Stack, gid: str, table: Table) -> None:
        self.stack = stack
        self.gid = gid
        self.table = table
        self.seats = [Seat(i, e) for i, e in enumerate(table.emails)]
        self.rng = random.Random(4)
        self.stats: Counter = Counter()
        self.refusals: list[tuple[int, dict[str, Any], int, str]] = []
        self.ever_away: set[int] = set()

    # -- reading the game (the bots' input) -----------------------------------------------
    def state(self) -> tuple[GameState, int, int]:
        """The stored state, the number of deals opened so far, and the last sequence number."""
        return stored_state(self.stack, self.gid)

    # -- mail ---------------------------------------------------------------------------------
    def mail_for(self, seat: Seat, window: str | None) -> Mail | None:
        """The seat's email about ``window`` (the newest one), else its latest email."""
        mails = self.stack.mailbox.to(seat.email)
        if window is not None:
            about = [m for m in mails if any(x.endswith(f"#window-{window}") for x in m.links)]
            return about[-1] if about else None
        return mails[-1] if mails else None

    def sign_in_link(self, mail: Mail) -> str:
        links = [
            x
            for x in mail.links
            if urlsplit(x).path.startswith((f"/g/{self.gid}/m/", f"/g/{self.gid}/s/"))
        ]
        assert links, f"no sign-in link in the email {mail.subject!r}:\n{mail.text}"
        return links[0]

    # -- acting -------------------------------------------------------------------------------
    def open_link(self, seat: Seat, link: str) -> requests.Response:
        """Open an emailed link in the seat's browser (redirects followed); every answer on the
        way is recorded."""
        answer = seat.http.get(urldefrag(link).url, timeout=HTTP_TIMEOUT)
        for step in [*answer.history, answer]:
            seat.followed.append((link, step.status_code))
        return answer

    def act(self, seat: Seat, mail: Mail, choice: dict[str, Any]) -> bool:
        """Open the email's link, find the page's form for ``choice``, fill it in and submit
        it. Returns whether the game took it."""
        page = self.open_link(seat, self.sign_in_link(mail))
        if page.status_code != 200:
            self.stats["link failed"] += 1
            return False
        name = self.table.names[seat.index]
        assert f"you are {name}" in page.text, "the link signed in another seat"
        forms = [f for f in page_forms(page.text) if f.action.endswith(f"/g/{self.gid}/act")]
        form = next((f for f in forms if _matches(f, choice)), None)
        if form is None:  # the game moved on between reading it and loading the page
            self.stats["stale page"] += 1
            return False
        answer = seat.http.post(
            urljoin(page.url, form.action),
            data=_fill(form, choice),
            allow_redirects=False,
            timeout=HTTP_TIMEOUT,
        )
        yes = [f for f in page_forms(answer.text) if f.hidden.get("confirmed") == "yes"]
        if answer.status_code == 200 and yes:  # a move that asks first: "Yes, do it"
            answer = seat.http.post(
                urljoin(page.url, yes[0].action),
                data=list(yes[0].hidden.items()),
                allow_redirects=False,
                timeout=HTTP_TIMEOUT,
            )
        if answer.status_code == 303:
            back = seat.http.get(urljoin(page.url, answer.headers["Location"]), timeout=20)
            assert back.status_code == 200, (back.status_code, back.text[:500])
            seat.moves[choice["do"]] += 1
            self.stats["moves"] += 1
            return True
        said = re.search(r'<p class="message">(.*?)</p>', answer.text, re.S)
        reason = html.unescape(said.group(1)) if said else answer.text[:300]
        self.refusals.append((seat.index, choice, answer.status_code, reason))
        # 409: a deadline ended the window between reading the game and posting (a race the
        # real clock makes). Anything else is a bug.
        assert answer.status_code == 409, (answer.status_code, choice, reason)
        return False

    def step(self, silent: tuple[int, ...]) -> bool:
        """One move by the first seat (in a shuffled order, ``silent`` ones left out) whose bot
        wants to act and that has the email for it. Returns whether a move was made."""
        state, deals, _last = self.state()
        if state.phase == "game_over":
            return False
        self.ever_away |= {s for s in range(len(self.seats)) if state.away[s]}
        order = [s for s in self.seats if s.index not in silent]
        self.rng.shuffle(order)
        for seat in order:
            legal = legal_commands(state, seat.index)
            if not legal:
                continue
            seat.bot.counters.deal = deals
            choice = seat.bot.choose(state, seat.index, legal, self.rng)
            if choice is None and not seat.chatted and state.deal is not None:
                chat = next((c for c in legal if c["do"] == "chat"), None)
                if chat is not None:
                    name = self.table.names[seat.index]
                    choice = {"do": "chat", "text": f"{name} here, by email"}
                    seat.chatted = True
            if choice is None:
                continue
            window = _owed_window(state, seat.index, choice)
            mail = self.mail_for(seat, window)
            if mail is None:  # the email about this decision has not come yet
                self.stats["waited for mail"] += 1
                continue
            if window is not None:
                self.stats["answered from the window's email"] += 1
            return self.act(seat, mail, choice)
        return False

    def diagnose(self, state: GameState) -> str:
        """What the game waits for, for a failure's message."""
        return json.dumps(
            {
                "phase": state.phase,
                "awaiting": [{**a, "until": str(a["until"])} for a in awaiting(state)],
                "away": state.away,
                "stats": dict(self.stats),
                "refusals": [str(r) for r in self.refusals[-5:]],
                "mails": {e: len(self.stack.mailbox.to(e)) for e in self.table.emails},
                "now": datetime.now(UTC).isoformat(),
            },
            default=str,
        )


def _owed_window(state: GameState, seat: int, choice: dict[str, Any]) -> str | None:
    """The window id of the decision ``choice`` answers, when the game waits for ``seat``
    there (the seat was mailed about it); ``None`` for moves nobody waits for (negotiation)."""
    kinds = ANSWERS.get(choice["do"], ())
    if choice["do"] == "recruit" and state.phase == "discard":
        kinds = ("discard",)
    for entry in awaiting(state):
        if entry["seat"] == seat and entry["for"] in kinds:
            return entry["window"]
    return None


def _matches(form: Form, choice: dict[str, Any]) -> bool:
    """The form posts ``choice``: its hidden command plus what its inputs ask for."""
    cmd = form.cmd
    if cmd is None:
        return False
    asked = set()
    if "price" in form.inputs:
        asked.add("price")
    if "text" in form.inputs:
        asked.add("text")
    if "cards" in form.checkboxes:
        asked.add("cards")
    given = {k: v for k, v in choice.items() if k not in asked}
    return cmd == given and asked <= set(choice)


def _fill(form: Form, choice: dict[str, Any]) -> list[tuple[str, str]]:
    data = list(form.hidden.items())
    if "price" in form.inputs:
        kind, amount = next(iter(choice["price"].items()))
        data += [("price", str(amount)), ("price_kind", kind)]
    if "text" in form.inputs:
        data.append(("text", choice["text"]))
    if "cards" in form.checkboxes:
        offered = Counter(form.checkboxes["cards"])
        wanted = Counter(choice["cards"])
        assert not wanted - offered, f"the page offers {offered}, the bot discards {wanted}"
        data += [("cards", card) for card in choice["cards"]]
    return data


def play_to_the_end(
    play: Play, one_round: Callable[[float], bool], started: float, limit: float, stuck: float
) -> float:
    """Call ``one_round(seconds since started)`` (``time.monotonic()``; says whether anything
    was done) until the game is over; fail when no event came for ``stuck`` seconds, or after
    ``limit`` seconds. Returns the seconds since ``started``."""
    last_seq, last_progress = 0, time.monotonic()
    while True:
        moved = one_round(time.monotonic() - started)
        state, _deals, seq = play.state()
        if state.phase == "game_over":
            return time.monotonic() - started
        if seq != last_seq:
            last_seq, last_progress = seq, time.monotonic()
        if time.monotonic() - last_progress > stuck:
            pytest.fail(f"the game is stuck at event {seq}: {play.diagnose(state)}")
        if time.monotonic() - started > limit:
            pytest.fail(f"the game did not end in {limit:.0f} s: {play.diagnose(state)}")
        if not moved:
            time.sleep(0.1)


def final_replayed(stack: Stack, gid: str) -> tuple[list[Any], GameState]:
    """The stored events and a replay of them, once the game is over: the stored state's
    scores and winners are the replay's, and the ``game_ended`` event says them."""
    with stack.app.app_context():
        events = load_events(gid)
        final = replay(events)
        stored = load_state(get_game(gid))
        db.session.remove()
    assert final.phase == "game_over"
    assert stored.phase == "game_over"
    assert final.money == stored.money and final.winners == stored.winners
    ended = next(e for e in events if e.type == "game_ended")
    assert ended.data["money"] == final.money and ended.data["winners"] == final.winners
    assert final.winners == [
        s for s in range(len(final.money)) if final.money[s] == max(final.money)
    ]
    return events, final


def summary(events: list[Any], played: float, started: float) -> dict[str, Any]:
    """What a game looked like, for the test's output: seconds (of play, of the whole test since
    ``started``), events, deals opened, closed and failed, timeouts by kind."""
    kinds = Counter(e.type for e in events)
    return {
        "seconds": {"play": round(played), "total": round(time.monotonic() - started)},
        "events": len(events),
        "deals opened": kinds["deal_opened"],
        "deals closed": kinds["deal_closed"],
        "deals failed": kinds["deal_failed"],
        "timeouts": dict(Counter(e.data["kind"] for e in events if e.type == "timed_out")),
    }
