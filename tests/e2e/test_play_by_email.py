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

import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

import pytest
import requests
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.web.games.basics import hash_token
from imtheboss.web.models import EventRecord, db
from imtheboss.web.say import messages
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import select
from support.e2e import Mail, wait_for
from support.stack import (
    HTTP_TIMEOUT,
    Play,
    Stack,
    Table,
    all_mailed,
    create_game,
    final_replayed,
    pg,
    play_to_the_end,
    running_stack,
    summary,
)
from support.stack import rows as table_rows

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


def _english(event, names: list[str], seat: int) -> str:
    """The line ``seat`` reads for ``event``, in English."""
    with messages.speaking("en"):
        return messages.line(event, names, seat)


TABLE = Table(TITLE, ORGANISER, NAMES, EMAILS, WINDOWS)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    """PostgreSQL database, Redis database, SMTP server, worker, beat and gunicorn: started here,
    stopped and removed after the test."""
    with running_stack(tmp_path, redis_db=REDIS_DB, secret=SECRET) as started:
        yield started


# -- the test --------------------------------------------------------------------------------


def test_five_seats_play_a_whole_game_by_email(stack: Stack) -> None:
    started = time.monotonic()
    gid = create_game(stack, TABLE)
    play = Play(stack, gid, TABLE)
    wait_for(lambda: all(stack.mailbox.to(e) for e in EMAILS), 30, what="the five invitations")
    tokens = _tokens(stack, gid)

    # -- play to the end: two seats silent at first --------------------------------------
    silent_until: float | None = None

    def one_round(elapsed: float) -> bool:
        nonlocal silent_until
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
        return play.step(silent)

    played = play_to_the_end(play, one_round, started, PLAY_LIMIT, STUCK)

    # -- let the mail settle: every notification sent (or skipped: the seat had looked) ----
    wait_for(lambda: all_mailed(stack), 30, what="the last emails")
    everything = stack.mailbox.all()
    mails = [m for m in everything if m.to in EMAILS]  # the players' (the organiser had one)
    assert [m.to for m in everything if m not in mails] == [ORGANISER]

    # -- the game is over, and its scores are the replay's --------------------------------
    events, final = final_replayed(stack, gid)
    ended = next(e for e in events if e.type == "game_ended")
    for mail in mails:  # the game-over emails tell the replay's scores
        seat = EMAILS.index(mail.to)
        if "Game over" in mail.text:  # the mail speaks to its reader: "you: 18 M"
            for s, money in enumerate(ended.data["money"]):
                assert f"{'you' if s == seat else NAMES[s]}: {money} M" in mail.text, mail.text

    # timeouts moved the game while seats 3 and 4 were silent; then they played again
    timed_out = [e for e in events if e.type == "timed_out"]
    missed = Counter(s for e in timed_out for s in e.data["missed"])
    assert missed[3] >= 2 and missed[4] >= 2, missed
    assert set(SILENT) <= play.ever_away, "A6: the silent seats were never marked away"
    for index in SILENT:
        assert play.seats[index].moves, f"seat {index} never played after its silence"
    assert all(play.seats[i].moves for i in range(5))

    # -- one email per notification row: each urgent row alone, news in batches ------------
    sql = "SELECT seat_index, urgent, email_state, emailed_at, kind = 'reminder'"
    rows = table_rows(stack, sql + " FROM notifications WHERE game_id = %s", gid)
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
    per_seat = {NAMES[i]: len(stack.mailbox.to(e)) for i, e in enumerate(EMAILS)}
    subjects = Counter(_what(m.subject) for m in mails)
    print(
        json.dumps(
            {
                **summary(events, played, started),
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


def _tokens(stack: Stack, gid: str) -> list[str]:
    """Each seat's secret token, from its invitation; it must be that seat's own."""
    tokens = []
    with stack.app.app_context():
        from imtheboss.web.games.seats import seats_of

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


def _check_story(stack: Stack, gid: str, mails: list[Mail], events: list) -> None:
    """Each closed deal is in every seat's outbox with its payouts, mailed unless the seat
    had seen it on the page; no row is about its seat's own act; each mail asking about a
    card names the card, who played it, on whose card, and what the deadline does."""
    sql = "SELECT seat_index, kind, seq, email_state, body FROM notifications"
    rows = table_rows(stack, sql + " WHERE game_id = %s AND seat_index >= 0", gid)
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
            # a boss card's act is its player's, whoever's answer let it take effect
            actor = event.data["seat"] if kind == "boss_changed" else event.by
            assert not (actor == seat and not event.data.get("order")), (seat, kind, event)
    asking = [m for m in mails if "a card waits for your answer" in m.text.lower()]
    assert asking, "no card ever waited for an answer"
    for mail in asking:
        text = " ".join(mail.text.split())
        # with a stop card: "If you do not answer in time, you let it happen."; without one:
        # "... you can only let it happen; if you do not answer in time, you let it happen too."
        # (a reminder: "If you do not answer, you let it happen.")
        assert re.search(r"[Ii]f you do not answer( in time)?, you let it happen", text), text
        if mail.subject.startswith("Reminder") or "- Reminder:" in text:
            continue  # a reminder of the window the first mail described
        assert re.search(rf"({'|'.join(NAMES)}) plays ", text), text
        # on whose card ("of Ben", "your investor"), or a boss card
        assert re.search(r" of |boss card|your investor", text), text


def _db_snapshot(stack: Stack, gid: str) -> dict[str, Any]:
    """Everything a request could change: the game row, events, commands, deadlines,
    notifications (sent, read), seats (settings, what they have seen), the local outbox."""
    out: dict[str, Any] = {}
    with pg(stack) as conn:
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
            elif path == "/rules":  # the public rules, in the mail's language
                assert urlsplit(link).query in ("lang=en", "lang=zh_Hans", "lang=zh_Hant"), link
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
