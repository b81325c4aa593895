"""The outbox: which seat hears about what written in the same transaction as
the events. Rows carry only what their seat may see (A8).

A turn's row, a deal opened's and new terms' carry what deciding needs: the space, what a deal
there needs and pays, the letters the reader could bring and the negotiation's end
(``space_facts``); a card's stop window, the reader's agreements that lapse if it happens.

Each type of event has its writer (``EVENT_ROWS``, the engine's ``HANDLERS`` pattern); answers
a window now asks for, the seat after the one whose turn began (``you_are_next``), the seats the
server acted for (``played_for``, ``marked_away``) and invitations are written for every
command. What each kind is (urgent or batched, asking or news, its subject and sentence) is
declared once in ``imtheboss.web.mail.kinds``; ``reminder`` rows are written by the worker.

Mail to an address rather than a seat (``to_email``, ``seat_index`` -1; no inbox shows it):
``organiser`` (confirm the game; the admin link), ``email_changed`` (to a seat's old
address) and ``seat_passed`` (to the address of a player whose seat the organiser passed to
someone else).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from imtheboss.engine import prices
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.history import message
from imtheboss.engine.state import GameState, apply_in_place
from imtheboss.engine.views import awaiting
from imtheboss.web.games.server_moves import newly_away, served_seats
from imtheboss.web.mail.kinds import ANSWER_KINDS, KINDS
from imtheboss.web.replies.terms import Shown


def said_message(event: Event, seat: int) -> dict[str, Any]:
    """What ``event`` says to ``seat`` (A8), as a message the mail and the inbox render in the
    seat's language when they show it (``imtheboss.web.say.messages.row_text``)."""
    return message(event, seat).to_json()


def _row(
    game_id: str,
    seat: int,
    kind: str,
    key: str,
    text: str | dict[str, Any],
    seq: int,
    at: datetime,
    urgent: bool | None = None,
    **body: Any,
) -> dict[str, Any]:
    """A row; ``text`` is a message (``said_message``), kept in the body, or, for rows whose kind
    says it all, a short English note for the operator's eyes only (players read the kind's
    sentence, ``imtheboss.web.mail.kinds``). ``urgent`` (mailed at once) is the kind's unless
    given; mail to an address always is."""
    if urgent is None:
        urgent = kind not in KINDS or KINDS[kind].urgent
    if isinstance(text, dict):
        body = {**body, "message": text}
        text = text["id"]
    return {
        "game_id": game_id,
        "seat_index": seat,
        "kind": kind,
        "body": body,
        "text": text,
        "dedupe_key": f"{game_id}:{seat}:{kind}:{key}"[:160],
        "urgent": urgent,
        "seq": seq,
        "created_at": at,
    }


def invitation(
    game_id: str, seat: int, name: str, link: str, key: str, at: datetime, seq: int
) -> dict:
    """The invitation row for ``seat``: its body holds the seat's secret link (mailed to that
    seat only)."""
    text = f"You are invited to play I'm the Boss! as {name}"
    return _row(game_id, seat, "invited", key, text, seq, at, link=link)


REMIND_AT = 0.8  # of a window: when its reminder is due


def remind_time(opened: datetime, due: datetime) -> datetime:
    """When the reminder of a window opened at ``opened`` and due at ``due`` is due (aware
    UTC): ``REMIND_AT`` of the way."""
    return opened + (due - opened) * REMIND_AT


def reminder(
    game_id: str, seat: int, window: str, until: datetime, at: datetime, seq: int, asked: str = ""
) -> dict:
    """The reminder row for ``seat``, which still owes an answer in ``window`` (due ``until``,
    aware UTC; ``asked``: what the window asks, ``awaiting``'s ``for``, which the mail names
    with what happens on silence): urgent, written by the worker at 80% of the window."""
    text = "Reminder: your answer is due soon"
    body = {"window": window, "until": until.isoformat(), **({"for": asked} if asked else {})}
    return _row(game_id, seat, "reminder", window, text, seq, at, **body)


