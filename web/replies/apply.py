"""Applying a reply: the one way a mail becomes a move, whichever way it came in (the inbound
SMTP receiver, IMAP polling, the operator's outbox form).

``apply_reply(raw, envelope_to, envelope_from)`` reads the mail's headers only (``head``) until
the sender and the seat are known, and checks, in order: automatic mail (ignored, not
answered), our reply address and its signature, the sender (``From`` must be the seat's
address), a trusted relay's ``Authentication-Results`` (``MAIL_REPLY_AUTH_SERVID``), a reply
seen before (its ``Message-ID`` is the command's idempotency key, claimed by an insert whose
unique constraint lets one of two deliveries at the same moment through), the rate limit per sender
(``RATELIMIT_MAIL_REPLIES``; over it, ignored). Until there nobody is answered: the sender is
not known to be the seat's. Then the seat is answered in every case: the token outdated, a mail
too big, of too many or too deep parts or that cannot be parsed (``unreadable``: only now is
its body parsed), a first ``fail`` (asked back: a second confirms it),
the window ended, a line unclear, a move that would answer a window opened
after the mail was made (``newer``, A7: the mail never asked it), an ``accept``/``reject`` whose
terms are not those its mail showed (``terms_changed``, with the terms open now;
``imtheboss.web.replies.terms``), a window or terms already answered, a move the rules refuse
(nothing changes), or what was done.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from email.message import EmailMessage

from flask import current_app
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting
from imtheboss.engine.windows import due_windows
from imtheboss.web.app.limits import TooMany, command_spending, spending
from imtheboss.web.app.metrics import counted_reply
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.load import get_game, load_state, state_after
from imtheboss.web.games.names import normal_email
from imtheboss.web.games.presence import note_presence
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.notify import said_message
from imtheboss.web.models import Game, ReplyClaim, Seat, db
from imtheboss.web.replies.address import (
    BadReplyAddress,
    ReplyTicket,
    is_ours,
    read_address,
    turn_step,
)
from imtheboss.web.replies.answer import answer, asked_back, seat_row, thread_of
from imtheboss.web.replies.choices import command_for, command_window
from imtheboss.web.replies.moves import move_said
from imtheboss.web.replies.read import first_line
from imtheboss.web.replies.screen import (
    auth_results,
    automatic,
    head,
    idempotency_key,
    parseable,
    recipients,
    sender,
)
from imtheboss.web.replies.terms import TERMS_VERBS, Shown, by_letter, open_to, said_shown
from imtheboss.web.replies.words import MAX_CHAT, Reading, understand
from imtheboss.web.store import outage
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

TERMS_PROBLEMS = frozenset({"terms_changed", "already_answered"})


@dataclass(frozen=True)
class Outcome:
    """How a reply ended: ``status`` ``done`` (a move was made), ``answered`` (the seat was told
    why nothing was done), ``duplicate`` (seen before: nothing), ``ignored`` (automatic mail,
    or over the rate limit: nothing, no answer), ``refused`` (not ours, a bad token, another
    sender, a forged one: nothing, no answer); ``reason`` says which."""

    status: str
    reason: str = ""


@counted_reply
def apply_reply(
    raw: bytes, envelope_to: Iterable[str] = (), envelope_from: str | None = None
) -> Outcome:
    """Read the mail ``raw`` (its bytes as received) as a reply and act on it (see the module
    docstring); ``envelope_to``/``envelope_from``: the SMTP envelope, when there is one. Needs
    an app context; commits what it writes. Never raises for what a mail says; raises what
    the database raises (``outage.transient``: the mail may be delivered again, and its claim
    was given back)."""
    message = head(raw)
    if automatic(message, envelope_from):
        return Outcome("ignored", "automatic")
    address = next((a for a in recipients(message, envelope_to) if is_ours(a)), None)
    if address is None:
        return Outcome("refused", "not_ours")
    try:
        ticket = read_address(address)
    except BadReplyAddress:
        return Outcome("refused", "bad_token")
    seat = seat_row(ticket.game_id, ticket.seat)
    if seat is None:
        return Outcome("refused", "bad_token")
    frm = sender(message)
    if not _same_address(frm, seat.email):
        return Outcome("refused", "other_address")
    servid = current_app.config.get("MAIL_REPLY_AUTH_SERVID", "")
    verdict = auth_results(message, servid)
    if servid and not verdict.found:
        current_app.logger.warning("a reply by mail has no Authentication-Results of %s", servid)
    if verdict.failed:
        return Outcome("refused", "auth_failed")
    key = idempotency_key(message, raw)
    if not _claim(ticket.game_id, seat.seat_index, key):
        return Outcome("duplicate")
    try:
        with spending("mail_replies", frm):
            return _act(raw, message, ticket, seat, key)
    except TooMany:
        return Outcome("ignored", "rate_limited")
    except Exception as exc:
        if outage.transient(exc):  # the mail will come again: it must not find itself claimed
            _release(ticket.game_id, seat.seat_index, key)
        raise


def _same_address(frm: str, stored: str) -> bool:
    """``frm`` (a From address) is the seat's ``stored`` address, without regard to case."""
    if not frm:
        return False
    try:
        frm = normal_email(frm)
    except ValueError:
        return False
    return frm.lower() == stored.lower()


