"""The board as a picture (``imtheboss.web.say.board_svg``, ``templates/partials/board_svg.html``):
the 16 spaces in ring order with their requirements, the marker, the covered spaces and their
tiles, the stack with the next tile and its end numbers, in English, 简体中文 and 繁體中文; and on
the game page, the marker's choices as forms over their spaces that place the marker."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from flask import render_template_string
from flask_babel import force_locale
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import replay
from imtheboss.engine.views import legal_commands, view
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.say import board_svg, command_forms, display
from support.page_forms import forms_of

SVG = "{http://www.w3.org/2000/svg}"
PARTIAL = (
    '{% from "partials/board_svg.html" import board_figure with context %}'
    '{{ board_figure(board_picture(v, forms), "g") }}'
)


def _state_after(deals: int):
    """A simulated game's state right after its ``deals``-th closed deal (and its roll)."""
    game = simulate(4, 3)
    closed = [i for i, e in enumerate(game.events) if e.type == "deal_closed"]
    return replay(game.events[: closed[deals - 1] + 1])


def _svg(page: str) -> ET.Element:
    found = re.search(r"<svg class=\"board-svg\".*?</svg>", page, re.S)
    assert found, page[:500]
    return ET.fromstring(
        found.group(0).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    )


def _render(app, v, forms, lang: str) -> str:
    with app.test_request_context("/"), force_locale(lang):
        return render_template_string(PARTIAL, v=v, forms=forms, chips=display.chips)


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_the_ring_in_order_with_marker_tiles_and_stack(app, lang: str) -> None:
    state = _state_after(6)
    v = view(state, 0)
    page = _render(app, v, None, lang)
    svg = _svg(page)
    cells = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").split()[:1] == ["sp"]]
    assert [int(g.get("data-space")) for g in cells] == list(range(16))
    for g, (row, col) in zip(cells, board_svg.RING, strict=True):  # clockwise on the 5 x 5 grid
        rect = g.find(f"{SVG}rect")
        assert (float(rect.get("x")), float(rect.get("y"))) == (
            (col - 1) * board_svg.CELL + 1,
            (row - 1) * board_svg.CELL + 1,
        )
    covered = {
        int(g.get("data-space")): int(g.get("data-tile")) for g in cells if g.get("data-tile")
    }
    assert covered == {int(k): t for k, t in v["covered"].items()} and len(covered) == 6
    for g in cells:
        letters = [t.text for t in g.iter(f"{SVG}text") if t.text in display.INVESTOR_NAMES]
        space = v["board"][int(g.get("data-space"))]
        assert letters == space["required"] + [x for c in space["choices"] for x in c["of"]]
        hatched = g.find(f"{SVG}rect").get("fill") == "url(#hatch)"
        assert hatched == (int(g.get("data-space")) in covered)  # covered reads without colour
        tile_label = [t.text for t in g.iter(f"{SVG}text") if "#" in (t.text or "")]
        if int(g.get("data-space")) in covered:
            assert tile_label and f"#{covered[int(g.get('data-space'))]}" in tile_label[0]
    (marked,) = [g for g in cells if "has-marker" in g.get("class")]
    assert int(marked.get("data-space")) == v["marker"]
    assert [t.text for t in marked.iter(f"{SVG}text")][-1] == "$"
    tiles = [g for g in svg.iter(f"{SVG}g") if "tile" in (g.get("class") or "").split()]
    assert [int(g.get("data-tile")) for g in tiles] == list(range(7, 16))  # tiles 1-6 are out
    assert "next" in tiles[0].get("class") and all("next" not in g.get("class") for g in tiles[1:])
    texts = {int(g.get("data-tile")): [t.text for t in g.iter(f"{SVG}text")] for g in tiles}
    assert texts[7][-1] == "4 M" and texts[10][-1] == "1" and texts[14][-1] == "1–5"
    assert texts[15][-1] == "■"  # the last tile ends the game (R1.3)
    with app.test_request_context("/"), force_locale(lang):
        names = [str(name) for name in display.INVESTOR_NAMES.values()]
    for name in names:  # the names beside the letters, as the catalogs name them
        assert f"</span> {name}</span>" in page
    if lang != "en":
        assert "Cashman" not in page
        words = [t.text for t in svg.iter(f"{SVG}text") if t.text]
        words += [t.text for t in svg.iter(f"{SVG}title")]
        for text in words:
            bare = re.sub(r"\b[CDGLSW]\b|M\b", "", text)
            assert not re.search(r"[A-Za-z]{2,}", bare), (lang, text)


def test_the_marker_choices_are_the_legal_ones(app) -> None:
    """At the start every space is a form over its square, posting the list's command; later,
    none (R2.4: the marker is placed once)."""
    state = replay(simulate(4, 3).events[:1])
    seat = state.active
    v = view(state, seat)
    forms = command_forms.command_forms(legal_commands(state, seat), v, list(state.players))
    page = _render(app, v, forms, "en")
    picks = re.findall(r'class="pick pick-r(\d) pick-c(\d)"', page)
    assert [(int(r), int(c)) for r, c in picks] == board_svg.RING
    cmds = [f["cmd"] for f in forms_of(page) if f["cmd"]]
    assert cmds == [{"do": "place_marker", "space": i} for i in range(16)]
    later = _state_after(1)
    v = view(later, later.active)
    forms = command_forms.command_forms(legal_commands(later, later.active), v, list(later.players))
    assert "board-picks" not in _render(app, v, forms, "en")


def test_placing_the_marker_from_the_board(app, game) -> None:
    """The active seat's game page lays a form over each space; posting the one over a space
    places the marker there (the same command and form as the list of moves)."""
    created, setup, clients = game
    gid = created.game_id
    page = clients[setup.boss].get(f"/g/{gid}").text
    board = page[page.index('<div class="board-picks">') :]
    board = board[: board.index("</div>")]
    over = [f for f in forms_of(board) if f["cmd"]]
    assert [f["cmd"]["space"] for f in over] == list(range(16))
    listed = [f for f in forms_of(page) if f["cmd"] and f["cmd"]["do"] == "place_marker"]
    assert len(listed) == 32 and {f["action"] for f in over} == {f["action"] for f in listed}
    other = clients[(setup.boss + 1) % 3].get(f"/g/{gid}").text
    assert "board-picks" not in other  # only the seat that places the marker gets them
    target = over[setup.space]
    response = clients[setup.boss].post(target["action"], data=target["fields"])
    assert response.status_code == 303
    with app.app_context():
        assert load_state(get_game(gid)).marker == setup.space
    page = clients[setup.boss].get(f"/g/{gid}").text
    assert f'has-marker" id="space-{setup.space}"' in page or re.search(
        rf'<g class="sp[^"]* has-marker[^"]*" id="space-{setup.space}"', page
    )
    assert "board-picks" not in page
