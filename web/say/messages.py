"""Messages (``imtheboss.engine.history.Message``) in the reader's language and time zone: the
lines of the history, the notices after a move, the inbox and the mail.

``render(msg, players, tz)`` fills the message's sentence in the current Flask-Babel locale (a
request's, or ``force_locale`` for mail and the command line); each parameter is turned into
words by its kind: seats into names, cards and letters into named investors (Cashman (C)),
prices into M or shares, times into the reader's zone. No card id, window id, error code or
rule id is ever shown.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from babel.lists import format_list
from flask import Flask, has_app_context
from flask_babel import Babel, force_locale, get_locale, lazy_gettext, ngettext
from flask_babel import gettext as _
from imtheboss.engine.events import Event
from imtheboss.engine.history import Message, message
from imtheboss.engine.prices import proceeds
from imtheboss.web.mail.kinds import KINDS
from imtheboss.web.say import display

TEXTS: dict[str, Any] = {
    "game_started": lazy_gettext(
        "The game starts for %(players)s. Investor cards: %(holdings)s; side pool: %(side_pool)s."
        " %(player)s plays first. Seed hash %(hash)s…"
    ),
    "marker": lazy_gettext("%(player)s places the marker on space %(space)s"),
    "marker_for": lazy_gettext(
        "%(player)s's turn ran out: the server placed the marker on space %(space)s for them"
    ),
    "rolled": lazy_gettext("%(player)s rolls %(value)s: the marker moves to space %(space)s"),
    "rolled_for": lazy_gettext(
        "The server rolled for %(player)s (their turn ran out): %(value)s, the marker moves to"
        " space %(space)s"
    ),
    "end_roll": lazy_gettext("End roll for %(player)s: %(value)s"),
    "reshuffled": lazy_gettext("The discard pile is shuffled into a new draw pile of %(count)s"),
    "drew": lazy_gettext("%(player)s draws %(cards)s"),
    "drew_for": lazy_gettext("The server drew %(cards)s for %(player)s (their turn ran out)"),
    "discard_step": lazy_gettext("Hands above the limit must discard: %(owed)s"),
    "discarded": lazy_gettext("%(player)s discards %(cards)s"),
    "discarded_for": lazy_gettext(
        "Time ran out: the server discarded %(cards)s for %(player)s (the newest cards)"
    ),
    "turn": lazy_gettext("%(player)s's turn"),
    "turn_must_deal": lazy_gettext("%(player)s's turn (they must open a deal)"),
    "deal_opened": lazy_gettext('%(boss)s opens a deal on space %(space)s: "Let\'s make a deal!"'),
    "deal_opened_for": lazy_gettext(
        "The server opened the deal on space %(space)s that %(boss)s had to open"
    ),
    "family": lazy_gettext("%(player)s plays %(card)s"),
    "offer": lazy_gettext("%(provider)s offers %(card)s for %(price)s"),
    "proposal": lazy_gettext("The boss proposes %(price)s to %(provider)s for %(card)s"),
    "terms_rejected": lazy_gettext("The terms of %(provider)s for %(letter)s were rejected"),
    "terms_withdrawn": lazy_gettext("%(provider)s withdraws the terms for %(letter)s"),
    "terms_lapsed": lazy_gettext(
        "The terms of %(provider)s for %(letter)s lapsed: they no longer fit the deal"
    ),
    "agreement": lazy_gettext("Agreement: %(provider)s gets %(price)s for %(card)s"),
    "played_boss": lazy_gettext(
        '%(player)s plays a boss card: "I\'m the Boss!" Anyone may stop it until its window ends'
    ),
    "played_recruit_on": lazy_gettext(
        "%(player)s plays three recruit cards on %(card)s of %(owner)s"
    ),
    "played_card_on": lazy_gettext("%(player)s plays %(cards)s on %(card)s of %(owner)s"),
    "answered_allow": lazy_gettext("%(player)s lets it happen"),
    "answered_pass": lazy_gettext("%(player)s passes"),
    "stopped": lazy_gettext("%(player)s plays a stop card: the pending card is cancelled"),
    "new_boss": lazy_gettext("%(player)s is the boss now"),
    "card_took_effect": lazy_gettext("The %(kind)s of %(player)s takes effect"),
    "close_called": lazy_gettext(
        "%(boss)s calls the deal closed: last call for cards before it closes"
    ),
    "negotiation_expired": lazy_gettext("The time for negotiating has run out"),
    "timed_out_stop": lazy_gettext(
        "Time is up for the card: it takes effect (no answer from %(players)s)"
    ),
    "timed_out_last_call": lazy_gettext(
        "The last call is over: the deal closes (no answer from %(players)s)"
    ),
    "timed_out_negotiation": lazy_gettext("The negotiation ran out of time"),
    "timed_out_discard": lazy_gettext("Time to discard ran out for %(players)s"),
    "timed_out_turn": lazy_gettext("The turn of %(players)s ran out"),
    "deal_closed": lazy_gettext(
        "Deal closed on space %(space)s (tile %(tile)s, proceeds %(proceeds)s M): %(payments)s"
    ),
    "deal_failed": lazy_gettext("The deal of %(boss)s on space %(space)s failed: %(reason)s"),
    "game_over": lazy_gettext("Game over (%(reason)s): %(money)s. The winner: %(players)s"),
    "game_over_shared": lazy_gettext(
        "Game over (%(reason)s): %(money)s. A shared win: %(players)s"
    ),
    "extended": lazy_gettext("Every open deadline moves %(duration)s later (the game was paused)"),
    "away": lazy_gettext("%(player)s is away: windows do not wait for them"),
    "back": lazy_gettext("%(player)s is back"),
    "chat": lazy_gettext("%(player)s: %(text)s"),
    "orders_set": lazy_gettext("Your standing orders changed"),
    "present": lazy_gettext("You are here: the server does not play for you"),
    "private": lazy_gettext("(something private to another player)"),
    "no_night": lazy_gettext("%(player)s names no night: windows may run out at any hour"),
    "night": lazy_gettext("%(player)s's night: %(start)s to %(end)s (%(zone)s)"),
    "proxy_scheduled": lazy_gettext(
        "If %(player)s stays away, the server plays for them from %(time)s"
    ),
    "proxy_started": lazy_gettext(
        "%(player)s has been away too long: the server plays for them until they are back"
    ),
    "organiser_extended": lazy_gettext(
        "The organiser gives %(window_kind)s %(duration)s more: it now ends %(time)s. Why: %(text)s"
    ),
    "organiser_extended_seat": lazy_gettext(
        "The organiser gives %(player)s %(duration)s more on everything that waits for them:"
        " it now ends %(time)s. Why: %(text)s"
    ),
    "seat_replaced": lazy_gettext(
        "%(was)s has left the game: the organiser passed the seat to %(name)s, who plays on"
        " from here with its cards and money"
    ),
    "seat_to_bot": lazy_gettext(
        "The organiser passed the seat of %(player)s to a bot: the server's bot plays it from"
        " here, with its cards and money"
    ),
    "organiser_paused": lazy_gettext(
        "The organiser paused the game: nothing can be played and no deadline runs until it goes on"
    ),
    "organiser_resumed": lazy_gettext("The organiser resumed the game"),
    "organiser_changed_email": lazy_gettext(
        "The organiser changed the email address of %(player)s"
    ),
    "organiser_resent": lazy_gettext(
        "The organiser sent %(player)s a new invitation with a new secret link (the old link"
        " no longer works)"
    ),
    "unknown": lazy_gettext("Something happened in the game"),
}
"""The sentence of every message id ``imtheboss.engine.history.message`` makes."""

# Why a deal failed (``deal_failed``'s ``reason``), as the story, the deal pages and mail say it.
FAIL_REASONS = {
    "declared": lazy_gettext("the boss declared it failed"),
    "deadline": lazy_gettext("the negotiation deadline passed with requirements unmet"),
    "turn_deadline": lazy_gettext(
        "opened for the player at their turn deadline (they had to open a deal); failed at once"
    ),
    "requirements_not_met": lazy_gettext("the requirements were not met"),
    "proxy": lazy_gettext(
        "opened by the server for a player away too long, who had to open a deal; failed at once"
    ),
}

END_REASONS = {
    "last_tile": lazy_gettext("the last deal tile was taken"),
    "end_sum": lazy_gettext("the end numbers add up"),
    "end_roll": lazy_gettext("the end roll ended it"),
}

WINDOW_KINDS = {  # ``window_kind``: what a window asks (``awaiting``'s ``for``)
    "place_marker": lazy_gettext("the first turn"),
    "turn": lazy_gettext("the turn"),
    "discard": lazy_gettext("the discard step"),
    "stop": lazy_gettext("the card's stop window"),
    "last_call": lazy_gettext("the last call"),
    "negotiation": lazy_gettext("the negotiation"),
}

EFFECT_KINDS = {
    "travel": lazy_gettext("travel card"),
    "recruit": lazy_gettext("recruit cards"),
    "boss": lazy_gettext("boss card"),
}

YOU_TEXTS: dict[tuple[str, str], Any] = {
    ("proposal", "provider"): lazy_gettext("The boss proposes %(price)s to you for %(card)s"),
    ("agreement", "provider"): lazy_gettext("Agreement: you get %(price)s for %(card)s"),
    ("played_card_on", "owner"): lazy_gettext("%(player)s plays %(cards)s on your card: %(card)s"),
    ("played_recruit_on", "owner"): lazy_gettext(
        "%(player)s plays three recruit cards on your investor: %(card)s"
    ),
    ("terms_rejected", "provider"): lazy_gettext("Your terms for %(letter)s were rejected"),
    ("terms_lapsed", "provider"): lazy_gettext(
        "Your terms for %(letter)s lapsed: they no longer fit the deal"
    ),
    ("deal_failed", "boss"): lazy_gettext("Your deal on space %(space)s failed: %(reason)s"),
    ("marker_for", "player"): lazy_gettext(
        "Your turn ran out: the server placed the marker on space %(space)s for you"
    ),
    ("rolled_for", "player"): lazy_gettext(
        "The server rolled for you (your turn ran out): %(value)s, the marker moves to space"
        " %(space)s"
    ),
    ("drew_for", "player"): lazy_gettext("The server drew %(cards)s for you (your turn ran out)"),
    ("discarded_for", "player"): lazy_gettext(
        "Time ran out: the server discarded %(cards)s for you (the newest cards)"
    ),
    ("deal_opened_for", "boss"): lazy_gettext(
        "The server opened the deal on space %(space)s that you had to open"
    ),
}
"""A message's sentence when it speaks of its reader (the seat under the key's parameter):
mail and the inbox speak to their reader as "you"."""

SEATS = ("player", "boss", "provider")


def render(msg: Message, players: list[str], tz: str = "UTC", reader: int | None = None) -> str:
    """``msg`` as one line in the current locale, times in zone ``tz``; to seat ``reader``
    (mail, the inbox) a message about that seat speaks to it (``YOU_TEXTS``; in a list of
    players, "you")."""
    sentence, params = _worded(msg)
    if reader is not None:
        sentence = next(
            (
                text
                for (i, key), text in YOU_TEXTS.items()
                if i == msg.id and params.get(key) == reader
            ),
            sentence,
        )
        params = _with_you(params, reader)
    text = fill(sentence, params, players, tz)
    if msg.by_order:
        return text + " · " + _("by your standing orders")
    if msg.by_proxy:
        return text + " · " + _("played by the server for a player away too long")
    if msg.by_mail:
        return text + " · " + _("by mail")
    return text


def _worded(msg: Message) -> tuple[Any, dict[str, Any]]:
    """The sentence and params ``msg`` is said with: a shift of whole minutes (``extended``,
    ``{"minutes"}``) as a duration in words, one under a minute in words of its own."""
    if msg.id != "extended":
        return TEXTS.get(msg.id, TEXTS["unknown"]), msg.params
    minutes = int(msg.params.get("minutes") or 0)
    if minutes < 1:
        return BRIEF_SHIFT, {}
    return TEXTS["extended"], {"duration": minutes}


def _with_you(params: dict[str, Any], reader: int) -> dict[str, Any]:
    """``params`` with the reader in a list of ``players`` or of ``[seat, number]`` pairs as
    ``YOU``: "you" (``_word``)."""
    out = dict(params)
    players = params.get("players")
    if isinstance(players, list) and reader in players:
        out["players"] = [YOU if s == reader else s for s in players]
    for key in ("owed", "money", "payments"):  # [[seat, number], ...]
        if isinstance(params.get(key), list):
            out[key] = [[YOU if s == reader else s, n] for s, n in params[key]]
    return out


YOU = -1  # the reader, in a list of players

BRIEF_SHIFT = lazy_gettext(
    "Every open deadline moves less than a minute later (the game was paused)"
)


def fill(sentence: Any, params: dict[str, Any], players: list[str], tz: str = "UTC") -> str:
    """``sentence`` (a translated ``%(key)s`` string) in the current locale, each of ``params``
    turned into words by its kind (seats into names, cards into named investors, prices into M
    or shares, times into zone ``tz``), as ``render`` does for messages."""
    filled = str(sentence) % {key: _word(key, value, players, tz) for key, value in params.items()}
    return display.tidy(filled)


def row_text(
    row: Any, players: list[str], tz: str = "UTC", can_stop: bool = True, facts: bool = True
) -> str:
    """An outbox row (``Notification``) in the current locale, as one paragraph: its parts
    (``row_parts``) one after the other, with a full stop between them."""
    parts = row_parts(row, players, tz, can_stop, facts)
    text = parts[0]
    for more in parts[1:]:
        text = then(text, more)
    return text


def row_parts(
    row: Any, players: list[str], tz: str = "UTC", can_stop: bool = True, facts: bool = True
) -> list[str]:
    """An outbox row (``Notification``) in the current locale, as ``[its line, more...]``: its
    message, else its kind's sentence, else (rows written before messages were stored) the text
    it was written with; then what of the reader's lapses if a waiting card happens
    (``lapses``), the spaces a place-the-marker row could fill best, what a deal on its space
    needs and pays and what the reader could bring (``facts``,
    ``imtheboss.web.mail.notify.space_facts``; ``facts=False``: not, a later row of the same
    mail says them), and a last call's deal. ``can_stop``: the seat holds a stop card (else a
    card's stop window says that it can only let the card happen). A mail sets the parts
    after the first on lines of their own, so no row reads as one long paragraph."""
    parts = [_row_said(row, players, tz, can_stop)]
    body = row.body or {}
    if body.get("lapses"):  # a card's stop window: what the reader loses if the card happens
        parts.append(
            _(
                "If the card happens, your agreement for %(letters)s lapses.",
                letters=_letters(body["lapses"]),
            )
        )
    if body.get("best"):  # place the marker: what the number is, the spaces it could fill
        parts.append(best_text(body["best"], tz))
    if facts and body.get("facts") and "space" in body:
        parts.append(facts_text(body["space"], body["facts"], tz))
    if body.get("deal"):  # a last call: the deal as it stands
        reader = row.seat_index if 0 <= row.seat_index < len(players) else None
        parts.append(deal_text(body["deal"], players, reader))
    return parts


def best_text(best: list[dict[str, Any]], tz: str = "UTC") -> str:
    """What the marker's number is (a deal space, 1 to 16, R1.4) and the facts of the spaces
    the reader could fill best (``imtheboss.web.mail.notify.best_spaces``), as sentences."""
    out = [
        _(
            "The number is a deal space, 1 to 16: the marker goes on the space you name."
            " The spaces you could fill best:"
        )
    ]
    out += [facts_text(b["space"], b["facts"], tz) for b in best]
    return sentences(out)


def deal_text(deal: dict[str, Any], players: list[str], reader: int | None) -> str:
    """A deal as it stands at a last call (``imtheboss.web.mail.notify.deal_facts``) as sentences
    to ``reader`` (a seat, or ``None``): who is boss, the line-up (who brings which card, for
    how much), the proceeds and what the boss keeps, and what the reader gains in it."""

    def who(seat: int) -> str:
        return _("you") if seat == reader else players[seat]

    boss = deal["boss"]
    brought = [
        _("%(card)s from %(player)s", card=card_words(x), player=who(boss)) for x in deal["own"]
    ]
    brought += [
        _("%(card)s from %(player)s", card=card_words(c), player=who(o)) for o, c in deal["family"]
    ]
    brought += [
        _(
            "%(card)s from %(player)s for %(price)s",
            card=card_words(c),
            player=who(p),
            price=display.price_text(price),
        )
        for p, c, price, _value in deal["agreements"]
    ]
    out = [
        _("You are the boss.")
        if boss == reader
        else _("%(player)s is the boss.", player=who(boss)),
        _("Line-up: %(cards)s.", cards=_names(brought) or _("nothing")),
    ]
    keeps = {"proceeds": deal["proceeds"], "keeps": deal["boss_keeps"]}
    if reader == boss:
        out.append(
            _("Proceeds %(proceeds)s M: after the agreements you keep %(keeps)s M.", **keeps)
        )
        return display.tidy(sentences(out))
    out.append(
        _("Proceeds %(proceeds)s M: after the agreements the boss keeps %(keeps)s M.", **keeps)
    )
    mine = [price for p, _c, price, _v in deal["agreements"] if p == reader]
    if mine:
        got = _names([display.price_text(price) for price in mine])
        out.append(_("If the deal closes, your agreement pays you %(price)s.", price=got))
    elif reader is not None:
        out.append(_("You have no agreement in this deal."))
    return display.tidy(sentences(out))


SENTENCE_ENDS = tuple('.!?…。！？"”」』)）')


def ended(sentence: str) -> str:
    """``sentence`` with the current locale's full stop, unless it ends one already."""
    if sentence.rstrip().endswith(SENTENCE_ENDS):
        return sentence
    return _("%(sentence)s.", sentence=sentence)


