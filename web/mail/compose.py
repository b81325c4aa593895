"""Composing email (web/ writes it, in its reader's language; the worker only sends it,
``imtheboss.worker.smtp``): plain-text and HTML parts, a first line (and, outside a negotiation, a
subject) that says what is needed and by when (in the player's time zone), the link to the
exact decision, ``Date``, ``Message-ID``, ``Auto-Submitted``; to a seat also ``Reply-To``,
``List-Id``, its thread (``imtheboss.web.mail.thread``), ``List-Unsubscribe`` and one-click
``List-Unsubscribe-Post``; the other seats' chat lines since the reader's last mail
(``table_talk``). The recipient's domain is
written in its IDNA (ASCII) form; a non-ASCII local part is kept as it is (it needs SMTPUTF8,
which the sender asks for).
"""

from __future__ import annotations

import email.policy
from collections.abc import Callable
from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage, MIMEPart
from email.utils import format_datetime, make_msgid
from functools import cache, partial
from types import SimpleNamespace
from typing import Any

import idna
from flask import current_app, g, render_template
from flask_babel import gettext as _
from flask_babel import lazy_gettext, ngettext
from imtheboss.engine import languages
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting, view
from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.load import load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.mail import kinds
from imtheboss.web.mail.failure import MailFailure
from imtheboss.web.mail.reply_answer import compose_answer
from imtheboss.web.mail.thread import (
    list_id,
    subject,
    subject_time,
    thread_headers,
    thread_of,
)
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.pages.orders import pace_sentence
from imtheboss.web.players import people as players
from imtheboss.web.players.links import confirm_link, seat_link, unsubscribe_link
from imtheboss.web.replies.choices import has_stop_card
from imtheboss.web.replies.mail import asks, reply_way, seat_address
from imtheboss.web.say import display, messages
from imtheboss.web.say.decisions import window_taps
from imtheboss.web.store.negotiations import records
from sqlalchemy import func, select

# Fold headers only past RFC 5322's 998-character limit: a folded subject read back by some
# clients (and by Python's parser) starts with a space.
HEADER_POLICY = email.policy.SMTP.clone(max_line_length=998)
# A part with a line too long to go as it is (past 998 bytes) is encoded in lines of 76
# (base64 or quoted-printable): with the header policy its lines would be 996 characters long,
# which spam filters count against the mail.
BODY_POLICY = email.policy.SMTP
LOCALES = languages.CODES


def mail_address(address: str) -> Address:
    """``address`` (``local@domain``, as stored) for a header: the domain in IDNA (ASCII) form
    (``例子.中国`` -> ``xn--fsqu00a.xn--fiqs8s``), the local part as it is. Raises
    ``MailFailure`` (``bad_address``, permanent) when it cannot be an address."""
    local, at, domain = address.strip().rpartition("@")
    if not at or not local or not domain:
        raise MailFailure("bad_address", f"{address!r} is not an address", permanent=True)
    try:
        ascii_domain = domain if domain.isascii() else idna.encode(domain, uts46=True).decode()
        return Address(username=local, domain=ascii_domain)
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        raise MailFailure("bad_address", str(exc), permanent=True) from None


def local_time(at: datetime, zone: str) -> str:
    """``at`` in the seat's zone and language as the pages show it, with the zone as its offset
    (``Tue 2026-03-03 14:00 UTC+1``, ``周二 2026-03-03 14:00 UTC+8``): a zone's abbreviation
    (``CST``) names different places in different countries."""
    return display.page_time(at, zone)


