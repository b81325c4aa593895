"""The terms a mail showed, and a reply that acts only on them (A7, no bait and switch).

A mail whose words include ``accept`` or ``reject`` names the one set of terms those words
answer (the seat's single ``accept`` now, else its single ``reject``): whose they are (the
provider), for which letter and at what price. Its reply address carries them, signed with the
rest (``imtheboss.web.replies.address``), as a short mark: ``<provider><letter><amount><kind>``,
``1S2m`` (seat 1's Sacks (S) for 2 M), ``0x1s`` (seat 0, no card, 1 share).

A reply ``accept`` or ``reject`` acts only while those terms stand: the same provider, letter and
price open for the seat's answer. Terms withdrawn and offered again alike stand (the reply does
what its mail said); a new price, another provider or letter, or terms a mail never showed (an
address without terms, of the older form too) do not: the reply is refused (``terms_changed``)
and the answer names the terms open to the seat now. Terms already agreed are "already
answered". The card put forward does not count: an agreement binds the letter (R4.3).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from imtheboss.engine.state import GameState, Terms

MARK = re.compile(r"([0-9])([A-Z]|x)([0-9]{1,3})([ms])")
KINDS = {"cash": "m", "shares": "s"}
TERMS_VERBS = frozenset({"accept", "reject"})


class Shown(NamedTuple):
    """Terms as a mail showed them: ``provider`` (seat index), ``letter`` (``None``: no card,
    R4.5), ``price`` (``("cash", M)`` or ``("shares", n)``)."""

    provider: int
    letter: str | None
    price: tuple[str, int]

    def mark(self) -> str:
        """The terms as a reply address carries them (``1S2m``)."""
        return f"{self.provider}{self.letter or 'x'}{self.price[1]}{KINDS[self.price[0]]}"


def read_mark(mark: str) -> Shown | None:
    """The terms of an address's ``mark`` (``Shown.mark``); ``None`` when it is no such mark."""
    found = MARK.fullmatch(mark)
    if not found:
        return None
    provider, letter, amount, kind = found.groups()
    price = ("cash" if kind == "m" else "shares", int(amount))
    return Shown(int(provider), None if letter == "x" else letter, price)


def of_terms(terms: Terms) -> Shown:
    """What a mail shows of ``terms``."""
    return Shown(terms.provider, terms.letter, terms.price)


def answered_terms(state: GameState, seat: int, command: dict[str, Any]) -> Terms | None:
    """The open terms ``seat``'s ``accept`` or ``reject`` ``command`` (a legal command, as
    ``legal_commands`` lists it) answers: the other side's terms for its letter."""
    deal = state.deal
    if deal is None:
        return None
    provider = int(command["with"]) if seat == deal.boss else seat
    return deal.terms.get((provider, command.get("letter")))


def shown_by(state: GameState, seat: int, by_verb: dict[str, list[dict[str, Any]]]) -> Shown | None:
    """The terms a mail to ``seat`` shows with its words (``by_verb``: the seat's commands by
    reply verb, ``replies.choices.choices``): those of its one ``accept``, else of its one
    ``reject``; ``None`` when neither word names one command."""
    for verb in ("accept", "reject"):
        found = by_verb.get(verb, [])
        if len(found) == 1:
            terms = answered_terms(state, seat, found[0])
            return of_terms(terms) if terms is not None else None
    return None


def standing(
    state: GameState, seat: int, found: list[dict[str, Any]], shown: Shown | None
) -> list[dict[str, Any]]:
    """The commands of ``found`` (``seat``'s accepts or rejects now) that answer the terms
    ``shown`` (none when nothing was shown)."""
    return [
        cmd
        for cmd in found
        if shown is not None
        and (terms := answered_terms(state, seat, cmd)) is not None
        and of_terms(terms) == shown
    ]


def agreed(state: GameState, shown: Shown | None) -> bool:
    """Whether the terms ``shown`` are an agreement of the running deal (already answered)."""
    deal = state.deal
    if deal is None or shown is None:
        return False
    found = deal.agreements.get((shown.provider, shown.letter))
    return found is not None and of_terms(found) == shown


def still_open(state: GameState, seat: int, shown: Shown | None) -> bool:
    """Whether the terms ``shown`` still wait for ``seat``'s answer (whatever it may do now)."""
    return shown is not None and any(of_terms(t) == shown for _o, t in _waiting(state, seat))


def _waiting(state: GameState, seat: int) -> list[tuple[int, Terms]]:
    """The terms waiting for ``seat``'s answer: the other side's terms made with it, each with
    that other side's seat."""
    deal = state.deal
    if deal is None:
        return []
    out = []
    for terms in deal.terms.values():
        if seat == deal.boss and terms.by == "provider":
            out.append((terms.provider, terms))
        elif seat == terms.provider and terms.by == "boss":
            out.append((deal.boss, terms))
    return out


def by_letter(state: GameState, seat: int) -> dict[str, Shown]:
    """The terms waiting for ``seat``'s answer, by letter, as a mail shows them: only letters
    that name one set of terms (two providers offering the boss the same letter, or terms for
    no card, are left out: a reply could not say which)."""
    counts: dict[str | None, int] = {}
    waiting = [terms for _other, terms in _waiting(state, seat)]
    for terms in waiting:
        counts[terms.letter] = counts.get(terms.letter, 0) + 1
    return {
        terms.letter: of_terms(terms)
        for terms in waiting
        if terms.letter is not None and counts[terms.letter] == 1
    }


def open_to(state: GameState, seat: int) -> list[dict[str, Any]]:
    """The terms waiting for ``seat``'s answer now, as messages (``{"id": "terms", "params":
    {"player", "price", "card"}}``, ``imtheboss.web.replies.moves.move_text`` renders them): the
    other side's terms, whose they are, their price and the card (or letter) put forward. Only
    what the seat may see: terms made with it."""
    return [
        {
            "id": "terms",
            "params": {
                "player": other,
                "price": {terms.price[0]: terms.price[1]},
                "card": terms.card or terms.letter,
            },
        }
        for other, terms in _waiting(state, seat)
    ]


def said_shown(state: GameState, seat: int, shown: Shown | None) -> dict[str, Any] | None:
    """The terms ``shown`` to ``seat`` as a message (as ``open_to``'s; the card put forward
    while they stand, else their letter), ``None`` for none."""
    deal = state.deal
    if shown is None or deal is None:
        return None
    other = shown.provider if seat == deal.boss else deal.boss
    now = deal.terms.get((shown.provider, shown.letter))
    card = now.card if now is not None and now.card and of_terms(now) == shown else shown.letter
    price = {shown.price[0]: shown.price[1]}
    return {"id": "terms", "params": {"player": other, "price": price, "card": card}}