def sentences(out: list[str]) -> str:
    """Whole sentences one after the other, as the current locale writes them: a space between
    them in English, none after a Chinese or Japanese full stop (``。 你`` is a typo there)."""
    text = ""
    for sentence in out:
        text = _("%(sentence)s %(more)s", sentence=text, more=sentence) if text else sentence
    return text


def then(sentence: str, more: str) -> str:
    """``sentence`` (an event's line, which has no full stop of its own) followed by the
    sentences ``more``, with the current locale's full stop between them where ``sentence``
    does not end one already."""
    if sentence.rstrip().endswith(SENTENCE_ENDS):
        return display.tidy(_("%(sentence)s %(more)s", sentence=sentence, more=more))
    return display.tidy(_("%(sentence)s. %(more)s", sentence=sentence, more=more))


def facts_text(space: int, facts: dict[str, Any], tz: str = "UTC") -> str:
    """A deal space's facts (``notify.space_facts``, with ``until``: the negotiation's end, or
    ``None``; ``boss``: the reader is the deal's boss) as sentences to their reader: needs,
    proceeds, what the reader could bring."""
    shares, value = facts["shares"], facts["share_value"]
    out = [
        _(
            "A deal on space %(space)s needs %(needs)s. It pays %(proceeds)s M (%(shares)s"
            " shares at %(value)s M).",
            space=display.space_number(space),
            needs=needs_words(facts["needs"]),
            proceeds=proceeds(shares, value),
            shares=shares,
            value=value,
        )
    ]
    if facts["fits"] and facts.get("boss"):
        out.append(
            _("As the boss, you could bring %(letters)s yourself.", letters=_letters(facts["fits"]))
        )
    elif facts["fits"]:
        out.append(_("You could bring %(letters)s.", letters=_letters(facts["fits"])))
    else:
        out.append(_("You hold no investor or family card it needs."))
    if facts.get("until"):
        out.append(
            _("Its negotiation runs until %(time)s.", time=display.page_time(facts["until"], tz))
        )
    return display.tidy(sentences(out))


