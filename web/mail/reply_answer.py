"""Composing the answer to a reply by mail (``reply_answer`` rows,
``imtheboss.web.replies.answer``): threaded on the reply (``In-Reply-To``, ``References``,
``Re:`` subject), in the seat's language (its own, else its address's default, as every mail:
``players.seat_language``): what the move was (``imtheboss.web.replies.moves``) and what was
done (the events as the seat sees them, ``imtheboss.web.say.messages``, times in the seat's zone, as
every mail) or why nothing was, the words that work now with the next decision's reply address,
the seat's own game link and the footer every mail has (the game's name, the unsubscribe link)."""

from __future__ import annotations

from email.message import EmailMessage

from flask import g
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from imtheboss.engine import languages
from imtheboss.engine.history import Message
from imtheboss.engine.views import awaiting
from imtheboss.web.games.load import load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.mail.notify import space_facts
from imtheboss.web.mail.thread import list_id
from imtheboss.web.models import Game, Notification, Seat
from imtheboss.web.players import people as players
from imtheboss.web.players.links import seat_link, unsubscribe_link
from imtheboss.web.replies.answer import seat_row
from imtheboss.web.replies.mail import ReplyWay, seat_address, way_now
from imtheboss.web.replies.moves import move_text
from imtheboss.web.replies.words import WORDS
from imtheboss.web.say import display, messages
from imtheboss.web.say.refusals import refusal

LOCALES = languages.CODES


def compose_answer(game: Game, row: Notification, message, parts) -> EmailMessage:
    """The answer mail of ``row``; ``message(subject, to)`` and ``parts(msg, template,
    context)`` are ``imtheboss.web.mail.compose``'s builders. Raises ``MailFailure``
    (``bad_address``)."""
    body = row.body
    seat = seat_row(game.id, int(body.get("for_seat", -1)))
    # as every other mail: the seat's own language, else its address's default (/me/settings)
    own = players.seat_language(seat) if seat is not None else ""
    g.locale = own or (body.get("locale") if body.get("locale") in LOCALES else "en")
    subject = body.get("subject") or _("[I'm the Boss!] %(title)s: your reply", title=game.title)
    msg = message(subject, row.to_email or "")
    if body.get("in_reply_to"):
        msg["In-Reply-To"] = body["in_reply_to"]
        msg["References"] = body.get("references") or body["in_reply_to"]
    msg.replace_header("Auto-Submitted", "auto-replied")  # RFC 3834: no auto-responder answers it
    # only a running game has a next step (one waiting for its organiser has no state yet)
    reply = way_now(game, seat, g.locale) if seat is not None and game.status == "active" else None
    reply_to = reply.address if reply is not None else None
    if seat is not None:  # a seat's mail, as every other: its game's list, a reply never bounced
        reply_to = reply_to or seat_address(game, seat)
        msg["List-Id"] = list_id(game)
    if reply_to:
        msg["Reply-To"] = reply_to
    context = {
        "game": game,
        "name": seat.name if seat else "",
        "said": body.get("answer", ""),
        "line": body.get("line", ""),
        **_done(game, seat, body),
        "why": _why(body, game, seat),
        "facts": _turn_facts(game, seat) if body.get("answer") == "done" else "",
        "reply": reply,
        "until": _until(reply, seat),
        "link": seat_link(game.id, seat) if seat is not None else "",
        "unsubscribe": unsubscribe_link(game.id, seat) if seat is not None else "",
    }
    if context["unsubscribe"]:
        msg["List-Unsubscribe"] = f"<{context['unsubscribe']}>"
        msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    parts(msg, "email/reply_answer", context)
    return msg


def _done(game: Game, seat: Seat | None, body: dict) -> dict:
    """What a ``done`` answer says, in the current locale and the seat's zone: ``move`` (what
    the move was, ``imtheboss.web.replies.moves``), ``cut`` (the number of characters a chat was
    cut to, 0 when it was not), ``done`` (the events, as the seat sees them); for terms that
    changed, ``shown`` (the terms the mail showed) and ``now`` (those open now), in words."""
    players = [s.name for s in seats_of(game.id)]
    zone = (seat.timezone if seat else "") or "UTC"
    return {
        "move": move_text(body.get("move"), players, zone),
        "shown": move_text(body.get("shown"), players, zone),
        "now": [move_text(said, players, zone) for said in body.get("now") or []],
        "cut": int(body.get("cut") or 0),
        "done": [
            messages.render(Message.from_json(m), players, zone) for m in body.get("messages", [])
        ],
    }


