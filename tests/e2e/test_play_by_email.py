"""Five seats play a whole game by email, with real processes.

- gunicorn serves ``imtheboss.web:create_app()`` (two workers, as the Procfile's ``web`` does);
- a Celery worker and Celery beat run as two more processes (the Procfile's ``worker`` and
  ``beat``) on Redis (a database number of this test's own) and PostgreSQL (a database this test
  creates and drops);
- an aiosmtpd SMTP server in this process receives every email.

The organiser creates the game on the real ``/new`` page (short game, V7; windows of seconds) and
confirms it by the link mailed to them, which sends the invitations. Each
seat then acts only through links found in the emails it received: it opens the link of its latest
email (of the email about that very window when it owes an answer: its turn, a stop window, the last
call, a discard) with its own ``requests.Session``, reads the game page it lands on and submits one
of that page's forms. ``imtheboss.engine.bots.SensibleBot`` chooses the moves from the stored state;
the move is made by finding the page form whose hidden ``cmd`` is the bot's choice and filling its
inputs (price, text, cards). Seats 3 and 4 answer nothing at first, so their windows time out (A5)
and they are marked away (A6); then they join in from their mail.

At the end: the game is over; its final scores equal a replay of the stored event log; every
emailed link followed worked; a mail scanner's ``GET`` and ``HEAD`` of every link in every email
change nothing; every email is well formed; no seat got another seat's secrets.
"""

from __future__ import annotations

import html
import json
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import psycopg
import pytest
import requests
from helpers_db import own_database
from helpers_e2e import Form, Mail, Mailbox, Process, free_port, page_forms, wait_for
from helpers_organiser import confirm, confirm_link
from helpers_redis import own_redis_db
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.state import GameState, replay
from imtheboss.engine.views import awaiting, legal_commands
from imtheboss.web import create_app, story
from imtheboss.web.models import EventRecord, db
from imtheboss.web.service import get_game, hash_token, load_events, load_state
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parents[2]
# This test's own Redis database number (tests/worker uses 13 and, under xdist, 12 for gw1).
REDIS_DB = 11
SECRET = "e2e-play-by-email-secret"
TITLE = "Mail game"
NAMES = ["Ann", "Ben", "Cat", "Dan", "Eve"]
EMAILS = [f"seat{i}@e2e.example.org" for i in range(5)]
ORGANISER = "organiser@e2e.example.org"
WINDOWS = {"turn": 3, "stop": 2, "last_call": 2, "negotiation": 6}  # seconds
SILENT = (3, 4)  # seats that answer nothing at first: until both were marked away (A6) and
SILENT_DEALS = 3  # this many deals have ended (of the 7 or more of a short game, V7); at most
SILENT_MAX = 90.0  # this many seconds
PLAY_LIMIT = 360.0  # seconds for the whole game
STUCK = 45.0  # seconds without a new event: the game is stuck
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


def _english(event, names: list[str], seat: int) -> str:
    """The line ``seat`` reads for ``event``, in English."""
    with story.speaking("en"):
        return story.line(event, names, seat)


# -- the processes ---------------------------------------------------------------------------


@dataclass
class Stack:
    base: str
    pg_url: str
    mailbox: Mailbox
    app: Any  # a Flask app on the test database, for reading only (TASKS off)
    processes: list[Process]


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    """PostgreSQL database, Redis database, SMTP server, worker, beat and gunicorn: started here,
    stopped and removed after the test."""
    name = f"imtheboss_e2e_{os.getpid()}"
    processes: list[Process] = []
    mailbox = Mailbox()
    app = None
    with own_redis_db(REDIS_DB, wait=300) as redis_url, own_database(name) as pg_url:
        try:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            app = create_app(  # runs the migrations once, before any server process starts
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
                if not k.startswith(("SMTP_", "MAIL_", "CELERY", "IMTHEBOSS_BROKER", "OPERATOR"))
            }
            env.update(
                PYTHONPATH=str(ROOT),
                DATABASE_URL=pg_url.replace("postgresql+psycopg://", "postgresql://"),
                REDIS_URL=redis_url,
                SMTP_HOST="127.0.0.1",
                SMTP_PORT=str(mailbox.port),
                SECRET_KEY=SECRET,
                BASE_URL=base,
                SWEEP_SECONDS="1",
                BATCH_DELAY_SECONDS="1",
                MAIL_RETRY_MAX_SECONDS="2",
                BEAT_SCHEDULE_FILE=str(tmp_path / "celerybeat-schedule"),
                IMTHEBOSS_INSTANCE=str(tmp_path),  # nothing of this test in the repository
                MIN_WINDOW_SECONDS="1",  # the windows of this test last seconds
                RATELIMIT_ENABLED="0",
            )
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
            processes = [worker, beat, web]
            for process in processes:
                process.start()
            worker.wait_log([" ready."], 60)
            beat.wait_log(["beat: Starting"], 60)
            wait_for(lambda: _up(base, web), 60, what="gunicorn to serve")
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


