"""Input at the edge: every request's text and numbers are checked before a view runs.

``check_request`` (a ``before_request`` hook) refuses, with 400 ``bad_input`` and a message in
plain words:

- NUL, lone surrogates (U+D800-U+DFFF: text that cannot be encoded, so could be neither stored
  nor shown), control characters (C0, DEL, C1) and the bidi controls that reorder the text after
  them (embeddings, overrides, isolates: U+202A-U+202E, U+2066-U+2069) in the path, the query
  string, form fields (names and values), the names of uploaded files, the ``Idempotency-Key``
  header, and every string, keys included, of a JSON body. New lines and tabs are taken only in
  multi-line text (the fields named in ``MULTILINE``: a chat's ``text``);
- numbers in a JSON body that are not finite (``1e999`` parses as infinity) or beyond what JSON
  carries exactly (``MAX_NUMBER``, I-JSON, RFC 7493);
- a JSON body nested deeper than ``MAX_DEPTH``.

A JSON body is parsed once, strictly (no ``NaN``/``Infinity``), and kept for the view
(``json_body``). JSON read from elsewhere (a form's hidden command, an uploaded board file) goes
through ``loads``, which applies the same checks. Path parameters are also checked where they
are used (``load.get_game`` takes only what a game id can be).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import unquote_to_bytes

from flask import Flask, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from imtheboss.web.games.basics import ServiceError
from werkzeug.routing import IntegerConverter

# C0 controls, DEL, C1 controls, lone surrogates and the bidi embeddings, overrides and isolates
# (U+202A-U+202E, U+2066-U+2069: they would turn the text after them around, on every page
# that shows it); ``MULTILINE_BAD`` lets \t \n \r through. ``BIDI``: those bidi controls.
BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
SINGLE_LINE_BAD = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
MULTILINE_BAD = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]"
)
MULTILINE = frozenset({"text", "body"})  # text a person writes on several lines (chat, a reply)
MAX_NUMBER = 2**53 - 1
MAX_DEPTH = 20
WHOLE = re.compile(r"[0-9]{1,9}")  # ASCII digits: str.isdigit() also takes "²" and "፩", int() not
CHECKED_HEADERS = ("Idempotency-Key",)  # headers the app stores or compares as data


def whole_number(text: Any) -> int | None:
    """``text`` as a whole number when it is 1 to 9 ASCII digits (``"007"`` -> 7), else ``None``:
    never ``int()``'s error, whatever the text (``"²"``, ``"፩"``, 5,000 digits)."""
    return int(text) if isinstance(text, str) and WHOLE.fullmatch(text) else None


def bad_character(text: str, multiline: bool = False) -> str | None:
    """The first character of ``text`` no text field may hold (see the module docstring), or
    ``None``."""
    found = (MULTILINE_BAD if multiline else SINGLE_LINE_BAD).search(text)
    return found.group() if found else None


def check_text(text: str, where: str, multiline: bool = False) -> None:
    """Raise ``ServiceError`` 400 ``bad_input`` naming ``where`` when ``text`` holds a character
    no text field may hold."""
    char = bad_character(text, multiline)
    if char is not None:
        raise ServiceError(
            400,
            "bad_input",
            _(
                "%(where)s holds a character that cannot be taken (U+%(code)04X: a control"
                " character, a NUL or a broken one). Remove it and send again.",
                where=where,
                code=ord(char),
            ),
        )


def _shown(name: str) -> str:
    """A field's name as a message may show it: its bad characters replaced, at most 60 long."""
    return SINGLE_LINE_BAD.sub("\ufffd", name)[:60]


# What a player calls the fields of the pages (and the API's like them): a field's path is
# named by its last part found here (``cmd.price.cash``: the price; ``players-0-name``: the
# name), else by its own name.
FIELD_WORDS = {
    "text": _l("Your chat message"),
    "body": _l("Your reply"),
    "price": _l("The price"),
    "price_kind": _l("The price"),
    "cash": _l("The price"),
    "shares": _l("The price"),
    "cards": _l("The cards you chose"),
    "name": _l("The name"),
    "email": _l("The email address"),
    "creator_email": _l("The email address"),
    "title": _l("The title"),
    "reason": _l("The reason"),
}
_PARTS = re.compile(r"[.\[\]-]+")


def _field(name: str) -> str:
    """A field (``cmd.text``, ``players-0-name``) named as the player knows it (``FIELD_WORDS``;
    the rest of a game page's hidden command: the form), else by its name."""
    parts = _PARTS.split(name)
    for part in reversed(parts):
        if part in FIELD_WORDS:
            return str(FIELD_WORDS[part])
    if parts[0] == "cmd":  # the hidden command of a game page's form
        return _("The form")
    return _("The field “%(name)s”", name=_shown(name))