def organiser_confirmation(
    game_id: str,
    to: str,
    admin_link: str,
    players: int,
    locale: str,
    at: datetime,
    zone: str = "",
    named: bool = False,
) -> dict[str, Any]:
    """The mail to the organiser of a game made through the pages or the API: the link to
    confirm their address (signed when the mail is composed) and the admin link (``link``,
    dropped from the row once mailed), its times in ``zone`` (a known IANA name; ``""``: UTC).
    Unless ``named`` (the creator's browser is signed in as that address: the mail may name
    the game by its title), the address is nobody's confirmed one yet, so the row holds and
    the mail shows nothing the creator wrote: only the count of players and the zone (a
    name from the server's list, no free text)."""
    text = "Confirm your game to send its invitations"
    body = {"link": admin_link, "players": players, "locale": locale}
    if zone:
        body["zone"] = zone
    if named:
        body["named"] = True
    row = _row(game_id, -1, "organiser", "confirm", text, 0, at, **body)
    return {**row, "to_email": to}


def email_changed(
    game_id: str, seat: int, name: str, old: str, locale: str, at: datetime, seq: int
) -> dict[str, Any]:
    """The notice to a seat's old address ``old`` that the organiser moved the seat ``name``
    to another address (the new one is not told)."""
    key = f"{seat}:{at.isoformat()}"
    text = f"The email address of your seat {name} was changed"
    body = {"for_seat": seat, "name": name, "locale": locale}
    row = _row(game_id, -1, "email_changed", key, text, seq, at, **body)
    return {**row, "to_email": old}


def seat_passed(
    game_id: str, seat: int, name: str, old: str, locale: str, at: datetime, seq: int
) -> dict[str, Any]:
    """The notice to the address ``old`` of the player ``name`` that the organiser passed
    their seat to another player (A13): their link died (the new player is not named)."""
    key = f"{seat}:{at.isoformat()}"
    text = f"Your seat {name} was passed to another player"
    body = {"for_seat": seat, "name": name, "locale": locale}
    row = _row(game_id, -1, "seat_passed", key, text, seq, at, **body)
    return {**row, "to_email": old}


ASKED_BY = {"stop": "card_pending", "last_call": "close_called"}


def space_facts(state: GameState, seat: int, space: int) -> dict[str, Any]:
    """What a seat needs to decide about a deal on ``space`` (R1.4, R3.3): ``needs`` (the
    space's ``required``, ``choices`` and ``investor_only`` as in the board's JSON),
    ``shares``, ``share_value`` (M, the top tile's, R1.2) and ``fits``: the letters ``seat``
    could bring, by its own investor cards and the family cards in its own hand (A8: a row of
    that seat only)."""
    board = state.board.spaces[space].to_json()
    letters = set(state.board.spaces[space].letters)
    own = {x for x in state.seat_investors(seat) if x in letters}
    family = {
        name.split(":")[1]
        for name in (CARD_NAMES[c] for c in state.hands[seat])
        if name.startswith("family:") and name.split(":")[1] not in board["investor_only"]
    }
    return {
        "needs": {k: board[k] for k in ("required", "choices", "investor_only")},
        "shares": board["shares"],
        "share_value": state.share_value,
        "fits": sorted(own | (family & letters)),
    }


def _asked(kind: str, seat: int, events: list[Event], state: GameState) -> dict[str, Any]:
    """What a mail that asks ``seat`` for an answer also says: the card waiting for answers
    (who played which card on whose card), or who called the last call, as a message; for a
    turn, where the marker stands and what a deal there needs and pays (``space_facts``)."""
    if kind == "your_turn" and state.marker is not None:
        return {"space": state.marker, "facts": space_facts(state, seat, state.marker)}
    if kind == "place_marker":
        return {"best": best_spaces(state, seat)}
    asked = next((e for e in reversed(events) if e.type == ASKED_BY.get(kind)), None)
    extra = {"asked": said_message(asked, seat)} if asked is not None else {}
    if kind == "last_call" and state.deal is not None:
        space = state.deal.space
        facts = space_facts(state, seat, space) | (
            {"boss": True} if seat == state.deal.boss else {}
        )
        extra |= {"space": space, "facts": facts}
        extra["deal"] = deal_facts(state)
    lapses = lapses_if_it_happens(state, seat) if kind == "stop" else []
    return {**extra, "lapses": lapses} if lapses else extra


BEST_SPACES = 3  # the spaces a place-the-marker mail describes


