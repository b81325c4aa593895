"""What a mail that asks something adds so that answering it is the move: the ``Reply-To``
(the decision's signed address, ``imtheboss.web.replies.address``) and the words that work for
the decision now, in the seat's language (``imtheboss.web.replies.words``), with the terms its
``accept``/``reject`` answer, which the address carries (``imtheboss.web.replies.terms``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from flask import current_app
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting
from imtheboss.web.games.load import load_state
from imtheboss.web.mail.kinds import ASKING
from imtheboss.web.mail.notify import best_spaces
from imtheboss.web.models import Game, Seat
from imtheboss.web.replies.address import reply_address, turn_step
from imtheboss.web.replies.choices import ORDER, choices, verbs_that_work
from imtheboss.web.replies.moves import move_text
from imtheboss.web.replies.terms import (
    TERMS_VERBS,
    Shown,
    by_letter,
    read_mark,
    said_shown,
    shown_by,
    standing,
    still_open,
)
from imtheboss.web.replies.words import LETTER_VERBS, explained, lettered, meaning
from imtheboss.web.say import display
from imtheboss.web.say.messages import card_words


@dataclass(frozen=True)
class ReplyWay:
    """``address``: the ``Reply-To``; ``words``: the words to show, in the seat's language;
    ``until``: when the first of the seat's open decisions ends (aware UTC), if one does;
    ``terms``: the terms its ``accept``/``reject`` answer, in words (``""``: none); ``offer``:
    the card an ``offer`` word puts forward, in words (``""``: no offer word, or no card);
    ``letters``: when several sets of terms wait for the seat, each letter's terms in words
    (``[("C", "Ann's terms: 4 M for Cashman (C)")]``), which ``accept C``/``reject C`` answer;
    ``explained``: each of ``words`` with what it does (``words.explained``)."""

    address: str
    words: list[str] = field(default_factory=list)
    until: datetime | None = None
    terms: str = ""
    offer: str = ""
    letters: list[tuple[str, str]] = field(default_factory=list)
    explained: list[tuple[str, Any]] = field(default_factory=list)


def asks(rows: list[Any]) -> bool:
    """Whether a mail of ``rows`` (outbox rows) asks its seat something."""
    return any(row.kind in ASKING for row in rows)


def reply_way(game: Game, seat: Seat, rows: list[Any], lang: str) -> ReplyWay | None:
    """The reply way of a mail about ``rows`` to ``seat`` (``None``: replies are off, the mail
    asks nothing, or no word works for the seat now). The window is the one row's window; a
    mail about several (a digest) answers no window newer than those open now (A7)."""
    if not current_app.config.get("MAIL_REPLIES") or not asks(rows):
        return None
    window = rows[0].body.get("window", "") if len(rows) == 1 else ""
    mark = rows[0].body.get("terms", "") if len(rows) == 1 and rows[0].kind == "offer" else ""
    return _way(game, seat, lang, load_state(game), window, read_mark(mark))


def seat_address(game: Game, seat: Seat) -> str | None:
    """The ``Reply-To`` of a mail to ``seat`` that asks nothing (an invitation, news): the
    seat's signed address naming no window but the newest opened now (and the turn's step), as
    a digest's does, so a reply is read and answered, never bounced: a chat is taken, a word
    acts only on a decision open when the mail was made (A7); a game not started yet has no
    window, so its address takes only a chat. ``None`` when replies are off."""
    if not current_app.config.get("MAIL_REPLIES"):
        return None
    if game.status == "unconfirmed":
        return reply_address(game.id, seat)
    state = load_state(game)
    return reply_address(game.id, seat, newest=state.window_seq - 1, step=turn_step(state))


def way_now(game: Game, seat: Seat, lang: str) -> ReplyWay | None:
    """The reply way for what ``seat`` may do in ``game`` now (a confirmation's next step):
    its address names the seat's next decision's window when one alone waits for the seat,
    else the newest window open now, so a reply to it never answers a later one (A7); ``None``
    when only chat is left."""
    state = load_state(game)
    waiting = {a["window"] for a in awaiting(state) if a["seat"] == seat.seat_index}
    return _way(game, seat, lang, state, waiting.pop() if len(waiting) == 1 else "")


def _way(
    game: Game,
    seat: Seat,
    lang: str,
    state: GameState,
    window: str,
    mailed: Shown | None = None,
) -> ReplyWay | None:
    """The reply way of ``seat`` for ``window`` (``""``: none, so the address carries the
    newest window opened, ``state.window_seq - 1``); ``mailed``: the terms the mail is about
    (new terms for the seat, A7), which its ``accept``/``reject`` answer while they stand, even
    when other terms wait for the seat too. Renders the terms in the current locale."""
    by_verb = choices(state, seat.seat_index, window)
    verbs = verbs_that_work(state, seat.seat_index, window)
    terms = shown_by(state, seat.seat_index, by_verb)
    if mailed is not None and still_open(state, seat.seat_index, mailed):
        terms = mailed
        verbs = [v for v in verbs if v not in TERMS_VERBS]
        verbs += [
            verb
            for verb in sorted(TERMS_VERBS)
            if len(standing(state, seat.seat_index, by_verb.get(verb, []), mailed)) == 1
        ]
        verbs.sort(key=ORDER.index)
    letters = _letters(state, seat.seat_index, by_verb) if terms is None else {}
    if not [v for v in verbs if v != "chat"] and not letters:
        return None
    until = min((a["until"] for a in awaiting(state) if a["seat"] == seat.seat_index), default=None)
    seen = game.last_seq if letters else None
    address = reply_address(
        game.id, seat, window, state.window_seq - 1, turn_step(state), terms=terms, seen=seen
    )
    names = display.shown_names(state)
    said = move_text(said_shown(state, seat.seat_index, terms), names)
    offers = by_verb.get("offer", []) if "offer" in verbs else []
    card = card_words(offers[0]["card"]) if len(offers) == 1 and offers[0].get("card") else ""
    best = best_spaces(state, seat.seat_index) if "place" in verbs else []
    place = display.space_number(best[0]["space"]) if best else 5  # the space the mail puts first
    words = explained([v for v in verbs if v != "chat"], lang, place)
    words += [(lettered(v, x, lang), meaning(v)) for x, vs in letters.items() for v in vs]
    words += explained([v for v in verbs if v == "chat"], lang)
    said_letters = [
        (x, move_text(said_shown(state, seat.seat_index, t), names))
        for x, t in by_letter(state, seat.seat_index).items()
        if x in letters
    ]
    return ReplyWay(address, [w for w, _m in words], until, said, card, said_letters, words)


def _letters(
    state: GameState, seat: int, by_verb: dict[str, list[dict[str, Any]]]
) -> dict[str, list[str]]:
    """When more than one set of terms waits for ``seat`` (so ``accept`` alone names none):
    each letter whose terms a reply may answer by letter, with the verbs that do
    (``{"C": ["accept", "reject"]}``); else ``{}``."""
    waiting = by_letter(state, seat)
    if max((len(by_verb.get(v, [])) for v in LETTER_VERBS), default=0) < 2:
        return {}
    out: dict[str, list[str]] = {}
    for letter, terms in sorted(waiting.items()):
        verbs = [
            v for v in LETTER_VERBS if len(standing(state, seat, by_verb.get(v, []), terms)) == 1
        ]
        if verbs:
            out[letter] = verbs
    return out