def _until(reply: ReplyWay | None, seat: Seat | None) -> str:
    """When the seat's next decision ends, in its zone and language (``""``: none waits)."""
    if reply is None or reply.until is None or seat is None:
        return ""
    return display.page_time(reply.until, seat.timezone or "UTC")


def _turn_facts(game: Game, seat: Seat | None) -> str:
    """After a move by mail that leaves the seat's turn open (a roll: draw or deal next), what
    a deal on the marker's space needs and pays and what the seat could bring (R1.4, R3.3;
    ``imtheboss.web.say.messages.facts_text``), as the turn's own mail says it; ``""`` otherwise."""
    if seat is None or game.status != "active":
        return ""
    state = load_state(game)
    mine = any(a["seat"] == seat.seat_index and a["for"] == "turn" for a in awaiting(state))
    if not mine or state.marker is None:
        return ""
    facts = space_facts(state, seat.seat_index, state.marker)
    return messages.facts_text(state.marker, facts, seat.timezone or "UTC")


def _open_now(game: Game, seat: Seat | None) -> str:
    """What waits for ``seat`` now, in words (``messages.WINDOW_KINDS``: "the last call"), the
    kinds joined; ``""`` when nothing does."""
    if seat is None or game.status != "active":
        return ""
    kinds = sorted({a["for"] for a in awaiting(load_state(game)) if a["seat"] == seat.seat_index})
    return messages.listed(
        [str(messages.WINDOW_KINDS[k]) for k in kinds if k in messages.WINDOW_KINDS]
    )


def _why(body: dict, game: Game | None = None, seat: Seat | None = None) -> str:
    """Why nothing was done, in plain words (current locale); a move that is not one the seat
    may make now names what waits for it instead (the last call, a card's stop window)."""
    said = body.get("answer")
    if said == "not_now" and game is not None:
        waits = _open_now(game, seat)
        if waits:
            return _(
                "That is not a move you can make now, so nothing was done: what waits for"
                " you now is %(what)s.",
                what=waits,
            )
    if said == "refused":
        found = body.get("refusal") or {}
        return refusal(str(found.get("code", "")), str(found.get("message", "")))
    if said == "confirm_fail":  # the word to send again, in the language of the mail
        word = WORDS["fail"][languages.known(g.locale)][0]
        return _("%(why)s Reply “%(word)s” again to confirm.", why=WHY[said], word=word)
    return str(WHY.get(said, ""))


WHY = {
    "confirm_fail": _l(
        "Do you really want to let your deal fail? It cannot be undone, so nothing was done yet."
    ),
    "unclear": _l("We could not read a move in your reply, so nothing was done."),
    "not_now": _l("That is not a move you can make now, so nothing was done."),
    "no_stop_card": _l(
        "You have no stop card, so you cannot stop this card, and nothing was done. You can"
        " only let it happen: reply with the word to let it happen, or do not answer."
    ),
    "terms_changed": _l(
        "The terms changed since the mail you answered, so nothing was done: your reply acts"
        " only on the terms its mail showed."
    ),
    "already_answered": _l("You had already answered that, so your reply changed nothing."),
    "several": _l(
        "That word fits more than one move here, so nothing was done: choose on the game page."
    ),
    "window_ended": _l(
        "That window ended: the decision your reply answered is over, and nothing was changed."
    ),
    "newer": _l(
        "That was asked after the mail you answered, so nothing was done: answer the newer"
        " mail, or open the game."
    ),
    "outdated": _l(
        "The mail you answered was replaced by a newer invitation, so nothing was done: answer"
        " a newer mail, or open the game."
    ),
    "over": _l("The game is over, so nothing was done."),
    "unreadable": _l(
        "We could not read your reply: it is too big or has too many parts, so nothing was"
        " done. Reply again with just a short line of text, or open the game."
    ),
}
