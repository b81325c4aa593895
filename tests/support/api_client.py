"""Helpers for the JSON API tests: a small client that speaks the API with a seat's bearer
token, the bad-input tests' two games (``World``), browsers signed in with a CSRF token, a
snapshot of everything a request can write (``stored``), and planners that search a seed for a
position (driven by ``legal_commands`` on the pure engine, so the tests do not hard-code
cards)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import flask
from flask_wtf.csrf import generate_csrf
from imtheboss.engine.board import default_board
from imtheboss.engine.game import Command, decide
from imtheboss.engine.lineup import lineup
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.views import legal_commands
from imtheboss.web.models import CommandRecord, Deadline, EventRecord, Game, Notification, Seat, db
from sqlalchemy import func, select

NAMES = ["Amy", "Bill", "Carla", "Dan", "Eve", "Fay"]
AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)  # the clock fixture's start


class Api:
    """The JSON API of one game as seen by whoever holds ``token``."""

    def __init__(self, client: Any, game_id: str) -> None:
        self.client = client
        self.game_id = game_id

    @staticmethod
    def auth(token: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"} if token else {}

    def game(self, token: str | None) -> Any:
        return self.client.get(f"/api/games/{self.game_id}", headers=self.auth(token))

    def events(self, token: str | None, **query: Any) -> Any:
        return self.client.get(
            f"/api/games/{self.game_id}/events", query_string=query, headers=self.auth(token)
        )

    def join(self, token: str | None) -> Any:
        return self.client.post(f"/api/games/{self.game_id}/join", headers=self.auth(token))

    def send(self, token: str | None, command: dict[str, Any], key: str) -> Any:
        return self.client.post(
            f"/api/games/{self.game_id}/commands",
            json={"command": command, "idempotency_key": key},
            headers=self.auth(token),
        )


@dataclass
class World:
    """Two games: ``gid`` in a running negotiation (boss ``boss``, another seat ``other``),
    and ``other_gid`` with its own tokens."""

    client: Any
    gid: str
    tokens: list[str]
    admin: str
    boss: int
    other: int
    other_gid: str
    other_tokens: list[str]

    def headers(self, token: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"} if token else {}

    def post(self, body: Any, seat: int | None = None, **kw: Any) -> Any:
        """POST ``body`` (JSON-encoded unless bytes/str) to the commands URL as ``seat``."""
        token = self.tokens[self.other if seat is None else seat]
        headers = {**self.headers(token), **kw.pop("headers", {})}
        url = f"/api/games/{self.gid}/commands"
        if isinstance(body, bytes | str):
            headers.setdefault("Content-Type", "application/json")
            return self.client.post(url, data=body, headers=headers, **kw)
        return self.client.post(url, json=body, headers=headers, **kw)

    def cmd(self, command: Any, seat: int | None = None, key: Any = "k-bad") -> Any:
        return self.post({"command": command, "idempotency_key": key}, seat)

    def offer(self, price: Any) -> Any:
        return self.cmd({"do": "offer", "card": self.offer_card, "price": price})

    offer_card: str = ""


def with_csrf(app: Any, browser: Any) -> str:
    """A CSRF token valid for ``browser``'s session (made as the page's forms make it, without
    depending on the page's template)."""
    field = app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token")
    with app.test_request_context():
        csrf = generate_csrf()
        raw = flask.session[field]
    with browser.session_transaction() as session:
        session[field] = raw
    return csrf


def signed_in(app: Any, gid: str, token: str, admin: bool = False) -> tuple[Any, str]:
    """A browser signed in by a seat's secret link (the organiser's with ``admin``), and a CSRF
    token valid for its session."""
    browser = app.test_client()
    path = f"/g/{gid}/admin/{token}" if admin else f"/g/{gid}/s/{token}"
    assert browser.get(path).status_code == 303
    return browser, with_csrf(app, browser)


def stored(app: Any) -> tuple[Any, ...]:
    """Everything a request could write: every game's sequence number, status, title and
    organiser address, every seat's email, token hash, preferences and whether it joined, and
    the row counts of events, commands, deadlines and notifications."""
    with app.app_context():
        games = db.session.execute(
            select(Game.id, Game.last_seq, Game.status, Game.title, Game.creator_email).order_by(
                Game.id
            )
        ).all()
        seats = db.session.execute(
            select(
                Seat.game_id,
                Seat.seat_index,
                Seat.email,
                Seat.token_hash,
                Seat.notify,
                Seat.timezone,
                Seat.locale,
                Seat.joined_at.is_not(None),
            ).order_by(Seat.id)
        ).all()
        counts = tuple(
            db.session.execute(select(func.count()).select_from(model)).scalar_one()
            for model in (EventRecord, CommandRecord, Deadline, Notification)
        )
        db.session.rollback()
        return tuple(map(tuple, games)), tuple(map(tuple, seats)), counts