def compose(game: Game, seat: Seat | None, rows: list[Notification]) -> EmailMessage:
    """One email to ``seat`` about ``rows`` (one urgent row, or a batch of news), in the seat's
    language (its settings, else its address's default: ``players.seat_language``), event
    lines included (``imtheboss.web.say.messages``). A row to an explicit address (``to_email``;
    ``seat`` is ``None`` then) is mailed alone: ``compose_addressed``. Raises ``MailFailure``
    (``bad_address``) when the address cannot be written."""
    if rows[0].to_email:
        return compose_addressed(game, rows[0])
    assert seat is not None
    g.locale = players.seat_language(seat) or "en"  # its own, else its address's default
    state = cache(partial(load_state, game))  # read once, and only if a part needs it
    rows = as_true_now(state(), rows) if len(rows) > 1 or _dated(rows[0]) else rows
    base = current_app.config["BASE_URL"].rstrip("/")
    first = rows[0]
    until = due = None
    if len(rows) == 1 and first.body.get("until"):
        due = datetime.fromisoformat(first.body["until"])
        until = local_time(due, seat.timezone)
    if len(rows) == 1:
        what = kinds.subject(first.kind)
    else:
        what = ngettext("%(num)d thing happened", "%(num)d things happened", len(rows))
    thread = thread_of(game.id, rows)
    if first.kind == "invited" and first.body.get("link"):
        link = first.body["link"]
    else:
        target = f"#window-{first.body['window']}" if first.body.get("window") else ""
        if not target and first.kind == "offer":  # terms to answer: the asked box and buttons
            target = "#asked"
        link = seat_link(game.id, seat, target)
    unsubscribe = unsubscribe_link(game.id, seat)
    context = {
        "game": game,
        "seat": seat,
        "rows": rows,
        "link": link,
        "until": until,
        "unsubscribe": unsubscribe,
        "base": base,
        "players": _shown(seats_of(game.id)),
        "row_parts": _row_parts(rows, _can_stop(state, seat, rows)),
        "chat": table_talk(game, seat, rows),
        "silence": silence_of(rows),
        "taps": taps_of(game, state, seat, rows),
        "reply": reply_way(game, seat, rows, g.locale),
        "no_move_by_reply": bool(current_app.config.get("MAIL_REPLIES")) and asks(rows),
        "what": what,
        "pace": _pace_words(game, state, seat) if first.kind == "invited" else None,
        "back": any(r.kind == "played_for" and r.text == "proxy_started" for r in rows),  # A11
    }
    if first.kind == "invited":
        context["invite"] = _invitation(game, seat, context["players"])
    by = subject_time(due, seat.timezone, now_utc()) if due else None
    msg = new_message(subject(game, thread, what, by), seat.email)
    thread_headers(msg, game, thread)
    reply_to = context["reply"].address if context["reply"] else seat_address(game, seat)
    if reply_to:
        msg["Reply-To"] = reply_to
    msg["List-Id"] = list_id(game)
    msg["List-Unsubscribe"] = f"<{unsubscribe}>"
    msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    add_parts(msg, "email/notification", context)
    return msg


def silence_of(rows: list[Notification]) -> list[Any]:
    """What happens if the seat does not answer, once per kind of ``rows`` that asks and whose
    own sentence does not say it (``kinds.KINDS[kind].silence``), in the rows' order."""
    said = [kinds.KINDS[row.kind].silence for row in rows if row.kind in kinds.KINDS]
    return list(dict.fromkeys(s for s in said if s is not None))


WINDOW_NAMES = {
    "turn": lazy_gettext("your turn to play"),
    "stop": lazy_gettext("answering a card played in a deal (stop it or let it happen)"),
    "last_call": lazy_gettext("the last call"),
    "negotiation": lazy_gettext("a negotiation"),
}


def _shown(seats: list[Any]) -> list[str]:
    """The seats' names as a mail shows them (a bot seat, with no address, marked: A13)."""
    return display.seat_names([s.name for s in seats], [not s.email for s in seats])


def _invitation(game: Game, seat: Seat, names: list[str]) -> dict[str, Any]:
    """What an invitation says of its game beyond the link: the other players' names, the
    organiser (by their seat's name too when they play), and each window's length (A1)."""
    organiser = game.creator_email or ""
    playing = next(
        (s.name for s in seats_of(game.id) if organiser and s.email.lower() == organiser.lower()),
        "",
    )
    windows = (game.settings.get("options") or {}).get("windows", {})
    return {
        "others": [n for i, n in enumerate(names) if i != seat.seat_index],
        "organiser": organiser,
        "organiser_name": playing,
        "windows": [
            (str(label), display.duration_text(windows[kind]))
            for kind, label in WINDOW_NAMES.items()
            if kind in windows
        ],
    }


def _dated(row: Notification) -> bool:
    """Whether ``row`` says something that may stop being true before it is mailed: "you are
    next" (``turn``) or a negotiation's facts and end (``negotiation``)."""
    body = row.body or {}
    return "turn" in body or "negotiation" in body


def as_true_now(state: GameState, rows: list[Notification]) -> list[Any]:
    """``rows`` as they read when the mail is sent (each row still told once): a "you are
    next" row whose turn is over says so (``past``); a row about a negotiation that ended keeps
    its event's line without the deal's facts and end, and one about the running negotiation
    carries its end as it stands now (a pause moves it). Rows that change are copies: the
    outbox rows are not touched."""
    turns = {a["window"] for a in awaiting(state) if a["for"] == "turn"}
    deal = state.deal
    out: list[Any] = []
    for row in rows:
        body = dict(row.body or {})
        if "turn" in body and body["turn"] not in turns:
            body["past"] = True
        if "negotiation" in body and "facts" in body:
            if deal is None or deal.window.id != body["negotiation"]:
                del body["facts"]
            else:
                body["facts"] = {**body["facts"], "until": deal.window.deadline.isoformat()}
        out.append(row if body == (row.body or {}) else _copy(row, body))
    return out


