"""How the pages say things: times in the viewer's zone, prices, card names,
labels and groups for the legal commands' forms, and each negotiation's timeline.

Everything here reads only what ``imtheboss.engine.views.view`` and
``imtheboss.engine.views.redact_event`` give one seat (A8): no hand but the viewer's own, no draw
pile order, no seed before the end.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel.dates import format_datetime, format_timedelta
from flask import g
from flask_babel import get_locale, lazy_gettext, ngettext
from flask_babel import gettext as _
from imtheboss.engine.cards import TILE_VALUES
from imtheboss.engine.events import Event
from imtheboss.engine.views import redact_event
from imtheboss.web import story  # story and this module use each other's names at call time
from markupsafe import Markup, escape

# -- time ------------------------------------------------------------------------------------


def zone(name: str | None) -> ZoneInfo:
    """The time zone called ``name``; UTC when it is empty or unknown."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def valid_timezone(name: str) -> bool:
    """True when ``name`` is an IANA time zone this server knows (``Europe/Berlin``, ``UTC``)."""
    return name in available_timezones() or name == "UTC"


def when(value: datetime | str) -> datetime:
    """An aware datetime from a datetime or the engine's ISO 8601 text."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def local_time(value: datetime | str | None, tz: str) -> str:
    """``value`` as the viewer reads it: weekday, date and time in their zone ``tz``."""
    if value is None:
        return ""
    return format_datetime(
        when(value), "EEE yyyy-MM-dd HH:mm", tzinfo=zone(tz), locale=get_locale()
    )


def page_time(value: datetime | str | None, tz: str) -> str:
    """``local_time`` followed by the zone as its offset from UTC (``Sun 2026-03-01 17:00
    UTC+8``, ``UTC`` itself, ``UTC-3:30``): what the pages show, so that a time read on a
    phone in another zone is not taken for local."""
    if value is None:
        return ""
    offset = when(value).astimezone(zone(tz)).utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    label = "UTC"
    if minutes:
        hours, rest = divmod(abs(minutes), 60)
        label += ("+" if minutes > 0 else "-") + str(hours) + (f":{rest:02d}" if rest else "")
    return f"{local_time(value, tz)} {label}"


def time_left(value: datetime | str | None, now: datetime) -> str:
    """How long until ``value`` (``in 5 hours``), or how long ago it passed, in the page's
    language."""
    if value is None:
        return ""
    delta: timedelta = when(value) - now
    if abs(delta) < timedelta(seconds=1):
        return _("now")
    return format_timedelta(
        delta, threshold=2, add_direction=True, format="long", locale=get_locale()
    )


def is_past(value: datetime | str | None, now: datetime) -> bool:
    """True when the deadline ``value`` has passed."""
    return value is not None and when(value) <= now


# -- cards, prices, requirements -------------------------------------------------------------


def card_text(name: str | None, players: list[str] | None = None) -> str:
    """A card name for people: ``investor:C`` -> ``investor C``; ``family:W@1`` names its
    owner; ``None`` (R4.5, terms for no card) -> ``no card``."""
    if name is None:
        return _("no card")
    owner = None
    if "@" in name:
        name, _sep, owner_text = name.partition("@")
        if owner_text.isdigit() and players and int(owner_text) < len(players):
            owner = players[int(owner_text)]
    kind, _sep, letter = name.partition(":")
    if kind == "investor":
        text = _("investor %(letter)s", letter=letter)
    elif kind == "family":
        text = _("family card %(letter)s", letter=letter)
    elif kind == "travel":
        text = (
            _("wild travel card") if letter == "*" else _("travel card %(letter)s", letter=letter)
        )
    elif kind == "recruit":
        text = _("recruit card")
    elif kind == "boss":
        text = _("boss card")
    elif kind == "stop":
        text = _("stop card")
    else:
        text = name
    if owner is not None:
        return _("%(name)s's %(card)s", name=owner, card=text)
    return text


def price_text(price: dict[str, int] | None, share_value: int | None = None) -> str:
    """``{"cash": 3}`` -> ``3 M``; ``{"shares": 1}`` -> ``1 share (2 M)`` when the share value
    is known."""
    if not price:
        return ""
    kind, amount = next(iter(price.items()))
    if kind == "cash":
        return _("%(num)d M", num=amount)
    text = ngettext("%(num)d share", "%(num)d shares", amount)
    if share_value:
        text += " " + _("(%(value)d M)", value=amount * share_value)
    return text


def letter_chip(letter: str, only: bool = False) -> Markup:
    """An investor letter as a coloured chip (``only``: the investor card alone may fill it)."""
    extra = " only" if only else ""
    title = _("investor card only") if only else INVESTOR_NAMES.get(letter, letter)
    return Markup('<span class="inv inv-{0}{1}" title="{2}">{0}</span>').format(
        letter, extra, title
    )


def chips(letters: list[str] | tuple[str, ...], only: tuple[str, ...] | list[str] = ()) -> Markup:
    """Several letter chips."""
    return Markup(" ").join(letter_chip(x, x in only) for x in letters)


INVESTOR_NAMES = {  # the Chinese editions' names come from the catalogs
    "C": lazy_gettext("Cashman"),
    "D": lazy_gettext("Dougherty"),
    "G": lazy_gettext("Goldman"),
    "L": lazy_gettext("Liebgeld"),
    "S": lazy_gettext("Sacks"),
    "W": lazy_gettext("Wadsworth"),
}

_MORE_OF = re.compile(r"^(\d+) more of (.+)$")


def missing_text(item: str) -> Markup:
    """One entry of the engine's ``missing`` list (``S`` or ``2 more of G/D/L``) for people."""
    found = _MORE_OF.match(item)
    if found:
        letters = found.group(2).split("/")
        return Markup(escape(_("%(k)s more of", k=found.group(1))) + Markup(" ") + chips(letters))
    return letter_chip(item)


