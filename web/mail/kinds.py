"""The kinds of outbox rows, one record each: everything the mail, the inbox, push, replies and
the admin pages know about a kind is declared here once and read from here.

A row's kind is what it tells its seat (``imtheboss.web.mail.notify`` writes the rows, one
writer per event type). A kind says: its subject (the mail's subject, the admin page's list of
mail that did not go out), the sentence of a row whose kind says it all (and that sentence's
variants), its inbox icon, whether it is mailed at once (``urgent``) or batched as news,
whether it asks the seat something (``asks``: the mail gives reply words, a phone is pushed),
whether it asks in a window (``window``: the inbox marks it over once the window no longer waits
for the seat), the answer it asks for (``answers``: ``awaiting``'s ``for``), whether it is news
of a deal (``deal``: the inbox links it to the negotiation's timeline), whether it is the
game's own matter rather than a negotiation's (``game``: the mail's thread), whether it goes
to an address rather than a seat (``to_address``), whether a seat that asked for the mail it
must act on gets it too (``essential``: the start and the end; asking kinds always are), and
whether the inbox links it to its event in the history (``in_history``).

Adding a kind: its record here, its writer in ``notify.EVENT_ROWS``, its strings in the
catalogs (docs/architecture.md, "How to add a mail kind").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask_babel import lazy_gettext as _l


@dataclass(frozen=True)
class MailKind:
    """One kind of outbox row. ``subject``: a lazy string (what the mail is about);
    ``sentence``: the row's words when its body carries no message (``None``: the row's own
    message says it); ``variants``: other sentences by name (``"at"``, ``"no_card"``, ``"past"``,
    a reminder's ``awaiting`` ``for``), each a lazy string with ``%(name)s``-style fields;
    ``icon``: the inbox's mark (``•``: none of its own); ``silence``: what happens if the seat
    does not answer, for an asking kind whose sentence does not say it (``None``: it does);
    ``pushed``: a phone is pushed for it though it asks nothing (``PUSHED``)."""

    name: str
    subject: Any
    icon: str = "•"
    sentence: Any = None
    variants: dict[str, Any] = field(default_factory=dict)
    urgent: bool = False
    asks: bool = False
    window: bool = False
    answers: str = ""
    deal: bool = False
    game: bool = False
    to_address: bool = False
    essential: bool = False
    in_history: bool = True
    silence: Any = None
    pushed: bool = False


_REMINDERS = {
    "place_marker": _l(
        "Reminder: place the marker to start the game by %(time)s. If you do not, the server"
        " places it for you."
    ),
    "turn": _l(
        "Reminder: it is still your turn, until %(time)s. If you do not act, the server rolls"
        " and draws for you."
    ),
    "discard": _l(
        "Reminder: discard down to your hand limit by %(time)s. If you do not, the server"
        " discards your newest cards."
    ),
    "stop": _l(
        "Reminder: a card waits for your answer until %(time)s: stop it or let it happen. If you"
        " do not answer, you let it happen."
    ),
    "last_call": _l(
        "Reminder: last call until %(time)s: pass or play a card. If you do not answer, you pass."
    ),
    "negotiation": _l(
        "Reminder: the negotiation of your deal ends %(time)s: close the deal or let it fail."
        " If you do neither, the deal closes if it has what it needs, else it fails."
    ),
}

_ALL = (
    MailKind(
        "invited",
        _l("you are invited"),
        icon="✉",
        sentence=_l("You are invited to play I'm the Boss! as %(name)s"),
        urgent=True,
        game=True,
        essential=True,
        in_history=False,
    ),
    MailKind(
        "your_turn",
        _l("your turn"),
        icon="▶",
        sentence=_l("It is your turn"),
        variants={"at": _l("It is your turn: the marker stands on space %(space)s.")},
        silence=_l("If you do not act in time, the server rolls and draws for you."),
        urgent=True,
        asks=True,
        window=True,
        answers="turn",
        game=True,
    ),
    MailKind(
        "place_marker",
        _l("place the marker to start"),
        icon="$",
        sentence=_l("Place the marker to start the game"),
        silence=_l("If you do not place it in time, the server places it for you."),
        urgent=True,
        asks=True,
        window=True,
        answers="place_marker",
        game=True,
    ),
    MailKind(
        "discard",
        _l("discard down to your hand limit"),
        icon="✂",
        sentence=_l("Discard down to your hand limit"),
        silence=_l("If you do not discard in time, the server discards your newest cards."),
        urgent=True,
        asks=True,
        window=True,
        answers="discard",
        game=True,
    ),
    MailKind(
        "stop",
        _l("a card waits for your answer"),
        icon="⚑",
        sentence=_l(
            "A card waits for your answer: stop it or let it happen. If you do not answer in"
            " time, you let it happen."
        ),
        variants={
            "no_card": _l(
                "A card waits for your answer. You have no stop card, so you can only let it"
                " happen; if you do not answer in time, you let it happen too."
            )
        },
        urgent=True,
        asks=True,
        window=True,
        answers="stop",
    ),
    MailKind(
        "last_call",
        _l("last call before the deal closes"),
        icon="🔔",
        sentence=_l(
            "Last call: pass or play a card before the deal closes. If you do not answer in"
            " time, you pass."
        ),
        urgent=True,
        asks=True,
        window=True,
        answers="last_call",
    ),
    MailKind(
        "offer",
        _l("terms for you"),
        icon="✎",
        asks=True,
        deal=True,
        silence=_l(
            "If you do not answer, the terms stay open until they change or the negotiation ends."
        ),
    ),
    MailKind(
        "reminder",
        _l("reminder: your answer is due"),
        sentence=_l("Reminder: your answer is due soon"),
        variants=_REMINDERS,
        urgent=True,
        asks=True,
        window=True,
    ),
    MailKind("deal_opened", _l("a deal was opened"), icon="🤝", deal=True),
    MailKind("agreement", _l("an agreement was made"), icon="✔", deal=True),
    MailKind("boss_changed", _l("the boss changed"), icon="👑", deal=True),
    MailKind("deal_closed", _l("a deal closed"), icon="💰", deal=True),
    MailKind("deal_failed", _l("a deal failed"), icon="✗", deal=True),
    MailKind(
        "game_over",
        _l("the game is over"),
        icon="🏁",
        game=True,
        essential=True,
        in_history=False,
    ),
    MailKind("played_for", _l("the server played for you"), icon="🤖"),
    MailKind(
        "marked_away",
        _l("you are marked away"),
        icon="☾",
        sentence=_l(
            "You missed two deadlines in a row, so you are marked away: windows no longer wait"
            " for you. Any move of yours brings you back."
        ),
    ),
    MailKind("reply_answer", _l("the answer to a reply by mail"), urgent=True, to_address=True),
    MailKind(
        "you_are_next",
        _l("you are next"),
        pushed=True,
        sentence=_l(
            "You are next, after %(after)s. To plan your turn while you wait, pick a turn"
            " pre-move on the game page in one tap."
        ),
        variants={
            "past": _l(
                "You were next after %(after)s, but that turn is over now: open the game to see"
                " where the play stands."
            )
        },
    ),
)

KINDS: dict[str, MailKind] = {kind.name: kind for kind in _ALL}
"""Every kind of outbox row a seat's inbox or mail shows, by name."""

ADDRESSED = ("organiser", "email_changed", "seat_passed", "sign_in")
"""Mail to an address, not a seat (no inbox shows it), each with its own templates under
``templates/email/``."""

ANSWER_KINDS = {kind.answers: kind.name for kind in _ALL if kind.answers}
"""The kind of the row that asks for each answer (``awaiting``'s ``for``): ``{"turn":
"your_turn", …}``; a negotiation's answers have none (new terms are ``offer`` rows)."""

ASKING = frozenset(kind.name for kind in _ALL if kind.asks)
"""Kinds that ask the seat something: their mail gives reply words, a phone is pushed."""

PUSHED = ASKING | frozenset(kind.name for kind in _ALL if kind.pushed)
"""Kinds pushed to a seat's phones at once: those that ask, and "you are next" (the seat can
plan its turn while it waits)."""


def subject(kind: str) -> str:
    """What a mail of one row of ``kind`` is about, in the current locale (an unknown kind:
    the kind's name)."""
    found = KINDS.get(kind)
    return str(found.subject) if found else kind


def is_game_matter(kind: str) -> bool:
    """Whether a row of ``kind`` belongs to the game's mail thread even when written with the
    event that ended a negotiation."""
    found = KINDS.get(kind)
    return bool(found and found.game)


IN_WINDOW = frozenset(kind.name for kind in _ALL if kind.window)
"""Kinds that ask in a window (the row's ``window``): over once the window no longer waits."""

BATCHED_ANSWERS = frozenset(kind.name for kind in _ALL if kind.asks and not kind.urgent)
"""Kinds that ask yet are batched like news (never held for a daily digest, mailed to
``must_act`` seats too): new terms."""

ESSENTIAL = frozenset(kind.name for kind in _ALL if kind.essential)
"""Kinds mailed to a seat that wants only what it must act on, though they ask nothing."""

NOT_IN_HISTORY = frozenset(kind.name for kind in _ALL if not kind.in_history)
"""Kinds the inbox does not link to their event in the history (the game's start and end)."""

DEAL_NEWS = frozenset(kind.name for kind in _ALL if kind.deal)
"""Kinds that are news of a deal: the inbox links them into the negotiation's timeline."""
