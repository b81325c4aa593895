"""How every page says things: times in the viewer's zone, prices, card names, requirements,
the board's ring and a pending card. The game page's forms are ``imtheboss.web.say.command_forms``;
event rows and negotiation timelines are ``imtheboss.web.say.timeline``.

Everything here reads only what ``imtheboss.engine.views.view`` and
``imtheboss.engine.views.redact_event`` give one seat (A8): no hand but the viewer's own, no draw
pile order, no seed before the end.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel.dates import format_datetime, format_timedelta, get_timezone_location
from babel.lists import format_list
from flask_babel import get_locale, lazy_gettext, ngettext
from flask_babel import gettext as _
from imtheboss.engine import languages, prices
from markupsafe import Markup

LANGUAGES = languages.names()  # {code: name}: the menus and every check of a code


# -- time ------------------------------------------------------------------------------------


def zone(name: str | None) -> ZoneInfo:
    """The time zone called ``name``; UTC when it is empty or unknown."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def valid_timezone(name: str) -> bool:
    """True when ``name`` is an IANA time zone this server knows (``Europe/Berlin``, ``UTC``);
    not the host's own ``localtime`` nor the placeholder ``Factory``."""
    return name not in NOT_ZONES and (name in available_timezones() or name == "UTC")


NOT_ZONES = frozenset({"localtime", "Factory", "posixrules"})


def zone_choices() -> tuple[tuple[str, str], ...]:
    """What a zone picker offers, in the page's language: ``(name, label)`` for each of
    ``zone_names``, the label as ``zone_text`` writes it (``UTC+8, Taipei``), so a player can
    search by city or offset and reads no raw name alone. Made once an hour per language."""
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    return _zone_choices(str(get_locale() or "en"), hour)


@lru_cache(maxsize=8)
def _zone_choices(lang: str, hour: datetime) -> tuple[tuple[str, str], ...]:
    return tuple((name, zone_text(name, hour)) for name in zone_names())


@cache
def zone_names() -> tuple[str, ...]:
    """The zones a zone picker offers: ``UTC``, then every ``Area/City`` name this server knows
    (no ``Etc/`` ones), sorted (read once per process)."""
    names = sorted(z for z in available_timezones() if "/" in z and not z.startswith("Etc/"))
    return ("UTC", *names)


def when(value: datetime | str) -> datetime:
    """An aware datetime from a datetime or the engine's ISO 8601 text."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def datetime_attr(value: datetime | str) -> str:
    """``value`` for a ``<time datetime>`` attribute: ISO 8601 in UTC to the whole second
    (``2026-03-01T09:00:00+00:00``), since HTML's valid date strings take no microseconds."""
    return when(value).astimezone(UTC).replace(microsecond=0).isoformat()


def local_time(value: datetime | str | None, tz: str) -> str:
    """``value`` as the viewer reads it: weekday, date and time in their zone ``tz``."""
    if value is None:
        return ""
    return format_datetime(
        when(value), "EEE yyyy-MM-dd HH:mm", tzinfo=zone(tz), locale=get_locale()
    )


def page_time(value: datetime | str | None, tz: str) -> str:
    """``local_time`` followed by the zone as its offset from UTC (``Sun 2026-03-01 17:00
    UTC+8``, ``UTC`` itself, ``UTC-3:30``): what the pages show, so that a time read on a
    phone in another zone is not taken for local."""
    if value is None:
        return ""
    return f"{local_time(value, tz)} {utc_offset(value, tz)}"


def utc_offset(value: datetime | str, tz: str) -> str:
    """Zone ``tz``'s offset from UTC at ``value``: ``UTC+8``, ``UTC``, ``UTC-3:30``."""
    offset = when(value).astimezone(zone(tz)).utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    label = "UTC"
    if minutes:
        hours, rest = divmod(abs(minutes), 60)
        label += ("+" if minutes > 0 else "-") + str(hours) + (f":{rest:02d}" if rest else "")
    return label


def zone_text(tz: str | None, at: datetime | str | None = None) -> str:
    """Zone ``tz`` as players read it, never its raw name (``Asia/Shanghai``): its offset from
    UTC at ``at`` (now when ``None``), as ``page_time`` writes it, and its city in the page's
    language: ``UTC+8, Shanghai``, ``UTC+8 上海``; the offset alone for a zone without a
    city (``UTC``, ``Etc/GMT-3``)."""
    name = zone(tz).key
    offset = utc_offset(at or datetime.now(UTC), name)
    try:
        city = get_timezone_location(name, locale=get_locale(), return_city=True)
    except (LookupError, ValueError):
        city = ""
    if not city or name.startswith("Etc/") or name == "UTC" or city.startswith(("UTC", "GMT")):
        return offset
    return _("%(offset)s, %(city)s", offset=offset, city=city)


