"""The web face of each seat command, one record each: the game page's group and button style,
whether the page asks "are you sure?" first, the word a reply by mail names it with, which
window such a reply answers, and what the answer to that reply says was done. Everything that
shows, asks about or reads a command takes these facts from here (the page's forms, the
confirmation, the reply words and choices, the answer to a reply).

What depends on a command's arguments stays with whoever says it: the label of a form
(``command_forms.command_label``), what a confirmed move sets going (``decisions.consequence``).
Adding a command: docs/architecture.md, "How to add a command".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask_babel import lazy_gettext as _l

GROUPS = {
    "turn": _l("Your turn"),
    "answer": _l("Answer the window"),
    "terms": _l("Answer the terms"),
    "close": _l("Close or fail"),
    "negotiate": _l("Negotiate"),
    "cards": _l("Play a card"),
    "talk": _l("Talk to the table"),
}
"""The game page's groups of forms, in the page's order, with their titles."""


@dataclass(frozen=True)
class CommandFace:
    """One seat command (the engine's ``do``) as the web shows it. ``group``: a ``GROUPS`` key
    (``""``: a seat's setting, made on the settings or orders page, never a game page form);
    ``style``: the button's look (``primary``, ``danger``, ``quiet``, ``""``); ``confirm``: what
    the move sets going, said when the page asks first (R5, R6: moves that cannot be taken
    back; ``None``: it does not ask; fields ``letter`` and ``target``, ``confirm_investor``
    when the card is aimed at an investor, ``decisions.consequence``); ``reply``: the verb a
    reply by mail names it with (the language table's ``replies`` key; ``""``: none);
    ``answers``: what such a reply answers (``turn``, ``deal``, ``window``: a card's stop
    window or the last call, ``any``: chat, beside whatever the mail asked); ``in_mail``: a
    mail shows its word (failing a deal by one word is asked back, never offered); ``move``:
    what the answer to a reply says was done (a lazy string, fields from ``moves.move_said``);
    ``rank``: its place among the negotiation's forms; ``means``: what its reply word does, as
    a mail lists it beside the word (a lazy string)."""

    do: str
    group: str
    style: str = ""
    confirm: Any = None
    confirm_investor: Any = None
    reply: str = ""
    answers: str = ""
    in_mail: bool = True
    move: Any = None
    rank: int = 9
    means: Any = None


_ALL = (  # reply verbs in the order a mail lists them
    CommandFace(
        "place_marker",
        "turn",
        reply="place",
        means=_l("put the marker on that space (its number as the board shows it)"),
        answers="turn",
        move=_l("You placed the marker on space %(space)s."),
    ),
    CommandFace(
        "allow",
        "answer",
        style="quiet",
        reply="allow",
        means=_l("let the card happen"),
        answers="window",
        move=_l("You allowed %(player)s's %(kind)s."),
    ),
    CommandFace(
        "stop",
        "answer",
        style="danger",
        confirm=_l(
            "Your stop card cancels the card waiting to happen: both go to the discard "
            "pile, and you cannot take your stop card back."
        ),  # R5.6
        reply="stop",
        means=_l("play your stop card: the card does not happen"),
        answers="window",
        move=_l("You stopped %(player)s's %(kind)s with a stop card."),
    ),
    CommandFace(
        "pass",
        "answer",
        style="quiet",
        reply="pass",
        means=_l("play no card before the deal closes"),
        answers="window",
        move=_l("You passed at the last call of the deal on space %(space)s."),
    ),
    CommandFace(
        "accept",
        "terms",
        style="primary",
        reply="accept",
        means=_l("accept the terms this mail shows"),
        answers="deal",
        move=_l("You accepted the terms of %(player)s: %(price)s for %(card)s."),
    ),
    CommandFace(
        "reject",
        "terms",
        reply="reject",
        means=_l("reject the terms this mail shows"),
        answers="deal",
        move=_l("You rejected the terms of %(player)s: %(price)s for %(card)s."),
    ),
    CommandFace(
        "offer",
        "negotiate",
        reply="offer",
        means=_l("put your card forward for that price, in M or in shares"),
        answers="deal",
        move=_l("You offered %(card)s to %(boss)s for %(price)s."),
        rank=1,
    ),
    CommandFace(
        "roll",
        "turn",
        reply="roll",
        means=_l("roll the die and move the marker"),
        answers="turn",
        move=_l("You rolled the die."),
    ),
    CommandFace(
        "draw",
        "turn",
        reply="draw",
        means=_l("draw 3 cards instead of opening a deal"),
        answers="turn",
        move=_l("You drew cards instead of opening a deal."),
    ),
    CommandFace(
        "open_deal",
        "turn",
        style="primary",
        reply="deal",
        means=_l("open a deal on the marker's space"),
        answers="turn",
        move=_l("You opened a deal on space %(space)s."),
    ),
    CommandFace(
        "fail",
        "close",
        style="danger",
        confirm=_l(
            "The deal ends and nobody is paid: the agreements are void, the family cards on "
            "the table go back to their owners and the other cards played in it are discarded. "
            "The marker stays where it is."
        ),
        reply="fail",
        answers="deal",
        in_mail=False,
        move=_l("You let your deal on space %(space)s fail."),
    ),
    CommandFace(
        "close",
        "close",
        style="primary",
        confirm=_l(
            "The others get a last call: each may pass or play a card. Once all have passed, "
            "or the last call has run out, the deal closes: the bank pays you the proceeds and "
            "you pay every agreement."
        ),
        reply="close",
        means=_l("call the deal closed: the others get a last call first"),
        answers="deal",
        move=_l("You called your deal on space %(space)s closed."),
    ),
    CommandFace(
        "chat",
        "talk",
        reply="chat",
        means=_l("write to the table (everyone reads it)"),
        answers="any",
        move=_l("You wrote in the chat: “%(text)s”"),
    ),
    CommandFace("discard", "turn"),
    CommandFace("play_family", "negotiate", rank=0),
    CommandFace("propose", "negotiate", rank=2),
    CommandFace("withdraw", "negotiate", rank=3),
    CommandFace(
        "travel",
        "cards",
        confirm=_l(
            "Unless someone stops your travel card, it goes to the discard pile together with "
            "%(target)s."
        ),
        confirm_investor=_l(
            "Unless someone stops your travel card, investor %(letter)s cannot take part in "
            "this deal, and the terms and agreements made for it lapse."
        ),
    ),
    CommandFace(
        "recruit",
        "cards",
        confirm=_l(
            "Your 3 recruit cards are discarded. Unless someone stops them, investor "
            "%(letter)s is yours for the rest of the game."
        ),
    ),
    CommandFace(
        "boss",
        "cards",
        confirm=_l(
            "Unless someone stops your boss card, you become the boss of this deal, and every "
            "open offer and agreement made with the old boss lapses."
        ),
    ),
    # a seat's settings, made on the settings and orders pages: no form of the game page
    CommandFace("away", ""),
    CommandFace("present", ""),
    CommandFace("night", ""),
    CommandFace("orders", ""),
)

COMMANDS: dict[str, CommandFace] = {face.do: face for face in _ALL}
"""Every seat command's web face, by the engine's ``do``."""

CONFIRM = frozenset(face.do for face in _ALL if face.confirm is not None)
"""Commands the page asks about first ("are you sure?")."""

VERB_COMMAND = {face.reply: face.do for face in _ALL if face.reply}
"""Reply verb -> the command it names, in the order a mail lists the words."""

NOT_IN_MAIL = frozenset(face.reply for face in _ALL if face.reply and not face.in_mail)
"""Reply verbs understood but never offered among a mail's words."""


def answering(kind: str) -> frozenset[str]:
    """The commands a reply answers ``kind`` with (``turn``, ``deal``, ``window``, ``any``)."""
    return frozenset(face.do for face in _ALL if face.answers == kind)