def requirement_html(space: dict[str, Any]) -> Markup:
    """A space's requirements: required letters, then ``2 of G D L`` for each choice group."""
    only = tuple(space.get("investor_only", ()))
    parts = [chips(space["required"], only)] if space["required"] else []
    for choice in space.get("choices", []):
        parts.append(
            Markup('<span class="choice">{0} {1}</span>').format(
                _("%(k)s of", k=choice["k"]), chips(choice["of"], only)
            )
        )
    return Markup(" + ").join(parts)


# Board ring: the 16 spaces clockwise around a 5 x 5 grid (row, column), from the top left.
RING: list[tuple[int, int]] = (
    [(1, c) for c in range(1, 6)]
    + [(r, 5) for r in range(2, 6)]
    + [(5, c) for c in range(4, 0, -1)]
    + [(r, 1) for r in range(4, 1, -1)]
)


# -- commands: labels, groups, forms ---------------------------------------------------------

GROUPS = {
    "turn": lazy_gettext("Your turn"),
    "answer": lazy_gettext("Answer the window"),
    "terms": lazy_gettext("Answer the terms"),
    "close": lazy_gettext("Close or fail"),
    "negotiate": lazy_gettext("Negotiate"),
    "cards": lazy_gettext("Play a card"),
    "talk": lazy_gettext("Talk to the table"),
}
_GROUP_OF = {
    "place_marker": "turn",
    "roll": "turn",
    "open_deal": "turn",
    "draw": "turn",
    "discard": "turn",
    "allow": "answer",
    "stop": "answer",
    "pass": "answer",
    "play_family": "negotiate",
    "offer": "negotiate",
    "propose": "negotiate",
    "accept": "terms",
    "reject": "terms",
    "withdraw": "negotiate",
    "close": "close",
    "fail": "close",
    "travel": "cards",
    "boss": "cards",
    "chat": "talk",
}


@dataclass
class CommandForm:
    """One small form for one legal command: ``cmd`` is posted as hidden JSON (the command
    without ``needs``), ``needs`` says which inputs the player fills in, ``key`` is the
    idempotency key made at render time (A7: a double click sends the same key)."""

    cmd: dict[str, Any]
    needs: list[str]
    label: str
    button: str
    group: str
    count: int = 0
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    style: str = ""
    note: str = ""  # shown under the form (why a move beside it is missing)
    fold: bool = False  # one of the rarely used forms shown folded away (the boss has many)
    price: dict[str, int] | None = None  # a price the form sends as it is (terms made again)


