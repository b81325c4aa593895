"""The board: 16 deal spaces in a fixed clockwise ring (R1.4).

The board is data. It is loaded from JSON, checked by one validator (`load_board`), and never
hard-coded in game logic. A space's JSON shape (docs/scenarios.md, `board`)::

    {"shares": 6, "required": ["W", "S", "C"],
     "choices": [{"k": 2, "of": ["G", "D", "L"]}], "investor_only": []}

A board file is either a list of 16 such spaces or
``{"name": str, "provenance": str, "spaces": [16 spaces]}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from imtheboss.engine.stored import ByContent

LETTERS: tuple[str, ...] = ("C", "D", "G", "L", "S", "W")
"""The six investors (see docs/rules.md, Terms): Cashman, Dougherty, Goldman, Liebgeld, Sacks,
Wadsworth."""

SPACE_COUNT = 16  # R1.4
MIN_INVESTORS = 2  # docs/rules.md, board: every space needs 2 to 5 investors
MAX_INVESTORS = 5

_SPACE_KEYS = ("shares", "required", "choices", "investor_only")
_REQUIRED_SPACE_KEYS = ("shares", "required")  # choices and investor_only default to empty
_CHOICE_KEYS = ("k", "of")
_FILE_KEYS = ("name", "provenance", "spaces")


class BoardError(ValueError):
    """A board that cannot be used (R1.4). ``space`` is the 0-based index of the offending
    space, or None when the problem is with the board as a whole (its source, its shape or its
    number of spaces)."""

    def __init__(self, message: str, space: int | None = None) -> None:
        super().__init__(message)
        self.space = space


@dataclass(frozen=True)
class Choice:
    """``k`` investors out of the letters ``of`` (1 <= k < len(of))."""

    k: int
    of: tuple[str, ...]


@dataclass(frozen=True)
class Space:
    """One deal space (R1.4): the deal pays ``shares`` shares and needs every ``required``
    letter plus ``k`` letters of each choice group. Letters in ``investor_only`` may be filled
    only by the investor card itself, not by a family card."""

    shares: int
    required: tuple[str, ...]
    choices: tuple[Choice, ...] = ()
    investor_only: tuple[str, ...] = ()

    @property
    def letters(self) -> tuple[str, ...]:
        """Every letter the space can use, sorted and unique."""
        found = set(self.required)
        for choice in self.choices:
            found.update(choice.of)
        return tuple(sorted(found))

    @property
    def investor_count(self) -> int:
        """How many investors a deal here needs: required letters plus each group's ``k``."""
        return len(self.required) + sum(choice.k for choice in self.choices)

    def to_json(self) -> dict[str, Any]:
        """The space in the docs/scenarios.md format (all four keys, lists for letters)."""
        return {
            "shares": self.shares,
            "required": list(self.required),
            "choices": [{"k": c.k, "of": list(c.of)} for c in self.choices],
            "investor_only": list(self.investor_only),
        }


@dataclass(frozen=True)
class Board:
    """The ring of 16 spaces in clockwise order (R1.4), with a name and a note on where the
    layout comes from."""

    spaces: tuple[Space, ...]
    name: str = "custom"
    provenance: str = ""

    def to_json(self) -> list[dict[str, Any]]:
        """The 16 spaces as a JSON-ready list, exactly the docs/scenarios.md ``board`` format;
        ``load_board(board.to_json())`` gives back an equal board's spaces."""
        return [space.to_json() for space in self.spaces]

    def to_dict(self) -> dict[str, Any]:
        """The whole board file: ``{"name", "provenance", "spaces"}``."""
        return {"name": self.name, "provenance": self.provenance, "spaces": self.to_json()}


def load_board(source: Any) -> Board:
    """Load and validate a board (R1.4).

    ``source`` is one of:

    - ``"default"``: the shipped reconstruction (`default_board`);
    - a path (``str`` or ``Path``) to a JSON file holding either form below;
    - a list of 16 space dicts (docs/scenarios.md format);
    - a dict ``{"name": str, "provenance": str, "spaces": [...]}`` (name and provenance optional);
    - a `Board`, returned unchanged.

    Raises `BoardError` (a ValueError) naming the problem, and the 0-based space index where
    there is one: an unreadable path or invalid JSON; a wrong number of spaces; a space that is
    not an object or has an unknown or missing key; shares that are not a positive integer; a
    letter not in `LETTERS`; a letter repeated, both required and in a choice group, or in two
    groups; an impossible choice group (k < 1 or k >= len(of)); an investor-only letter the
    space does not use; fewer than 2 or more than 5 investors.
    """
    if isinstance(source, Board):
        return source
    if isinstance(source, str) and source == "default":
        return default_board()
    if isinstance(source, str | Path):
        path = Path(source)
        return _parse(_read_json(path), default_name=path.stem)
    return _parse(source, default_name="custom")


stored_board: ByContent[Board] = ByContent(load_board)
"""``load_board(data)`` for a board stored as JSON data (a ``game_started`` event's, a
snapshot's), checked once per process and then found by its content (``engine.stored``).
Raises `BoardError` as `load_board`."""