def _up(base: str, web: Process) -> bool:
    if not web.running:
        pytest.fail(f"gunicorn exited:\n{web.tail()}")
    try:
        return requests.get(f"{base}/", timeout=2).status_code == 200
    except requests.ConnectionError:
        return False


# -- seats -----------------------------------------------------------------------------------


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
    http: requests.Session = field(default_factory=requests.Session)
    bot: SensibleBot = field(default_factory=SensibleBot)
    followed: list[tuple[str, int]] = field(default_factory=list)  # emailed links: (url, status)
    moves: Counter = field(default_factory=Counter)
    chatted: bool = False

    def __post_init__(self) -> None:
        self.bot.counters = DealCounter()

    @property
    def email(self) -> str:
        return EMAILS[self.index]


class Play:
    """The game as the test drives it: reading the stored state, the seats' mail, the pages."""

    def __init__(self, stack: Stack, gid: str) -> None:
        self.stack = stack
        self.gid = gid
        self.seats = [Seat(i) for i in range(5)]
        self.rng = random.Random(4)
        self.stats: Counter = Counter()
        self.refusals: list[tuple[int, dict[str, Any], int, str]] = []
        self.ever_away: set[int] = set()

    # -- reading the game (the bots' input) -----------------------------------------------
    def state(self) -> tuple[GameState, int, int]:
        """The stored state, the number of deals opened so far, and the last sequence number."""
        with self.stack.app.app_context():
            game = get_game(self.gid)
            state = load_state(game)
            deals = db.session.execute(
                select(func.count())
                .select_from(EventRecord)
                .where(EventRecord.game_id == self.gid, EventRecord.type == "deal_opened")
            ).scalar_one()
            last = game.last_seq
            db.session.remove()
        return state, deals, last

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
        assert f"you are {NAMES[seat.index]}" in page.text, "the link signed in another seat"
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
        """One move by the first seat (in a shuffled order) whose bot wants to act and that has
        the email for it. Returns whether a move was made."""
        state, deals, _last = self.state()
        if state.phase == "game_over":
            return False
        self.ever_away |= {s for s in range(5) if state.away[s]}
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
                    choice = {"do": "chat", "text": f"{NAMES[seat.index]} here, by email"}
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


# -- the test --------------------------------------------------------------------------------