def public_command(cmd: dict[str, Any]) -> dict[str, Any]:
    """The command as the form posts it: without ``needs`` and the discard ``count`` hint."""
    return {k: v for k, v in cmd.items() if k not in ("needs", "count")}


def pending_text(pending: dict[str, Any] | None, players: list[str]) -> str:
    """A pending card (A2) for people: ``Bill's travel card on investor S``."""
    if not pending:
        return _("the pending card")
    who = players[pending["seat"]]
    if pending["kind"] == "boss":
        return _("%(name)s's boss card (“I'm the Boss!”)", name=who)
    if pending["kind"] == "recruit":
        return _("%(name)s's recruit of investor %(letter)s", name=who, letter=pending["target"])
    return _(
        "%(name)s's %(card)s on %(target)s",
        name=who,
        card=card_text(pending["cards"][0] if pending["cards"] else "travel:*"),
        target=card_text(pending["target"], players),
    )


def _terms_for(v: dict[str, Any], provider: int, letter: str | None) -> dict[str, Any] | None:
    deal = v.get("deal") or {}
    for t in deal.get("terms", []):
        if t["provider"] == provider and t["letter"] == letter:
            return t
    return None


def command_label(cmd: dict[str, Any], v: dict[str, Any], players: list[str]) -> tuple[str, str]:
    """``(label, button)`` for a legal command: a sentence saying what it does, and the short
    text of its button (the same as the label for commands without inputs)."""
    do = cmd["do"]
    deal = v.get("deal") or {}
    me = (v.get("you") or {}).get("seat")
    share_value = v.get("share_value")

    def same(text: str) -> tuple[str, str]:
        return text, text

    if do == "place_marker":
        return _("Place the marker on space %(space)s", space=cmd["space"]), _(
            "Space %(space)s", space=cmd["space"]
        )
    if do == "roll":
        return same(_("Roll the die and move the marker"))
    if do == "open_deal":
        return same(_("Open a deal on space %(space)s: “Let's make a deal!”", space=v["marker"]))
    if do == "draw":
        return same(_("Draw cards (your turn ends)"))
    if do == "discard":
        n = cmd.get("count", 1)
        return ngettext("Choose %(num)d card to discard", "Choose %(num)d cards to discard", n), _(
            "Discard"
        )
    if do == "recruit":
        return same(_("Recruit investor %(letter)s (3 recruit cards)", letter=cmd["target"]))
    if do == "allow":
        return same(_("Let it happen: %(what)s", what=pending_text(deal.get("pending"), players)))
    if do == "stop":
        return same(_("Stop %(what)s", what=pending_text(deal.get("pending"), players)))
    if do == "pass":
        return same(_("Pass (let the deal close)"))
    if do == "travel":
        target = cmd["target"]
        if target.startswith("investor:"):
            text = _(
                "Send investor %(letter)s on travel (%(card)s)",
                letter=target.split(":", 1)[1],
                card=card_text(cmd["card"]),
            )
        else:
            text = _(
                "Send %(target)s on travel (%(card)s)",
                target=card_text(target, players),
                card=card_text(cmd["card"]),
            )
        return same(text)
    if do == "boss":
        return same(_("Play a boss card: “I'm the Boss!”"))
    if do == "play_family":
        return same(_("Play %(card)s from your hand", card=card_text(cmd["card"])))
    if do == "offer":
        if "card" not in cmd:  # R4.5 with R4.3: a counter to terms for no card
            return _("Counter the boss's terms for no card: ask for"), _("Counter")
        return _("Offer %(card)s for", card=card_text(cmd["card"])), _("Offer")
    if do == "propose":
        if cmd.get("card"):
            label = _(
                "Propose to %(name)s for %(card)s:",
                name=players[cmd["to"]],
                card=card_text(cmd["card"]),
            )
        else:
            label = _("Propose to pay %(name)s for no card (R4.5):", name=players[cmd["to"]])
        return label, _("Propose")
    if do in ("accept", "reject"):
        other = cmd["with"]
        provider = other if me == deal.get("boss") else me
        terms = _terms_for(v, provider, cmd.get("letter")) or {}
        card = card_text(terms.get("card"))
        if do == "accept":
            price = price_text(cmd.get("price") or terms.get("price"), share_value)
            return same(
                _(
                    "Accept %(name)s's terms: %(card)s for %(price)s",
                    name=players[other],
                    card=card,
                    price=price,
                )
            )
        return same(_("Reject %(name)s's terms for %(card)s", name=players[other], card=card))
    if do == "withdraw":
        return same(_("Withdraw your open offers"))
    if do == "close":
        return same(_("Close the deal (the others get a last call)"))
    if do == "fail":
        return same(_("Declare the deal failed"))
    if do == "chat":
        return _("Say something to the table"), _("Send")
    return same(do)


