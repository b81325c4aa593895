"""Pace benchmark: how many days a game lasts when people play it by mail, on a virtual clock.

    .venv/bin/python bench/pace.py --seats 5 --games 200 --checks-per-day 2 \\
        --orders none|recommended|default|full [--changed K] --premoves 0.6 --silent 0 --seed 1 \\
        [--typical] [--no-back] [--json]

Nothing sleeps: the clock jumps from one happening to the next. The engine is the real one
(``decide``), so standing orders (A10), the away proxy (A11) and quiet hours (A12) act exactly as
on the server; only the people are modelled.

The model of people
-------------------

- **Time zones and sleep.** Each seat has a UTC offset (``--zones``, hours, handed to the seats in
  turn; default all at 0) and sleeps from 23:00 to 07:00 local time: 16 waking hours a day.
- **Checks.** Awake, a seat looks at the game at random: a Poisson process of
  ``--checks-per-day`` looks per waking day (rate R/16 per waking hour; no look at night, the
  waking hours simply follow each other). Each game starts at a random time of day.
- **Visits.** A look is a visit of 5 to 10 minutes (uniform). A seat marked away (A6) that looks
  says it is back first (the game page's button), as a person would; with ``--no-back`` it never
  presses it: its look is presence (the page sends ``present`` when it matters, A6, A11). At
  its start the seat acts at once on everything the game asks of it, one command after the
  other, until its bot
  (``SensibleBot``, wrapped for haggling, below) wants nothing more; while the visit lasts, the
  seat answers one minute after anything new the game asks of it (another seat online at the
  same time, an order, a deadline).
- **Haggling.** A person counters once before accepting terms: the first time, in a deal, that
  it would accept terms for a provider's letter, it names a counter instead (a provider asks
  1 M more, the boss offers 1 M less); after that one counter (by either side) both accept as the
  bot would. A counter the bot makes of its own counts as the one counter. Orders never haggle.
- **Mail** reaches a seat when the game starts waiting for it (a new entry of
  ``views.awaiting``: turn, discard, stop window, last call; a deal it leads as boss), when terms
  are named to it, as boss, when the deal's requirements become met, and when the server starts
  playing for it (A11: ``proxy_started``, mailed at once by the server).
- **Fast seats** (``--fast K``): besides their checks, while awake they look 2 to 30 minutes
  (uniform) after each mail. Other seats read mail only at their checks.
- **Bot seats** (``--bots K``): played by ``engine.bots.SeatBot`` (the engine's best bot on the
  seat's own view) the moment the game asks them anything, day and night, with the brisk pace's
  orders (fair posted prices, a boss limit, close when met); they never haggle nor chat.
- **Silent seats** (``--silent K``): never act at all. Which seats are silent, fast and pre-moved
  is drawn per game.
- **Deadlines**: a ``timeout`` is decided exactly when the next deadline falls due (as the
  worker does). Windows are the defaults (``options.DEFAULT_WINDOWS``: turn 24 h, stop 6 h, last
  call 12 h, negotiation 48 h), times ``--window-scale``. The away proxy starts after
  ``--proxy-hours`` (default 48, the server's; 0: off). ``--quiet-hours`` turns on A12 with each
  seat's sleep as its night.
- A game that has not ended after ``--cap-days`` (120) days of game time is *unfinished*; it
  counts as the cap in the percentiles (which are then lower bounds).

Orders (A10)
------------

- ``none``: no orders. ``recommended``: ``orders.RECOMMENDED`` for every seat (stop windows: let
  it happen unless aimed at me; last call: pass). ``default``: exactly what the server gives a
  new seat at the default pace (``orders.pace_orders(DEFAULT_PACE)``, the same function the
  pages and the API use: brisk, fair posted prices, a boss limit of the fair price plus 2 M,
  close when met).
- ``full``: every order at the bot's choices and prices: stop windows as recommended, the last
  call as the bot answers it (always pass), a posted price for every
  letter (it applies to the investor cards the seat controls, also those it gains later) at the
  bot's fair price (proceeds split among the space's investors and the boss, as
  ``SensibleBot`` reckons it), taken as the median over the board's spaces that use the letter
  at the current share value; boss limits for any letter (``*``) at the bot's limit, twice the
  median fair price of the board; close when the requirements are met. The prices are cash
  amounts: a seat re-sets them at its first visit after the share value changes.
- ``--changed K``: K of the seats that act (drawn per game) switch to ``full`` orders (below,
  with their pre-move if they have one); the others keep the ``--orders`` set.
- ``--typical``: the typical group: ``--orders default --changed 2 --premoves 0.2`` for 5 seats
  (2 of 5 changed, 1 of 5 pre-moves; ``--changed`` is round(0.4 x seats)).
- ``--premoves S``: round(S x seats) of the non-silent seats (drawn per game) also set a turn
  pre-move with the bot's "good space" idea in the available conditions: deal in place, and
  after the roll open a deal, when the seat can fill at least 2 of the space's letters itself
  (``{"when": "fill", "k": 2}``); else roll, then draw.
- ``--last-call ask|unless_involved|pass`` replaces the last-call order of every seat that acts
  (to measure what the last call costs).
- A silent seat never set anything: it has no orders under ``none`` and the recommended ones
  (what a new server seat starts with) otherwise.

Decisions
---------

A *decision* is an answer to something the game waited a given seat for: a turn (from its start
to the draw or the opening of a deal; the first marker included), a discard, a seat's answer to
a stop window or a last call, the boss's close or fail of a deal (owed while a deal is open,
not expired and not in its last call), and each answer (acceptance, rejection or counter) to
terms named to a seat. Each is counted once, by whoever made it: the seat in a visit (``seat``),
its standing order (``order``), the server acting for it (``proxy``) or its window running out
(``timeout``). Answers the seat never had to give because something else ended the question
(another seat's stop, a deal ending, terms lapsing) are *moot* and not counted.

Output
------

Without ``--json``: readable tables. With ``--json``: one JSON object as the last line:
``median_days``, ``p10_days``, ``p90_days``, ``max_days``, ``mean_days``, ``unfinished``,
``timeouts`` (how many windows of each kind ran out, all games together), ``decided_by_timeout``,
``decided_by_order``, ``decided_by_proxy``, ``decided_by_seat`` (shares of all decisions), and
the breakdowns: ``decisions`` (per game, by kind and maker, moot ones apart),
``mean_wait_hours`` (from the question to its answer, by kind), ``time_share`` (the share of
game time the game spent in each state: a turn, a stop window, a last call, a negotiation, a
discard) and ``per_game`` counts (turns, deals closed and failed, last calls and those that ran
out, proxy starts, commands), ``proxy_share_present`` (the share of the decisions of seats that
are not silent made by the proxy), ``max_present_proxied_run`` (the longest run of proxied
decisions in a row of a *present* seat: one that looked at its game between each decision of
the run and the next; A11 hands a seat back at its look, so this is the rule's floor, 1) and
``max_absent_proxied_run`` (the longest run of proxied decisions in a row of a seat that is not
silent but did not look between them: its random looks left it away for more than the proxy
hours, and A11 plays for it by design until it looks again). ``params`` echoes the command
line.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from imtheboss.engine.board import LETTERS, default_board
from imtheboss.engine.bots import SeatBot, SensibleBot
from imtheboss.engine.cards import card_letter
from imtheboss.engine.context import fair_price_of, price_value
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.lineup import lineup
from imtheboss.engine.options import DEFAULT_WINDOWS, Options
from imtheboss.engine.orders import DEFAULT_PACE, RECOMMENDED, Orders, pace_orders
from imtheboss.engine.setup import new_game
from imtheboss.engine.simulate import NAMES
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.views import awaiting, legal_commands, next_deadline
from imtheboss.engine.windows import presence_matters

WAKE, SLEEP = 7, 23  # local hours
AWAKE_HOURS = SLEEP - WAKE
VISIT_MINUTES = (5.0, 10.0)
FAST_MINUTES = (2.0, 30.0)
REACT = timedelta(minutes=1)  # a seat on the page answers what is new a minute later
MAX_BURST = 40  # commands one seat makes at one look (a guard; the bot stops long before)
MAX_COMMANDS = 50_000
START = datetime(2026, 1, 5, tzinfo=UTC)
TURN_PHASES = ("place_marker", "turn_start", "after_roll")
KINDS = ("turn", "discard", "stop", "last_call", "deal", "terms")
MAKERS = ("seat", "order", "proxy", "timeout")
STATES = ("turn", "stop", "last_call", "negotiation", "discard")
TIMED_KIND = {"negotiation": "deal"}  # a timed_out kind -> the decision it answers
PREMOVE = {"in_place": {"when": "fill", "k": 2}, "after_roll": {"when": "fill", "k": 2}}


# -- the clock of people ---------------------------------------------------------------------


def is_awake(at: datetime, offset: float) -> bool:
    """True when a seat at UTC ``offset`` hours is awake at ``at`` (07:00-23:00 local)."""
    return WAKE <= (at + timedelta(hours=offset)).hour < SLEEP


def after_waking_hours(at: datetime, hours: float, offset: float) -> datetime:
    """``at`` moved on by ``hours`` of the seat's waking time (its nights skipped)."""
    shift = timedelta(hours=offset)
    local = at + shift
    left = hours
    while True:
        morning = local.replace(hour=WAKE, minute=0, second=0, microsecond=0)
        if local.hour < WAKE:
            local = morning
        elif local.hour >= SLEEP:
            local = morning + timedelta(days=1)
        night = local.replace(hour=SLEEP, minute=0, second=0, microsecond=0)
        room = (night - local).total_seconds() / 3600
        if left <= room:
            return local + timedelta(hours=left) - shift
        left -= room
        local = night