def best_spaces(state: GameState, seat: int) -> list[dict[str, Any]]:
    """The ``BEST_SPACES`` deal spaces ``seat`` could fill best (R1.4): most of the letters a
    deal there needs brought by its own cards (``space_facts``' ``fits``), then the highest
    proceeds; each ``{"space", "facts"}`` (``space_facts``), best first. Reads only the seat's
    own cards (A8: a row of that seat only)."""
    found = []
    for space in range(len(state.board.spaces)):
        facts = space_facts(state, seat, space)
        needs = facts["needs"]
        wanted = len(needs["required"]) + sum(c["k"] for c in needs.get("choices") or [])
        short = max(wanted - len(facts["fits"]), 0)
        found.append((short, -facts["shares"], space, facts))
    found.sort(key=lambda f: f[:3])
    return [{"space": space, "facts": facts} for _s, _p, space, facts in found[:BEST_SPACES]]


def deal_facts(state: GameState) -> dict[str, Any]:
    """The running deal as its table sees it at a last call (R4, R6.2; all public, A8):
    ``boss`` (seat), ``family`` (``[owner seat, card name]`` on the table), ``agreements``
    (``[provider seat, card name or None, price JSON, value M]``), ``own`` (the letters the
    boss brings by its own investor cards), ``proceeds`` (M) and
    ``boss_keeps`` (M: proceeds less the agreements' values). ``{}`` when no deal runs."""
    deal = state.deal
    if deal is None:
        return {}
    space = state.board.spaces[deal.space]
    value = state.share_value
    proceeds = prices.proceeds(space.shares, value)
    agreements = [
        [
            t.provider,
            t.card,
            {t.price[0]: t.price[1]},
            prices.price_value(*t.price, state.share_value),
        ]
        for t in deal.agreements.values()
    ]
    return {
        "boss": deal.boss,
        "own": [x for x in state.seat_investors(deal.boss) if x in space.letters],
        "family": [[owner, CARD_NAMES[card]] for card, owner in deal.table_family],
        "agreements": agreements,
        "proceeds": proceeds,
        "boss_keeps": proceeds - sum(a[3] for a in agreements),
    }


def lapses_if_it_happens(state: GameState, seat: int) -> list[str]:
    """The letters of ``seat``'s agreements that lapse if the pending card takes effect (R4.7,
    R5.1, R5.7): found by letting every seat the stop window waits for allow it, on a copy.
    ``[]`` when nothing of the seat's lapses (or no card waits)."""
    if state.pending is None or state.deal is None:
        return []
    mine = {letter for s, letter in state.deal.agreements if s == seat and letter}
    if not mine:
        return []
    trial = state.clone()
    window = trial.pending.window
    for _round in range(trial.n):
        waiting = [a["seat"] for a in awaiting(trial) if a["for"] == "stop"]
        if trial.pending is None or trial.pending.window is not window or not waiting:
            break
        at = window.deadline - timedelta(seconds=1)
        try:
            made = decide(trial, Command("allow", waiting[0], {"window": window.id}, at))
        except RuleError:
            return []
        for event in made:
            apply_in_place(trial, event)
    kept = {letter for s, letter in trial.deal.agreements if s == seat} if trial.deal else set()
    return sorted(mine - kept)


def _own(event: Event, seat: int) -> bool:
    """``event`` is ``seat``'s own act (not one its standing orders made): no mail about it."""
    return event.by == seat and not event.data.get("order")


def _deal(now: GameState, seat: int) -> dict[str, Any]:
    """A row's ``space``, ``facts`` (``space_facts`` and the negotiation's end) and
    ``negotiation`` (the deal's window id: the mail drops the facts once it ended) for the
    running deal, read by ``seat``; ``{}`` when none runs."""
    if now.deal is None:
        return {}
    facts = space_facts(now, seat, now.deal.space) | (
        {"boss": True} if seat == now.deal.boss else {}
    )
    return {
        "space": now.deal.space,
        "facts": {**facts, "until": now.deal.window.deadline.isoformat()},
        "negotiation": now.deal.window.id,
    }


