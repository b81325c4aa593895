"""``imtheboss verify``'s report in the reader's language (``story.speaking`` picks it): the
first difference as one sentence (which event, what the seed gives, what the file says), or
what was checked."""

from __future__ import annotations

import json
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext
from imtheboss.engine.verify import Difference, Verdict

DIFFERENCES = {
    "published": lazy_gettext(
        "The record's seed hash %(found)s is not the hash you gave, %(expected)s."
    ),
    "seed_hash": lazy_gettext(
        "The seed does not match the published seed hash: the seed hashes to %(expected)s, the"
        " record publishes %(found)s."
    ),
    "header": lazy_gettext(
        "The record's header and its first event differ in %(field)s: the header says"
        " %(found)s, the first event %(expected)s."
    ),
    "deal": lazy_gettext(
        "Event 1 (the deal), %(field)s: the seed gives %(expected)s; the record says %(found)s."
    ),
    "die": lazy_gettext(
        "Event %(seq)s (a die roll): the seed rolls %(expected)s; the record says %(found)s."
    ),
    "forced": lazy_gettext(
        "Event %(seq)s (a die roll): the roll was set by hand, not made from the seed."
    ),
    "space": lazy_gettext(
        "Event %(seq)s (a die roll): the roll moves the marker to space %(expected)s; the record"
        " says %(found)s."
    ),
    "reshuffle": lazy_gettext(
        "Event %(seq)s (a reshuffle): the seed makes the draw pile %(expected)s; the record says"
        " %(found)s."
    ),
    "draw": lazy_gettext(
        "Event %(seq)s (cards drawn): the top of the draw pile is %(expected)s; the record says"
        " %(found)s."
    ),
    "replay": lazy_gettext("Event %(seq)s cannot follow the events before it: %(found)s."),
    "end": lazy_gettext(
        "Event %(seq)s (the game's end), %(field)s: replaying gives %(expected)s; the record"
        " says %(found)s."
    ),
    "result": lazy_gettext(
        "The record's result, %(field)s: replaying its events gives %(expected)s; the record"
        " says %(found)s."
    ),
}

FIELDS = {  # the fields a difference names (game_started's, the end's and the result's)
    "players": lazy_gettext("the players"),
    "options": lazy_gettext("the options"),
    "board": lazy_gettext("the board"),
    "seed": lazy_gettext("the seed"),
    "seed_hash": lazy_gettext("the seed hash"),
    "investors": lazy_gettext("the investor cards"),
    "hands": lazy_gettext("the hands"),
    "draw_pile": lazy_gettext("the draw pile"),
    "discard_pile": lazy_gettext("the discard pile"),
    "money": lazy_gettext("the money"),
    "active": lazy_gettext("the first player"),
    "rng_count": lazy_gettext("the count of random draws"),
    "forced_dice": lazy_gettext("the dice set by hand"),
    "covered": lazy_gettext("the covered spaces"),
    "tiles": lazy_gettext("the deal tiles"),
    "deals_closed": lazy_gettext("the closed deals"),
    "marker": lazy_gettext("the marker"),
    "phase": lazy_gettext("the step of the turn"),
    "may_deal_in_place": lazy_gettext("dealing where the marker stands"),
    "winners": lazy_gettext("the winners"),
}


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def difference_text(diff: Difference) -> str:
    """One sentence: which event, what the seed (or the replay) gives, what the file says."""
    return str(DIFFERENCES[diff.what]) % {
        "seq": diff.seq,
        "field": str(FIELDS.get(diff.field, diff.field)),
        "expected": _value(diff.expected),
        "found": _value(diff.found),
    }


def verdict_lines(verdict: Verdict, name: str) -> list[str]:
    """``imtheboss verify``'s report on the record in file ``name``, in the current locale."""
    if verdict.difference is not None:
        return [_("FAIL %(file)s", file=name), "  " + difference_text(verdict.difference)]
    return [
        _("ok %(file)s", file=name),
        "  "
        + _(
            "The seed matches the published seed hash %(hash)s; the deal, %(rolls)d die rolls,"
            " %(reshuffles)d reshuffles and %(draws)d draws follow from it (%(events)d events"
            " replayed).",
            hash=verdict.seed_hash,
            rolls=verdict.rolls,
            reshuffles=verdict.reshuffles,
            draws=verdict.draws,
            events=verdict.events,
        ),
    ]


RECORD_ERRORS = {  # imtheboss.engine.record.RecordError's codes
    "not_object": lazy_gettext("a game record is a JSON object"),
    "format": lazy_gettext(
        "its “format” is %(found)s, not imtheboss-game/1: this is not a game record"
    ),
    "missing": lazy_gettext("the record has no “%(key)s”"),
    "header_types": lazy_gettext("“players” must be a list and “options” an object"),
    "seed_types": lazy_gettext("“seed” must be text or a whole number and “seed_hash” text"),
    "no_events": lazy_gettext("“events” must be a list of at least one event"),
    "entry_seq": lazy_gettext(
        "event %(seq)s: each entry must be an object whose “seq” counts from 1"
    ),
    "entry_at": lazy_gettext("event %(seq)s: “at” must be ISO 8601 text"),
    "entry_event": lazy_gettext("event %(seq)s: “event” must be an object with a “type”"),
    "entry_by": lazy_gettext("event %(seq)s: “by” must be a seat number or null"),
    "first_event": lazy_gettext("the first event is not the game's start"),
    "bad_start": lazy_gettext("the first event cannot start a game"),
}


def record_error_text(exc: ValueError, name: str) -> str:
    """Why file ``name`` is not a game record (a ``RecordError``, or another ``ValueError``
    from reading it), in the current locale."""
    found = RECORD_ERRORS.get(getattr(exc, "code", ""))
    why = str(found) % getattr(exc, "params", {}) if found is not None else _("malformed")
    return _("%(file)s is not a game record: %(why)s", file=name, why=why)


def unreadable_text(exc: Exception, name: str) -> str:
    """Why file ``name`` could not be read at all (the system's error, not UTF-8, not JSON,
    nested too deeply), in the current locale."""
    if isinstance(exc, json.JSONDecodeError):
        return _(
            "%(file)s is not JSON (line %(line)d, column %(column)d)",
            file=name,
            line=exc.lineno,
            column=exc.colno,
        )
    if isinstance(exc, UnicodeDecodeError):
        return _("%(file)s is not UTF-8 text", file=name)
    if isinstance(exc, RecursionError):
        return _("%(file)s is nested too deeply to be a game record", file=name)
    if isinstance(exc, FileNotFoundError):
        return _("%(file)s does not exist", file=name)
    return _("%(file)s cannot be read", file=name)


def bad_hash_text() -> str:
    """The refusal of a ``--hash`` that is not 8 to 64 hex digits, in the current locale."""
    return _("--hash takes 8 to 64 hex digits of the seed hash")