# -- the orders --------------------------------------------------------------------------------


def _fair(space: Any, share_value: int) -> int:
    return fair_price_of(space.shares, space.investor_count, share_value)  # the engine's


def full_orders(share_value: int, premove: bool) -> Orders:
    """``--orders full`` at ``share_value``: see the module docstring."""
    spaces = default_board().spaces
    prices = {}
    for x in LETTERS:
        fairs = [_fair(s, share_value) for s in spaces if x in s.letters]
        prices[x] = {"cash": int(statistics.median(fairs))}
    board_fair = statistics.median(_fair(s, share_value) for s in spaces)
    return Orders.from_json(
        {
            "stop": "unless_aimed",
            "last_call": "pass",  # the bot always passes a last call
            "prices": prices,
            "boss": {"limits": {"*": int(2 * board_fair)}, "close": True},
            "turn": PREMOVE if premove else None,
        }
    )


def base_orders(kind: str, premove: bool) -> Orders:
    """The orders of a seat for ``--orders none``, ``recommended`` or ``default`` (``full``:
    ``full_orders``). ``default`` is what the server gives a new seat at the default pace
    (``orders.pace_orders(DEFAULT_PACE)``, as ``web.games.create.create_game`` does)."""
    if kind == "default":
        base = pace_orders(DEFAULT_PACE).to_json()
    else:
        base = RECOMMENDED.to_json() if kind == "recommended" else Orders().to_json()
    return Orders.from_json({**base, "turn": PREMOVE if premove else None})