def _claim(game_id: str, seat: int, key: str) -> bool:
    """Take in the seat's reply with ``key``: ``False`` when it was taken before, or is being
    taken by another delivery at this moment (the insert of its ``ReplyClaim`` fails on the
    unique constraint; no read decides)."""
    db.session.rollback()
    db.session.add(
        ReplyClaim(game_id=game_id, seat_index=seat, idempotency_key=key, created_at=now_utc())
    )
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return False
    return True


def _release(game_id: str, seat: int, key: str) -> None:
    """Give back the claim of ``_claim`` after a transient failure, so that the mail delivered
    again is read again (a move it made is kept once: ``submit``'s key). When the database
    cannot take this either, the claim stays and the failure is logged."""
    try:
        db.session.rollback()
        db.session.execute(
            delete(ReplyClaim).where(
                ReplyClaim.game_id == game_id,
                ReplyClaim.seat_index == seat,
                ReplyClaim.idempotency_key == key,
            )
        )
        db.session.commit()
    except SQLAlchemyError as exc:
        db.session.rollback()
        current_app.logger.error("the claim of a failed reply stays: %s", outage.reason(exc))


def open_windows(state: GameState) -> set[str]:
    """The ids of the windows open in ``state``."""
    return {a["window"] for a in awaiting(state)} | {w.id for w in due_windows(state)}


