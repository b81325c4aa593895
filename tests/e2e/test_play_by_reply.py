"""Five seats play a whole game on real processes, three of them only by replying to their mail.

The stack of tests/e2e/test_play_by_email.py (gunicorn, a Celery worker, Celery beat, Redis,
PostgreSQL, an aiosmtpd server standing in for the world's mail) with replies on
(``MAIL_REPLIES``, ``MAIL_DOMAIN``), plus the Procfile's ``mail:`` process (our inbound SMTP
receiver) and its ``imap:`` process polling a real IMAP server started by the test (Debian's
dovecot, tests/support/dovecot.py).

Seats 0 and 1 play by the web (the links of their mail and the page's forms, as in the
play-by-email test). Seats 2, 3 and 4 only answer their mail: each mail that carries a
``Reply-To`` (a decision's mail, or the answer to a reply with the words that work next) is
answered in turn. ``SensibleBot`` chooses among the moves the mail's words can make, from the
state a replay of the stored log gives; the reply writes that word as a real client would:

- seat 2, English, by SMTP to the receiver: below a quote, above a signature and a phone footer,
  HTML-only (Gmail), ``multipart/alternative``, ``format=flowed``;
- seat 3, 简体 (its language set on its settings page), by SMTP: GBK bodies, plain and HTML, below
  "在 … 写道：" and a quote, above "发自我的iPhone";
- seat 4, 繁體, by IMAP (APPENDed to the dovecot mailbox the poller reads): Big5 bodies below
  "於 … 寫道：" or above a signature, and an English word in an HTML-only Outlook mail.

A reply that comes too late is answered "that window ended"; the seat then answers the next
mail. At the end: the game is over; its final scores equal a replay of the stored log; every
own move of the mail seats is stored as made by mail (``via``) and every command of theirs came
from one of their replies; every reply was answered once, in its thread (``In-Reply-To``,
``References``), and each accepted one said so; every style of every mail seat made a move.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import random
import re
import smtplib
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import parseaddr
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.events import own_act
from imtheboss.engine.state import GameState, replay
from imtheboss.web.games.load import load_events
from imtheboss.web.models import db
from imtheboss.web.replies.choices import choices
from imtheboss.web.replies.terms import TERMS_VERBS, Shown, by_letter, read_mark, standing
from imtheboss.web.replies.words import WORDS, Reading, understand
from imtheboss.web.say.commands import VERB_COMMAND
from support import stack as e2e
from support.dovecot import Dovecot
from support.e2e import Mail, free_port, page_forms, wait_for
from support.reply_mails import gmail_html, multipart_mail, outlook_html, quoted, raw_mail

# This test's own Redis database number (tests/worker uses 12 and 13, tests/web 9 and 10, the
# play-by-email test 11).
REDIS_DB = 8
SECRET = "e2e-play-by-reply-secret"
MAIL_DOMAIN = "reply.imtheboss.net"
TITLE = "Reply game"
NAMES = ["Ann", "Ben", "Cat", "Dan", "Eve"]
EMAILS = [f"seat{i}@players.imtheboss.net" for i in range(5)]
ORGANISER = "organiser@players.imtheboss.net"
# seconds: a mail seat's turn takes two round trips (roll, then draw or deal)
WINDOWS = {"turn": 6, "stop": 4, "last_call": 4, "negotiation": 6}
TABLE = e2e.Table(TITLE, ORGANISER, NAMES, EMAILS, WINDOWS)
WEB_SEATS = (0, 1)
MAIL_SEATS = (2, 3, 4)
PLAY_LIMIT = 900.0  # seconds for the whole game (2 to 4 minutes on two cores; a long game under
# the whole suite took over 7: bosses who only answer mail close few deals, so games vary)
STUCK = 60.0  # seconds without a new event: the game is stuck
COMMAND_OF = {command: verb for verb, command in VERB_COMMAND.items()}
# The answers written to replies: the reply's Message-ID, what the answer said (done...).
ANSWERS_SQL = (
    "SELECT body->>'in_reply_to', body->>'answer' FROM notifications"
    " WHERE game_id = %s AND kind = 'reply_answer'"
)


# -- how the mail seats write -----------------------------------------------------------------


Style = Callable[..., bytes]  # (word, mail answered, **headers of raw_mail) -> the raw reply
STYLES: dict[str, tuple[Style, str | None]] = {}  # name -> (style, its words' language)


def style(name: str, language: str | None = None) -> Callable[[Style], Style]:
    """Register a client style as ``name``; ``language``: of its words (``None``: the
    seat's)."""

    def register(write: Style) -> Style:
        STYLES[name] = (write, language)
        return write

    return register


def _own(text: str, charset: str) -> str:
    """``text`` as a client in ``charset`` quotes it (what the charset cannot write becomes
    ``?``)."""
    return text.encode(charset, "replace").decode(charset)


@style("gmail html")
def _gmail(word: str, mail: Mail, **head: str) -> bytes:
    return raw_mail(gmail_html(word, mail.text), subtype="html", **head)


@style("multipart")
def _multipart(word: str, mail: Mail, **head: str) -> bytes:
    body = f"{word}\n\n{quoted(mail.text)}"
    return multipart_mail(body, gmail_html(word, mail.text), **head)


@style("format=flowed")
def _flowed(word: str, mail: Mail, **head: str) -> bytes:
    return raw_mail(f"{word}\n\n{quoted(mail.text)}", flowed=True, **head)


@style("gbk html")
def _gbk_html(word: str, mail: Mail, **head: str) -> bytes:
    return raw_mail(gmail_html(word, _own(mail.text, "gbk")), charset="gbk", subtype="html", **head)


@style("outlook html, english", "en")
def _outlook(word: str, mail: Mail, **head: str) -> bytes:
    return raw_mail(outlook_html(word), subtype="html", **head)


def _above(word: str, mail: Mail, between: str, charset: str, **head: str) -> bytes:
    """``word``, then ``between`` (an attribution line, a signature, a phone footer), then the
    quoted mail, in ``charset``."""
    body = f"{word}\n\n{between}\n{quoted(_own(mail.text, charset))}"
    return raw_mail(body, charset=charset, **head)


# name: what a client writes between the word and the quote, its charset, transfer encoding
ABOVE = {
    "quoted": ("On Tue, 1 Dec 2026, I'm the Boss! wrote:", "utf-8", "base64"),
    "signature": ("-- \nCat Reyes\nSent from my iPhone\n", "utf-8", "base64"),
    "gbk quoted": ("在 2026年12月1日 15:00，I'm the Boss! 写道：", "gbk", "base64"),
    "gbk phone footer": ("发自我的iPhone\n", "gbk", "8bit"),
    "big5 quoted": ("於 2026年12月1日 15:00，I'm the Boss! 寫道：", "big5", "base64"),
    "big5 signature": ("-- \n陳小美\n台北\n", "big5", "8bit"),
}
for _name, (_between, _charset, _encoding) in ABOVE.items():
    STYLES[_name] = (
        functools.partial(_above, between=_between, charset=_charset, encoding=_encoding),
        None,
    )


@dataclass(frozen=True)
class Writer:
    """How a mail seat answers: ``transport`` (``smtp``: to our receiver; ``imap``: into the
    mailbox the poller reads), its words' language, and the names of the client styles
    (``STYLES``) it takes in turn."""

    transport: str
    language: str
    styles: tuple[str, ...]


WRITERS = {
    2: Writer("smtp", "en", ("quoted", "signature", "gmail html", "multipart", "format=flowed")),
    3: Writer("smtp", "zh_Hans", ("gbk quoted", "gbk html", "gbk phone footer")),
    4: Writer("imap", "zh_Hant", ("big5 quoted", "big5 signature", "outlook html, english")),
}


def _word(choice: dict[str, Any], language: str, letter: str | None = None) -> str:
    """What a reply writes for ``choice`` in ``language``: ``allow``, ``offer 3``,
    ``放置 7``, ``accept C`` (the terms for ``letter``)..."""
    verb = COMMAND_OF[choice["do"]]
    word = WORDS[verb][language][0]
    if verb == "offer":
        return f"{word} {choice['price']['cash']}"
    if verb == "place":
        return f"{word} {choice['space']}"
    return f"{word} {letter}" if letter else word


def listed(mail: Mail) -> list[Reading]:
    """The readings of the words a mail lists for its reply (its indented lines that are reply
    words, each before the dash that says what it does)."""
    lines = re.findall(r"^  (\S[^\n]*)$", mail.text, re.M)
    found = (understand(re.split(r"\s*—+\s*", line)[0]) for line in lines)
    return [reading for reading in found if reading is not None]


def _token(address: str) -> list[str]:
    """The parts of a reply address's token: ``<game>.<seat>.<fingerprint>.<window>[.<terms>]
    .<signature>`` (docs/mail-replies.md)."""
    return parseaddr(address)[1].partition("@")[0].partition("+")[2].split(".")


def window_of(address: str) -> str:
    """The window a reply address names (``""`` for none)."""
    window = _token(address)[3]
    return "" if window == "-" else window


def seen_of(address: str) -> int | None:
    """The number of events of the log when a mail showing several terms was made (its
    address's ``e<seen>``), else ``None``."""
    parts = _token(address)
    return int(parts[4][1:]) if len(parts) == 6 and parts[4][:1] == "e" else None


def terms_of(address: str) -> Shown | None:
    """The terms a reply address's ``accept`` and ``reject`` answer (those its mail showed: a
    person accepts what they read, even when other terms wait too); ``None``: it names none."""
    parts = _token(address)
    return read_mark(parts[4]) if len(parts) == 6 else None


# -- the mail seats ---------------------------------------------------------------------------


@dataclass
class Reply:
    """One reply sent: its Message-ID, the word, the style, what it answered."""

    seat: int
    message_id: str
    word: str
    style: str
    answered: str  # the Message-ID of the mail it answered
    outcome: str = ""  # the answer row's ``answer`` once written (done, window_ended...)


@dataclass
class MailSeat:
    index: int
    writer: Writer
    bot: SensibleBot = field(default_factory=SensibleBot)
    read: int = 0  # how many of its mails it has read
    replies: list[Reply] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bot.counters = e2e.DealCounter()

    @property
    def email(self) -> str:
        return EMAILS[self.index]

    def style(self) -> tuple[str, Style, str | None]:
        """The next style: each is used for one move before the next is taken."""
        done = sum(1 for r in self.replies if r.outcome == "done")
        name = self.writer.styles[done % len(self.writer.styles)]
        return (name, *STYLES[name])


class ByReply:
    """Drives the mail seats: each new mail with a Reply-To gets an answer, when the seat's bot
    wants one of the moves the mail's words make."""

    def __init__(self, stack: e2e.Stack, gid: str, dovecot: Dovecot, inbound: int) -> None:
        self.stack = stack
        self.gid = gid
        self.dovecot = dovecot
        self.inbound = inbound
        self.seats = [MailSeat(i, WRITERS[i]) for i in MAIL_SEATS]
        self.rng = random.Random(7)
        self.stats: Counter = Counter()
        self.ids = (f"<r{n}.{self.gid}@client.imtheboss.net>" for n in itertools.count())

    def replies(self) -> list[Reply]:
        return [r for seat in self.seats for r in seat.replies]

    def state(self, seen: int | None = None) -> tuple[GameState, int]:
        """The state a replay of the stored log gives (of its first ``seen`` events, when
        given), and the number of deals opened."""
        with self.stack.app.app_context():
            events = load_events(self.gid)[:seen]
            db.session.remove()
        return replay(events), sum(1 for e in events if e.type == "deal_opened")

    def round(self) -> int:
        """Every mail seat reads its new mail and answers what it wants to. Returns how many
        replies were sent."""
        sent = 0
        for seat in self.seats:
            mails = self.stack.mailbox.to(seat.email)
            for mail in mails[seat.read :]:
                seat.read += 1
                sent += self.answer(seat, mail)
        self.outcomes()
        return sent

    def answer(self, seat: MailSeat, mail: Mail) -> bool:
        """Reply to ``mail`` when it asks something and the bot wants one of its words."""
        address = str(mail.message.get("Reply-To", ""))
        if not address:
            return False
        self.stats["mails with a reply address"] += 1
        state, deals = self.state()
        if state.phase == "game_over":
            return False
        readings = listed(mail)
        if not readings:  # news (an invitation, a deal closed): answerable, but it asks nothing
            self.stats["news with a reply address"] += 1
            return False
        mailable = self.mailable(state, seat.index, address, readings)
        if not mailable:
            self.stats["nothing to answer"] += 1
            return False
        seat.bot.counters.deal = deals
        choice = seat.bot.choose(state, seat.index, [c for c, _l in mailable], self.rng)
        if choice is None:
            self.stats["bot waits"] += 1
            return False
        name, style, language = seat.style()
        letter = next((x for c, x in mailable if c == choice), None)
        word = _word(choice, language or seat.writer.language, letter)
        message_id = next(self.ids)
        answered = str(mail.message["Message-ID"])
        raw = style(
            word,
            mail,
            sender=seat.email,
            to=address,
            subject=f"Re: {mail.subject}",
            message_id=message_id,
            in_reply_to=answered,
        )
        if seat.writer.transport == "smtp":
            with smtplib.SMTP("127.0.0.1", self.inbound, timeout=e2e.HTTP_TIMEOUT) as smtp:
                smtp.sendmail(seat.email, [parseaddr(address)[1]], raw)
        else:
            self.dovecot.append(raw)
        seat.replies.append(Reply(seat.index, message_id, word, name, answered))
        self.stats[f"sent by {seat.writer.transport}"] += 1
        self.outcomes()  # by SMTP, the reply was applied before the receiver said 250
        return True

    def mailable(
        self, state: GameState, seat: int, address: str, readings: list[Reading]
    ) -> list[tuple[dict[str, Any], str | None]]:
        """The moves the words a mail lists make now, as the receiver reads them, each with the
        letter its word names (``accept C``): ``accept`` and ``reject`` act only on the terms
        the mail showed (its address's, or for a letter those that waited when it was made)."""
        window, shown, seen = window_of(address), terms_of(address), seen_of(address)
        by_verb = choices(state, seat, window)
        out: list[tuple[dict[str, Any], str | None]] = []
        for verb, letter in dict.fromkeys((r.verb, r.letter) for r in readings if r.verb != "chat"):
            cmds = by_verb.get(verb, [])
            if verb in TERMS_VERBS:
                terms = shown
                if letter is not None:
                    terms = by_letter(self.state(seen)[0], seat).get(letter) if seen else None
                cmds = standing(state, seat, cmds, terms)
            if len(cmds) == 1 or verb == "place":
                out += [({**cmd}, letter) for cmd in cmds]
        return out

    def outcomes(self) -> None:
        """The answer rows written so far, onto the replies they answer."""
        waiting = {r.message_id: r for r in self.replies() if not r.outcome}
        if not waiting:
            return
        for in_reply_to, said in e2e.rows(self.stack, ANSWERS_SQL, self.gid):
            if in_reply_to in waiting:
                waiting[in_reply_to].outcome = said


def _deals_by_boss(events: list[Any]) -> dict[str, str]:
    """``closed/opened`` deals of each seat as the boss (a boss card's new boss included)."""
    opened: Counter = Counter()
    closed: Counter = Counter()
    boss = None
    for event in events:
        if event.type == "deal_opened":
            boss = event.by
            opened[boss] += 1
        elif event.type == "card_took_effect" and event.data["kind"] == "boss":
            boss = event.data["seat"]
        elif event.type == "deal_closed":
            closed[boss] += 1
    return {NAMES[s]: f"{closed[s]}/{opened[s]}" for s in sorted(opened)}


# -- the stack ---------------------------------------------------------------------------------


@dataclass
class Replying:
    stack: e2e.Stack
    dovecot: Dovecot
    inbound: int  # the port of our inbound SMTP receiver


@pytest.fixture
def replying(tmp_path: Path) -> Iterator[Replying]:
    """The play-by-email stack with replies on, the inbound SMTP receiver and the IMAP poller
    (on a dovecot of the test's own)."""
    dovecot = Dovecot()
    inbound = free_port()
    settings = {
        "MAIL_REPLIES": "1",
        "MAIL_DOMAIN": MAIL_DOMAIN,
        "MAIL_INBOUND_HOST": "127.0.0.1",
        "MAIL_INBOUND_PORT": str(inbound),
        **{k: str(int(v) if isinstance(v, bool) else v) for k, v in dovecot.settings().items()},
        "IMAP_POLL_SECONDS": "5",
    }
    try:
        with e2e.running_stack(
            tmp_path, redis_db=REDIS_DB, secret=SECRET, settings=settings, procfile=("mail", "imap")
        ) as stack:
            yield Replying(stack, dovecot, inbound)
    finally:
        dovecot.stop()


def _speak(play: e2e.Play, gid: str, seat: int, language: str) -> None:
    """Seat ``seat`` chooses its language on its settings page (signed in by its invitation)."""
    http = requests.Session()
    mails = play.stack.mailbox.to(EMAILS[seat])
    invitation = next(m for m in mails if "invited" in m.subject)
    link = next(x for x in invitation.links if urlsplit(x).path.startswith(f"/g/{gid}/s/"))
    assert http.get(link, timeout=e2e.HTTP_TIMEOUT).status_code == 200
    page = http.get(f"{play.stack.base}/g/{gid}/settings", timeout=e2e.HTTP_TIMEOUT)
    form = next(f for f in page_forms(page.text) if "language" in f.inputs)
    data = {**form.hidden, "notify": "every", "timezone": "UTC", "language": language}
    saved = http.post(urljoin(page.url, form.action), data=data, timeout=e2e.HTTP_TIMEOUT)
    assert saved.status_code == 200, saved.text[:500]


# -- the test ------------------------------------------------------------------------------------


def test_five_seats_play_a_whole_game_three_by_replying(replying: Replying) -> None:
    stack = replying.stack
    started = time.monotonic()
    gid = e2e.create_game(stack, TABLE)
    play = e2e.Play(stack, gid, TABLE)
    wait_for(lambda: all(stack.mailbox.to(e) for e in EMAILS), 30, what="the five invitations")
    for index in MAIL_SEATS:
        if WRITERS[index].language != "en":
            _speak(play, gid, index, WRITERS[index].language)
    mail = ByReply(stack, gid, replying.dovecot, replying.inbound)

    # -- play to the end: the web seats by their links, the mail seats by replying ----------
    def one_round(_elapsed: float) -> bool:
        moved = play.step(MAIL_SEATS)
        return mail.round() > 0 or moved

    played = e2e.play_to_the_end(play, one_round, started, PLAY_LIMIT, STUCK)

    # -- every reply answered, every mail sent ----------------------------------------------
    def answered() -> bool:
        mail.outcomes()
        return all(r.outcome for r in mail.replies()) and e2e.all_mailed(stack)

    wait_for(answered, 60, what="the answers to every reply")

    # -- the game is over, and its scores are the replay's ----------------------------------
    events, final = e2e.final_replayed(stack, gid)

    # -- the mail seats' moves are stored as made by mail, the web seats' not; every command
    #    of a mail seat is one of its replies
    keys = {
        "mail:" + hashlib.sha256(r.message_id.encode()).hexdigest()[:40]: r for r in mail.replies()
    }
    sql = "SELECT seat, idempotency_key, first_seq, last_seq, body FROM commands WHERE game_id = %s"
    commands = e2e.rows(stack, sql + " AND seat IS NOT NULL", gid)
    answers = [in_reply_to for in_reply_to, _said in e2e.rows(stack, ANSWERS_SQL, gid)]
    by_mail: Counter = Counter()
    for seat, key, first, last, body in commands:
        own = [  # the seat's own acts ("by mail" marks no consequence: engine.events.own_act)
            e
            for e in events[first - 1 : last]
            if e.by == seat and not e.data.get("order") and own_act(e.type, e.data, body["do"])
        ]
        if seat in MAIL_SEATS:
            assert key in keys and keys[key].seat == seat, (seat, key)
            assert own and all(e.data.get("via") == "mail" for e in own), own
            by_mail[seat] += 1
        else:
            assert not any("via" in e.data for e in events[first - 1 : last]), key
    for index in MAIL_SEATS:
        assert by_mail[index] >= 3, by_mail
    assert {e.by for e in events if e.data.get("via") == "mail"} <= set(MAIL_SEATS)

    # -- every reply answered once, in its thread; each accepted one made its move ----------
    replies = mail.replies()
    assert Counter(answers) == Counter(r.message_id for r in replies)
    outcomes = Counter(r.outcome for r in replies)
    assert not outcomes["unclear"], outcomes  # every reply's word was read
    done = [r for r in replies if r.outcome == "done"]
    assert len(done) == sum(by_mail.values())
    for reply in replies:
        seat_mails = stack.mailbox.to(EMAILS[reply.seat])
        threaded = [m for m in seat_mails if str(m.message["In-Reply-To"]) == reply.message_id]
        assert len(threaded) == 1, (reply, [m.subject for m in threaded])
        (confirmation,) = threaded
        assert reply.message_id in str(confirmation.message["References"])
        assert str(confirmation.message["Auto-Submitted"]) == "auto-replied"
        assert confirmation.subject.startswith("Re: ")
    for index in MAIL_SEATS:  # every client style made a move
        styles = {r.style for r in done if r.seat == index}
        assert styles == set(WRITERS[index].styles), (index, styles)
    assert any(r.seat == 4 for r in done), "no move came by IMAP"
    # the poller marks a mail seen once it applied it
    wait_for(lambda: replying.dovecot.unseen() == 0, 30, what="the poller to read every mail")

    # -- what the game looked like ------------------------------------------------------------
    print(
        json.dumps(
            {
                **e2e.summary(events, played, started),
                "moves by web": {NAMES[s.index]: sum(s.moves.values()) for s in play.seats[:2]},
                "moves by mail": {NAMES[s]: n for s, n in sorted(by_mail.items())},
                "replies": dict(outcomes),
                "not done": Counter(f"{r.outcome}: {r.word}" for r in replies if r not in done),
                "deals by boss (closed/opened)": _deals_by_boss(events),
                "replies by style": dict(Counter(r.style for r in done)),
                "words": dict(Counter(r.word for r in done)),
                "mail stats": dict(mail.stats),
                "web stats": dict(play.stats),
                "scores": {NAMES[s]: final.money[s] for s in range(5)},
            },
            indent=1,
            ensure_ascii=False,
        )
    )
    for process in stack.processes:  # no task failed, no request raised
        assert not process.problems(), f"{process.name}:\n{process.tail(60)}"