def _copy(row: Notification, body: dict[str, Any]) -> SimpleNamespace:
    """A read-only stand-in for ``row`` with ``body`` (what ``messages.row_parts`` and the
    templates read of a row)."""
    keep = ("id", "kind", "seat_index", "text", "seq", "urgent", "to_email", "created_at")
    return SimpleNamespace(**{k: getattr(row, k) for k in keep}, body=body)


def _row_parts(rows: list[Notification], can_stop: bool):
    """``messages.row_parts`` for the rows of one mail, the first ended by a full stop (each
    row's line reads as a sentence, the parts after it on lines of their own): a
    space's facts only once, with the last row about that space (a burst of new terms lists
    them once, after the terms)."""
    last = {(row.body or {}).get("space"): row.id for row in rows if (row.body or {}).get("facts")}
    keep = set(last.values())

    def parts(row: Notification, players: list[str], tz: str = "UTC") -> list[str]:
        said = messages.row_parts(row, players, tz, can_stop, facts=row.id in keep)
        return [messages.ended(said[0]), *said[1:]]

    return parts


CHAT_LINES = 10  # the newest chat lines a mail carries


def table_talk(game: Game, seat: Seat, rows: list[Notification]) -> list[str]:
    """The chat lines (R4.8: public table talk) of the other seats since the last mail sent to
    ``seat`` and up to the newest of ``rows``, the newest ``CHAT_LINES``, rendered in the
    current locale: a mail about the negotiation carries what was said at the table."""
    upto = max(row.seq for row in rows)
    since = db.session.execute(
        select(func.max(Notification.seq)).where(
            Notification.game_id == game.id,
            Notification.seat_index == seat.seat_index,
            Notification.email_state == "sent",
            Notification.id.not_in([row.id for row in rows if row.id is not None]),
        )
    ).scalar()
    found = records(game.id, after=since or 0, upto=upto, newest=CHAT_LINES, types=("chat",))
    names = [s.name for s in seats_of(game.id)]
    zone = seat.timezone or "UTC"
    return [
        messages.line(event, names, seat.seat_index, zone)
        for _seq, _at, event in found
        if event.by != seat.seat_index
    ]


TAPPED_KINDS = frozenset({"deal_opened", "offer"})  # where a deal asks for orders a tap sets


def taps_of(
    game: Game, state: Callable[[], GameState], seat: Seat, rows: list[Notification]
) -> dict[str, Any] | None:
    """The one-tap orders (A10) the running deal asks of ``seat`` (``decisions.window_taps``:
    its fair posted prices, or as boss a limit), when the mail tells of a deal opened or terms
    for it: ``{"words": [...], "link": the game page at its tap buttons}``; ``None`` when there
    is none (the deal ended, the orders are set, the seat holds no card it needs). A link, not
    the tap itself: a mail scanner opening the links must change nothing. ``state``: gives the
    game's state (read once per mail)."""
    if not TAPPED_KINDS & {row.kind for row in rows}:
        return None
    v = view(state(), seat.seat_index)
    taps = window_taps(v, seat.seat_index, v["you"])
    if not taps:
        return None
    return {"words": [words for _tap, words in taps], "link": seat_link(game.id, seat, "#taps")}


def _pace_words(game: Game, state: Callable[[], GameState], seat: Seat) -> str | None:
    """The invitation's sentence on the seat's standing orders (the table's pace, A10) and how
    to change them in one tap; ``None`` while the game has not started (a rematch's call to
    join: its orders are not set yet)."""
    if game.last_seq == 0 or game.status == "unconfirmed":
        return None
    orders = view(state(), seat.seat_index)["you"]["orders"]
    return messages.sentences(
        [pace_sentence(orders), _("You can change it in one tap on the game page.")]
    )


def _can_stop(state: Callable[[], GameState], seat: Seat, rows: list[Notification]) -> bool:
    """Whether a mail about a card's stop window offers to stop it: the seat holds a stop card
    (read only when a row is a stop window's)."""
    if not any(row.kind == "stop" for row in rows):
        return True
    return has_stop_card(state(), seat.seat_index)


