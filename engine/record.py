"""A game's record: the JSON export of a finished game (docs/export.md), written by the server's
export and by ``imtheboss simulate --json``, read by ``imtheboss verify``.

The record holds the whole log with nothing redacted (every hand, the draw pile, the seed), so
the server hands it out only once the game is over (A9 reveals the seed then). Its header
repeats the first event's players, options, board, seed and seed hash for readers; ``verify``
checks that both agree. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from imtheboss.engine.events import Event
from imtheboss.engine.state import GameState, format_time, replay, start_state

RECORD_FORMAT = "imtheboss-game/1"
HEADER = ("players", "options", "board", "seed", "seed_hash")


class RecordError(ValueError):
    """A document that is not a readable game record; the message says what is wrong (in
    English, for logs). ``code`` names the problem and ``params`` its details, for a reader's
    language (``imtheboss.web.say.verify_report.record_error_text``): ``not_object``, ``format``
    (``found``), ``missing`` (``key``), ``header_types``, ``seed_types``, ``no_events``,
    ``entry_seq``, ``entry_at``, ``entry_event``, ``entry_by`` (each ``seq``), ``first_event``,
    ``bad_start``."""

    def __init__(self, message: str, code: str = "", **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


@dataclass(frozen=True)
class Record:
    """A record read back: its header fields (``HEADER`` plus ``result`` and ``game``, as
    written), the events in order (the first is ``game_started``) and each event's time
    (``None`` where the record has none)."""

    header: dict[str, Any]
    events: list[Event]
    times: list[str | None] = field(default_factory=list)


def game_record(
    events: Sequence[Event],
    times: Sequence[datetime] | None = None,
    game: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a game from its whole log (``events[0]`` is ``game_started``): ``times``,
    one aware datetime per event (when the server stored it), and ``game`` (the server's id,
    title and creation time) are optional. ``result`` holds the final money (M, per seat) and
    the winners, or is ``None`` for a game that has not ended. Raises ``ValueError`` for a log
    that does not start with ``game_started``."""
    state = replay(events)
    start = events[0].data
    out: dict[str, Any] = {"format": RECORD_FORMAT}
    if game is not None:
        out["game"] = dict(game)
    out.update({key: start[key] for key in HEADER})
    out["result"] = _result(state)
    out["events"] = [
        _entry(seq, event, times[seq - 1] if times is not None else None)
        for seq, event in enumerate(events, 1)
    ]
    return out


def _result(state: GameState) -> dict[str, Any] | None:
    if state.phase != "game_over":
        return None
    return {"money": list(state.money), "winners": list(state.winners)}


def _entry(seq: int, event: Event, at: datetime | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"seq": seq}
    if at is not None:
        entry["at"] = format_time(at)
    entry["event"] = event.to_json()
    return entry


def read_record(doc: Any) -> Record:
    """A parsed JSON document as a record. Raises ``RecordError`` when it is not one: another
    format, a missing or mistyped header field, events out of order or unreadable, or a first
    event that cannot start a game."""
    if not isinstance(doc, dict):
        raise RecordError("a game record is a JSON object", "not_object")
    if doc.get("format") != RECORD_FORMAT:
        raise RecordError(
            f'"format" is not {RECORD_FORMAT!r}: this is not a game record',
            "format",
            found=str(doc.get("format"))[:80],
        )
    missing = [key for key in (*HEADER, "events") if key not in doc]
    if missing:
        raise RecordError(f"the record has no {missing[0]!r}", "missing", key=missing[0])
    if not isinstance(doc["players"], list) or not isinstance(doc["options"], dict):
        raise RecordError('"players" is a list and "options" an object', "header_types")
    if not isinstance(doc["seed_hash"], str) or not isinstance(doc["seed"], str | int):
        raise RecordError('"seed" is text or a whole number and "seed_hash" text', "seed_types")
    entries = doc["events"]
    if not isinstance(entries, list) or not entries:
        raise RecordError('"events" is a list of at least one event', "no_events")
    events, times = [], []
    for seq, entry in enumerate(entries, 1):
        event, at = _read_entry(seq, entry)
        events.append(event)
        times.append(at)
    if events[0].type != "game_started":
        raise RecordError("the first event is not game_started", "first_event")
    try:
        start_state(events[0])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordError(f"the first event cannot start a game: {exc!r}", "bad_start") from None
    header = {key: doc[key] for key in (*HEADER, "result", "game") if key in doc}
    return Record(header, events, times)


def _read_entry(seq: int, entry: Any) -> tuple[Event, str | None]:
    if not isinstance(entry, dict) or entry.get("seq") != seq:
        raise RecordError(
            f"event {seq}: each entry is an object whose seq counts from 1", "entry_seq", seq=seq
        )
    at = entry.get("at")
    if at is not None and not isinstance(at, str):
        raise RecordError(f"event {seq}: at is ISO 8601 text", "entry_at", seq=seq)
    raw = entry.get("event")
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise RecordError(f"event {seq}: event is an object with a type", "entry_event", seq=seq)
    by = raw.get("by")
    if by is not None and (isinstance(by, bool) or not isinstance(by, int)):
        raise RecordError(f"event {seq}: by is a seat number or null", "entry_by", seq=seq)
    return Event.from_json(raw), at
