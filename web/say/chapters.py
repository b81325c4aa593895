"""The history as a story: the game's start, then each negotiation as threads, then the end.

``story(records, seat)`` is pure: it groups the game's events as ``seat`` may see them (every
event goes through ``redact_event`` and ``message`` for that seat, A8; another seat's standing
orders are not even a line, A10) into

- the start: who holds which investor, the side pool, the first player, the seed's hash;
- per negotiation: its terms as threads per provider and letter (offer, counter, accept,
  reject, withdraw, lapse), the cards played with their stop windows (who answered what, how
  the window ended), the last calls, family cards put on the table, other happenings (boss
  changes, chat, the deadline), and how it ended: the lineup that filled the deal, the family
  cards that went back to their owners, the payouts, or why it failed; then the end roll and
  its numbers (R1.3, R7.2);
- the turns between negotiations (marker, rolls, draws, discards, reshuffles);
- the end: the money, the winners, a tie as a shared win (R7.3).

Lines are ``imtheboss.engine.history.Message``s: the template renders them in the reader's
language (``imtheboss.web.say.messages.render``). Numbers: money in M; seats are indexes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from imtheboss.engine.cards import CARD_NAMES, TILE_END_NUMBERS
from imtheboss.engine.events import Event
from imtheboss.engine.history import Message, message, starting_investors
from imtheboss.engine.views import redact_event
from imtheboss.web.say.events import types_where


@dataclass(frozen=True)
class Line:
    """One event as the seat reads it: its number, time and message."""

    seq: int
    at: datetime
    msg: Message


@dataclass
class Thread:
    """The terms between the boss and ``provider`` for ``letter`` (``None``: for no card,
    R4.5), in order; ``outcome``: ``open``, ``agreed``, ``rejected``, ``withdrawn``, ``lapsed``."""

    provider: int
    letter: str | None
    lines: list[Line] = field(default_factory=list)
    outcome: str = "open"


@dataclass
class Window:
    """A card played and its stop window (``kind`` ``stop``), or a last call (``last_call``):
    the line that opened it, each answer, and the lines that ended it (the window timing out,
    then the card taking effect; none: still open)."""

    kind: str
    opened: Line
    answers: list[Line] = field(default_factory=list)
    ended: list[Line] = field(default_factory=list)


@dataclass
class Filled:
    """One letter of the lineup that filled a closed deal: ``seat``'s investor or family
    card (``card``: its name)."""

    letter: str
    seat: int
    kind: str
    card: str | None


@dataclass
class Negotiation:
    """One negotiation, numbered from 1 in the game; ``outcome``: ``running``, ``closed`` or
    ``failed``. ``payments``: ``[(seat, M)]``; ``returned``: ``[(seat, [card names])]``;
    ``end_numbers``: the closed deal's tile's end numbers (R1.3; empty: none)."""

    number: int
    space: int
    boss: int
    opened: Line
    threads: list[Thread] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    family: list[Line] = field(default_factory=list)
    other: list[Line] = field(default_factory=list)
    ended: Line | None = None
    outcome: str = "running"
    tile: int | None = None
    proceeds: int = 0
    lineup: list[Filled] = field(default_factory=list)
    returned: list[tuple[int, list[str]]] = field(default_factory=list)
    payments: list[tuple[int, int]] = field(default_factory=list)
    end_roll: Line | None = None
    end_numbers: list[int] = field(default_factory=list)
    end_roll_value: int | None = None


@dataclass
class Start:
    """The game's start: ``holdings`` ``[(seat, [letters])]``, ``side_pool`` letters, the
    first player, the seed's hash (A9) and the start's line."""

    line: Line
    holdings: list[tuple[int, list[str]]]
    side_pool: list[str]
    first: int
    seed_hash: str


@dataclass
class End:
    """The game's end: ``money`` per seat (M), the winners, ``shared`` when more than one."""

    line: Line
    reason: str
    money: list[int]
    winners: list[int]
    shared: bool


@dataclass
class Chapter:
    """A negotiation, or the turns between two (``turns``: lines)."""

    negotiation: Negotiation | None = None
    turns: list[Line] = field(default_factory=list)


@dataclass
class Story:
    """The whole story as one seat may read it."""

    start: Start | None = None
    chapters: list[Chapter] = field(default_factory=list)
    end: End | None = None


Record = tuple[int, datetime, Event]
TERMS = types_where(thread="terms")  # the events table's rows of each part in a thread
WINDOW_ENDS = types_where(thread="window_end")