# -- the haggling person -----------------------------------------------------------------------


class HaggleBot:
    """``SensibleBot`` that counters once per agreement before accepting (module docstring).
    ``haggled`` is shared by every seat of a game: ``(deal window, provider, letter)``."""

    def __init__(self, haggled: set[tuple[str, int, str]]) -> None:
        self.inner = SensibleBot()
        self.haggled = haggled

    def choose(
        self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random
    ) -> dict[str, Any] | None:
        """A command dict for ``seat``, or ``None`` to wait."""
        choice = self.inner.choose(state, seat, legal, rng)
        deal = state.deal
        if choice is None or deal is None:
            return choice
        if choice["do"] == "accept" and choice.get("letter") is not None:
            provider = choice["with"] if seat == deal.boss else seat
            key = (deal.window.id, provider, choice["letter"])
            if key not in self.haggled:
                self.haggled.add(key)
                counter = self._counter(state, seat, provider, choice["letter"], legal)
                if counter is not None:
                    return counter
        elif choice["do"] in ("offer", "propose") and choice.get("card"):
            provider = choice["to"] if choice["do"] == "propose" else seat
            letter = card_letter(choice["card"])
            current = deal.terms.get((provider, letter))
            if current is not None and current.by != ("boss" if seat == deal.boss else "provider"):
                self.haggled.add((deal.window.id, provider, letter))
        return choice

    @staticmethod
    def _counter(
        state: GameState, seat: int, provider: int, letter: str, legal: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        terms = state.deal.terms.get((provider, letter))
        if terms is None or terms.card is None:
            return None
        amount = price_value(state, terms.price)
        if seat == state.deal.boss:
            cmd = {"do": "propose", "to": provider, "card": terms.card}
            cmd["price"] = {"cash": max(0, amount - 1)}
        else:
            cmd = {"do": "offer", "card": terms.card, "price": {"cash": amount + 1}}
        for c in legal:
            if (
                c["do"] == cmd["do"]
                and c.get("card") == terms.card
                and c.get("to") == cmd.get("to")
            ):
                return cmd
        return None


# -- what the game waits for: decisions --------------------------------------------------------


def owed(s: GameState) -> set[tuple]:
    """Every open question: ``(seat, kind, ...)`` with ``kind`` one of ``KINDS``."""
    out: set[tuple] = set()
    for a in awaiting(s):
        kind = a["for"]
        if kind != "negotiation":
            out.add((a["seat"], "turn" if kind == "place_marker" else kind, a["window"]))
    deal = s.deal
    if deal is not None:
        if s.phase in ("negotiation", "stop_window") and not deal.expired:
            out.add((deal.boss, "deal", deal.window.id))
        for t in deal.terms.values():
            answerer = deal.boss if t.by == "provider" else t.provider
            out.add((answerer, "terms", deal.window.id, t.provider, t.letter, t.by, t.price))
    return out


def waiting_state(s: GameState) -> str:
    """What the game is waiting in: one of ``STATES`` (or ``other``)."""
    if s.pending is not None:
        return "stop"
    if s.last_call is not None:
        return "last_call"
    if s.phase == "discard":
        return "discard"
    if s.phase in TURN_PHASES:
        return "turn"
    return "negotiation" if s.phase == "negotiation" else "other"


def _met(s: GameState) -> bool:
    return s.deal is not None and s.phase == "negotiation" and lineup(s) is not None


@dataclass
class Ledger:
    """Who answered what, how long it took, and where the game's time went."""

    open: dict[tuple, datetime]
    last: datetime
    decisions: Counter = field(default_factory=Counter)  # (kind, maker)
    wait: Counter = field(default_factory=Counter)  # kind -> seconds
    time_in: Counter = field(default_factory=Counter)  # waiting state -> seconds
    timeouts: Counter = field(default_factory=Counter)
    counts: Counter = field(default_factory=Counter)
    _before: set[tuple] = field(default_factory=set)
    _met: bool = False
    _timed: tuple[str, frozenset[int]] = ("", frozenset())
    silent: frozenset[int] = frozenset()  # seats that never act: not "present" seats
    present_made: Counter = field(default_factory=Counter)  # maker -> decisions of present seats
    proxied_run: Counter = field(default_factory=Counter)  # seat -> proxied decisions in a row
    max_proxied_run: int = 0  # the longest such run of a seat that looked between them
    absent_run: Counter = field(default_factory=Counter)  # seat -> the same, looks or not
    max_absent_run: int = 0  # the longest such run of a seat that is not silent
    looked: set[int] = field(default_factory=set)  # seats that looked since their last decision
    told: set[int] = field(default_factory=set)  # seats the command mailed the proxy's start

    def started(self, state: GameState, now: datetime) -> None:
        """A command is about to be decided at ``now``."""
        self.time_in[waiting_state(state)] += (now - self.last).total_seconds()
        self.last = now
        self._before = set(self.open)
        self._met = _met(state)
        self._timed = ("", frozenset())

    def applied(self, state: GameState, event: Event, command: Command, now: datetime) -> None:
        """``event`` of ``command`` has just been folded into ``state``."""
        if event.type == "timed_out":
            kind = event.data["kind"]
            self.timeouts[kind] += 1
            self._timed = (TIMED_KIND.get(kind, kind), frozenset(event.data["missed"]))
        elif event.type in ("deal_closed", "deal_failed", "close_called", "proxy_started"):
            self.counts[event.type] += 1
            if event.type == "proxy_started":  # the server mails it at once (A11)
                self.told.add(event.data["seat"])
        elif event.type == "turn_started":
            self.counts["turns"] += 1
        current = owed(state)
        for key in self.open.keys() - current:
            maker = self._maker(key, event, command, state)
            if maker != "moot":
                self.wait[key[1]] += (now - self.open[key]).total_seconds()
            self.decisions[(key[1], maker)] += 1
            if maker != "moot" and key[0] not in self.silent:
                self._present(key[0], maker)
            del self.open[key]
        for key in current - self.open.keys():
            self.open[key] = now

    def _present(self, seat: int, maker: str) -> None:
        """A decision of a seat that is not silent: its maker and the seat's proxied runs (one
        broken by an absence: the seat did not look since its last decision, and one not)."""
        self.present_made[maker] += 1
        proxy = maker == "proxy"
        run = self.proxied_run[seat] + 1 if seat in self.looked else 1
        self.proxied_run[seat] = run if proxy else 0
        self.absent_run[seat] = self.absent_run[seat] + 1 if proxy else 0
        self.looked.discard(seat)
        self.max_proxied_run = max(self.max_proxied_run, self.proxied_run[seat])
        self.max_absent_run = max(self.max_absent_run, self.absent_run[seat])

    def mailed(self, state: GameState) -> set[int]:
        """The seats a finished command sent mail to (module docstring)."""
        seats = {key[0] for key in self.open.keys() - self._before} | self.told
        self.told = set()
        if not self._met and _met(state):
            seats.add(state.deal.boss)
        return seats

    def _maker(self, key: tuple, event: Event, command: Command, state: GameState) -> str:
        seat, kind = key[0], key[1]
        if event.data.get("proxy"):
            return "proxy" if state.proxied[seat] else "moot"
        if event.data.get("order"):
            return "order" if event.by == seat else "moot"
        if command.do == "timeout":
            timed, missed = self._timed
            return "timeout" if kind == timed and (kind == "deal" or seat in missed) else "moot"
        return "seat" if event.by == seat and command.by == seat else "moot"


# -- one game ------------------------------------------------------------------------------------


@dataclass
class Person:
    """One seat's player: its UTC offset, its role (``normal``, ``fast``, ``silent``)."""

    seat: int
    offset: int
    role: str
    bot: HaggleBot | SeatBot
    premove: bool
    changed: bool
    present_until: datetime
    look_at: datetime | None = None


@dataclass
class GameResult:
    days: float
    finished: bool
    ledger: Ledger
    commands: int
    refused: int


class PaceGame:
    """One game on the virtual clock (``run``)."""

    def __init__(self, args: argparse.Namespace, index: int) -> None:
        self.args = args
        self.rng = random.Random(f"pace:{args.seed}:{index}")
        self.bot_rng = random.Random(f"pace-bots:{args.seed}:{index}")
        n = args.seats
        seats = list(range(n))
        self.rng.shuffle(seats)
        silent = set(seats[: args.silent])
        fast = set(seats[args.silent : args.silent + args.fast])
        bots = set(seats[args.silent + args.fast : args.silent + args.fast + args.bots])
        talking = [s for s in range(n) if s not in silent and s not in bots]
        premoved = set(self.rng.sample(talking, min(len(talking), round(args.premoves * n))))
        changed = set(self.rng.sample(talking, min(len(talking), args.changed)))
        start = START + timedelta(hours=self.rng.uniform(0, 24))
        self.start = self.now = start
        self.cap = start + timedelta(days=args.cap_days)
        haggled: set[tuple[str, int, str]] = set()
        self.people = [
            Person(
                seat=s,
                offset=args.zones[s % len(args.zones)],
                role="silent"
                if s in silent
                else "fast"
                if s in fast
                else "bot"
                if s in bots
                else "normal",
                bot=SeatBot() if s in bots else HaggleBot(haggled),
                premove=s in premoved,
                changed=s in changed or args.orders == "full",
                present_until=start,
            )
            for s in range(n)
        ]
        options = Options.from_json(
            {
                "proxy_hours": args.proxy_hours,
                "quiet_hours": args.quiet_hours,
                "windows": {
                    k: max(1, round(v * args.window_scale)) for k, v in DEFAULT_WINDOWS.items()
                },
            }
        )
        seed = f"{args.seed}:{index}"
        probe = replay(new_game(NAMES[:n], options, default_board(), seed, start))
        orders = [self._orders_for(p, probe.share_value) for p in self.people]
        events = new_game(NAMES[:n], options, default_board(), seed, start, orders=orders)
        self.state = replay(events)
        self.ledger = Ledger(
            open={k: start for k in owed(self.state)}, last=start, silent=frozenset(silent)
        )
        self.queue: list[tuple[datetime, int, str, int]] = []
        self.seq = 0
        self.commands = self.refused = 0
        for p in self.people:
            if p.role == "bot":
                p.present_until = self.cap  # a bot seat is always there and acts at once
                self._push(start, "act", p.seat)
            elif p.role != "silent":
                self._next_check(p)
                if args.quiet_hours:
                    self._command(Command("night", p.seat, {"night": self._night(p)}, start))

    # -- setup helpers --
    def _orders_for(self, p: Person, share_value: int) -> Orders:
        kind = self.args.orders
        if p.role == "bot":
            return pace_orders("brisk")  # a bot seat's posted prices and limits
        if p.role == "silent":
            if kind == "default":
                return base_orders(kind, False)
            return RECOMMENDED if kind != "none" else Orders()
        changed = p.changed
        orders = full_orders(share_value, p.premove) if changed else base_orders(kind, p.premove)
        if self.args.last_call is None:
            return orders
        return Orders.from_json({**orders.to_json(), "last_call": self.args.last_call})

    @staticmethod
    def _night(p: Person) -> dict[str, str]:
        zone = "Etc/GMT" if p.offset == 0 else f"Etc/GMT{-p.offset:+d}"  # POSIX signs
        return {"start": f"{SLEEP:02d}:00", "end": f"{WAKE:02d}:00", "zone": zone}

    def _push(self, at: datetime, kind: str, seat: int) -> None:
        self.seq += 1
        heapq.heappush(self.queue, (at, self.seq, kind, seat))

    def _next_check(self, p: Person) -> None:
        hours = self.rng.expovariate(self.args.checks_per_day / AWAKE_HOURS)
        self._push(after_waking_hours(self.now, hours, p.offset), "check", p.seat)

    # -- the loop --
    def run(self) -> GameResult:
        """Play until the game ends or the cap; the result."""
        s = self.state
        while s.phase != "game_over" and self.commands < MAX_COMMANDS:
            due = next_deadline(s)
            at = self.queue[0][0] if self.queue else None
            soonest = min(t for t in (due, at) if t is not None) if (due or at) else None
            if soonest is None or soonest > self.cap:
                break
            if due is not None and due <= soonest:
                self.now = max(self.now, due)
                self._command(Command("timeout", None, {}, self.now))
                continue
            _, _, kind, seat = heapq.heappop(self.queue)
            self.now = max(self.now, at)
            p = self.people[seat]
            if kind == "check":
                self._next_check(p)
                self._visit(p)
            elif kind == "look" and p.look_at == at:
                p.look_at = None
                self._visit(p)
            elif kind == "act" and self.now <= p.present_until:
                self._act(p)
        finished = s.phase == "game_over"
        end = self.now if finished else self.cap
        self.ledger.started(s, end)  # the last stretch of time
        days = (end - self.start).total_seconds() / 86400
        return GameResult(days, finished, self.ledger, self.commands, self.refused)

    def _visit(self, p: Person) -> None:
        length = timedelta(minutes=self.rng.uniform(*VISIT_MINUTES))
        p.present_until = max(p.present_until, self.now + length)
        self._act(p)

    def _act(self, p: Person) -> None:
        s = self.state
        self.ledger.looked.add(p.seat)  # the seat is at its game page: presence (A6, A11)
        if s.phase == "game_over":
            pass
        elif self.args.no_back:  # only looks: the page tells the server the seat is there
            if presence_matters(s, p.seat, self.now):
                self._command(Command("present", p.seat, {}, self.now))
        elif s.away[p.seat]:  # "I'm back" (A6, A11)
            self._command(Command("away", p.seat, {"away": False}, self.now))
        self._refresh_orders(p)
        for _ in range(MAX_BURST):
            if s.phase == "game_over":
                break
            choice = p.bot.choose(s, p.seat, legal_commands(s, p.seat), self.bot_rng)
            if choice is None:
                break
            args = {k: v for k, v in choice.items() if k != "do"}
            if not self._command(Command(choice["do"], p.seat, args, self.now)):
                break
        self._refresh_orders(p)  # after a discard the seat was asked first (R6.6)

    def _refresh_orders(self, p: Person) -> None:
        """Full orders: the seat re-sets its prices when the share value has changed."""
        s = self.state
        if not p.changed or s.phase == "game_over" or p.seat in s.discard_owed:
            return
        wanted = self._orders_for(p, s.share_value)
        if s.orders[p.seat] != wanted:
            self._command(Command("orders", p.seat, {"orders": wanted.to_json()}, self.now))

    def _command(self, command: Command) -> bool:
        self.ledger.started(self.state, self.now)
        try:
            events = decide(self.state, command)
        except RuleError:
            self.refused += 1
            return False
        self.commands += 1
        for event in events:
            apply_in_place(self.state, event)
            self.ledger.applied(self.state, event, command, self.now)
        for seat in self.ledger.mailed(self.state):
            self._mail(self.people[seat], command.by)
        return True

    def _mail(self, p: Person, actor: int | None) -> None:
        if p.role == "silent":
            return
        if p.role == "bot":
            self._push(self.now, "act", p.seat)
        elif self.now < p.present_until:
            if p.seat != actor:
                self._push(self.now + REACT, "act", p.seat)
        elif p.role == "fast" and is_awake(self.now, p.offset):
            at = self.now + timedelta(minutes=self.rng.uniform(*FAST_MINUTES))
            if p.look_at is None or at < p.look_at:
                p.look_at = at
                self._push(at, "look", p.seat)


# -- many games ----------------------------------------------------------------------------------


def _deciles(values: list[float]) -> tuple[float, float]:
    if len(values) == 1:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=10, method="inclusive")
    return cuts[0], cuts[-1]


