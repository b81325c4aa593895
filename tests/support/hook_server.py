"""What the webhook and push tests share: an HTTPS server of the tests' own (a certificate for
``localhost`` from a CA of the test's own, ``trustme``) that records every request and answers
as the test scripts it; a browser's push keys; and the spectator's scramble of a game's log
(everything a spectator may not see rearranged), to check that the posts do not change."""

from __future__ import annotations

import base64
import json
import os
import random
import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_ece
import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from imtheboss.engine.cards import DECK_SIZE
from imtheboss.engine.events import Event
from imtheboss.web.models import CommandRecord, EventRecord, db
from imtheboss.web.outbound.webhooks import KINDS, posts_for
from sqlalchemy import select


@dataclass
class Received:
    """One request the server got: its path, headers (lower-case names), raw body, and the
    status it was answered with."""

    path: str
    headers: dict[str, str]
    body: bytes
    status: int


Answer = Callable[[str, int], tuple[int, dict[str, str]]]  # (path, nth request) -> answer


@dataclass
class Receiver:
    """An HTTPS server on 127.0.0.1 (``url(path)`` names it as ``localhost``), answering each
    POST with ``answer(path, n)`` (``n``: how many requests that path had before), 200 by
    default."""

    ca_file: Path
    answer: Answer | None = None
    received: list[Received] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str, host: str = "localhost") -> str:
        return f"https://{host}:{self.port}{path}"

    def start(self, ca: trustme.CA) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert("localhost").configure_cert(context)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size)
                with receiver._lock:
                    before = sum(1 for r in receiver.received if r.path == self.path)
                    status, headers = (receiver.answer or _ok)(self.path, before)
                    receiver.received.append(
                        Received(
                            self.path, {k.lower(): v for k, v in self.headers.items()}, body, status
                        )
                    )
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def at(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path == path]


class Dripper:
    """A hostile HTTPS receiver on 127.0.0.1 (a certificate for ``localhost``): it reads each
    request, then answers ``200`` and one more header line every ``every`` seconds, never
    ending the headers, until ``stop()``. ``dripping()``: connections it is dripping into now;
    ``lines``: header lines sent in all."""

    def __init__(self, ca: trustme.CA, every: float = 0.2) -> None:
        self.every = every
        self.lines = 0
        self._open = 0
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert("localhost").configure_cert(self._context)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str) -> str:
        return f"https://localhost:{self.port}{path}"

    def dripping(self) -> int:
        with self._lock:
            return self._open

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                raw, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(raw,), daemon=True).start()

    def _drip(self, raw: socket.socket) -> None:
        try:
            with self._context.wrap_socket(raw, server_side=True) as conn:
                conn.recv(65536)  # the request (headers and a small body)
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                with self._lock:
                    self._open += 1
                try:
                    while not self._stopped.wait(self.every):
                        conn.sendall(f"X-Drip-{self.lines}: 1\r\n".encode())
                        with self._lock:
                            self.lines += 1
                finally:
                    with self._lock:
                        self._open -= 1
        except OSError:
            return  # the client gave up (or the handshake failed)

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()


def _ok(path: str, n: int) -> tuple[int, dict[str, str]]:
    return 200, {}


def new_ca(folder: Path) -> tuple[trustme.CA, Path]:
    """A CA of the test's own and its certificate's file in ``folder``."""
    ca = trustme.CA()
    path = folder / "webhook-ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return ca, path


# -- a browser's push keys ---------------------------------------------------------------------


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass
class Browser:
    """A browser's push subscription keys, made as a browser makes them: an ECDH P-256 key pair
    and a 16-byte auth secret."""

    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    def subscription(self, endpoint: str) -> dict[str, Any]:
        public = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": endpoint, "keys": {"p256dh": _b64(public), "auth": _b64(self.auth)}}

    def decrypt(self, body: bytes) -> dict[str, Any]:
        """A push's payload, decrypted with this browser's keys (RFC 8291, aes128gcm)."""
        plain = http_ece.decrypt(
            body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"
        )
        return json.loads(plain)


# -- the spectator's scramble ----------------------------------------------------------------


def scramble_for_spectator(kind: str, body: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A stored event's body with what no spectator may see changed: the starting hands, draw
    pile, seed, forced dice and money; drawn cards; reshuffled piles; standing orders."""
    new = json.loads(json.dumps(body))
    if kind == "game_started":
        new["hands"] = [rng.sample(range(DECK_SIZE), len(h)) for h in new["hands"]]
        new["draw_pile"] = rng.sample(new["draw_pile"], len(new["draw_pile"]))
        new["seed"] = f"scrambled-{rng.random()}"
        new["forced_dice"] = [rng.randint(1, 6) for _ in range(3)]
        new["money"] = [m + rng.randint(1, 9) for m in new["money"]]
    elif kind == "cards_drawn":
        new["cards"] = rng.sample(range(DECK_SIZE), len(new["cards"]))
    elif kind == "pile_reshuffled":
        new["draw_pile"] = rng.sample(new["draw_pile"], len(new["draw_pile"]))
    elif kind == "orders_set":
        new["orders"] = {"scrambled": rng.random()}
    return new


def logged_posts(gid: str, rng: random.Random | None = None) -> dict[tuple[int, str], dict]:
    """The posts (``hooks.posts_for``) of the game's whole log, command by command as it was
    appended, keyed by ``(seq, kind)``; with ``rng``, of the log scrambled for a spectator
    first. Runs in an app context."""
    rows = db.session.execute(
        select(EventRecord.seq, EventRecord.type, EventRecord.body, EventRecord.seat)
        .where(EventRecord.game_id == gid)
        .order_by(EventRecord.seq)
    ).all()
    events = {
        seq: Event.from_json(
            {**(scramble_for_spectator(kind, body, rng) if rng else body), "type": kind, "by": by}
        )
        for seq, kind, body, by in rows
    }
    ranges = db.session.execute(
        select(CommandRecord.first_seq, CommandRecord.last_seq).where(CommandRecord.game_id == gid)
    ).all()
    starts = sorted({1} | {first for first, _last in ranges})
    out: dict[tuple[int, str], dict] = {}
    for index, first in enumerate(starts):
        last = starts[index + 1] - 1 if index + 1 < len(starts) else max(events)
        for post in posts_for(first, [events[s] for s in range(first, last + 1)]):
            out[(post["seq"], post["kind"])] = post
    return out


def posted_kinds(gid: str, after: int = 0) -> list[tuple[int, str]]:
    """``(seq, kind)`` of every event after ``after`` that a webhook is posted for, from the
    log itself (``hooks.KINDS``). Runs in an app context."""
    rows = db.session.execute(
        select(EventRecord.seq, EventRecord.type)
        .where(EventRecord.game_id == gid, EventRecord.seq > after)
        .order_by(EventRecord.seq)
    ).all()
    return [(seq, KINDS[kind]) for seq, kind in rows if kind in KINDS]