def needs_words(needs: dict[str, Any]) -> str:
    """A space's requirements (``required``, ``choices``, ``investor_only`` as in the board's
    JSON) in words: ``Cashman (C) and Sacks (S), plus 2 of Goldman (G), Liebgeld (L)...``."""
    parts = [_letters(needs["required"])] if needs["required"] else []
    for choice in needs.get("choices") or []:
        parts.append(_("%(k)s of %(letters)s", k=choice["k"], letters=_letters(choice["of"])))
    text = _(", plus ").join(parts)
    if needs.get("investor_only"):
        only = _letters(needs["investor_only"])
        text += " " + _("(%(letters)s only by the investor card itself)", letters=only)
    return text


def _variant(kind: str, body: dict[str, Any], can_stop: bool) -> str:
    """Which of the kind's sentences a row's body calls for (``MailKind.variants``; ``""``:
    the kind's own sentence)."""
    if kind == "your_turn" and "space" in body:
        return "at"
    if kind == "stop" and not can_stop:
        return "no_card"
    if kind == "you_are_next" and body.get("past"):
        return "past"
    if kind == "reminder" and body.get("for") in KINDS[kind].variants:
        return body["for"]
    return ""


def _row_said(row: Any, players: list[str], tz: str, can_stop: bool) -> str:
    said = (row.body or {}).get("message")
    if said:
        reader = row.seat_index if 0 <= row.seat_index < len(players) else None
        return render(Message.from_json(said), players, tz, reader)
    body = row.body or {}
    kind = KINDS.get(row.kind)
    if kind is None or kind.sentence is None:
        return row.text
    variant = _variant(row.kind, body, can_stop)
    if row.kind == "reminder" and variant:  # what it asks, and on silence
        return str(kind.variants[variant]) % {"time": display.page_time(body["until"], tz)}
    sentence = kind.variants.get(variant, kind.sentence)
    name = players[row.seat_index] if 0 <= row.seat_index < len(players) else ""
    space = body.get("space")
    number = None if space is None else display.space_number(space)
    after = body.get("after")
    before = players[after] if isinstance(after, int) and 0 <= after < len(players) else ""
    text = str(sentence) % {"name": name, "space": number, "after": before}
    asked = body.get("asked")  # the card that waits, or the last call (imtheboss.web.mail.notify)
    if not asked:
        return text
    done = render(Message.from_json(asked), players, tz, row.seat_index)
    return _("%(done)s. %(asked)s", done=done, asked=text)