def _opened(
    game_id: str, event: Event, now: GameState, seq: int, at: datetime
) -> list[dict[str, Any]]:
    """The ``deal_opened`` rows of every seat but the boss: news (a burst of deals, orders at
    work, makes one mail), each with the space's facts for its seat and the negotiation's end
    (``space_facts``)."""
    return [
        _row(
            game_id,
            seat,
            "deal_opened",
            str(seq),
            said_message(event, seat),
            seq,
            at,
            **_deal(now, seat),
        )
        for seat in range(now.n)
        if seat != event.data["boss"]
    ]


def _served(
    game_id: str,
    event: Event,
    away_before: list[bool],
    away_after: list[bool],
    seq: int,
    at: datetime,
) -> list[dict[str, Any]]:
    """The rows telling each seat the server acted for in ``event`` (``played_for``) and each
    seat ``event`` marked away (``marked_away``, A6): news, batched into one mail; but the
    start of the away proxy (A11) is mailed at once, whatever the seat's mail setting (but
    ``off``): one look hands the seat back, so a seat that looks at each of its mails is never
    played for two decisions in a row."""
    urgent = event.type == "proxy_started"
    rows = [
        _row(game_id, s, "played_for", str(seq), said_message(event, s), seq, at, urgent=urgent)
        for s in served_seats(event)
    ]
    if event.type == "timed_out":
        rows += [
            _row(game_id, s, "marked_away", str(seq), "marked away", seq, at)
            for s in newly_away(away_before, away_after)
        ]
    return rows


def _next_rows(
    game_id: str, before: GameState | None, state: GameState, seq: int, at: datetime
) -> list[dict[str, Any]]:
    """``you_are_next`` (news) for the seat after the one whose turn just began, unless that
    seat has a turn pre-move already (A10): it can plan its turn while it waits. Reads the
    seat's own orders only, for its own row."""
    old = {a["window"] for a in awaiting(before) if a["for"] == "turn"} if before else set()
    rows = []
    for a in awaiting(state):
        if a["for"] != "turn" or a["window"] in old:
            continue
        nxt = state.left_of(a["seat"])
        if nxt != a["seat"] and state.orders[nxt].turn is None:
            body = {"after": a["seat"], "turn": a["window"]}
            rows.append(
                _row(
                    game_id,
                    nxt,
                    "you_are_next",
                    a["window"],
                    "you are next",
                    seq,
                    at,
                    **body,
                )
            )
    return rows