def test_five_seats_play_a_whole_game_by_email(stack: Stack) -> None:
    started = time.monotonic()
    gid = _create_game(stack)
    play = Play(stack, gid)
    wait_for(lambda: all(stack.mailbox.to(e) for e in EMAILS), 30, what="the five invitations")
    tokens = _tokens(stack, gid)

    # -- play to the end: two seats silent at first --------------------------------------
    silent_until: float | None = None
    last_seq, last_progress = 0, time.monotonic()
    while True:
        now = time.monotonic()
        elapsed = now - started
        silent: tuple[int, ...] = ()
        if silent_until is None:
            state, deals, _seq = play.state()
            finished = deals - (state.deal is not None)
            done = finished >= SILENT_DEALS and set(SILENT) <= play.ever_away
            if done or elapsed >= SILENT_MAX:
                silent_until = elapsed
                play.stats["silent seconds"] = round(elapsed)
                play.stats["deals ended while silent"] = finished
            else:
                silent = SILENT
        moved = play.step(silent)
        state, _deals, seq = play.state()
        if state.phase == "game_over":
            break
        if seq != last_seq:
            last_seq, last_progress = seq, time.monotonic()
        if time.monotonic() - last_progress > STUCK:
            pytest.fail(f"the game is stuck at event {seq}: {_diagnose(play, state)}")
        if elapsed > PLAY_LIMIT:
            pytest.fail(f"the game did not end in {PLAY_LIMIT:.0f} s: {_diagnose(play, state)}")
        if not moved:
            time.sleep(0.1)
    played = time.monotonic() - started

    # -- let the mail settle: every notification sent (or skipped: the seat had looked) ----
    wait_for(lambda: _all_mailed(stack), 30, what="the last emails")
    everything = stack.mailbox.all()
    mails = [m for m in everything if m.to in EMAILS]  # the players' (the organiser had one)
    assert [m.to for m in everything if m not in mails] == [ORGANISER]

    with stack.app.app_context():
        events = load_events(gid)
        final = replay(events)
        stored = load_state(get_game(gid))
        db.session.remove()

    # -- the game is over, and its scores are the replay's --------------------------------
    assert final.phase == "game_over"
    assert stored.phase == "game_over"
    assert final.money == stored.money and final.winners == stored.winners
    ended = next(e for e in events if e.type == "game_ended")
    assert ended.data["money"] == final.money and ended.data["winners"] == final.winners
    assert final.winners == [s for s in range(5) if final.money[s] == max(final.money)]
    for mail in mails:  # the game-over emails tell the replay's scores
        seat = EMAILS.index(mail.to)
        if "Game over" in mail.text:
            assert _english(ended, NAMES, seat) in mail.text

    # timeouts moved the game while seats 3 and 4 were silent; then they played again
    timed_out = [e for e in events if e.type == "timed_out"]
    missed = Counter(s for e in timed_out for s in e.data["missed"])
    assert missed[3] >= 2 and missed[4] >= 2, missed
    assert set(SILENT) <= play.ever_away, "A6: the silent seats were never marked away"
    for index in SILENT:
        assert play.seats[index].moves, f"seat {index} never played after its silence"
    assert all(play.seats[i].moves for i in range(5))

    # -- one email per notification row: each urgent row alone, news in batches ------------
    with _pg(stack) as conn:
        rows = conn.execute(
            "SELECT seat_index, urgent, email_state, emailed_at, kind = 'reminder'"
            " FROM notifications WHERE game_id = %s",
            (gid,),
        ).fetchall()
    assert {state for _seat, _u, state, _at, _r in rows} <= {"sent", "skipped"}
    # A reminder is dropped when its window ended (or its seat answered) before it went out.
    assert all(state == "sent" for _seat, urgent, state, _at, r in rows if urgent and not r)
    for index, address in enumerate(EMAILS):
        sent = [(u, at) for seat, u, state, at, _r in rows if seat == index and state == "sent"]
        urgent = sum(1 for u, _at in sent if u)
        batches = {at for u, at in sent if not u}
        assert len(stack.mailbox.to(address)) == urgent + len(batches), address

    # -- the mail tells the story: payouts to everyone, nothing about one's own acts, and
    #    every card that waits for an answer named with its player, its target, the deadline
    _check_story(stack, gid, mails, events)

    # -- every emailed link followed worked ------------------------------------------------
    followed = [step for seat in play.seats for step in seat.followed]
    assert followed
    broken = [(link, status) for link, status in followed if status >= 400]
    assert not broken, broken

    # -- every email is well formed and holds only its own seat's secrets -------------------
    _check_mails(stack, gid, mails, events, tokens)

    # -- mail scanners: GET and HEAD on every link in every email change nothing -----------
    before = _db_snapshot(stack, gid)
    count = len(everything)
    links = sorted(
        {urldefrag(x).url for m in everything for x in m.links}  # the organiser's links too
        | {
            urldefrag(x).url
            for m in mails
            for x in re.findall(r"<([^>]+)>", str(m.message["List-Unsubscribe"]))
        }
    )
    for link in links:
        for method in ("GET", "HEAD"):
            scanner = requests.Session()  # no cookies of its own; keeps those of the redirects
            answer = scanner.request(method, link, allow_redirects=True, timeout=HTTP_TIMEOUT)
            assert answer.status_code < 400, (method, link, answer.status_code)
    time.sleep(2)  # anything a prefetch set going would show by now (sweeps run every second)
    assert _db_snapshot(stack, gid) == before
    assert len(stack.mailbox.all()) == count

    # -- what the game looked like --------------------------------------------------------
    kinds = Counter(e.type for e in events)
    per_seat = {NAMES[i]: len(stack.mailbox.to(e)) for i, e in enumerate(EMAILS)}
    subjects = Counter(_what(m.subject) for m in mails)
    print(
        json.dumps(
            {
                "seconds": {"play": round(played), "total": round(time.monotonic() - started)},
                "events": len(events),
                "deals opened": kinds["deal_opened"],
                "deals closed": kinds["deal_closed"],
                "deals failed": kinds["deal_failed"],
                "timeouts": dict(Counter(e.data["kind"] for e in timed_out)),
                "missed by seat": {NAMES[s]: n for s, n in sorted(missed.items())},
                "moves by seat": {NAMES[s.index]: sum(s.moves.values()) for s in play.seats},
                "moves by kind": dict(sum((s.moves for s in play.seats), Counter())),
                "emails by seat": per_seat,
                "email subjects": dict(subjects),
                "links followed": len(followed),
                "links prefetched": len(links),
                "refused (409)": Counter(r[3] for r in play.refusals),
                "stats": dict(play.stats),
                "scores": {NAMES[s]: final.money[s] for s in range(5)},
                "winners": [NAMES[s] for s in final.winners],
            },
            indent=1,
            default=str,
        )
    )
    assert len(play.refusals) <= max(5, play.stats["moves"] // 10), play.refusals
    for process in stack.processes:  # no task failed, no request raised
        assert not process.problems(), f"{process.name}:\n{process.tail(60)}"


# -- creating the game -----------------------------------------------------------------------


def _create_game(stack: Stack) -> str:
    """The organiser fills in the real ``/new`` page: five players, windows of seconds (in
    hours, as the form takes them), the short game (V7), the default board; then confirms
    their address by the link in the one mail they get."""
    organiser = requests.Session()
    page = organiser.get(f"{stack.base}/new", timeout=HTTP_TIMEOUT)
    assert page.status_code == 200
    form = next(f for f in page_forms(page.text) if "csrf_token" in f.hidden)
    data: list[tuple[str, str]] = [
        ("csrf_token", form.hidden["csrf_token"]),
        ("title", TITLE),
        ("creator_email", ORGANISER),
    ]
    for i, (name, address) in enumerate(zip(NAMES, EMAILS, strict=True)):
        assert f"players-{i}-name" in form.inputs
        data += [(f"players-{i}-name", name), (f"players-{i}-email", address)]
    for kind, seconds in WINDOWS.items():
        data.append((f"{kind}_hours", f"{seconds / 3600:.9f}"))
    data += [("variants", "V7"), ("board_choice", "default")]
    created = organiser.post(urljoin(page.url, form.action or "/new"), data=data, timeout=20)
    assert created.status_code == 200, created.text[:2000]
    match = re.search(r"/g/([\w-]+)/admin", created.text)
    assert match, created.text[:2000]
    gid = match.group(1)
    with stack.app.app_context():
        game = get_game(gid)
        assert game.settings["options"]["windows"] == WINDOWS
        assert game.settings["options"]["variants"] == ["V7"]
        db.session.remove()
    (mail,) = wait_for(lambda: stack.mailbox.to(ORGANISER), 30, what="the organiser's mail")
    assert not any(stack.mailbox.to(e) for e in EMAILS)  # nobody is invited before that
    confirm(organiser, confirm_link(mail.text, gid))
    return gid


def _tokens(stack: Stack, gid: str) -> list[str]:
    """Each seat's secret token, from its invitation; it must be that seat's own."""
    tokens = []
    with stack.app.app_context():
        from imtheboss.web.service import seats_of

        hashes = [s.token_hash for s in seats_of(gid)]
        db.session.remove()
    for index, address in enumerate(EMAILS):
        # The invitation and the first player's "place the marker" go out at once, in any order.
        invitation = wait_for(
            lambda a=address: [m for m in stack.mailbox.to(a) if "invited" in m.subject],
            30,
            what=f"the invitation to {address}",
        )
        assert len(invitation) == 1
        found = [
            urlsplit(x).path.rsplit("/", 1)[1]
            for x in invitation[0].links
            if urlsplit(x).path.startswith(f"/g/{gid}/s/")
        ]
        assert len(found) == 1, invitation[0].text
        assert hash_token(found[0]) == hashes[index], "an invitation carries another seat's link"
        tokens.append(found[0])
    return tokens


# -- checks ----------------------------------------------------------------------------------


def _all_mailed(stack: Stack) -> bool:
    with _pg(stack) as conn:
        pending = conn.execute(
            "SELECT count(*) FROM notifications WHERE email_state IN ('pending', 'sending')"
        ).fetchone()[0]
    return pending == 0


def _check_story(stack: Stack, gid: str, mails: list[Mail], events: list) -> None:
    """Each closed deal is in every seat's outbox with its payouts, mailed unless the seat
    had seen it on the page; no row is about its seat's own act; each mail asking about a
    card names the card, who played it, on whose card, and what the deadline does."""
    with _pg(stack) as conn:
        rows = conn.execute(
            "SELECT seat_index, kind, seq, email_state, body FROM notifications"
            " WHERE game_id = %s AND seat_index >= 0",
            (gid,),
        ).fetchall()
    closed = [seq for seq, e in enumerate(events, 1) if e.type == "deal_closed"]
    assert closed
    for seq in closed:
        told = {
            (seat, state)
            for seat, kind, at, state, _b in rows
            if kind == "deal_closed" and at == seq
        }
        assert {seat for seat, _state in told} == set(range(5)), (seq, told)
        line = _english(events[seq - 1], NAMES, 0)
        assert "M" in line.rsplit(":", 1)[1]  # the payouts, in M
    for seat in range(5):
        deals = [m for m in mails if m.to == EMAILS[seat] and "Deal closed on space" in m.text]
        sent = [r for r in rows if r[0] == seat and r[1] == "deal_closed" and r[3] == "sent"]
        assert bool(deals) == bool(sent), seat
    for seat, kind, seq, _state, body in rows:
        event = events[seq - 1]
        if "message" in body and kind not in ("deal_closed", "game_over"):
            assert not (event.by == seat and not event.data.get("order")), (seat, kind, event)
    asking = [m for m in mails if "a card waits for your answer" in m.subject]
    assert asking, "no card ever waited for an answer"
    for mail in asking:
        text = " ".join(mail.text.split())
        assert "If you do not answer in time, you let it happen." in text, text
        assert re.search(rf"({'|'.join(NAMES)}) plays ", text), text
        assert " of " in text or "boss card" in text, text  # on whose card, or a boss card


def _pg(stack: Stack) -> psycopg.Connection:
    return psycopg.connect(stack.pg_url.replace("postgresql+psycopg://", "postgresql://"))


def _db_snapshot(stack: Stack, gid: str) -> dict[str, Any]:
    """Everything a request could change: the game row, events, commands, deadlines,
    notifications (sent, read), seats (settings, what they have seen), the local outbox."""
    out: dict[str, Any] = {}
    with _pg(stack) as conn:
        for table in ("games", "seats", "events", "commands", "deadlines", "notifications"):
            column = "id" if table == "games" else "game_id"
            out[table] = [
                row[0]
                for row in conn.execute(
                    f"SELECT row_to_json(t)::text FROM {table} t WHERE {column} = %s ORDER BY id",
                    (gid,),
                )
            ]
        out["mail_outbox"] = conn.execute("SELECT count(*) FROM mail_outbox").fetchone()[0]
    return out


def _what(subject: str) -> str:
    """What a subject says is needed: ``[I'm the Boss!] title: your turn (by …)`` → ``your
    turn``."""
    text = subject.split(": ", 1)[1] if ": " in subject else subject
    return text.split(" (by ")[0].strip()


def _signed(salt: str, value: str) -> dict[str, Any]:
    return URLSafeTimedSerializer(SECRET, salt=salt).loads(value)


def _check_mails(
    stack: Stack, gid: str, mails: list[Mail], events: list, tokens: list[str]
) -> None:
    """Headers and parts of every email; its links are its own seat's; no other seat's token,
    signed link, hand, money total, nor the seed before the end (A8)."""
    seed = str(events[0].data["seed"])
    with stack.app.app_context():
        ended_at = db.session.execute(
            select(EventRecord.created_at).where(
                EventRecord.game_id == gid, EventRecord.type == "game_ended"
            )
        ).scalar_one()
        db.session.remove()
    # What each seat sees of the private events (its own cards), and what others see of them.
    private: list[tuple[int, str]] = []
    held: list[set[str]] = [set() for _ in range(5)]
    for event in events:
        if event.type == "game_started":
            for seat, hand in enumerate(event.data["hands"]):
                held[seat] |= {CARD_NAMES[c] for c in hand}
        if event.type == "cards_drawn":
            held[event.data["seat"]] |= {CARD_NAMES[c] for c in event.data["cards"]}
        for owner in range(5):
            mine = _english(event, NAMES, owner)
            if any(_english(event, NAMES, other) != mine for other in range(5) if other != owner):
                private.append((owner, mine))
    ids = Counter(str(m.message["Message-ID"]) for m in mails)
    assert all(n == 1 for n in ids.values()), "two emails share a Message-ID"
    signed_of: dict[str, int] = {}
    for mail in mails:
        assert mail.to in EMAILS, mail.to
        seat = EMAILS.index(mail.to)
        msg = mail.message
        for header in ("Date", "Message-ID", "List-Unsubscribe", "List-Unsubscribe-Post"):
            assert msg[header], f"{header} missing in {mail.subject!r}"
        assert str(msg["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
        assert mail.text.strip() and mail.html.strip(), f"a part is missing in {mail.subject!r}"
        assert mail.subject.startswith(f"[I'm the Boss!] {TITLE}: ")
        unsubscribe = re.findall(r"<([^>]+)>", str(msg["List-Unsubscribe"]))
        assert unsubscribe
        for link in mail.links + unsubscribe:
            assert link.startswith(stack.base + "/"), link
            path = urlsplit(link).path
            parts = path.split("/")
            if path.startswith(f"/g/{gid}/s/"):
                assert parts[-1] == tokens[seat], "an invitation link of another seat"
            elif path.startswith(f"/g/{gid}/m/"):
                data = _signed("seat-link", parts[-1])
                assert data["g"] == gid and data["s"] == seat, (mail.to, data)
                assert signed_of.setdefault(parts[-1], seat) == seat
            elif path.startswith(f"/u/{gid}/"):
                data = _signed("unsubscribe", parts[-1])
                assert data["g"] == gid and data["s"] == seat, (mail.to, data)
                assert signed_of.setdefault(parts[-1], seat) == seat
            else:
                pytest.fail(f"an unexpected link in an email: {link}")
        everything = "\n".join([mail.text, mail.html, str(msg)])
        for other, token in enumerate(tokens):
            if other != seat:
                assert token not in everything, f"seat {other}'s token in a mail to seat {seat}"
        for owner, line in private:
            if owner != seat:
                assert line not in everything, f"{NAMES[owner]}'s private line to {mail.to}"
        for match in re.finditer(r"your hand[^\n<]*", everything, re.IGNORECASE):
            named = {c for c in set(CARD_NAMES) if re.search(rf"\b{re.escape(c)}\b", match[0])}
            assert named <= held[seat], f"cards not of {mail.to}'s hand: {match[0]}"
        if mail.at < ended_at:
            assert seed not in everything, f"the seed in a mail before the end: {mail.subject}"
            for other in range(5):  # another seat's money total (R7.1: hidden until the end)
                if other != seat and re.search(
                    rf"\b{NAMES[other]}\b:?\s+(?:has\s+)?\d+\s*M\b", mail.text
                ):
                    pytest.fail(f"{NAMES[other]}'s money in a mail to {mail.to}: {mail.text}")
    for signed, seat in signed_of.items():  # no signed link of one seat in another's mail
        for mail in mails:
            if EMAILS.index(mail.to) != seat:
                assert signed not in mail.text and signed not in mail.html


def _diagnose(play: Play, state: GameState) -> str:
    return json.dumps(
        {
            "phase": state.phase,
            "awaiting": [{**a, "until": str(a["until"])} for a in awaiting(state)],
            "away": state.away,
            "stats": dict(play.stats),
            "refusals": [str(r) for r in play.refusals[-5:]],
            "mails": {e: len(play.stack.mailbox.to(e)) for e in EMAILS},
            "now": datetime.now(UTC).isoformat(),
        },
        default=str,
    )
