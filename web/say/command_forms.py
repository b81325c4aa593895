"""The game page's forms: one small form per legal command of the viewing seat, with its label
and group (turn, answer, terms, close or fail, negotiate, cards, talk).

Labels read only what ``imtheboss.engine.views.view`` gives one seat (A8).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from flask_babel import gettext as _
from flask_babel import ngettext
from imtheboss.web.say import display
from imtheboss.web.say.commands import COMMANDS, GROUPS
from imtheboss.web.say.display import card_text, pending_text, price_text


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


def _terms_for(v: dict[str, Any], provider: int, letter: str | None) -> dict[str, Any] | None:
    deal = v.get("deal") or {}
    for t in deal.get("terms", []):
        if t["provider"] == provider and t["letter"] == letter:
            return t
    return None


def command_label(cmd: dict[str, Any], v: dict[str, Any], players: list[str]) -> tuple[str, str]:
    """``(label, button)`` for a legal command: a sentence saying what it does, and the short
    text of its button (the same as the label for commands without inputs)."""
    return (
        _turn_label(cmd, v)
        or _card_label(cmd, v, players)
        or _terms_label(cmd, v, players)
        or _same(cmd["do"])
    )


def _same(text: str) -> tuple[str, str]:
    return text, text


def _turn_label(cmd: dict[str, Any], v: dict[str, Any]) -> tuple[str, str] | None:
    """``command_label`` of a turn's commands and the chat; ``None`` for any other."""
    do = cmd["do"]
    if do == "place_marker":
        number = display.space_number(cmd["space"])
        return _("Place the marker on space %(space)s", space=number), _(
            "Space %(space)s", space=number
        )
    if do == "roll":
        return _same(_("Roll the die and move the marker"))
    if do == "open_deal":
        number = display.space_number(v["marker"])
        return _same(_("Open a deal on space %(space)s: “Let's make a deal!”", space=number))
    if do == "draw":
        return _same(_("Draw cards (your turn ends)"))
    if do == "discard":
        n = cmd.get("count", 1)
        return ngettext("Choose %(num)d card to discard", "Choose %(num)d cards to discard", n), _(
            "Discard"
        )
    if do == "chat":
        return _("Say something to the table"), _("Send")
    return None


def _card_label(
    cmd: dict[str, Any], v: dict[str, Any], players: list[str]
) -> tuple[str, str] | None:
    """``command_label`` of the commands that play a card or answer one (R5); ``None`` for any
    other."""
    do = cmd["do"]
    deal = v.get("deal") or {}
    if do == "recruit":
        return _same(_("Recruit investor %(letter)s (3 recruit cards)", letter=cmd["target"]))
    if do == "allow":
        return _same(_("Let it happen: %(what)s", what=pending_text(deal.get("pending"), players)))
    if do == "stop":
        return _same(_("Stop %(what)s", what=pending_text(deal.get("pending"), players)))
    if do == "pass":
        return _same(_("Pass (let the deal close)"))
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
        return _same(text)
    if do == "boss":
        return _same(_("Play a boss card: “I'm the Boss!”"))
    if do == "play_family":
        return _same(_("Play %(card)s from your hand", card=card_text(cmd["card"])))
    return None


def _terms_label(
    cmd: dict[str, Any], v: dict[str, Any], players: list[str]
) -> tuple[str, str] | None:
    """``command_label`` of the negotiation's commands (R4, R6); ``None`` for any other."""
    do = cmd["do"]
    deal = v.get("deal") or {}
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
            label = _("Propose to pay %(name)s for no card:", name=players[cmd["to"]])
        return label, _("Propose")
    if do in ("accept", "reject"):
        other = cmd["with"]
        me = (v.get("you") or {}).get("seat")
        provider = other if me == deal.get("boss") else me
        terms = _terms_for(v, provider, cmd.get("letter")) or {}
        card = card_text(terms.get("card"))
        if do == "accept":
            price = price_text(cmd.get("price") or terms.get("price"), v.get("share_value"))
            return _same(
                _(
                    "Accept %(name)s's terms: %(card)s for %(price)s",
                    name=players[other],
                    card=card,
                    price=price,
                )
            )
        return _same(_("Reject %(name)s's terms for %(card)s", name=players[other], card=card))
    if do == "withdraw":
        return _same(_("Withdraw your open offers"))
    if do == "close":
        return _same(_("Close the deal (the others get a last call)"))
    if do == "fail":
        return _same(_("Declare the deal failed"))
    return None


def command_forms(
    commands: list[dict[str, Any]], v: dict[str, Any], players: list[str]
) -> list[tuple[str, str, list[CommandForm]]]:
    """The legal commands as forms, grouped: ``[(group key, title, forms)]`` in a fixed order
    (your turn, answer the window, answer the terms, close or fail, negotiate, play a card,
    talk). The boss's proposals for family cards and for no card, and a travel card on the
    player's own family card, are marked ``fold`` (``_folded``)."""
    grouped: dict[str, list[CommandForm]] = {key: [] for key in GROUPS}
    for cmd in commands:
        do = cmd["do"]
        face = COMMANDS[do]
        group = "turn" if do == "recruit" and v.get("phase") == "discard" else face.group
        label, button = command_label(cmd, v, players)
        grouped[group].append(
            CommandForm(
                cmd=public_command(cmd),
                needs=list(cmd.get("needs", [])),
                label=label,
                button=button,
                group=group,
                count=int(cmd.get("count", 0)),
                style=face.style,
                fold=_folded(cmd, (v.get("you") or {}).get("seat")),
            )
        )
    grouped["negotiate"].sort(key=_negotiate_order)  # stable: the engine's order within a kind
    return [(key, str(GROUPS[key]), forms) for key, forms in grouped.items() if forms]


def _folded(cmd: dict[str, Any], me: int | None) -> bool:
    """A legal move shown folded away, not offered beside the others: the boss's proposals for
    a family card or for no card, and a travel card on one's own family card on the table
    (legal, R5.2 forbids only one's own investor, R5.1; it only throws away one's own card)."""
    if cmd["do"] == "propose":
        return not str(cmd.get("card")).startswith("investor:")
    if cmd["do"] == "travel" and me is not None:
        target = str(cmd.get("target"))
        return target.startswith("family:") and target.endswith(f"@{me}")
    return False


def _negotiate_order(form: CommandForm) -> tuple[int, int]:
    """Cards first, then offers, proposals naming a card before those for no card (R4.5), and
    withdrawing last (``CommandFace.rank``)."""
    do = form.cmd["do"]
    return COMMANDS[do].rank, 1 if do == "propose" and not form.cmd.get("card") else 0