def command_forms(
    commands: list[dict[str, Any]], v: dict[str, Any], players: list[str]
) -> list[tuple[str, str, list[CommandForm]]]:
    """The legal commands as forms, grouped: ``[(group key, title, forms)]`` in a fixed order
    (your turn, answer the window, answer the terms, close or fail, negotiate, play a card,
    talk). The boss's proposals for family cards and for no card are marked ``fold``."""
    grouped: dict[str, list[CommandForm]] = {key: [] for key in GROUPS}
    for cmd in commands:
        do = cmd["do"]
        group = _GROUP_OF.get(do, "cards")
        if do == "recruit":
            group = "turn" if v.get("phase") == "discard" else "cards"
        label, button = command_label(cmd, v, players)
        style = {
            "stop": "danger",
            "fail": "danger",
            "close": "primary",
            "accept": "primary",
            "open_deal": "primary",
            "allow": "quiet",
            "pass": "quiet",
        }.get(do, "")
        grouped[group].append(
            CommandForm(
                cmd=public_command(cmd),
                needs=list(cmd.get("needs", [])),
                label=label,
                button=button,
                group=group,
                count=int(cmd.get("count", 0)),
                style=style,
                fold=do == "propose" and not str(cmd.get("card")).startswith("investor:"),
            )
        )
    grouped["negotiate"].sort(key=_negotiate_order)  # stable: the engine's order within a kind
    return [(key, str(GROUPS[key]), forms) for key, forms in grouped.items() if forms]


_NEGOTIATE_ORDER = ("play_family", "offer", "propose", "withdraw")


def _negotiate_order(form: CommandForm) -> tuple[int, int]:
    """Cards first, then offers, proposals naming a card before those for no card (R4.5), and
    withdrawing last."""
    do = form.cmd["do"]
    rank = _NEGOTIATE_ORDER.index(do) if do in _NEGOTIATE_ORDER else len(_NEGOTIATE_ORDER)
    return rank, 1 if do == "propose" and not form.cmd.get("card") else 0


# -- events: labels, timelines, negotiations -------------------------------------------------

EVENT_KINDS: dict[str, tuple[str, Any]] = {
    # type: (icon, label)
    "game_started": ("★", lazy_gettext("Game started")),
    "marker_placed": ("$", lazy_gettext("Marker")),
    "die_rolled": ("⚄", lazy_gettext("Die")),
    "pile_reshuffled": ("↻", lazy_gettext("Reshuffle")),
    "cards_drawn": ("+", lazy_gettext("Draw")),
    "discard_step": ("✂", lazy_gettext("Hand limit")),
    "cards_discarded": ("−", lazy_gettext("Discard")),
    "turn_started": ("▶", lazy_gettext("Turn")),
    "deal_opened": ("🤝", lazy_gettext("Deal opened")),
    "family_played": ("♦", lazy_gettext("Family card")),
    "terms_set": ("✎", lazy_gettext("Terms")),
    "terms_removed": ("✗", lazy_gettext("Terms ended")),
    "agreement_made": ("✔", lazy_gettext("Agreement")),
    "card_pending": ("⚑", lazy_gettext("Card played")),
    "window_answered": ("↩", lazy_gettext("Answer")),
    "card_stopped": ("⛔", lazy_gettext("Stopped")),
    "card_took_effect": ("⚡", lazy_gettext("Took effect")),
    "close_called": ("🔔", lazy_gettext("Last call")),
    "negotiation_expired": ("⌛", lazy_gettext("Deadline")),
    "timed_out": ("⌛", lazy_gettext("Timed out")),
    "deal_closed": ("💰", lazy_gettext("Deal closed")),
    "deal_failed": ("✗", lazy_gettext("Deal failed")),
    "game_ended": ("🏁", lazy_gettext("Game over")),
    "chat": ("💬", lazy_gettext("Chat")),
    "deadlines_extended": ("⏸", lazy_gettext("Deadlines moved")),
    "seat_away": ("☾", lazy_gettext("Away")),
    "orders_set": ("⚙", lazy_gettext("Your standing orders")),
    "night_set": ("☾", lazy_gettext("Night")),
    "proxy_scheduled": ("⏲", lazy_gettext("Away")),
    "proxy_started": ("🤖", lazy_gettext("Server plays")),
}