def fill(cmd: dict[str, Any], **values: Any) -> dict[str, Any]:
    """A legal command with its ``needs`` supplied (``price=...``, ``text=...``)."""
    out = {k: v for k, v in cmd.items() if k not in ("needs", "count")}
    for need in cmd.get("needs", []):
        out[need] = values[need]
    return out


def _do(state: GameState, seat: int, cmd: dict[str, Any]) -> None:
    args = {k: v for k, v in cmd.items() if k != "do"}
    for event in decide(state, Command(cmd["do"], seat, args, AT)):
        apply_in_place(state, event)


def _legal(state: GameState, seat: int, do: str) -> list[dict[str, Any]]:
    return [c for c in legal_commands(state, seat) if c["do"] == do]


def start(seed: int, players: int) -> GameState:
    """The state right after setup for ``seed`` (the service's default board and options)."""
    names = NAMES[:players]
    return replay(new_game(names, Options.from_json({}), default_board(), seed, AT))


@dataclass
class DealPlan:
    """A 3-seat position for the acceptance deal: the first seat places the marker on
    ``space`` and opens a deal there (boss), plays ``boss_family``; ``provider`` offers
    ``offer_card``; after the agreement the deal's requirements are met; ``attacker`` (not the
    boss) plays ``travel`` and ``stopper`` stops it; ``bystander`` is the third seat."""

    seed: int
    space: int
    boss: int
    boss_family: list[dict[str, Any]]
    provider: int
    offer_card: str
    attacker: int
    travel: dict[str, Any]
    stopper: int
    bystander: int


def find_deal_plan(seeds: Iterable[int] = range(1000)) -> DealPlan:
    """The first seed whose opening hands allow the acceptance deal with 3 seats, the travel
    aimed at the card under agreement."""
    for seed in seeds:
        st0 = start(seed, 3)
        boss = st0.active
        for space in range(16):
            st = st0.clone()
            _do(st, boss, {"do": "place_marker", "space": space})
            _do(st, boss, {"do": "open_deal"})
            family = _legal(st, boss, "play_family")
            for cmd in family:
                _do(st, boss, cmd)
            for provider in (s for s in range(3) if s != boss):
                for offer in _legal(st, provider, "offer"):
                    agreed = st.clone()
                    _do(agreed, provider, fill(offer, price={"cash": 1}))
                    _do(agreed, boss, {"do": "accept", "with": provider})
                    if lineup(agreed) is None:
                        continue
                    letter = offer["card"].split(":")[1]
                    for attacker in (s for s in range(3) if s != boss):
                        for travel in _legal(agreed, attacker, "travel"):
                            pending = agreed.clone()
                            _do(pending, attacker, travel)
                            stoppers = [
                                s for s in range(3) if s != attacker and _legal(pending, s, "stop")
                            ]
                            if not stoppers:
                                continue
                            (bystander,) = {0, 1, 2} - {attacker, stoppers[0]}
                            aimed = travel["target"] in (
                                f"investor:{letter}",
                                f"family:{letter}@{provider}",
                            )
                            if not aimed:
                                continue
                            return DealPlan(
                                seed,
                                space,
                                boss,
                                family,
                                provider,
                                offer["card"],
                                attacker,
                                travel,
                                stoppers[0],
                                bystander,
                            )
    raise AssertionError("no seed gives the acceptance deal")


@dataclass
class StopPlan:
    """A 6-seat position: the first seat places the marker on ``space`` and opens a deal;
    ``player`` plays ``card_command`` (travel or boss), opening a stop window that every seat in
    ``stoppers`` (at least ``need`` of them) could stop."""

    seed: int
    space: int
    boss: int
    player: int
    card_command: dict[str, Any]
    stoppers: list[int]


def find_stop_plan(need: int = 4, seeds: Iterable[int] = range(2000)) -> StopPlan:
    """The first seed where, right after a deal opens, a travel or boss card can be played and
    at least ``need`` other seats hold a stop card."""
    for seed in seeds:
        st0 = start(seed, 6)
        boss = st0.active
        for space in range(16):
            st = st0.clone()
            _do(st, boss, {"do": "place_marker", "space": space})
            _do(st, boss, {"do": "open_deal"})
            for player in range(6):
                for cmd in legal_commands(st, player):
                    if cmd["do"] not in ("travel", "boss"):
                        continue
                    pending = st.clone()
                    _do(pending, player, cmd)
                    stoppers = [s for s in range(6) if s != player and _legal(pending, s, "stop")]
                    if len(stoppers) >= need:
                        return StopPlan(seed, space, boss, player, cmd, stoppers)
    raise AssertionError(f"no seed gives a stop window with {need} possible stops")
