"""Events as rows of the history and of a negotiation's timeline: icon, label (each event
type's row of ``imtheboss.web.say.events``) and line for one seat, and the run of events split
into negotiations with each window's answers.

Rows are redacted for the viewing seat (``imtheboss.engine.views.redact_event``, A8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from flask import g
from flask_babel import get_locale, lazy_gettext
from flask_babel import gettext as _
from imtheboss.engine import prices
from imtheboss.engine.events import Event
from imtheboss.engine.options import Options
from imtheboss.engine.views import PRIVATE_EVENTS, redact_event
from imtheboss.web.say import messages
from imtheboss.web.say.events import EVENTS, SEAT_EVENTS, SUBKINDS

WAIT_REASONS = {
    "place_marker": lazy_gettext("to place the marker"),
    "turn": lazy_gettext("to take a turn"),
    "discard": lazy_gettext("to discard down to the hand limit"),
    "stop": lazy_gettext("to stop the pending card or let it happen"),
    "last_call": lazy_gettext("to answer the last call"),
    "negotiation": lazy_gettext("to close the deal or declare it failed"),
}

ANSWERS = {
    "allow": lazy_gettext("let it happen"),
    "pass": lazy_gettext("passed"),
    "stop": lazy_gettext("stopped it"),
}


# The events that tell who named terms in a negotiation, and when a new boss starts afresh.
TERMS_HISTORY = ("terms_set", "card_took_effect")


def named_sides(records: list[tuple[int, datetime, Event]]) -> dict[tuple[int, Any], set[str]]:
    """Who (``"boss"``, ``"provider"``) has named terms for each ``(provider, letter)`` under
    the current boss, from the running negotiation's ``TERMS_HISTORY`` events in order. The
    first terms a side names are its offer; terms after the other side's are a counter
    (R4.2, R4.3). A boss card that takes effect starts every thread afresh (R5.5). Terms are
    public (A8): nothing here is hidden from any seat."""
    named: dict[tuple[int, Any], set[str]] = {}
    for _seq, _at, event in records:
        if event.type == "card_took_effect" and event.data.get("kind") == "boss":
            named = {}
        elif event.type == "terms_set":
            key = (event.data["provider"], event.data["letter"])
            named.setdefault(key, set()).add(event.data["by_side"])
    return named


def terms_named_by(terms: dict[str, Any], named: dict[tuple[int, Any], set[str]], name: str) -> str:
    """Who named the open ``terms`` (``view``'s deal terms) and who answers them, in the page's
    language: an offer when the other side has named none for that letter yet, else a counter
    (``named``: ``named_sides``; ``name``: the provider's)."""
    other = "boss" if terms["by"] == "provider" else "provider"
    counter = other in named.get((terms["provider"], terms["letter"]), set())
    if terms["by"] == "provider":
        if counter:
            return _("counter by %(name)s; the boss answers", name=name)
        return _("offer by %(name)s; the boss answers", name=name)
    if counter:
        return _("counter by the boss; %(name)s answers", name=name)
    return _("offer by the boss; %(name)s answers", name=name)


@dataclass
class Row:
    """One event as one seat may see it: ``data`` is ``redact_event``'s output (A8)."""

    seq: int
    at: datetime
    type: str
    data: dict[str, Any]
    text: str
    icon: str
    label: str
    window: dict[str, Any] | None = None


def visible(event: Event, seat: int | None) -> bool:
    """Whether ``event`` shows in the history of ``seat`` at all: another seat's standing
    orders (A10) are not even a line there, and a negotiation's timeout is told once, by the
    ``negotiation_expired`` the engine records right after its ``timed_out``."""
    if event.type == "timed_out" and event.data.get("kind") == "negotiation":
        return False
    return not (event.type in PRIVATE_EVENTS and event.by != seat)


@dataclass(frozen=True)
class NamesBySeq:
    """The seats' names as each event met them: ``current`` (the state's ``players``) after the
    last seat hand-over, the old names before it. ``replaced``: the game's ``seat_replaced``
    events as ``(seq, seat, was)``, oldest first (A13: a hand-over renames the seat from then
    on; the history before it keeps the player who made it)."""

    current: list[str]
    replaced: tuple[tuple[int, int, str], ...] = ()

    def at(self, seq: int) -> list[str]:
        """The names at event ``seq``."""
        names = list(self.current)
        for when, seat, was in reversed(self.replaced):
            if when > seq:
                names[seat] = was
        return names


Names = list[str] | NamesBySeq


def names_at(players: Names, seq: int) -> list[str]:
    """``players`` at event ``seq`` (a plain list names every event alike)."""
    return players.at(seq) if isinstance(players, NamesBySeq) else players


def event_row(seq: int, at: datetime, event: Event, players: Names, seat: int | None) -> Row:
    """An event for the page of ``seat``: its line in the reader's language (redacted per seat,
    ``imtheboss.web.say.messages``) with the names it met (``NamesBySeq``), plus an icon and a
    translated label."""
    icon, label = event_kind(event)
    return Row(
        seq=seq,
        at=at,
        type=event.type,
        data=redact_event(event, seat),
        text=messages.line(event, names_at(players, seq), seat),
        icon=icon,
        label=label,
    )


_SUBKIND_KEY = {kind: key for kind, key, _value in SUBKINDS}


def _face(type_: str) -> tuple[str, Any]:
    """The icon and the label of the events table's row for ``type_`` (a type of no row, or of
    no label: its name)."""
    face = EVENTS.get(type_)
    if face is None:
        return "•", type_
    return face.icon, type_ if face.label is None else face.label


def event_kind(event: Event) -> tuple[str, str]:
    """The icon and the label of ``event`` in the page's language, each resolved once per
    request and kind of event (a page of a thousand events translates a few dozen labels)."""
    key = _SUBKIND_KEY.get(event.type)
    kind = (event.type, key, event.data.get(key)) if key else (event.type, None, None)
    labels = g.setdefault("event_labels", {}).setdefault(str(get_locale()), {})
    found = labels.get(kind)
    if found is None:
        icon, label = SUBKINDS.get(kind) or _face(event.type)
        found = labels[kind] = (icon, str(label))
    return found


@dataclass
class Negotiation:
    """One negotiation: from ``deal_opened`` to ``deal_closed``/``deal_failed`` (plus the end
    roll and the game's end that follow a closing)."""

    number: int
    space: int
    opener: int
    opened_at: datetime
    deals_closed_before: int
    rows: list[Row] = field(default_factory=list)
    end: Row | None = None
    windows: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        """``running``, ``closed`` or ``failed``."""
        if self.end is None:
            return "running"
        return "closed" if self.end.type == "deal_closed" else "failed"

    def proceeds(self, shares: int, tiles: list[int], options: Options) -> int:
        """The proceeds (M): the closing event's, else shares x the share value of the tile on
        top when the negotiation ran, in a game of ``options``."""
        if self.end is not None and self.end.type == "deal_closed":
            return int(self.end.data["proceeds"])
        index = self.deals_closed_before
        return prices.proceeds(shares, prices.share_value(tiles[index:], options))


def is_tail(event: Event) -> bool:
    """Whether ``event`` belongs to the negotiation whose closing it follows: the end roll and
    the game's end (R7.2)."""
    return event.type == "game_ended" or (
        event.type == "die_rolled" and event.data.get("purpose") == "end"
    )


def negotiations(
    records: list[tuple[int, datetime, Event]],
    players: Names,
    seat: int | None,
    first_number: int = 1,
    closed_before: int = 0,
) -> list[Negotiation]:
    """Split a run of the game's events into its negotiations, numbered from ``first_number``
    in order (``closed_before``: deals closed before the run); each row is redacted for ``seat``
    and each stop window or last call carries who answered what."""
    out: list[Negotiation] = []
    current: Negotiation | None = None
    closed = closed_before
    for seq, at, event in records:
        t = event.type
        if not visible(event, seat) or (t in SEAT_EVENTS and current is not None):
            continue
        if t == "deal_opened":
            current = Negotiation(
                number=first_number + len(out),
                space=event.data["space"],
                opener=event.data["boss"],
                opened_at=at,
                deals_closed_before=closed,
            )
            out.append(current)
        elif current is None:
            continue
        elif current.end is not None and not is_tail(event):
            current = None
            continue
        row = event_row(seq, at, event, players, seat)
        current.rows.append(row)
        _track_window(current, row)
        if t in ("deal_closed", "deal_failed"):
            current.end = row
            if t == "deal_closed":
                closed += 1
    return out


def _track_window(neg: Negotiation, row: Row) -> None:
    d = row.data
    windows = neg.windows
    if row.type == "card_pending":
        row.window = windows[d["window"]] = {
            "kind": "stop",
            "deadline": d["deadline"],
            "answers": [],
            "result": None,
            "missed": [],
        }
        for w in windows.values():  # A3: a card played during a last call cancels the closing
            if w["kind"] == "last_call" and w["result"] is None and d.get("cancels_close"):
                w["result"] = "cancelled"
    elif row.type == "close_called":
        row.window = windows[d["window"]] = {
            "kind": "last_call",
            "deadline": d["deadline"],
            "answers": [],
            "result": None,
            "missed": [],
        }
    elif row.type == "window_answered" and d["window"] in windows:
        windows[d["window"]]["answers"].append((d["seat"], d["answer"], row.at))
    elif row.type == "card_stopped" and d["window"] in windows:
        w = windows[d["window"]]
        w["answers"].append((d["seat"], "stop", row.at))
        w["result"] = "stopped"
    elif row.type == "card_took_effect" and d["window"] in windows:
        w = windows[d["window"]]
        w["result"] = w["result"] or "took_effect"
    elif row.type == "timed_out" and d["window"] in windows:
        w = windows[d["window"]]
        w["missed"] = list(d["missed"])
        w["result"] = "timed_out"
    elif row.type in ("deal_closed", "deal_failed"):
        for w in windows.values():
            if w["kind"] == "last_call" and w["result"] in (None, "timed_out"):
                w["result"] = w["result"] or ("closed" if row.type == "deal_closed" else "failed")


WINDOW_RESULTS = {
    "stopped": lazy_gettext("stopped"),
    "took_effect": lazy_gettext("took effect"),
    "timed_out": lazy_gettext("the window timed out"),
    "cancelled": lazy_gettext("cancelled by a card played during the last call"),
    "closed": lazy_gettext("the deal closed"),
    "failed": lazy_gettext("the deal failed"),
    None: lazy_gettext("still open"),
}