@cache
def default_board() -> Board:
    """The shipped board, ``engine/data/default_board.json``: a balanced reconstruction of the
    printed board (docs/rules.md, board; its ``provenance`` says what it rests on). Loaded once."""
    text = (
        resources.files("imtheboss.engine").joinpath("data/default_board.json").read_text("utf-8")
    )
    return _parse(_decode(text, "default_board.json"), default_name="default")


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(f"cannot read board file {str(path)!r}: {exc}") from exc
    return _decode(text, str(path))


def _decode(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BoardError(f"invalid JSON in board file {where!r}: {exc}") from exc


def _parse(data: Any, default_name: str) -> Board:
    name, provenance = default_name, ""
    if isinstance(data, Mapping):
        _check_keys(data, _FILE_KEYS, required=("spaces",), where="the board file")
        name = data.get("name", name)
        provenance = data.get("provenance", provenance)
        for key, value in (("name", name), ("provenance", provenance)):
            if not isinstance(value, str):
                raise BoardError(f"board {key} must be a string, got {type(value).__name__}")
        data = data["spaces"]
    if not isinstance(data, list | tuple):
        raise BoardError(
            f"a board must be a list of {SPACE_COUNT} spaces, got {type(data).__name__}"
        )
    if len(data) != SPACE_COUNT:
        raise BoardError(f"wrong number of spaces: expected {SPACE_COUNT}, got {len(data)}")
    spaces = tuple(_parse_space(raw, index) for index, raw in enumerate(data))
    return Board(spaces=spaces, name=name, provenance=provenance)


def _check_keys(
    data: Mapping[Any, Any],
    allowed: tuple[str, ...],
    required: tuple[str, ...],
    where: str,
    index: int | None = None,
) -> None:
    for key in data:
        if key not in allowed:
            raise BoardError(
                f"unknown key {key!r} in {where} (allowed: {', '.join(allowed)})", index
            )
    for key in required:
        if key not in data:
            raise BoardError(f"missing key {key!r} in {where}", index)


def _parse_space(raw: Any, index: int) -> Space:
    where = f"space {index}"
    if not isinstance(raw, Mapping):
        raise BoardError(f"{where} must be an object, got {type(raw).__name__}", index)
    _check_keys(raw, _SPACE_KEYS, _REQUIRED_SPACE_KEYS, where, index)

    shares = raw["shares"]
    if not _is_int(shares) or shares < 1:
        raise BoardError(f"bad shares {shares!r} in {where}: expected a positive integer", index)

    required = _letters(raw["required"], index, "required")
    seen: dict[str, str] = {}  # letter -> where it first appeared in this space
    _claim(required, "required", seen, index)

    raw_choices = raw.get("choices", [])
    if not isinstance(raw_choices, list | tuple):
        raise BoardError(
            f"choices in {where} must be a list, got {type(raw_choices).__name__}", index
        )
    choices = []
    for n, raw_choice in enumerate(raw_choices):
        group = f"choice group {n}"
        if not isinstance(raw_choice, Mapping):
            raise BoardError(
                f"{group} in {where} must be an object, got {type(raw_choice).__name__}", index
            )
        _check_keys(raw_choice, _CHOICE_KEYS, _CHOICE_KEYS, f"{group} of {where}", index)
        k = raw_choice["k"]
        of = _letters(raw_choice["of"], index, group)
        if not _is_int(k) or not 1 <= k < len(of):
            raise BoardError(
                f"impossible choice group in {where}: k={k!r} of {list(of)} "
                f"(need 1 <= k < number of letters, here {len(of)})",
                index,
            )
        _claim(of, group, seen, index)
        choices.append(Choice(k=k, of=of))

    investor_only = _letters(raw.get("investor_only", []), index, "investor_only")
    _claim(investor_only, "investor_only", {}, index)
    for letter in investor_only:
        if letter not in seen:
            raise BoardError(
                f"investor-only letter {letter!r} in {where} is not a letter the space uses",
                index,
            )

    space = Space(
        shares=shares, required=required, choices=tuple(choices), investor_only=investor_only
    )
    count = space.investor_count
    if count < MIN_INVESTORS:
        problem = "too few investors"
    elif count > MAX_INVESTORS:
        problem = "too many investors"
    else:
        return space
    raise BoardError(
        f"{problem} in {where}: {count} (a space needs {MIN_INVESTORS} to {MAX_INVESTORS})",
        index,
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _letters(raw: Any, index: int, field: str) -> tuple[str, ...]:
    if not isinstance(raw, list | tuple):
        raise BoardError(
            f"{field} in space {index} must be a list of letters, got {type(raw).__name__}",
            index,
        )
    for letter in raw:
        if not isinstance(letter, str) or letter not in LETTERS:
            raise BoardError(
                f"bad letter {letter!r} in space {index} ({field}); "
                f"letters are {', '.join(LETTERS)}",
                index,
            )
    return tuple(raw)


def _claim(letters: tuple[str, ...], field: str, seen: dict[str, str], index: int) -> None:
    """Record where each letter appears in a space; a second appearance is an error."""
    for letter in letters:
        if letter in seen:
            first = seen[letter]
            if first == field:
                problem = f"letter {letter!r} repeated in {field}"
            else:
                problem = f"letter {letter!r} is both in {first} and in {field}"
            raise BoardError(f"overlapping letters in space {index}: {problem}", index)
        seen[letter] = field