def _totals(results: list[GameResult]) -> dict[str, Counter]:
    """The ledgers of all games added up."""
    out = {
        k: Counter() for k in ("decisions", "wait", "time_in", "timeouts", "counts", "present_made")
    }
    for r in results:
        for key, total in out.items():
            total.update(getattr(r.ledger, key))
        out["counts"]["commands"] += r.commands
        out["counts"]["refused"] += r.refused
    return out


def _share(x: float, of: float) -> float:
    return round(x / of, 4) if of else 0.0


def _decided(decisions: Counter, n: int) -> dict[str, Any]:
    """Shares of the decisions by maker, and per game by kind and maker, with mean waits."""
    made = sum(v for (_, maker), v in decisions.items() if maker != "moot")
    out: dict[str, Any] = {
        f"decided_by_{m}": _share(sum(v for (_, mk), v in decisions.items() if mk == m), made)
        for m in MAKERS
    }
    out["decisions"] = {
        k: {m: round(decisions[(k, m)] / n, 2) for m in (*MAKERS, "moot")} for k in KINDS
    }
    out["decisions_per_game"] = round(made / n, 1)
    return out


def summarize(results: list[GameResult], args: argparse.Namespace, seconds: float) -> dict:
    """The figures of a run (module docstring, Output)."""
    days = sorted(r.days for r in results)
    n = len(results)
    p10, p90 = _deciles(days)
    t = _totals(results)
    answered = Counter()
    for (kind, maker), v in t["decisions"].items():
        answered[kind] += v if maker != "moot" else 0
    counts, timeouts = t["counts"], t["timeouts"]
    per_game = {
        "turns": "turns",
        "deals_closed": "deal_closed",
        "deals_failed": "deal_failed",
        "last_calls": "close_called",
        "proxy_started": "proxy_started",
        "commands": "commands",
        "refused": "refused",
    }
    return {
        "params": {k: v for k, v in vars(args).items() if k != "json"},
        "median_days": round(statistics.median(days), 2),
        "p10_days": round(p10, 2),
        "p90_days": round(p90, 2),
        "max_days": round(days[-1], 2),
        "mean_days": round(statistics.fmean(days), 2),
        "unfinished": sum(not r.finished for r in results),
        "timeouts": {
            k: timeouts[k] for k in ("turn", "stop", "last_call", "negotiation", "discard")
        },
        **_decided(t["decisions"], n),
        "proxy_share_present": _share(t["present_made"]["proxy"], sum(t["present_made"].values())),
        "max_present_proxied_run": max(r.ledger.max_proxied_run for r in results),
        "max_absent_proxied_run": max(r.ledger.max_absent_run for r in results),
        "mean_wait_hours": {
            k: round(t["wait"][k] / answered[k] / 3600, 2) if answered[k] else 0.0 for k in KINDS
        },
        "time_share": {
            k: _share(t["time_in"][k], sum(t["time_in"].values())) for k in (*STATES, "other")
        },
        "per_game": {
            **{name: round(counts[key] / n, 2) for name, key in per_game.items()},
            "last_calls_run_out": round(timeouts["last_call"] / n, 2),
        },
        "run_seconds": round(seconds, 1),
    }