def line(event: Event, players: list[str], seat: int | None, tz: str = "UTC") -> str:
    """``event`` as ``seat`` may read it (A8, A10), rendered."""
    return render(message(event, seat), players, tz)


def _word(key: str, value: Any, players: list[str], tz: str) -> str:
    if key == "space":
        return str(display.space_number(value))
    if key in SEATS:
        return players[value] if isinstance(value, int) else _("the server")
    if key == "owner":
        return players[value] if isinstance(value, int) else _("the side pool")
    if key == "players":
        return _names([_seat_name(s, players) for s in value]) or _("nobody")
    if key in ("card", "letter"):
        return card_words(value)
    if key == "cards":
        return _cards(value)
    if key == "price":
        return display.price_text(value)
    return _special(key, value, players, tz)


def _seat_name(seat: int, players: list[str]) -> str:
    return _("you") if seat == YOU else players[seat]


def _special(key: str, value: Any, players: list[str], tz: str) -> str:
    if key == "holdings":
        return _("; ").join(
            _("%(name)s: %(letters)s", name=players[s], letters=_letters(ls)) for s, ls in value
        )
    if key == "side_pool":
        return _letters(value) if value else _("empty")
    if key in ("owed", "money", "payments"):  # Amy: +2 M; Bill: +2 M
        return display.said_each((_seat_name(s, players), _amount(key, n)) for s, n in value)
    if key == "time":  # with its zone, as every page and mail writes a time
        return display.page_time(value, tz)
    if key == "zone":  # a seat's night (A12): the zone as players read it, not its raw name
        return display.zone_text(value)
    if key == "reason":
        found = END_REASONS.get(value) or FAIL_REASONS.get(value)
        return str(found) if found is not None else str(value)
    if key == "kind":
        return str(EFFECT_KINDS.get(value, value))
    if key == "count":
        return ngettext("%(num)d card", "%(num)d cards", value)
    if key == "window_kind":
        return str(WINDOW_KINDS.get(value, WINDOW_KINDS["turn"]))
    if key == "duration":
        return duration_words(value)
    return str(value)


