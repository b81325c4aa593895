"""What a move made by mail was, in plain words about the game, for the answer to the reply
("You allowed Bill's travel card for Cashman (C) on Cashman (C).", "You offered 3 M to Amy for
no card."): not the word the player wrote, but what it did.

``move_said(command, state, seat)`` is written when the reply is applied, from the state the
move was decided on (the card it answered, the terms it took), as a message
(``{"id", "params"}``, the kinds of ``imtheboss.web.say.messages``);
``move_text(said, players, tz)`` renders it in the current locale when the answer mail is
composed. Only what the seat itself knows goes in: its own move, the public card it answered,
the terms on the table.
"""

from __future__ import annotations

from typing import Any

from flask_babel import lazy_gettext as _l
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.state import GameState
from imtheboss.web.say import messages
from imtheboss.web.say.commands import COMMANDS

MOVES: dict[str, Any] = {
    **{do: face.move for do, face in COMMANDS.items() if face.move is not None},
    "allow_on": _l("You allowed %(player)s's %(kind)s on %(card)s."),
    "stop_on": _l("You stopped %(player)s's %(kind)s on %(card)s with a stop card."),
    "move": _l("Your move was made."),
    # terms as a mail shows them (imtheboss.web.replies.terms): whose, the price, the card
    "terms": _l("%(player)s's terms: %(price)s for %(card)s"),
}
"""What an answer to a reply says was done, by message id (stored in the answer's row): each
command's ``CommandFace.move``, and the variants here."""


def move_said(command: dict[str, Any], state: GameState, seat: int) -> dict[str, Any]:
    """The message of ``seat``'s ``command`` (a reply's, ready for ``submit.submit``) decided
    on ``state``: ``{"id": a key of MOVES, "params": {...}}``."""
    do = command.get("do", "")
    deal = state.deal
    if do in ("place_marker", "roll", "draw", "open_deal"):
        space = command.get("space", state.marker)
        return _said(do, space=space) if do in ("place_marker", "open_deal") else _said(do)
    if do in ("allow", "stop") and state.pending is not None:
        return _pending(do, state)
    if do in ("pass", "close", "fail") and deal is not None:
        return _said(do, space=deal.space)
    if do in ("accept", "reject") and deal is not None:
        return _terms(do, command, state, seat)
    if do == "offer" and deal is not None:
        price = command.get("price")
        return _said("offer", card=command.get("card"), boss=deal.boss, price=price)
    if do == "chat":
        return _said("chat", text=command.get("text", ""))
    return _said("move")


def move_text(said: dict[str, Any] | None, players: list[str], tz: str = "UTC") -> str:
    """``said`` (``move_said``'s) in the current locale, times in zone ``tz``; ``""`` for
    none."""
    if not said or said.get("id") not in MOVES:
        return ""
    return messages.fill(MOVES[said["id"]], said.get("params") or {}, players, tz)


def _said(move_id: str, **params: Any) -> dict[str, Any]:
    return {"id": move_id, "params": params}


def _pending(do: str, state: GameState) -> dict[str, Any]:
    """Allowing or stopping the card that waits: whose, which kind, on what."""
    pending = state.pending
    assert pending is not None
    params: dict[str, Any] = {"player": pending.seat, "kind": pending.kind}
    target = pending.target
    if target is None:
        return _said(do, **params)
    kind, _sep, rest = target.partition(":")
    if kind == "family" and rest.isdigit():  # a family card on the table, by its id
        target = CARD_NAMES[int(rest)]
    return _said(do + "_on", card=target, **params)


def _terms(do: str, command: dict[str, Any], state: GameState, seat: int) -> dict[str, Any]:
    """Accepting or rejecting terms: whose, what price, for which card."""
    deal = state.deal
    assert deal is not None
    other = int(command.get("with", deal.boss))
    provider = other if seat == deal.boss else seat
    letter = command.get("letter")
    terms = deal.terms.get((provider, letter))
    if terms is None:
        return _said("move")
    card = terms.card or letter
    price = {terms.price[0]: terms.price[1]}
    return _said(do, player=other, price=price, card=card)
