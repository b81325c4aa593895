"""From reply words to the engine's commands: only what ``legal_commands`` offers the seat now,
and only when the word names one of them alone (two terms to accept, two cards to offer: the
word is unclear, and nothing is guessed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands
from imtheboss.web.replies.terms import TERMS_VERBS, Shown, agreed, standing, still_open
from imtheboss.web.replies.words import MEANS, Reading
from imtheboss.web.say import display
from imtheboss.web.say.commands import COMMANDS, VERB_COMMAND, answering

ORDER = list(VERB_COMMAND)  # the order a mail lists the words in
# A mail about a card's stop window or the last call asks one thing (A2, A3): its reply answers
# that window (or chats), never terms the mail did not show.
WINDOW_ANSWERS = frozenset(COMMANDS[do].reply for do in answering("window"))
ANSWER_VERBS = WINDOW_ANSWERS | {COMMANDS[do].reply for do in answering("any")}
# commands that answer the turn's window, and those that answer the deal's
TURN_COMMANDS = answering("turn")
DEAL_COMMANDS = answering("deal")


@dataclass(frozen=True)
class Choice:
    """What a reading comes to: ``command`` (ready for ``submit.submit``), or ``problem``:
    ``"unclear"`` (not one of the words), ``"not_now"`` (a word, but not a move the seat may
    make now), ``"no_stop_card"`` (``stop`` in a stop window the seat can only allow: it holds
    no stop card), ``"several"`` (the word fits more than one move: the page must say which),
    ``"terms_changed"`` (``accept``/``reject``, but the terms the mail showed no longer stand,
    or it showed none), ``"already_answered"`` (the seat answered that window, or the terms
    shown are agreed already). ``verb``: the verb the reading came to (a word of people's,
    ``yes``, read as the one move it fits: ``accept``)."""

    command: dict[str, Any] | None = None
    problem: str = ""
    verb: str = ""


def answering(state: GameState, window: str) -> bool:
    """Whether ``window`` (a reply address's window id, or ``""``) is the open stop window or
    last call of ``state``."""
    open_now = {state.pending.window.id} if state.pending is not None else set()
    if state.last_call is not None:
        open_now.add(state.last_call.id)
    return bool(window) and window in open_now


def choices(state: GameState, seat: int, window: str = "") -> dict[str, list[dict[str, Any]]]:
    """The legal commands of ``seat`` now, by reply verb (``ORDER``), verbs without a command
    left out; for the mail of a stop window or last call (``window``), only its answers."""
    out: dict[str, list[dict[str, Any]]] = {}
    by_do: dict[str, list[dict[str, Any]]] = {}
    for cmd in legal_commands(state, seat):
        by_do.setdefault(cmd["do"], []).append(cmd)
    for verb in ORDER:
        found = by_do.get(VERB_COMMAND[verb], [])
        if verb == "offer":
            found = [c for c in found if c.get("needs") == ["price"]]
        if found and (verb in ANSWER_VERBS or not answering(state, window)):
            out[verb] = found
    return out


def has_stop_card(state: GameState, seat: int) -> bool:
    """Whether ``seat`` holds a stop card (its own hand: only for that seat's page or mail)."""
    return any(CARD_NAMES[c] == "stop" for c in state.hands[seat])


def verbs_that_work(state: GameState, seat: int, window: str = "") -> list[str]:
    """The verbs a reply of ``seat`` to the mail of ``window`` can use now: those naming
    exactly one command (``chat`` always, while the seat may chat; ``place`` names its space)."""
    return [
        verb
        for verb, cmds in choices(state, seat, window).items()
        if len(cmds) == 1 or verb == "place"
    ]


def command_for(
    reading: Reading | None,
    state: GameState,
    seat: int,
    window: str = "",
    shown: Shown | None = None,
    check_terms: bool = False,
) -> Choice:
    """The command ``reading`` names for ``seat`` in ``state``, in a reply to the mail of
    ``window`` (see ``Choice``); with ``check_terms``, an ``accept`` or ``reject`` only of the
    terms ``shown`` (those the mail showed, ``imtheboss.web.replies.terms``; ``None``: none). A
    word that may mean several verbs (``MEANS``: ``yes``, ``no``, ``deal``) names a move only
    when exactly one of them fits now; two fitting are ``several``."""
    if reading is None:
        return Choice(problem="unclear")
    tried = [
        _one(verb, reading, state, seat, window, shown, check_terms)
        for verb in MEANS.get(reading.verb, (reading.verb,))
    ]
    fits = [c for c in tried if c.command is not None or c.problem == "several"]
    if len(fits) > 1:
        return Choice(problem="several")
    if fits:
        return fits[0]
    return next((c for c in tried if c.problem != "not_now"), tried[0])


def _one(
    verb: str,
    reading: Reading,
    state: GameState,
    seat: int,
    window: str,
    shown: Shown | None,
    check_terms: bool,
) -> Choice:
    """The command ``reading`` names read as ``verb`` (``command_for``'s arguments)."""
    found = choices(state, seat, window).get(verb, [])
    if verb == "place":
        found = [c for c in found if display.space_number(c["space"]) == reading.space]
    if check_terms and verb in TERMS_VERBS:
        problem = _terms_problem(state, seat, found, shown)
        if problem:
            return Choice(problem=problem, verb=verb)
        found = standing(state, seat, found, shown)
    if not found:
        return Choice(problem=_missing(verb, state, seat, window), verb=verb)
    if len(found) > 1:
        return Choice(problem="several", verb=verb)
    command = {k: v for k, v in found[0].items() if k != "needs"}
    if verb == "offer":
        command["price"] = reading.price
    elif verb == "chat":
        command["text"] = reading.text
    return Choice(command=command, verb=verb)


def _terms_problem(
    state: GameState, seat: int, found: list[dict[str, Any]], shown: Shown | None
) -> str:
    """Why an ``accept``/``reject`` (``found``: the seat's now) cannot act on the terms
    ``shown``: ``""`` (they stand), ``already_answered`` (agreed), ``terms_changed``,
    ``not_now`` (the terms shown wait, but not for this word; or none were shown, none wait)."""
    if standing(state, seat, found, shown):
        return ""
    if agreed(state, shown):
        return "already_answered"
    if still_open(state, seat, shown):
        return "not_now"
    return "terms_changed" if found or shown is not None else "not_now"


def _missing(verb: str, state: GameState, seat: int, window: str) -> str:
    """Why ``verb`` names no move of ``seat`` now: ``no_stop_card`` (a stop window it can only
    allow), ``already_answered`` (an answer to the window of its mail, which it answered
    already), ``not_now``."""
    if verb == "stop" and "allow" in choices(state, seat, window):
        return "no_stop_card"
    if verb not in WINDOW_ANSWERS:
        return "not_now"
    windows = [state.pending.window] if state.pending is not None else []
    windows += [state.last_call] if state.last_call is not None else []
    if any(w.id == window and seat in w.answered for w in windows):
        return "already_answered"
    return "not_now"


def command_window(state: GameState, command: dict[str, Any]) -> int | None:
    """The number of the window ``command`` (one ``command_for`` gave) answers in ``state``
    (``w12``: 12): its own ``window``, else the turn's or the deal's; ``None`` for a chat, which
    answers none. A command of no known window counts as answering the newest one opened."""
    if command["do"] == "chat":
        return None
    named = command.get("window")
    if not named:
        if command["do"] in DEAL_COMMANDS and state.deal is not None:
            named = state.deal.window.id
        elif command["do"] in TURN_COMMANDS and state.turn is not None:
            named = state.turn.id
    if isinstance(named, str) and named[1:].isdigit():
        return int(named[1:])
    return state.window_seq - 1