def notifications_for(
    game_id: str,
    before: GameState | None,
    events: list[Event],
    state: GameState,
    first_seq: int,
    at: datetime,
    links: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Outbox rows (``Notification`` column values) for ``events`` appended at ``first_seq``;
    ``before`` is ``None`` when the game was just created: then each seat is invited with its
    secret link from ``links`` (the row is that seat's own)."""
    last_seq = first_seq + len(events) - 1
    rows = _invited_rows(game_id, state, last_seq, at, links) if before is None else []
    rows += _answer_rows(game_id, before, events, state, last_seq, at)
    rows += _next_rows(game_id, before, state, last_seq, at)
    # each event is read in the state it made, not the state after the last one (orders may
    # play a whole deal in one command); one event's state is the final one
    running = before.clone() if before is not None and len(events) > 1 else None
    away = list(before.away) if before is not None else [False] * state.n
    for offset, event in enumerate(events):
        seq = first_seq + offset
        if running is not None:
            apply_in_place(running, event)
        now = running or state
        rows += _served(game_id, event, away, now.away, seq, at)
        away = list(now.away)
        writer = EVENT_ROWS.get(event.type)
        if writer is not None:
            rows += writer(game_id, event, now, seq, at)
    return to_people(rows, state)


def to_people(rows: list[dict[str, Any]], state: GameState) -> list[dict[str, Any]]:
    """``rows`` without those of bot seats (A13: a bot gets no invitation, mail nor push; it
    reads the game, not its inbox); rows to an address (``seat_index`` -1) stay."""
    bots = state.bots
    return [r for r in rows if r["seat_index"] < 0 or not bots[r["seat_index"]]]


def _invited_rows(
    game_id: str, state: GameState, last_seq: int, at: datetime, links: list[str] | None
) -> list[dict[str, Any]]:
    """``invited`` (urgent) for every seat of a new game, with its secret link from ``links``."""
    players = state.players
    return [
        _row(
            game_id,
            seat,
            "invited",
            "0",
            f"You are invited to play I'm the Boss! as {players[seat]}",
            last_seq,
            at,
            **({"link": links[seat]} if links else {}),
        )
        for seat in range(state.n)
    ]


def _answer_rows(
    game_id: str,
    before: GameState | None,
    events: list[Event],
    state: GameState,
    last_seq: int,
    at: datetime,
) -> list[dict[str, Any]]:
    """The urgent rows for answers needed now that were not needed ``before`` (a negotiation's
    answers excepted): kind ``ANSWER_KINDS[for]``, with the window and its deadline."""
    rows = []
    old = {(a["seat"], a["window"]) for a in awaiting(before)} if before is not None else set()
    for a in awaiting(state):
        if a["for"] == "negotiation" or (a["seat"], a["window"]) in old:
            continue
        kind = ANSWER_KINDS[a["for"]]
        extra = _asked(kind, a["seat"], events, state)
        rows.append(
            _row(
                game_id,
                a["seat"],
                kind,
                a["window"],
                kind.replace("_", " "),  # the kind says it (imtheboss.web.mail.kinds)
                last_seq,
                at,
                window=a["window"],
                until=a["until"].isoformat(),
                **extra,
            )
        )
    return rows


def _offer_rows(
    game_id: str, event: Event, now: GameState, seq: int, at: datetime
) -> list[dict[str, Any]]:
    """``offer`` (news, asking an answer) to the side the new terms are for, unless it set them."""
    d = event.data
    boss = now.deal.boss if now.deal else None
    to = boss if d["by_side"] == "provider" else d["provider"]
    if to is None or to == event.by:
        return []
    text = said_message(event, to)
    price = next(iter(d["price"].items()))
    mark = Shown(d["provider"], d["letter"], price).mark()  # what its words answer
    body = {**_deal(now, to), "terms": mark}
    return [_row(game_id, to, "offer", str(seq), text, seq, at, **body)]


def _said_rows(
    game_id: str, event: Event, kind: str, seats: Iterable[int], seq: int, at: datetime
) -> list[dict[str, Any]]:
    """News of ``kind`` to each of ``seats``: what ``event`` says to that seat."""
    return [
        _row(game_id, seat, kind, str(seq), said_message(event, seat), seq, at) for seat in seats
    ]


def _agreement_rows(
    game_id: str, event: Event, now: GameState, seq: int, at: datetime
) -> list[dict[str, Any]]:
    """``agreement`` to the boss and the provider, unless the seat made it itself."""
    boss = now.deal.boss if now.deal else None
    seats = [s for s in sorted({event.data["provider"], boss} - {None}) if not _own(event, s)]
    return _said_rows(game_id, event, "agreement", seats, seq, at)


def _boss_rows(
    game_id: str, event: Event, now: GameState, seq: int, at: datetime
) -> list[dict[str, Any]]:
    """``boss_changed`` to every seat but the new boss, when a boss card took effect."""
    if event.data["kind"] != "boss":
        return []
    seats = [s for s in range(now.n) if s != event.data["seat"]]
    return _said_rows(game_id, event, "boss_changed", seats, seq, at)


def _ending_rows(
    game_id: str, event: Event, now: GameState, seq: int, at: datetime
) -> list[dict[str, Any]]:
    """``deal_closed``, ``deal_failed`` (not to the boss who declared it) or ``game_over`` to
    every seat."""
    kind = "game_over" if event.type == "game_ended" else event.type
    seats = [s for s in range(now.n) if not (event.type == "deal_failed" and _own(event, s))]
    return _said_rows(game_id, event, kind, seats, seq, at)


# The rows each type of event writes (the engine's ``HANDLERS`` pattern): ``(game_id, event,
# the state it made, seq, at) -> rows``.
EVENT_ROWS: dict[str, Callable[[str, Event, GameState, int, datetime], list[dict[str, Any]]]] = {
    "deal_opened": _opened,
    "terms_set": _offer_rows,
    "agreement_made": _agreement_rows,
    "card_took_effect": _boss_rows,
    "deal_closed": _ending_rows,
    "deal_failed": _ending_rows,
    "game_ended": _ending_rows,
}