def check_json(value: Any, where: str = "") -> None:
    """Check every string (keys included) and number of a parsed JSON value, and its depth.
    ``where`` names the value in messages (``command.text``). Raises ``ServiceError`` 400
    ``bad_input``."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ServiceError(
                400,
                "bad_input",
                _("The request is nested too deeply (at most %(depth)d levels).", depth=MAX_DEPTH),
            )
        if isinstance(item, str):
            last = path.rsplit(".", 1)[-1]
            check_text(item, _field(path or "body"), multiline=last in MULTILINE)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int | float):
            if not (isinstance(item, int) or math.isfinite(item)) or abs(item) > MAX_NUMBER:
                raise ServiceError(
                    400,
                    "bad_input",
                    _(
                        "%(where)s holds a number that cannot be used: numbers are finite and at"
                        " most %(max)d in size.",
                        where=_field(path or "body"),
                        max=MAX_NUMBER,
                    ),
                )
        elif isinstance(item, dict):
            for key, inner in item.items():
                child = f"{path}.{key}" if path else key
                check_text(key, _field(child))
                stack.append((inner, child, depth + 1))
        elif isinstance(item, list):
            stack.extend((inner, f"{path}[{i}]", depth + 1) for i, inner in enumerate(item))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str | bytes, where: str = "") -> Any:
    """Parse JSON strictly (no ``NaN``/``Infinity``) and ``check_json`` it. Raises
    ``ValueError`` (and ``RecursionError``) for text that is not JSON, ``ServiceError`` 400
    ``bad_input`` for JSON no field may hold."""
    value = json.loads(text, parse_constant=_no_constant)
    check_json(value, where)
    return value


def json_body() -> Any:
    """The request's JSON body, parsed and checked once per request (kept on the request, not on
    ``g``: an app context may outlive many requests, in tests and scripts). Raises
    ``ServiceError`` 400: ``bad_json`` for a body that is not JSON, ``bad_input`` as
    ``check_json``."""
    parsed = getattr(request, "imtheboss_json", _UNREAD)
    if parsed is _UNREAD:
        try:
            parsed = loads(request.get_data(cache=True))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            raise ServiceError(400, "bad_json", _("The request body is not valid JSON.")) from None
        request.imtheboss_json = parsed
    return parsed


_UNREAD = object()
MAX_PATH_INT = 2**31 - 1  # the largest id or number a route takes (a database integer)


class BoundedInt(IntegerConverter):
    """The ``int`` of every route, at most ``MAX_PATH_INT``: a longer number in a path is a
    404 (nothing it could name exists), never a database error."""

    def __init__(self, map: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", MAX_PATH_INT)
        super().__init__(map, *args, **kwargs)


def check_utf8(raw: bytes, where: str) -> None:
    """Raise ``ServiceError`` 400 ``bad_input`` naming ``where`` when the percent-encoded
    ``raw`` (a query string, a form body) is not UTF-8 once decoded: the bytes would otherwise
    be kept as literal ``%FF`` text."""
    try:
        unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        raise ServiceError(
            400,
            "bad_input",
            _("%(where)s holds broken characters (not UTF-8 text). Send it again.", where=where),
        ) from None


def check_request() -> None:
    """The ``before_request`` hook: the path, query string, form, checked headers and JSON body
    of every request. Raises ``ServiceError`` 400 ``bad_input``."""
    check_text(request.path, _("The web address (URL)"))
    check_utf8(request.query_string, _("The web address (URL)"))
    for name, value in request.args.items(multi=True):
        where = _("The query parameter “%(name)s”", name=_shown(name))
        check_text(name, where)
        check_text(value, where)
    for name in CHECKED_HEADERS:
        value = request.headers.get(name)
        if value is not None:
            check_text(value, _("The header “%(name)s”", name=name))
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    if request.mimetype == "application/x-www-form-urlencoded":
        check_utf8(request.get_data(cache=True), _("The form"))
    for name, value in request.form.items(multi=True):
        check_text(name, _field(name))
        check_text(value, _field(name), multiline=name in MULTILINE)
    for name, upload in request.files.items(multi=True):
        check_text(name, _field(name))
        check_text(upload.filename or "", _("The name of the uploaded file"))
    if request.is_json and request.content_length != 0:
        json_body()


def register(app: Flask) -> None:
    """Check every request of ``app`` at the edge (called by ``web.create_app``, before any
    blueprint: the routes' ``int`` is ``BoundedInt``)."""
    app.url_map.converters["int"] = BoundedInt
    # first of all hooks: the raw form body is read (and kept) before CSRF parses the form
    app.before_request_funcs.setdefault(None, []).insert(0, check_request)
