"""The board as a picture: the ring of 16 deal spaces in order, the marker, the covered spaces
with their tiles, and the deal tile stack (the next tile's share value, the end numbers on the
tiles' backs, R1.2, R1.3), as a server-rendered SVG (``templates/partials/board_svg.html``; no
script).

``picture(v, forms)`` reads only ``view``'s answer ``v`` (A8: the board is public) and the
viewer's ``place_marker`` forms (``command_forms.CommandForm``), which the template lays over their
spaces as buttons posting the same command as the form list does. Everything reads without
colour: each investor chip carries its letter, a covered space is hatched and names its tile,
the marker is a ``$`` token, the deal's space has a double border, a space the viewer may
choose has a dashed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from babel.lists import format_list
from flask import Flask
from flask_babel import get_locale, ngettext
from flask_babel import gettext as _
from imtheboss.engine.cards import LAST_TILE, TILE_END_NUMBERS, TILE_VALUES
from imtheboss.engine.options import Options
from imtheboss.engine.setup import tile_stack
from imtheboss.web.say import display, messages

CELL = 64  # one space's square in SVG user units; the ring is a 5 x 5 grid of them
SIZE = 5 * CELL
GAP = 2
CHIP = 10  # an investor chip's width
COLOURS = {  # the chips' colours (as web/static/style.css); the letter says it without them
    "C": ("#e8771a", "#fff"),
    "D": ("#7b3fa0", "#fff"),
    "G": ("#1d3f8f", "#fff"),
    "L": ("#2f8f3a", "#fff"),
    "S": ("#3aa6d8", "#08324a"),
    "W": ("#e6c21a", "#3d3300"),
}
RING = display.RING  # (row, column) of spaces 0..15 on the 5 x 5 grid, clockwise


@dataclass(frozen=True)
class Chip:
    """One investor letter drawn at ``(x, y)`` (its top left), with its colours; ``only``: the
    investor card alone may fill it (no family card)."""

    letter: str
    x: float
    y: float
    fill: str
    ink: str
    only: bool = False


@dataclass(frozen=True)
class Cell:
    """One deal space: its place (``x``, ``y``, top left, ``CELL`` wide), what it asks, and its
    state. ``space``: its index (0 to 15, the engine's); ``number``: the number printed on it,
    the one players read everywhere (``display.space_number``: 1 to 16). ``tile``: the deal tile
    covering it (``None``: open); ``pick``: the viewer's
    ``place_marker`` form for it; ``title``: the whole space in words (for screen readers
    and a long press)."""

    space: int
    number: int
    row: int
    col: int
    x: int
    y: int
    shares_text: str
    chips: list[Chip]
    choice_labels: list[tuple[float, float, str]]
    tile: int | None
    tile_text: str
    marker: bool
    dealing: bool
    pick: Any
    title: str


@dataclass(frozen=True)
class Tile:
    """One deal tile still in the stack, drawn at ``(x, y)``: its number, its share value (M)
    and its end numbers (R1.3; the last tile ends the game)."""

    number: int
    value: int
    ends: str
    x: float
    y: float
    next: bool


@dataclass(frozen=True)
class Board:
    """What the template draws: the cells, the stack's tiles (top first), the words of the
    centre, the investors' names beside their letters, and the forms to place the marker as
    ``(row, column, form)`` on the 5 x 5 grid."""

    cells: list[Cell]
    tiles: list[Tile]
    next_text: str
    stack_text: str
    end_rule: str
    legend: list[tuple[str, str]]
    picks: list[Any]
    title: str
    size: int = SIZE
    cell: int = CELL
    gap: int = GAP
    chip: int = CHIP


def register(app: Flask) -> None:
    """Let every template draw the board: ``board_picture(v, forms)`` (called by
    ``web.create_app``)."""
    app.jinja_env.globals["board_picture"] = picture


def picture(v: dict[str, Any], forms: list | None = None) -> Board:
    """The board of ``view``'s answer ``v`` in the current locale. ``forms``: the game page's
    grouped forms (``command_forms.command_forms``'s ``[(key, title, forms)]``) or ``None``; its
    ``place_marker`` forms become buttons on their spaces."""
    picks = {
        f.cmd["space"]: f
        for _key, _title, group in forms or []
        for f in group
        if f.cmd.get("do") == "place_marker"
    }
    deal_space = (v.get("deal") or {}).get("space")
    covered = {int(k): t for k, t in (v.get("covered") or {}).items()}
    cells = [
        _cell(i, space, covered.get(i), v.get("marker") == i, deal_space == i, picks.get(i))
        for i, space in enumerate(v["board"])
    ]
    options = Options.from_json(v.get("options") or {})
    stack = tile_stack(options)
    left = stack[len(stack) - v["tiles_left"] :] if v["tiles_left"] else []
    return Board(
        cells=cells,
        tiles=_tiles(left),
        next_text=_next_text(left),
        stack_text=ngettext("%(num)d tile left", "%(num)d tiles left", len(left)),
        end_rule=_end_rule(options),
        legend=[(x, str(name)) for x, name in display.INVESTOR_NAMES.items()],
        picks=[(*RING[i], picks[i]) for i in sorted(picks)],
        title=_("The board: 16 deal spaces clockwise from the top left"),
    )


def _cell(
    i: int, space: dict[str, Any], tile: int | None, marker: bool, dealing: bool, pick: Any
) -> Cell:
    row, col = RING[i]
    x, y = (col - 1) * CELL, (row - 1) * CELL
    only = set(space.get("investor_only") or ())
    chips = _chip_row(space["required"], x + 4, y + 15, only)
    labels: list[tuple[float, float, str]] = []
    line_y = y + 27
    for choice in space.get("choices") or []:
        labels.append((x + 4, line_y + 7, _("%(k)s of", k=choice["k"])))
        chips += _chip_row(choice["of"], x + 4, line_y + 10, only)
        line_y += 22
    return Cell(
        space=i,
        number=display.space_number(i),
        row=row,
        col=col,
        x=x,
        y=y,
        shares_text=ngettext("%(num)d share", "%(num)d shares", space["shares"]),
        chips=chips,
        choice_labels=labels,
        tile=tile,
        tile_text=_("tile #%(n)d", n=tile) if tile else "",
        marker=marker,
        dealing=dealing,
        pick=pick,
        title=_space_title(i, space, tile, marker, dealing),
    )


def _chip_row(letters: list[str], x: float, y: float, only: set[str]) -> list[Chip]:
    return [
        Chip(letter, x + k * (CHIP + 1), y, *COLOURS.get(letter, ("#777", "#fff")), letter in only)
        for k, letter in enumerate(letters)
    ]


def _space_title(i: int, space: dict[str, Any], tile: int | None, marker: bool, deal: bool) -> str:
    """Space ``i`` in words: its shares and requirements, then its state."""
    parts = [messages.card_words(x) for x in space["required"]]
    for choice in space.get("choices") or []:
        words = [messages.card_words(x) for x in choice["of"]]
        letters = format_list(words, locale=get_locale())
        parts.append(_("%(k)s of %(letters)s", k=choice["k"], letters=letters))
    text = _(
        "Space %(space)d, %(shares)s: %(needs)s",
        space=display.space_number(i),
        shares=ngettext("%(num)d share", "%(num)d shares", space["shares"]),
        needs=_("; ").join(parts),
    )
    if tile:
        text += " · " + _("closed, covered by tile #%(n)d", n=tile)
    if marker:
        text += " · " + _("the marker stands here")
    if deal:
        text += " · " + _("the deal is negotiated here")
    return text


TILE_W, TILE_H = 34, 30


def _tiles(left: list[int]) -> list[Tile]:
    """The stack's tiles laid out in rows of five in the ring's centre, top tile first."""
    out = []
    for k, n in enumerate(left):
        row, col = divmod(k, 5)
        numbers = sorted(TILE_END_NUMBERS.get(n, ()))
        ends = "" if not numbers else "–".join(dict.fromkeys((str(numbers[0]), str(numbers[-1]))))
        if n == LAST_TILE:
            ends = "■"
        out.append(
            Tile(
                number=n,
                value=TILE_VALUES[n],
                ends=ends,
                x=CELL + 8 + col * (TILE_W + 2),
                y=CELL + 44 + row * (TILE_H + 4),
                next=k == 0,
            )
        )
    return out


def _next_text(left: list[int]) -> str:
    if not left:
        return _("No deal tile is left.")
    return _("Next tile #%(n)d: %(value)d M a share", n=left[0], value=TILE_VALUES[left[0]])


def _end_rule(options: Options) -> str:
    if "V7" in options.variants:
        return _(
            "From tile #10 on, each closed deal adds an end roll; the game ends at a sum of 6."
        )
    return _("Under a tile: the end roll's numbers that end the game; ■ the last tile.")