def _act(raw: bytes, message: EmailMessage, ticket: ReplyTicket, seat: Seat, key: str) -> Outcome:
    """The checks that are answered, then the move, and its answer."""
    thread = thread_of(message)
    game_id = ticket.game_id

    def told(said: str, **details) -> Outcome:
        answer(game_id, seat, key, said, thread, **details)
        return Outcome("done") if said == "done" else Outcome("answered", said)

    if not ticket.matches(seat):
        return told("outdated")
    game = get_game(game_id)
    if game.status != "active":
        return told("over" if game.status == "over" else "refused", refusal=_status(game.status))
    if note_presence(game_id, seat.seat_index, now_utc()):  # A6, A11: any reply is presence
        game = get_game(game_id)
    state = load_state(game)
    db.session.rollback()
    whole = _line(raw)
    if whole is None:
        return told("unreadable")
    reading = understand(whole) if whole else None
    line = whole[:200]  # what the answer says it read
    chat = reading is not None and reading.verb == "chat"  # answers no window: always taken
    if ticket.window and ticket.window not in open_windows(state) and not chat:
        return told("window_ended", window=ticket.window)
    window = "" if chat else ticket.window
    if reading is not None and reading.verb in TERMS_VERBS and _which_terms(ticket, reading):
        return told("several", line=line)  # its mail showed several terms: "accept C" says which
    terms = shown_for(game, ticket, reading)
    choice = command_for(reading, state, seat.seat_index, window, terms, check_terms=True)
    about_terms = choice.verb in TERMS_VERBS
    if choice.command is None and about_terms and choice.problem in TERMS_PROBLEMS:
        shown = said_shown(state, seat.seat_index, terms)
        now = open_to(state, seat.seat_index)
        return told(choice.problem, line=line, shown=shown, now=now)
    if choice.command is None:
        return told(choice.problem, line=line)
    if _newer(state, ticket, choice.command):
        return told("newer", line=line)  # asked after the mail was made (A7)
    if choice.command["do"] == "fail" and state.deal is not None:
        deal_window = state.deal.window.id
        if not asked_back(game_id, seat, deal_window):  # one word must not end a deal
            return told("confirm_fail", line=line, window=deal_window)
    move = move_said(choice.command, state, seat.seat_index)
    cut = MAX_CHAT if reading is not None and reading.cut else 0
    try:
        with command_spending(game_id, seat.seat_index, choice.command) as charge:
            result = submit(game_id, seat.seat_index, choice.command, key, via="mail")
            charge.free = result.duplicate
    except TooMany:
        return Outcome("ignored", "rate_limited")
    except ServiceError as exc:
        return told("refused", line=line, refusal=exc.to_dict())
    if result.duplicate:
        return Outcome("duplicate")
    said = [said_message(event, seat.seat_index) for _seq, event in result.events]
    return told("done", line=line, messages=said, move=move, cut=cut)


def _which_terms(ticket: ReplyTicket, reading: Reading) -> bool:
    """Whether ``reading`` (an ``accept`` or ``reject``) must say which terms: its mail showed
    several (its address carries ``seen``, no one mark) and the reply names no letter."""
    return reading.letter is None and ticket.terms is None and ticket.seen is not None


def shown_for(game: Game, ticket: ReplyTicket, reading: Reading | None) -> Shown | None:
    """The terms a reply's ``accept``/``reject`` answers: those its address names; for
    ``accept C``, the terms for C its mail showed (the address's mark when its letter is C, else
    the terms for C that waited for the seat when the mail was made: ``ticket.seen`` events).
    ``None``: its mail showed none (for that letter)."""
    if reading is None or reading.letter is None:
        return ticket.terms
    if ticket.terms is not None:
        return ticket.terms if ticket.terms.letter == reading.letter else None
    if ticket.seen is None or not 1 <= ticket.seen <= game.last_seq:
        return None
    return by_letter(state_after(game, ticket.seen), ticket.seat).get(reading.letter)


def _line(raw: bytes) -> str | None:
    """The first line of ``raw`` (``""``: none); ``None`` when the mail is too big, has too
    many parts or too deep ones to be parsed (``parseable``), or its parser fails."""
    if not parseable(raw, int(current_app.config.get("MAIL_INBOUND_MAX_BYTES", 10_000_000))):
        return None
    try:
        return first_line(raw) or ""
    except Exception:  # the parser on hostile input: whatever fails, the mail is unreadable
        current_app.logger.warning("a reply by mail could not be parsed", exc_info=True)
        return None


def _newer(state: GameState, ticket: ReplyTicket, command: dict) -> bool:
    """Whether ``command`` answers something asked after the mail of ``ticket`` was made: a
    newer window, or a later step of the turn's window than the mail's (A7)."""
    answers = command_window(state, command)
    if answers is None:
        return False
    if answers > ticket.newest:
        return True
    turn = state.turn
    at_turn = turn is not None and answers == int(turn.id[1:])
    return bool(ticket.step) and at_turn and turn_step(state) != ticket.step


def _status(status: str) -> dict[str, str]:
    """A refusal for a game that is not running."""
    if status == "paused":
        return {"code": "paused", "message": "the game is paused by its organiser"}
    return {"code": "not_started", "message": "the game has not started yet"}