def new_message(subject: str, to: str) -> EmailMessage:
    """A message with the headers every email has: Subject, From (its name in the mail's
    language: ``sender``), To, Date, Message-ID and ``Auto-Submitted: auto-generated`` (RFC
    3834: no vacation responder answers it). Raises ``MailFailure`` (``bad_address``) when
    ``to`` cannot be written."""
    msg = EmailMessage(policy=HEADER_POLICY)
    msg["Subject"] = subject
    msg["From"] = sender()
    msg["To"] = mail_address(to)
    msg["Date"] = format_datetime(now_utc())
    msg["Message-ID"] = make_msgid(domain=current_app.config["MAIL_DOMAIN"])
    msg["Auto-Submitted"] = "auto-generated"
    return msg


def sender() -> Address:
    """``MAIL_FROM`` with the default name ``I'm the Boss!`` as the current language's brand
    (``imtheboss.engine.languages``: ``我是大老板！``), any other name as configured. Raises
    ``IndexError`` when ``MAIL_FROM`` holds no address."""
    configured = HEADER_POLICY.header_factory("From", current_app.config["MAIL_FROM"]).addresses[0]
    name = configured.display_name
    if name == languages.language(languages.DEFAULT).brand:
        name = languages.language(g.get("locale")).brand
    return Address(display_name=name, addr_spec=configured.addr_spec)


def add_parts(msg: EmailMessage, template: str, context: dict) -> None:
    """The plain-text and HTML parts from ``template`` + ``.txt`` / ``.html``, as
    ``multipart/alternative``: each part goes as it is (8bit) unless a line of it is too long
    for that (``BODY_POLICY``)."""
    if "MIME-Version" not in msg:
        msg["MIME-Version"] = "1.0"
    msg.make_alternative()
    for suffix, subtype in (("txt", "plain"), ("html", "html")):
        msg.attach(body_part(render_template(f"{template}.{suffix}", **context), subtype))


def body_part(text: str, subtype: str) -> MIMEPart:
    """One ``text/<subtype>`` part: 8bit, or in lines of at most 76 when a line of ``text`` is
    longer than 998 bytes (SMTP's limit)."""
    too_long = any(len(line.encode("utf-8")) > 998 for line in text.splitlines())
    part = MIMEPart(policy=BODY_POLICY if too_long else HEADER_POLICY)
    part.set_content(text, subtype=subtype)
    return part


def _organiser_mail(game: Game, row: Notification, base: str) -> tuple[str, dict[str, Any]]:
    """The subject and context of the organiser's mail: the confirm link and the admin link,
    its times in the zone chosen on the create form (``row.body["zone"]``, else UTC). The game
    is told from the organiser's other games by what the server chose (its code, when it was
    made, its number of players), and by nothing the creator wrote (not the title, not the
    names), since nobody has confirmed that address yet; unless the creator's browser was
    signed in as that address (``row.body["named"]``): then by its title too."""
    made = display.page_time(game.created_at, row.body.get("zone") or "UTC")
    title = game.title if row.body.get("named") else ""
    if title:
        subject = _(
            "[I'm the Boss!] confirm your game %(title)s to send its invitations", title=title
        )
    else:
        subject = _(
            "[I'm the Boss!] confirm your game %(code)s of %(time)s to send its invitations",
            code=game.id,
            time=made,
        )
    context = {
        "confirm": confirm_link(game),
        "admin": row.body.get("link", ""),
        "players": int(row.body.get("players", 0)),
        "base": base,
        "made": made,
        "code": game.id,
        "title": title,
    }
    return subject, context


def compose_addressed(game: Game, row: Notification) -> EmailMessage:
    """The email of a row to an explicit address (``row.to_email``), in the row's language:
    ``organiser``: see ``_organiser_mail``. ``email_changed``: the
    notice to a seat's old address (what changed, whom to ask), with no way into the seat.
    ``seat_passed``: the notice to a player whose seat the organiser passed to someone else.
    Raises ``ValueError`` for another kind."""
    if row.kind == "reply_answer":
        return compose_answer(game, row, new_message, add_parts)
    g.locale = row.body.get("locale") if row.body.get("locale") in LOCALES else "en"
    base = current_app.config["BASE_URL"].rstrip("/")
    if row.kind == "organiser":
        subject, context = _organiser_mail(game, row, base)
    elif row.kind == "email_changed":
        subject = _(
            "[I'm the Boss!] %(title)s: your seat's email address was changed", title=game.title
        )
        context = {"game": game, "name": row.body.get("name", ""), "base": base}
    elif row.kind == "seat_passed":
        subject = _(
            "[I'm the Boss!] %(title)s: your seat was passed to another player", title=game.title
        )
        context = {"game": game, "name": row.body.get("name", ""), "base": base}
    else:
        raise ValueError(f"no mail for a {row.kind!r} row to an address")
    msg = new_message(subject, row.to_email or "")
    add_parts(msg, f"email/{row.kind}", context)
    return msg
