"""What people type for a game, checked: email addresses (``normal_email``), seat names
people can tell apart (``check_names``: no invisible character, no look-alike alphabets, no two
alike by ``name_key``), one address per seat (``plays_here``, ``plays_twice``), and the lengths
of titles and boards' names (``MAX_TITLE``, ``DEFAULT_TITLE``, ``MAX_PROVENANCE``).
"""

from __future__ import annotations

import unicodedata

from email_validator import EmailNotValidError, validate_email
from flask import current_app
from flask_babel import gettext as _
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.players.addresses import key

MAX_TITLE = 120  # characters of a game's title (and of a board's name)


DEFAULT_TITLE = "I'm the Boss!"  # a game created with no title of its own


MAX_PROVENANCE = 2000  # characters of a board file's provenance


def normal_email(address: str) -> str:
    """``address`` as it is stored and mailed to: one plain address ``local@domain``, checked by
    email-validator (no display name, list, quoting, IP literal, control characters, or a
    special-use domain such as ``.invalid`` or ``.test``), the domain in IDNA ASCII
    (``bill@例子.中国`` -> ``bill@xn--fsqu00a.xn--fiqs8s``). A local part beyond ASCII
    (``用户@…``) needs a mail server that accepts SMTPUTF8: it is taken only when the setting
    ``MAIL_SMTPUTF8`` is on. Raises ``ValueError`` with a message for people."""
    text = address.strip() if isinstance(address, str) else ""
    try:
        checked = validate_email(text, check_deliverability=False, allow_smtputf8=True)
    except EmailNotValidError:
        raise ValueError(
            _(
                "“%(address)s” is not one plain email address (such as amy@example.org)",
                address=text,
            )
        ) from None
    if checked.smtputf8 and not current_app.config.get("MAIL_SMTPUTF8"):
        raise ValueError(
            _(
                "“%(address)s” needs a mail server that accepts international addresses, and"
                " this server's does not: use another address",
                address=text,
            )
        )
    normal = f"{checked.local_part}@{checked.ascii_domain}"
    if len(normal) > 254:
        raise ValueError(_("an email address is at most 254 characters"))
    return normal


def name_key(name: str) -> str:
    """What two seat names are compared by: NFKC, case folded, spaces trimmed and runs of them
    made one (``"ＡＭＹ"``, ``"amy"`` and ``" Amy "`` are one name)."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def invisible(text: str) -> bool:
    """Whether ``text`` holds a format character (Unicode category Cf: zero-width spaces and
    joiners, direction marks and controls, the soft hyphen...)."""
    return any(unicodedata.category(char) == "Cf" for char in text)


EAST_ASIAN_SCRIPTS = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO"})


def mixed_alphabets(name: str) -> bool:
    """Whether ``name`` (after NFKC) holds letters of two alphabets that can look alike, such
    as Latin and Cyrillic ("Bob" and "Воb"): at most one script besides the East Asian ones
    (which mix with each other and with Latin in real names, UTS #39's restriction levels)."""
    scripts = {
        unicodedata.name(char, "?").split()[0]
        for char in unicodedata.normalize("NFKC", name)
        if char.isalpha()
    }
    return len(scripts - EAST_ASIAN_SCRIPTS) > 1


def check_names(names: list[str]) -> None:
    """Seat names people can tell apart: no invisible (format) character, no letters of two
    look-alike alphabets in one name (``mixed_alphabets``), and no two alike by ``name_key``.
    Raises ``ServiceError`` 400 ``bad_settings``."""
    for name in names:
        if invisible(name):
            raise ServiceError(400, "bad_settings", invisible_in_name())
        if mixed_alphabets(name):
            raise ServiceError(
                400,
                "bad_settings",
                _(
                    "The name %(name)s mixes letters of two alphabets (such as Latin and"
                    " Cyrillic letters that look alike): type it in one alphabet.",
                    name=name,
                ),
            )
    seen: set[str] = set()
    for name in names:
        if name_key(name) in seen:
            raise ServiceError(
                400,
                "bad_settings",
                _(
                    "two players have the same name (%(name)s): give each a name of their own",
                    name=name,
                ),
            )
        seen.add(name_key(name))


def invisible_in_name() -> str:
    """The message for a name with an invisible character (see ``invisible``)."""
    return _(
        "A name may not hold invisible characters (such as a zero-width space or a direction"
        " mark): type it again."
    )


def already_plays() -> str:
    """The refusal of a second seat for one address in a game (translated)."""
    return _("That address already plays another seat here.")


def plays_twice(emails: list[str]) -> bool:
    """Whether one player (``addresses.key``: any case) has two of ``emails``."""
    keys = [key(email) for email in emails]
    return len(set(keys)) != len(keys)


def plays_here(email: str, others: list[str]) -> bool:
    """Whether ``email``'s player (any case) is one of the addresses ``others`` (the game's
    other seats)."""
    return key(email) in {key(other) for other in others}
