"""Helpers for the worker tests: bounded waiting, an SMTP server that keeps what it gets and one
that hangs, players, reading events back."""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import html
import importlib
import re
import selectors
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any, NamedTuple

import redis
from imtheboss.engine.board import default_board
from imtheboss.engine.game import Command, decide
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.views import legal_commands
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import EventRecord, Notification, db
from sqlalchemy import select

from support.wait import SmtpServer, wait_for  # noqa: F401  (re-exported)

WORKER_DB_NAME = "imtheboss-test-worker"  # the worker's PostgreSQL connections' application_name


class Envelope(NamedTuple):
    """What an SMTP server was told outside the message: sender, recipients, MAIL options."""

    mail_from: str
    rcpt_tos: list[str]
    mail_options: list[str]


class SilentServer:
    """A TCP server on ``127.0.0.1:port`` that accepts every connection and never says a word:
    an SMTP server that hangs (the client waits for a greeting that never comes). ``accepted``
    counts the connections, ``given_up`` those the client closed; ``stop()`` closes the rest."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.accepted = 0
        self.given_up = 0
        self._stopping = threading.Event()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(64)
        self._thread = threading.Thread(target=self._run, name="silent-smtp", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def still_waiting(self) -> int:
        """Connections accepted that the client has not given up on."""
        return self.accepted - self.given_up

    def _run(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select(0.1):
                    if key.fileobj is self._listener:
                        conn, _ = self._listener.accept()
                        selector.register(conn, selectors.EVENT_READ)
                        self.accepted += 1
                    elif not key.fileobj.recv(4096):  # type: ignore[union-attr]
                        selector.unregister(key.fileobj)
                        key.fileobj.close()  # type: ignore[union-attr]
                        self.given_up += 1
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(10)


class Mailbox(SmtpServer):
    """An aiosmtpd server on ``port`` that keeps every message it receives (``messages``) and its
    envelope (``envelopes``: sender, recipients, MAIL options). ``stop()`` and ``start()`` take
    it down and bring it back on the same port; ``hang()`` puts a server that never answers in
    its place. ``refuse`` maps an address to the reply its RCPT gets (``"550 5.1.1 no such
    user"``); ``delay`` holds each DATA reply back that many seconds (a slow server)."""

    def __init__(self, port: int, **options: Any) -> None:
        super().__init__(port, **options)
        self.messages: list[EmailMessage] = []
        self.received: list[datetime] = []  # when each message arrived
        self.envelopes: list[Envelope] = []
        self.refuse: dict[str, str] = {}
        self.delay = 0.0

    def keep(self, content: bytes) -> None:
        self.messages.append(email.message_from_bytes(content, policy=email.policy.default))  # type: ignore[arg-type]
        self.received.append(datetime.now(UTC))

    async def handle_RCPT(  # noqa: N802
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(options)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        if self.delay:
            await asyncio.sleep(self.delay)
        with self.lock:
            self.keep(envelope.content)
            self.envelopes.append(
                Envelope(envelope.mail_from, list(envelope.rcpt_tos), list(envelope.mail_options))
            )
        return "250 OK"

    def reset(self) -> None:
        """Forget what was received, refuse nothing, answer at once."""
        with self.lock:
            self.messages.clear()
            self.received.clear()
            self.envelopes.clear()
        self.refuse.clear()
        self.delay = 0.0

    @contextlib.contextmanager
    def hang(self) -> Iterator[SilentServer]:
        """For the block, a server on the same port that accepts connections and never answers
        (an SMTP server that hangs); then this one again."""
        self.stop()
        silent = SilentServer(self.port)
        silent.start()
        try:
            yield silent
        finally:
            silent.stop()
            self.start()

    def to(self, address: str) -> list[EmailMessage]:
        """The messages received for ``address``, in order."""
        with self.lock:
            return [m for m in self.messages if m["To"] == address]

    def arrival(self, message: EmailMessage) -> datetime:
        """When ``message`` arrived."""
        with self.lock:
            return next(
                at for m, at in zip(self.messages, self.received, strict=True) if m is message
            )

    def about(self, game_title: str) -> list[EmailMessage]:
        """The messages whose subject names the game ``game_title``."""
        with self.lock:
            return [m for m in self.messages if f"] {game_title}:" in str(m["Subject"])]


def players(tag: str, n: int = 3) -> list[tuple[str, str]]:
    """``n`` players with addresses unique to ``tag``."""
    return [(f"P{i}", f"p{i}.{tag}@example.net") for i in range(n)]


SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def slow_games(app: Any, count: int, tag: str) -> list[str]:
    """``count`` games of ``SLOW`` windows made by ``app`` (seeds 0, 1, ...): the running worker
    (on the real clock) leaves them alone for an hour."""
    with app.app_context():
        return [
            create_game(f"{tag} {i}", players(f"{tag}{i}"), SLOW, seed=i).game_id
            for i in range(count)
        ]


def timed_out_windows(game_id: str) -> list[str]:
    """The window ids of the game's ``timed_out`` events, in order (repeats kept)."""
    rows = db.session.execute(
        select(EventRecord.body)
        .where(EventRecord.game_id == game_id, EventRecord.type == "timed_out")
        .order_by(EventRecord.seq)
    ).all()
    db.session.rollback()
    return [body["window"] for (body,) in rows]


def flush_redis(url: str) -> None:
    """``FLUSHDB`` the tests' Redis database (that number only)."""
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


# -- planning positions on the pure engine (the tests do not hard-code cards) ----------------

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def engine_do(state: GameState, seat: int, cmd: dict[str, Any]) -> None:
    args = {k: v for k, v in cmd.items() if k != "do"}
    for event in decide(state, Command(cmd["do"], seat, args, AT)):
        apply_in_place(state, event)


def find_opening(
    n: int, accept: Callable[[GameState, int], bool], seeds: Iterable[int] = range(500)
) -> tuple[int, int]:
    """``(seed, space)``: the first seed and space where, once the first seat has placed the
    marker there and opened a deal, ``accept(state, space)`` holds."""
    names = [f"P{i}" for i in range(n)]
    for seed in seeds:
        start = replay(new_game(names, Options.from_json({}), default_board(), seed, AT))
        for space in range(16):
            state = start.clone()
            engine_do(state, state.active, {"do": "place_marker", "space": space})
            if not any(c["do"] == "open_deal" for c in legal_commands(state, state.active)):
                continue
            engine_do(state, state.active, {"do": "open_deal"})
            if accept(state, space):
                return seed, space
    raise AssertionError("no seed gives the position")


def uninvolved(state: GameState, space: int) -> list[int]:
    """The seats, other than the boss, holding none of the space's investor letters (their
    ``deal_opened`` notice is news, not a call to act)."""
    letters = state.board.spaces[space].letters
    return [
        seat
        for seat in range(state.n)
        if seat != state.deal.boss and not any(state.investors.get(x) == seat for x in letters)
    ]


def card_plays(state: GameState) -> list[tuple[int, dict[str, Any]]]:
    """``(seat, command)`` for every travel or boss card that can be played now (each opens a
    stop window, A2)."""
    return [
        (seat, cmd)
        for seat in range(state.n)
        for cmd in legal_commands(state, seat)
        if cmd["do"] in ("travel", "boss")
    ]


def act(game_id: str, seat: int, cmd: dict[str, Any], key: str) -> None:
    """Submit a seat's command through the service (the web's one way in)."""
    submit(game_id, seat, {k: v for k, v in cmd.items() if k not in ("needs", "count")}, key)


def open_deal_on(game_id: str, space: int, seats: int) -> int:
    """The seat to move places the marker on ``space`` and opens a deal there (as planned by
    ``find_opening``). Returns that seat: the boss."""
    boss = next(s for s in range(seats) if legal(game_id, s, "place_marker"))
    act(game_id, boss, {"do": "place_marker", "space": space}, "k1")
    act(game_id, boss, {"do": "open_deal"}, "k2")
    return boss


def legal(game_id: str, seat: int, do: str) -> list[dict[str, Any]]:
    """The seat's legal commands named ``do`` in the stored game."""
    state = load_state(get_game(game_id))
    db.session.rollback()
    return [c for c in legal_commands(state, seat) if c["do"] == do]


def deliver_here(notification_id: int) -> str:
    """The worker's ``deliver`` task body, run here (inside the caller's app context)."""
    importlib.import_module("imtheboss.worker.celery_app")
    from imtheboss.worker.tasks import deliver

    return deliver.run(notification_id)


def invitation(game_id: str, seat: int) -> Notification:
    """The seat's invitation row, as stored now."""
    row = db.session.execute(
        select(Notification).where(
            Notification.game_id == game_id,
            Notification.seat_index == seat,
            Notification.kind == "invited",
        )
    ).scalar_one()
    db.session.expunge(row)  # readable after the app context, as it was read
    db.session.rollback()
    return row


def settled(rows: Iterable[Notification]) -> bool:
    """Whether no row is still to be mailed or on its way (``pending``, ``sending``)."""
    return all(r.email_state not in ("pending", "sending") for r in rows)


def rows_of(game_id: str, seat: int | None = None) -> list[Notification]:
    """The game's notification rows (the seat's only, when given), as stored now, in order."""
    query = select(Notification).where(Notification.game_id == game_id)
    if seat is not None:
        query = query.where(Notification.seat_index == seat)
    out = list(db.session.execute(query.order_by(Notification.id)).scalars())
    for row in out:
        db.session.expunge(row)  # readable after the app context, as they were read
    db.session.rollback()
    return out


def undelivered_block(page: str) -> str:
    """The admin page's list of mail that did not go out (its HTML, unescaped)."""
    found = re.search(r'<section[^>]*id="undelivered-mail".*?</section>', page, re.S)
    assert found, "the admin page has no list of undelivered mail"
    return html.unescape(found.group(0))


def admin_page(app: Any, game_id: str, token: str) -> str:
    """The admin page of the game, signed in with the organiser's ``token``."""
    client = app.test_client()
    answer = client.get(f"/g/{game_id}/admin/{token}", follow_redirects=True)
    assert answer.status_code == 200
    return answer.get_data(as_text=True)