def time_left(value: datetime | str | None, now: datetime) -> str:
    """How long until ``value`` (``in 5 hours``), or how long ago it passed, in the page's
    language."""
    if value is None:
        return ""
    delta: timedelta = when(value) - now
    if abs(delta) < timedelta(seconds=1):
        return _("now")
    return format_timedelta(
        delta, threshold=2, add_direction=True, format="long", locale=get_locale()
    )


def duration_text(seconds: int | float) -> str:
    """A length of time for people, in the page's language (``24 hours``, ``30 minutes``,
    ``2 days``): a window's length."""
    return format_timedelta(
        timedelta(seconds=seconds), threshold=2, format="long", locale=get_locale()
    )


def is_past(value: datetime | str | None, now: datetime) -> bool:
    """True when the deadline ``value`` has passed."""
    return value is not None and when(value) <= now


# -- punctuation ----------------------------------------------------------------------------


# Chinese and Japanese characters, their punctuation and full-width forms
_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_CJK_GAP = re.compile(f"(?<=[{_CJK}]) +(?=[{_CJK}])")


def tidy(text: str) -> str:
    """``text`` with no space left between two Chinese or Japanese characters (a sentence's
    placeholder filled with Chinese words, sentences joined by a space): ``需要 凯许曼（C）``
    -> ``需要凯许曼（C）``, ``。 你`` -> ``。你``. A space beside a Latin letter or a digit stays
    (``交易格 5``, ``Amy 和``); English text has none to drop."""
    return _CJK_GAP.sub("", text)


def paren(text: str) -> str:
    """``text`` in the page's language's brackets: ``(in 5 hours)``, ``（24小时后）``."""
    return _("(%(text)s)", text=text)


def said(name: str, what: str) -> str:
    """``what`` said of ``name``, with the page's language's colon: ``Amy: 4 M``,
    ``王芳：4 M``."""
    return _("%(name)s: %(what)s", name=name, what=what)


def said_each(pairs: Any) -> str:
    """``(name, what)`` pairs said each with the language's colon, parted by its semicolon:
    ``Amy: +2 M; Bill: +4 M``, ``王芳：+2 M；李伟：+4 M`` (a list of payouts, never glued as
    ``王芳 +2 M和李伟 +4 M``)."""
    return _("; ").join(said(name, what) for name, what in pairs)


def list_words(items: Any) -> str:
    """Names (or any words) joined as the page's language joins a list: ``Amy, Bill and
    Carla``, ``王芳、李伟和张敏`` (Babel's ``format_list``); ``""`` for none."""
    words = [str(x) for x in items]
    return format_list(words, locale=get_locale() or "en") if words else ""


# -- cards, prices, requirements -------------------------------------------------------------


def card_text(name: str | None, players: list[str] | None = None) -> str:
    """A card name for people: ``investor:C`` -> ``investor C``; ``family:W@1`` names its
    owner; ``None`` (R4.5, terms for no card) -> ``no card``."""
    if name is None:
        return _("no card")
    owner = None
    if "@" in name:
        name, _sep, owner_text = name.partition("@")
        if owner_text.isdigit() and players and int(owner_text) < len(players):
            owner = players[int(owner_text)]
    kind, _sep, letter = name.partition(":")
    if kind == "investor":
        text = _("investor %(letter)s", letter=letter)
    elif kind == "family":
        text = _("family card %(letter)s", letter=letter)
    elif kind == "travel":
        text = (
            _("wild travel card") if letter == "*" else _("travel card %(letter)s", letter=letter)
        )
    elif kind == "recruit":
        text = _("recruit card")
    elif kind == "boss":
        text = _("boss card")
    elif kind == "stop":
        text = _("stop card")
    else:
        text = name
    if owner is not None:
        return _("%(name)s's %(card)s", name=owner, card=text)
    return text


def price_text(price: dict[str, int] | None, share_value: int | None = None) -> str:
    """``{"cash": 3}`` -> ``3 M``; ``{"shares": 1}`` -> ``1 share (2 M)`` when the share value
    is known; ``{"fair": 2}`` -> ``the fair price plus 2 M`` (A11's fair price, A10)."""
    if not price:
        return ""
    kind, amount = next(iter(price.items()))
    if kind == "cash":
        return _("%(num)d M", num=amount)
    if kind == "fair":
        if amount == 0:
            return _("the fair price")
        return _("the fair price plus %(num)d M", num=amount)
    text = ngettext("%(num)d share", "%(num)d shares", amount)
    if share_value:
        text += " " + _("(%(value)d M)", value=prices.price_value(kind, amount, share_value))
    return text