def print_table(out: dict) -> None:
    """The figures for people."""
    p = out["params"]
    print(
        f"{p['games']} games, {p['seats']} seats, {p['checks_per_day']} checks a waking day, "
        f"orders {p['orders']}, changed {p['changed']}, "
        f"last call {p['last_call'] or 'as set'}, pre-moves "
        f"{p['premoves']}, silent {p['silent']}, fast {p['fast']}, proxy {p['proxy_hours']} h, "
        f"zones {p['zones']}, seed {p['seed']}"
    )
    print(
        f"days: median {out['median_days']}  p10 {out['p10_days']}  p90 {out['p90_days']}  "
        f"max {out['max_days']}  unfinished {out['unfinished']}  ({out['run_seconds']} s)"
    )
    print(
        f"decided by: seat {out['decided_by_seat']:.1%}  order {out['decided_by_order']:.1%}  "
        f"proxy {out['decided_by_proxy']:.1%}  timeout {out['decided_by_timeout']:.1%}"
    )
    print("timeouts (all games): " + "  ".join(f"{k} {v}" for k, v in out["timeouts"].items()))
    print(
        f"proxy: {out['proxy_share_present']:.2%} of the decisions of seats that act; "
        f"longest run in a row: {out['max_present_proxied_run']} of a present seat (looked "
        f"between), {out['max_absent_proxied_run']} of an absent one"
    )
    print()
    print(f"{'per game':<10}" + "".join(f"{m:>9}" for m in (*MAKERS, "moot")) + f"{'wait h':>9}")
    for kind, row in out["decisions"].items():
        cells = "".join(f"{row[m]:>9.1f}" for m in (*MAKERS, "moot"))
        print(f"{kind:<10}{cells}{out['mean_wait_hours'][kind]:>9.1f}")
    print()
    print(
        "game time spent waiting in: "
        + "  ".join(f"{k} {v:.0%}" for k, v in out["time_share"].items())
    )
    print("per game: " + "  ".join(f"{k} {v}" for k, v in out["per_game"].items()))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (module docstring); bad values exit with status 2."""
    parser = argparse.ArgumentParser(description="pace benchmark: game length in days")
    parser.add_argument("--seats", type=int, default=5, help="3 to 6")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--checks-per-day", type=float, default=2.0, help="per waking day")
    parser.add_argument(
        "--orders", choices=("none", "recommended", "default", "full"), default="none"
    )
    parser.add_argument("--changed", type=int, default=0, help="seats that switch to full orders")
    parser.add_argument("--premoves", type=float, default=0.0, help="share of seats, 0-1")
    parser.add_argument(
        "--typical",
        action="store_true",
        help="the typical group: --orders default, 2 of 5 seats changed, 1 of 5 pre-moves",
    )
    parser.add_argument(
        "--last-call",
        choices=("ask", "unless_involved", "pass"),
        help="the last-call order of every seat that acts, instead of the --orders set's",
    )
    parser.add_argument("--silent", type=int, default=0, help="seats that never act")
    parser.add_argument("--fast", type=int, default=0, help="seats that look soon after a mail")
    parser.add_argument(
        "--bots", type=int, default=0, help="bot seats (engine.bots.SeatBot), acting at once"
    )
    parser.add_argument("--proxy-hours", type=int, default=48, help="A11; 0: off")
    parser.add_argument(
        "--no-back", action="store_true", help="people never press I'm back: they only look"
    )
    parser.add_argument("--zones", default="0", help="UTC offsets in hours, e.g. --zones=-5,0,8")
    parser.add_argument("--quiet-hours", action="store_true", help="A12 with sleep as night")
    parser.add_argument("--window-scale", type=float, default=1.0, help="times the A1 windows")
    parser.add_argument("--cap-days", type=float, default=120.0, help="then: unfinished")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.typical:
        args.orders, args.changed, args.premoves = "default", round(0.4 * args.seats), 0.2
    try:
        args.zones = [int(z) for z in args.zones.split(",")]
    except ValueError:
        parser.error("--zones is a list of whole hours such as -5,0,8")
    checks = (
        (3 <= args.seats <= 6, "--seats is 3 to 6"),
        (args.games >= 1, "--games is at least 1"),
        (args.checks_per_day > 0, "--checks-per-day is more than 0"),
        (0 <= args.premoves <= 1, "--premoves is a share from 0 to 1"),
        (min(args.silent, args.fast) >= 0, "--silent and --fast are counts of seats"),
        (0 <= args.changed <= args.seats, "--changed is a count of seats"),
        (args.bots >= 0, "--bots is a count of seats"),
        (
            args.silent + args.fast + args.bots <= args.seats,
            "--silent plus --fast plus --bots is at most --seats",
        ),
        (args.bots < args.seats, "a game of bots only is refused: --bots is under --seats"),
        (0 <= args.proxy_hours <= 720, "--proxy-hours is 0 to 720"),
        (all(-12 <= z <= 14 for z in args.zones), "--zones are offsets from -12 to 14"),
        (0 < args.window_scale <= 30, "--window-scale is more than 0"),
        (args.cap_days > 0, "--cap-days is more than 0"),
    )
    for ok, message in checks:
        if not ok:
            parser.error(message)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    t0 = time.perf_counter()
    results = []
    for index in range(args.games):
        results.append(PaceGame(args, index).run())
        if not args.json and sys.stderr.isatty():
            print(f"\r{index + 1}/{args.games}", end="", file=sys.stderr)
    out = summarize(results, args, time.perf_counter() - t0)
    if args.json:
        print(json.dumps(out))
    else:
        print_table(out)


if __name__ == "__main__":
    main()