def duration_words(minutes: int) -> str:
    """A length of time in minutes as words: ``2 days 3 hours``, ``90 minutes`` -> ``1 hour 30
    minutes`` (the parts that are not zero)."""
    days, rest = divmod(int(minutes), 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = []
    if days:
        parts.append(ngettext("%(num)d day", "%(num)d days", days))
    if hours:
        parts.append(ngettext("%(num)d hour", "%(num)d hours", hours))
    if mins or not parts:
        parts.append(ngettext("%(num)d minute", "%(num)d minutes", mins))
    return " ".join(parts)


def _amount(key: str, n: int) -> str:
    if key == "money":
        return _("%(num)d M", num=n)
    if key == "payments":
        return _("%(num)+d M", num=n)
    return str(n)  # cards owed


def listed(items: list[str]) -> str:
    """``items`` (words) as one list in the current locale (``A, B, and C``; ``""``: none)."""
    return _names(items)


def _names(items: list[str]) -> str:
    return format_list(items, locale=get_locale()) if items else ""


def _letters(letters: list[str]) -> str:
    return _names([_investor(x) for x in letters]) or _("none")


def _investor(letter: str) -> str:
    return display.investor_words(letter)


ONE_CARD = {
    "recruit": lazy_gettext("a recruit card"),
    "boss": lazy_gettext("a boss card"),
    "stop": lazy_gettext("a stop card"),
    "travel:*": lazy_gettext("a wild travel card"),
}


def card_words(name: str | None) -> str:
    """A card name (``investor:C``, ``family:W``, ``travel:*``...) or an investor letter in
    words, with the investor's name; ``None`` (R4.5) is "no card"."""
    if name is None:
        return _("no card")
    kind, _sep, letter = name.partition(":")
    if not _sep and name in display.INVESTOR_NAMES:
        return _investor(name)
    if name in ONE_CARD:  # a card of no letter, in a sentence: "draws ..., and a recruit card"
        return str(ONE_CARD[name])
    if not _sep:
        return display.card_text(name)
    investor = display.INVESTOR_NAMES.get(letter)
    if kind == "investor" and investor is not None:
        return _investor(letter)
    if kind == "family" and investor is not None:
        return _("the %(name)s family card (%(letter)s)", name=investor, letter=letter)
    if kind == "travel" and investor is not None:
        return _("a travel card for %(name)s (%(letter)s)", name=investor, letter=letter)
    return display.card_text(name)


def _cards(value: Any) -> str:
    if isinstance(value, int):
        return ngettext("%(num)d card", "%(num)d cards", value)
    return _names([card_words(c) for c in value]) or _("nothing")


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Render in ``lang`` (a code of ``engine.languages``) inside the block: the app's own
    context when there is one (mail), else a bare app with the catalogs (the command line)."""
    if has_app_context():
        with force_locale(lang):
            yield
        return
    app = Flask("imtheboss.story")
    translations = Path(__file__).parents[1] / "translations"  # web/translations
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(translations)
    Babel(app)
    with app.app_context(), force_locale(lang):
        yield


def simulation_log(
    events: list[Event], players: list[str], money: list[int], winners: list[int]
) -> list[str]:
    """``simulate``'s readable log (every event as a spectator reads it), then the final
    scores, in the current locale."""
    lines = [line(event, players, None) for event in events]
    deals = sum(1 for e in events if e.type == "deal_closed")
    lines += [
        "",
        _(
            "Final scores after %(deals)d closed deals and %(events)d events:",
            deals=deals,
            events=len(events),
        ),
    ]
    for seat in sorted(range(len(players)), key=lambda i: -money[i]):
        mark = "  " + _("(winner)") if seat in winners else ""
        lines.append(f"  {players[seat]:<8} " + _("%(num)d M", num=money[seat]) + mark)
    return lines