def letter_chip(letter: str, only: bool = False) -> Markup:
    """An investor letter as a coloured chip (``only``: the investor card alone may fill it)."""
    extra = " only" if only else ""
    title = _("investor card only") if only else INVESTOR_NAMES.get(letter, letter)
    return Markup('<span class="inv inv-{0}{1}" title="{2}">{0}</span>').format(
        letter, extra, title
    )


def chips(letters: list[str] | tuple[str, ...], only: tuple[str, ...] | list[str] = ()) -> Markup:
    """Several letter chips."""
    return Markup(" ").join(letter_chip(x, x in only) for x in letters)


INVESTOR_NAMES = {  # the Chinese editions' names come from the catalogs
    "C": lazy_gettext("Cashman"),
    "D": lazy_gettext("Dougherty"),
    "G": lazy_gettext("Goldman"),
    "L": lazy_gettext("Liebgeld"),
    "S": lazy_gettext("Sacks"),
    "W": lazy_gettext("Wadsworth"),
}

_MORE_OF = re.compile(r"^(\d+) more of (.+)$")


def investor_words(letter: str) -> str:
    """An investor letter as a name with its letter, in the page's language: ``Cashman (C)``,
    ``凯许曼（C）``; the letter itself for a letter of no investor."""
    name = INVESTOR_NAMES.get(letter)
    if name is None:
        return letter
    return _("%(name)s (%(letter)s)", name=name, letter=letter)


def missing_text(missing: list[str]) -> str:
    """The engine's ``missing`` list (``["L", "1 more of C/D/W"]``, R6.1) as words, the
    investors by name and the lists joined as the page's language joins them: ``Liebgeld (L)
    and 1 more of Cashman (C), Dougherty (D) or Wadsworth (W)``; ``""`` when nothing is."""
    locale = get_locale() or "en"
    items = []
    for item in missing:
        found = _MORE_OF.match(item)
        if found is None:
            items.append(investor_words(item))
            continue
        letters = [investor_words(x) for x in found.group(2).split("/")]
        items.append(
            ngettext(
                "%(num)d more of %(letters)s",
                "%(num)d more of %(letters)s",
                int(found.group(1)),
                letters=format_list(letters, style="or", locale=locale),
            )
        )
    return format_list(items, locale=locale) if items else ""


def requirement_html(space: dict[str, Any]) -> Markup:
    """A space's requirements: required letters, then ``2 of G D L`` for each choice group."""
    only = tuple(space.get("investor_only", ()))
    parts = [chips(space["required"], only)] if space["required"] else []
    for choice in space.get("choices", []):
        parts.append(
            Markup('<span class="choice">{0} {1}</span>').format(
                _("%(k)s of", k=choice["k"]), chips(choice["of"], only)
            )
        )
    return Markup(" + ").join(parts)


def space_number(index: int) -> int:
    """The number players read for the deal space at ``index`` (0 to 15 in the engine, the API
    and board files): 1 to 16 clockwise from the top left, as the board picture prints them,
    on every page and in every mail."""
    return int(index) + 1


# Board ring: the 16 spaces clockwise around a 5 x 5 grid (row, column), from the top left.
RING: list[tuple[int, int]] = (
    [(1, c) for c in range(1, 6)]
    + [(r, 5) for r in range(2, 6)]
    + [(5, c) for c in range(4, 0, -1)]
    + [(r, 1) for r in range(4, 1, -1)]
)


def pending_text(pending: dict[str, Any] | None, players: list[str]) -> str:
    """A pending card (A2) for people: ``Bill's travel card on investor S``."""
    if not pending:
        return _("the pending card")
    who = players[pending["seat"]]
    if pending["kind"] == "boss":
        return _("%(name)s's boss card (“I'm the Boss!”)", name=who)
    if pending["kind"] == "recruit":
        return _("%(name)s's recruit of investor %(letter)s", name=who, letter=pending["target"])
    return _(
        "%(name)s's %(card)s on %(target)s",
        name=who,
        card=card_text(pending["cards"][0] if pending["cards"] else "travel:*"),
        target=card_text(pending["target"], players),
    )


def bot_name(name: str) -> str:
    """A bot seat's name as every page and mail shows it (A13, docs/glossary.md): "Ann (bot)"
    in the reader's language."""
    return _("%(name)s (bot)", name=name)


def seat_names(names: list[str], bots: list[bool]) -> list[str]:
    """The seats' names as shown: each bot seat's marked (``bot_name``)."""
    return [bot_name(n) if b else n for n, b in zip(names, bots, strict=True)]


def shown_names(state: Any) -> list[str]:
    """The names of ``state``'s seats (a ``GameState``) as shown: ``seat_names``."""
    return seat_names(list(state.players), list(state.bots))