def story(records: Iterable[Record], seat: int | None, first_number: int = 1) -> Story:
    """The events ``records`` (``(seq, at, event)`` in order) grouped for ``seat`` (``None``:
    a spectator). Only what ``redact_event(event, seat)`` shows is read. ``first_number``: the
    number of the first negotiation among them (a part of the log starting later)."""
    out = Story()
    deal: Negotiation | None = None
    windows: dict[str, Window] = {}
    for seq, at, event in records:
        d = redact_event(event, seat)
        if d["type"] == "private":
            continue  # another seat's standing orders (A10)
        line = Line(seq, at, message(event, seat))
        t = d["type"]
        if t == "game_started":
            out.start = _start(line, d)
        elif t == "game_ended":
            out.end = _end(line, d)
        elif t == "deal_opened":
            deal = Negotiation(len(_deals(out)) + first_number, d["space"], d["boss"], line)
            windows = {}
            out.chapters.append(Chapter(negotiation=deal))
        elif t == "die_rolled" and d["purpose"] == "end" and _deals(out):
            _end_roll(_deals(out)[-1], line, d)
        elif deal is not None and deal.outcome == "running":
            _in_deal(deal, windows, line, d)
        else:
            if not out.chapters or out.chapters[-1].negotiation is not None:
                out.chapters.append(Chapter())
            out.chapters[-1].turns.append(line)
    return out


def _deals(out: Story) -> list[Negotiation]:
    return [c.negotiation for c in out.chapters if c.negotiation is not None]


def _start(line: Line, d: dict[str, Any]) -> Start:
    holdings, side_pool = starting_investors(d)
    return Start(
        line=line,
        holdings=sorted(holdings.items()),
        side_pool=side_pool,
        first=d.get("active", 0),
        seed_hash=d["seed_hash"],
    )


def _end(line: Line, d: dict[str, Any]) -> End:
    winners = list(d["winners"])
    return End(line, d["reason"], list(d["money"]), winners, len(winners) > 1)


def _in_deal(deal: Negotiation, windows: dict[str, Window], line: Line, d: dict) -> None:
    t = d["type"]
    if t in TERMS:
        _terms(deal, line, d)
    elif t == "card_pending" or t == "close_called":
        w = windows[d["window"]] = Window("stop" if t == "card_pending" else "last_call", line)
        deal.windows.append(w)
    elif t == "window_answered" and d["window"] in windows:
        windows[d["window"]].answers.append(line)
    elif t in WINDOW_ENDS and d.get("window") in windows:
        windows[d["window"]].ended.append(line)
        if t == "card_took_effect" and d["kind"] == "boss":
            deal.boss = d["seat"]  # R5.5: the new boss
    elif t == "family_played":
        deal.family.append(line)
    elif t == "deal_closed":
        _closed(deal, line, d)
    elif t == "deal_failed":
        deal.ended, deal.outcome = line, "failed"
        deal.returned = _returned(d)
    else:
        deal.other.append(line)


def _terms(deal: Negotiation, line: Line, d: dict[str, Any]) -> None:
    letter = d.get("letter")
    thread = next(
        (x for x in deal.threads if x.provider == d["provider"] and x.letter == letter), None
    )
    if thread is None:
        thread = Thread(d["provider"], letter)
        deal.threads.append(thread)
    thread.lines.append(line)
    if d["type"] == "terms_set":
        thread.outcome = "open"
    elif d["type"] == "agreement_made":
        thread.outcome = "agreed"
    else:
        thread.outcome = d["reason"]  # rejected, withdrawn, lapsed


def _closed(deal: Negotiation, line: Line, d: dict[str, Any]) -> None:
    deal.ended, deal.outcome = line, "closed"
    deal.tile, deal.proceeds = d["tile"], d["proceeds"]
    deal.lineup = [
        Filled(
            x["letter"],
            x["seat"],
            x["kind"],
            CARD_NAMES[x["card"]] if x.get("card") is not None else None,
        )
        for x in d.get("lineup") or []
    ]
    deal.returned = _returned(d)
    deal.payments = [(int(s), n) for s, n in d["payments"].items()]
    deal.end_numbers = sorted(TILE_END_NUMBERS.get(d["tile"], ()))


def _returned(d: dict[str, Any]) -> list[tuple[int, list[str]]]:
    return [(int(s), [CARD_NAMES[c] for c in cards]) for s, cards in d["returned"].items()]


def _end_roll(deal: Negotiation, line: Line, d: dict[str, Any]) -> None:
    deal.end_roll, deal.end_roll_value = line, d["value"]