# Events about a seat, not a deal: in the game's history, never in a negotiation's timeline.
SEAT_EVENTS = frozenset({"seat_away", "orders_set", "night_set", "proxy_scheduled"})

FAIL_REASONS = {
    "declared": lazy_gettext("the boss declared it failed"),
    "deadline": lazy_gettext("the negotiation deadline passed with requirements unmet"),
    "turn_deadline": lazy_gettext(
        "opened for the player at their turn deadline (they had to open a deal); failed at once"
    ),
    "requirements_not_met": lazy_gettext("the requirements were not met"),
    "proxy": lazy_gettext(
        "opened by the server for a player away too long, who had to open a deal; failed at once"
    ),
}

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
    orders (A10) are not even a line there."""
    return not (event.type == "orders_set" and event.by != seat)


def event_row(seq: int, at: datetime, event: Event, players: list[str], seat: int | None) -> Row:
    """An event for the page of ``seat``: its line in the reader's language (redacted per seat,
    ``imtheboss.web.story``) plus an icon and a translated label."""
    icon, label = event_kind(event)
    return Row(
        seq=seq,
        at=at,
        type=event.type,
        data=redact_event(event, seat),
        text=story.line(event, players, seat),
        icon=icon,
        label=label,
    )


# Kinds of one event type that have an icon and a label of their own: (type, key, value).
SUBKINDS = {
    ("card_took_effect", "kind", "boss"): ("👑", lazy_gettext("New boss")),  # R5.5
    ("terms_removed", "reason", "lapsed"): ("⌁", lazy_gettext("Lapsed")),  # R4.7, R5.5
}
_SUBKIND_KEY = {kind: key for kind, key, _value in SUBKINDS}


def event_kind(event: Event) -> tuple[str, str]:
    """The icon and the label of ``event`` in the page's language, each resolved once per
    request and kind of event (a page of a thousand events translates a few dozen labels)."""
    key = _SUBKIND_KEY.get(event.type)
    kind = (event.type, key, event.data.get(key)) if key else (event.type, None, None)
    labels = g.setdefault("event_labels", {}).setdefault(str(get_locale()), {})
    found = labels.get(kind)
    if found is None:
        icon, label = SUBKINDS.get(kind) or EVENT_KINDS.get(event.type, ("•", event.type))
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

    def proceeds(self, shares: int, tiles: list[int]) -> int:
        """The proceeds: the closing event's, else shares x the share value of the tile on
        top when the negotiation ran."""
        if self.end is not None and self.end.type == "deal_closed":
            return int(self.end.data["proceeds"])
        index = self.deals_closed_before
        return shares * TILE_VALUES[tiles[index]] if index < len(tiles) else 0


def is_tail(event: Event) -> bool:
    """Whether ``event`` belongs to the negotiation whose closing it follows: the end roll and
    the game's end (R7.2)."""
    return event.type == "game_ended" or (
        event.type == "die_rolled" and event.data.get("purpose") == "end"
    )


def negotiations(
    records: list[tuple[int, datetime, Event]],
    players: list[str],
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
