"""Checking a game's record against its seed (A9): ``verify(record)``.

The seed must hash to the published seed hash; the deal at the start (investors, hands, draw
pile: R2.2, R2.3) must be the one ``new_game`` makes from that seed; and, replaying the events
from the start, every die roll (R1.5, R3.1, R7.2) and every reshuffle (R6.7) must be the one the
seed gives at that point of the game's random counter (``imtheboss.engine.rng``), every roll
must move the marker where it lands, and every draw must take the top of the draw pile. A
forced roll (scenarios' ``dice``) does not follow from the seed and counts as a difference.
The first difference stops the check. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from imtheboss.engine.board import load_board
from imtheboss.engine.events import Event
from imtheboss.engine.options import Options
from imtheboss.engine.record import HEADER, Record
from imtheboss.engine.rng import die, seed_hash, shuffled
from imtheboss.engine.setup import SetupError, new_game
from imtheboss.engine.state import GameState, apply_in_place, parse_time, start_state
from imtheboss.engine.turn import move_target

# The fields of game_started that the seed decides or that follow from the deal, in the order a
# difference is looked for (the players, options and board come from the file itself).
DEALT = (
    "investors",
    "hands",
    "draw_pile",
    "discard_pile",
    "money",
    "active",
    "rng_count",
    "forced_dice",
    "covered",
    "tiles",
    "deals_closed",
    "marker",
    "phase",
    "may_deal_in_place",
)


@dataclass(frozen=True)
class Difference:
    """Where a record departs from its seed. ``what`` names the check: ``published`` (the hash
    the reader gave), ``seed_hash``, ``header``, ``deal``, ``die``, ``forced``, ``space``,
    ``reshuffle``, ``draw``, ``replay`` (the event cannot follow the ones before it), ``end``
    or ``result``; ``seq`` the event (0: the header), ``type`` its type, ``field`` the field
    compared; ``expected`` what the seed (or the replay) gives, ``found`` what the file says."""

    what: str
    seq: int
    type: str
    field: str
    expected: Any
    found: Any


@dataclass(frozen=True)
class Verdict:
    """The outcome: how many events were replayed and how many rolls, reshuffles and draws
    were checked against the seed; ``difference`` is the first one, or ``None``."""

    seed_hash: str
    events: int = 0
    rolls: int = 0
    reshuffles: int = 0
    draws: int = 0
    difference: Difference | None = None

    @property
    def ok(self) -> bool:
        return self.difference is None


def verify(record: Record, published_hash: str | None = None) -> Verdict:
    """Check ``record`` (``read_record``'s) against its seed and, when given, against
    ``published_hash`` (the seed hash a player saw at the start, hex: the whole hash or its
    first digits, as the pages show them). Returns the verdict."""
    first = record.events[0]
    start = first.data
    found = _check_start(record, published_hash)
    if found is not None:
        return Verdict(str(start["seed_hash"]), difference=found)
    counts = {"rolls": 0, "reshuffles": 0, "draws": 0}
    state = start_state(first)
    for seq, event in enumerate(record.events[1:], 2):
        found = _check_event(state, seq, event, counts)
        if found is None:
            try:
                apply_in_place(state, event)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                found = Difference("replay", seq, event.type, "", None, repr(exc))
        if found is not None:
            return Verdict(str(start["seed_hash"]), seq - 1, difference=found, **counts)
    found = _check_result(record, state)
    return Verdict(str(start["seed_hash"]), len(record.events), difference=found, **counts)


def _check_start(record: Record, published: str | None) -> Difference | None:
    """The seed against the hashes, the header against the first event, then the deal."""
    start = record.events[0].data
    hashed, told = seed_hash(start["seed"]), start["seed_hash"]
    if published is not None and not str(told).lower().startswith(published.strip().lower()):
        return Difference("published", 1, "game_started", "seed_hash", published.strip(), told)
    if hashed != told:
        return Difference("seed_hash", 1, "game_started", "seed_hash", hashed, told)
    for key in HEADER:
        if record.header[key] != start[key]:
            return Difference("header", 0, "header", key, start[key], record.header[key])
    return _check_deal(start)


def _check_deal(start: dict[str, Any]) -> Difference | None:
    """R2: the first event's deal against the one ``new_game`` makes from its seed."""
    try:
        options = Options.from_json(start["options"])
        at = parse_time(start["at"]) if "at" in start else None
        if at is None:
            at = parse_time(start["deadline"]) - options.window("turn")
        orders = start.get("orders")
        board = load_board(start["board"])
        bots = start.get("bots", ())  # A13
        dealt = new_game(
            start["players"], options, board, start["seed"], at, orders=orders, bots=bots
        )[0].data
    except (SetupError, KeyError, TypeError, ValueError) as exc:
        return Difference("deal", 1, "game_started", "", None, repr(exc))
    for key in DEALT:
        if start.get(key) != dealt[key]:
            return Difference("deal", 1, "game_started", key, dealt[key], start.get(key))
    return None


def _check_event(
    state: GameState, seq: int, event: Event, counts: dict[str, int]
) -> Difference | None:
    """One event's random part against the seed, before it is folded into ``state``."""
    d = event.data
    try:
        if event.type == "die_rolled":
            counts["rolls"] += 1
            return _check_roll(state, seq, event)
        if event.type == "pile_reshuffled":
            counts["reshuffles"] += 1
            expected = shuffled(state.seed, state.rng_count, state.discard_pile)
            if d["draw_pile"] != expected:
                found = d["draw_pile"]
                return Difference("reshuffle", seq, event.type, "draw_pile", expected, found)
        elif event.type == "cards_drawn":
            counts["draws"] += 1
            top = state.draw_pile[: len(d["cards"])]
            if d["cards"] != top:
                return Difference("draw", seq, event.type, "cards", top, d["cards"])
    except (KeyError, TypeError) as exc:
        return Difference("replay", seq, event.type, "", None, repr(exc))
    return None


def _check_roll(state: GameState, seq: int, event: Event) -> Difference | None:
    """R1.5: a roll the seed makes at the current counter; a move lands where it counts."""
    d = event.data
    if d["source"] != "rng":
        return Difference("forced", seq, event.type, "source", "rng", d["source"])
    expected = die(state.seed, state.rng_count)
    if d["value"] != expected:
        return Difference("die", seq, event.type, "value", expected, d["value"])
    if d["purpose"] == "move" and state.marker is not None:
        space = move_target(state, expected)
        if d["space"] != space:
            return Difference("space", seq, event.type, "space", space, d["space"])
    return None


def _check_result(record: Record, state: GameState) -> Difference | None:
    """The end (R7.2, R7.3): the revealed seed, the totals and the winners (every seat with
    the most money) agree with the replay."""
    last = record.events[-1]
    n = len(record.events)
    top = max(state.money)
    winners = [seat for seat, money in enumerate(state.money) if money == top]
    if last.type == "game_ended":
        replayed = {"seed": state.seed, "money": state.money, "winners": winners}
        for key, value in replayed.items():
            if last.data.get(key) != value:
                return Difference("end", n, last.type, key, value, last.data.get(key))
    result = record.header.get("result")
    if result is None:
        return None
    replayed = {"money": list(state.money), "winners": winners}
    if not isinstance(result, dict):
        return Difference("result", 0, "header", "result", replayed, result)
    for key, value in replayed.items():
        if result.get(key) != value:
            return Difference("result", 0, "header", key, value, result.get(key))
    return None
