"""What every page carries for keyboards and screen readers, as the server writes it: a skip
link to the content, the game page's one live region outside the part htmx replaces, times
in whole seconds, and price forms whose inputs and buttons are named for their card."""

from __future__ import annotations

import re

from imtheboss.web.say.display import datetime_attr
from support.page_forms import act


def test_datetime_attr_is_utc_to_the_whole_second() -> None:
    assert datetime_attr("2026-03-01T17:00:05.123456+08:00") == "2026-03-01T09:00:05+00:00"


def test_the_game_page_has_a_skip_link_a_live_region_and_named_price_forms(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss, other = clients[s.boss], clients[s.provider]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    page = other.get(f"/g/{gid}").text

    assert re.search(r'<body>\s*<a class="skip-link" href="#main">', page)
    assert '<main id="main" tabindex="-1">' in page
    announce = page.index('id="announce"')
    assert 'role="status"' in page[announce - 80 : announce + 120]
    assert announce < page.index('<div id="live"')  # not inside what htmx swaps
    assert page.count('role="status"') == 1
    assert " hx-" not in page and "data-hx-post=" in page

    times = re.findall(r'<time datetime="([^"]+)"', page)
    assert times and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", t) for t in times)

    prices = re.findall(r'<input type="number" id="price-(\w+)" name="price"', page)
    assert prices
    for key in prices:
        assert f'<label class="label" id="what-{key}" for="price-{key}">' in page
        assert f'aria-labelledby="go-{key} what-{key}"' in page
