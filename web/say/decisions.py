"""What the game page asks of the seat reading it: every decision that waits for the seat (the
windows the game waits on, A1-A6, and the terms it has to answer, R4), the consequences shown
before a move that cannot be taken back (close, fail, a boss card, a travel card, a recruit),
why an Accept is missing (R4.4), and the one-step forms that make lapsed terms again (R5.5).

Everything here reads only ``imtheboss.engine.views.view`` of that seat (A8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext
from imtheboss.web.say.command_forms import CommandForm
from imtheboss.web.say.commands import COMMANDS
from imtheboss.web.say.display import (
    card_text,
    investor_words,
    missing_text,
    pending_text,
    price_text,
)


@dataclass
class Asked:
    """One decision that waits for the viewer: what to decide, by when (``until``: the
    engine's ISO time, ``None`` for terms, which stay open while the deal runs), what happens
    without an answer (``otherwise``), and the window it answers (the mail links' anchor)."""

    text: str
    until: str | None = None
    otherwise: str = ""
    window: str | None = None


_WAITS = {
    "place_marker": lazy_gettext("Place the marker on a space to start the game"),
    "turn": lazy_gettext("Take your turn"),
    "discard": lazy_gettext("Discard down to the hand limit"),
    "last_call": lazy_gettext("Answer the boss's last call: pass, or play a card"),
    "negotiation": lazy_gettext("Lead the negotiation: close the deal or declare it failed"),
}
_OTHERWISE = {
    "stop": lazy_gettext("Without an answer from you, you let it happen."),
    "last_call": lazy_gettext("Without an answer from you, you pass."),
}


def asked_of(v: dict[str, Any], seat: int | None, players: list[str]) -> list[Asked]:
    """Every decision that waits for ``seat`` in its view ``v``: its windows first (in the
    engine's order), then each of the terms it is to answer (offers to the boss, the boss's
    terms to a provider). A card's stop window offers to stop it only to a seat whose hand
    (``v["you"]["hand"]``) holds a stop card; with no hand in ``v`` it names both answers."""
    if seat is None or v.get("phase") == "game_over":
        return []
    deal = v.get("deal") or {}
    out = []
    for a in v.get("awaiting", []):
        if a["seat"] != seat:
            continue
        kind = a["for"]
        if kind == "stop":
            what = pending_text(v.get("pending"), players)
            hand = (v.get("you") or {}).get("hand")
            if hand is None or "stop" in hand:  # hand unknown (``/me``): both answers
                text = _("Answer %(what)s: stop it or let it happen", what=what)
            else:
                text = _(
                    "Answer %(what)s: you have no stop card, so you can only let it happen",
                    what=what,
                )
        else:
            text = str(_WAITS.get(kind, kind))
        out.append(Asked(text, a["until"], str(_OTHERWISE.get(kind, "")), a["window"]))
    for t in deal.get("terms", []):
        card = card_text(t["card"])
        price = price_text(t["price"], v.get("share_value"))
        if seat == deal["boss"] and t["by"] == "provider":
            name = players[t["provider"]]
            text = _(
                "Answer %(name)s's offer: %(card)s for %(price)s",
                name=name,
                card=card,
                price=price,
            )
            out.append(Asked(text))
        elif seat == t["provider"] and t["by"] == "boss":
            text = _("Answer the boss's terms: %(card)s for %(price)s", card=card, price=price)
            out.append(Asked(text))
    return out


# -- moves that ask first --------------------------------------------------------------------


def consequence(cmd: dict[str, Any]) -> str:
    """What the move ``cmd`` (one of ``commands.CONFIRM``) sets going, said before it is made:
    its row's ``confirm`` sentence (``confirm_investor`` for a card aimed at an investor), with
    ``letter`` (the investor's letter) and ``target`` (the card it is aimed at, in words)."""
    face = COMMANDS[cmd["do"]]
    target = str(cmd.get("target", ""))
    aimed = target.startswith("investor:") and face.confirm_investor is not None
    sentence = face.confirm_investor if aimed else face.confirm
    letter = target.split(":", 1)[1] if ":" in target else target
    return str(sentence) % {"letter": letter, "target": card_text(cmd.get("target"))}


# -- terms that cannot be accepted -----------------------------------------------------------


def explain_missing_accepts(forms: list[CommandForm], v: dict[str, Any], seat: int) -> None:
    """Give each Reject form of ``seat`` whose terms have no Accept beside it the reason as its
    ``note``: the agreements would promise more than the proceeds (R4.4), or the provider
    cannot put the family card forward (R4.3)."""
    deal = v.get("deal") or {}
    accepts = {(f.cmd["with"], f.cmd.get("letter")) for f in forms if f.cmd["do"] == "accept"}
    for f in forms:
        key = (f.cmd.get("with"), f.cmd.get("letter"))
        if f.cmd["do"] != "reject" or key in accepts:
            continue
        provider = key[0] if seat == deal.get("boss") else seat
        terms = next(
            (
                t
                for t in deal.get("terms", [])
                if t["provider"] == provider and t["letter"] == key[1]
            ),
            None,
        )
        if terms is None:
            continue
        total = deal["committed"] + terms["amount"]
        if total > deal["proceeds"]:
            f.note = _(
                "Accepting is not possible: these terms would bring the agreements to "
                "%(total)d of %(proceeds)d M, more than the deal pays.",
                total=total,
                proceeds=deal["proceeds"],
            )
        else:
            f.note = _(
                "Accepting is not possible: you cannot put %(card)s forward (it is not in "
                "your hand, or the deal's deadline has passed).",
                card=card_text(terms["card"]),
            )


def explain_missing_close(forms: list[CommandForm], v: dict[str, Any], seat: int) -> None:
    """Give the boss's Fail form, when no Close form stands beside it because the deal's
    requirements are unmet (R6.1), the reason as its ``note``: what is still missing (the
    investors by name, ``display.missing_text``) in one sentence, beside the button."""
    deal = v.get("deal") or {}
    if deal.get("boss") != seat or deal.get("requirements_met") or not deal.get("missing"):
        return
    if any(f.cmd["do"] == "close" for f in forms):
        return
    missing = missing_text(deal["missing"])
    for f in forms:
        if f.cmd["do"] == "fail":
            f.note = _("You cannot close yet: the deal still needs %(missing)s.", missing=missing)


# -- lapsed terms made again -----------------------------------------------------------------


def reoffers(v: dict[str, Any], seat: int, forms: list[CommandForm]) -> list[CommandForm | None]:
    """For each of the deal's lapsed terms, in order, the form by which ``seat`` makes them
    again in one step (R5.5: the provider offers the card again at its price, the boss proposes
    them again), or ``None``: the seat is neither side, the terms are open again (or listed
    before), or the rules would refuse them now (the card cannot take part, say); ``forms``
    are the seat's legal moves."""
    deal = v.get("deal") or {}
    legal = [f.cmd for f in forms]
    standing = {(t["provider"], t["letter"]) for t in deal.get("terms", [])}
    standing |= {(a["provider"], a["letter"]) for a in deal.get("agreements", [])}
    out: list[CommandForm | None] = []
    for t in deal.get("lapsed", []):
        again = _again(t, seat, deal.get("boss"))
        if again is None or again[0] not in legal or (t["provider"], t["letter"]) in standing:
            out.append(None)
            continue
        standing.add((t["provider"], t["letter"]))
        cmd, label = again
        out.append(CommandForm(cmd, [], label, label, "negotiate", price=t["price"]))
    return out


def _again(t: dict[str, Any], seat: int, boss: int | None) -> tuple[dict[str, Any], str] | None:
    card = card_text(t["card"])
    price = price_text(t["price"])
    if seat == boss and seat != t["provider"]:
        cmd: dict[str, Any] = {"do": "propose", "to": t["provider"]}
        if t["card"]:
            cmd["card"] = t["card"]
        return cmd, _("Propose them again: %(card)s for %(price)s", card=card, price=price)
    if seat == t["provider"] and t["card"]:
        cmd = {"do": "offer", "card": t["card"]}
        return cmd, _("Offer %(card)s again for %(price)s", card=card, price=price)
    return None


def window_taps(v: dict[str, Any], seat: int, you: dict[str, Any]) -> list[tuple[str, str]]:
    """The one-tap orders the running deal asks of ``seat`` (``(tap, words)`` for ``POST
    /g/<gid>/tap``): a fair posted price for each of its investor cards the deal's space needs
    that has none (not as boss), and as boss a limit of the fair price plus 2 M when it has no
    limit. ``v``: the seat's view; ``you``: its own part."""
    deal = v.get("deal")
    if not deal or deal["expired"]:
        return []
    orders, fair = you["orders"], deal["fair_price"]
    taps = []
    if deal["boss"] == seat:
        if not orders["boss"]["limits"]:
            words = _(
                "As boss, accept offers up to the fair price plus 2 M (now %(num)d M) at once",
                num=fair + 2,
            )
            taps.append(("limit", words))
        return taps
    agreed = {a.get("letter") for a in deal["agreements"]}
    mine = set(v["seats"][seat]["investors"]) - agreed - set(orders["prices"])
    for letter in deal["letters"]:
        if letter in mine:
            words = _(
                "Offer %(investor)s at the fair price (now %(num)d M) in every deal",
                investor=investor_words(letter),
                num=fair,
            )
            taps.append((f"price:{letter}", words))
    return taps
