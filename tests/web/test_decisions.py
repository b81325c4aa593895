"""What the game page asks of its seat (imtheboss.web.decisions), through the pages' own forms on
PostgreSQL with CSRF on: the "Asked of you" box lists every decision that waits for the seat,
its windows and the terms it is to answer; a move that cannot be taken back (close, fail, a
boss card, a travel card, a recruit) asks first, with and without htmx, and nothing is written
before "Yes, do it"; a missing Accept says why."""

from __future__ import annotations

import html
import re

import pytest
from flask_babel import force_locale
from helpers_deal import NAMES
from helpers_pages import act, count, form_for, forms_of
from imtheboss.engine.board import default_board
from imtheboss.engine.views import awaiting
from imtheboss.web.decisions import asked_of, consequence
from imtheboss.web.models import CommandRecord, EventRecord
from imtheboss.web.service import get_game, load_state

HTMX = {"HX-Request": "true"}


def section(page: str, name: str) -> str | None:
    """The text of the page's ``<section class="card NAME"...>`` (tags kept), or ``None``."""
    found = re.search(rf'<section class="card {name}"[^>]*>(.*?)</section>', page, re.S)
    return html.unescape(found.group(1)) if found else None


def plain(part: str | None) -> str:
    """``part`` as a person reads it: no tags, white space collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", part or "").split())


def written(app) -> tuple[int, int]:
    with app.app_context():
        return count(EventRecord), count(CommandRecord)


def fields(form: dict) -> dict:
    return {k: v for k, v in form["fields"].items() if not k.endswith("[]")}


def test_asked_of_you_lists_the_seats_windows_and_the_terms_it_answers(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss, provider, stopper = clients[s.boss], clients[s.provider], clients[s.stopper]
    boss_name, provider_name = NAMES[s.boss], NAMES[s.provider]

    page = boss.get(f"/g/{gid}").text
    asked = section(page, "asked")
    assert asked is not None and "Place the marker on a space to start the game" in asked
    with app.app_context():
        (mine,) = [a for a in awaiting(load_state(get_game(gid))) if a["seat"] == s.boss]
    assert f'id="window-{mine["window"]}"' in asked  # the mail link's anchor
    assert section(page, "waiting") is None  # nobody else is waited for
    page = provider.get(f"/g/{gid}").text
    assert section(page, "asked") is None
    assert f"{boss_name} to place the marker" in plain(section(page, "waiting"))

    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    investor = f"investor:{s.letter}"
    act(provider, gid, {"do": "offer", "card": investor}, price="3", price_kind="cash")
    asked = section(boss.get(f"/g/{gid}").text, "asked")
    assert "Lead the negotiation: close the deal or declare it failed" in asked
    assert f"Answer {provider_name}'s offer: investor {s.letter} for 3 M" in asked
    assert section(provider.get(f"/g/{gid}").text, "asked") is None  # its offer waits on the boss

    counter = {"do": "propose", "to": s.provider, "card": investor}
    act(boss, gid, counter, price="2", price_kind="cash")
    assert "offer" not in section(boss.get(f"/g/{gid}").text, "asked")
    asked = section(provider.get(f"/g/{gid}").text, "asked")
    assert f"Answer the boss's terms: investor {s.letter} for 2 M" in asked

    act(clients[s.traveller], gid, {"do": "travel", "card": s.travel_card, "target": investor})
    asked = section(stopper.get(f"/g/{gid}").text, "asked")
    assert f"Answer {NAMES[s.traveller]}'s " in asked and ": stop it or let it happen" in asked
    assert "Without an answer from you, you let it happen." in asked and "<time" in asked


def test_moves_that_cannot_be_taken_back_ask_first(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    boss, traveller = clients[s.boss], clients[s.traveller]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})

    # Without JavaScript: the form brings a page that asks; nothing is written before "Yes".
    travel = {"do": "travel", "card": s.travel_card, "target": f"investor:{s.letter}"}
    form = form_for(traveller, gid, **travel)
    before = written(app)
    page = traveller.post(form["action"], data=fields(form))
    assert page.status_code == 200 and written(app) == before
    text = html.unescape(page.text)
    assert f"Are you sure? Send investor {s.letter} on travel" in text
    assert f"investor {s.letter} cannot take part in this deal" in text
    assert f'href="/g/{gid}">No, go back</a>' in text
    (yes,) = [f for f in forms_of(page.text) if f["fields"].get("confirmed") == "yes"]
    assert yes["cmd"] == travel and yes["fields"]["key"] == form["fields"]["key"]
    assert traveller.post(yes["action"], data=yes["fields"]).status_code == 303
    assert written(app)[0] > before[0]
    assert traveller.post(yes["action"], data=yes["fields"]).status_code == 303  # same key
    act(clients[s.stopper], gid, {"do": "stop"})

    # With htmx: the live part asks, and does not poll the question away.
    form = form_for(boss, gid, do="fail")
    before = written(app)
    part = boss.post(form["action"], data=fields(form), headers=HTMX)
    assert part.status_code == 200 and written(app) == before
    assert part.text.lstrip().startswith('<div id="live" class="live">')  # no hx-trigger
    assert "Are you sure? Declare the deal failed" in part.text
    assert "the family cards on the table go back to their owners" in part.text
    (yes,) = [f for f in forms_of(part.text) if f["fields"].get("confirmed") == "yes"]
    done = boss.post(yes["action"], data=yes["fields"], headers=HTMX)
    assert done.status_code == 200 and 'hx-trigger="every 15s"' in done.text
    assert "confirm-box" not in done.text
    with app.app_context():
        assert load_state(get_game(gid)).deal is None  # R6.5: the deal failed


def test_a_move_that_is_not_legal_now_is_refused_without_asking(app, game) -> None:
    """A forged or stale form for a move that asks first goes straight to the rules: 409."""
    created, s, clients = game
    gid = created.game_id
    form = form_for(clients[s.provider], gid, do="chat")
    data = {**fields(form), "cmd": '{"do": "close"}'}
    del data["text"]
    before = written(app)
    response = clients[s.provider].post(form["action"], data=data)
    assert response.status_code == 409 and "Are you sure" not in response.text
    assert written(app) == before


def test_a_missing_accept_says_why(app, game) -> None:
    """R4.4: terms that would bring the agreements above the proceeds cannot be accepted; the
    boss sees Reject and, beside it, the reason."""
    created, s, clients = game
    gid = created.game_id
    boss, provider = clients[s.boss], clients[s.provider]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    proceeds = default_board().spaces[s.space].shares * 2
    offer = {"do": "offer", "card": f"investor:{s.letter}"}
    act(provider, gid, offer, price=str(proceeds + 1), price_kind="cash")
    page = boss.get(f"/g/{gid}").text
    commands = [f["cmd"] for f in forms_of(page) if f["cmd"]]
    assert {"do": "reject", "with": s.provider, "letter": s.letter} in commands
    assert not [c for c in commands if c["do"] == "accept"]
    assert (
        "Accepting is not possible: these terms would bring the agreements to "
        f"{proceeds + 1} of {proceeds} M, more than the deal pays." in html.unescape(page)
    )
    act(provider, gid, offer, price=str(proceeds), price_kind="cash")
    page = boss.get(f"/g/{gid}").text
    assert "Accepting is not possible" not in page
    assert [f["cmd"]["do"] for f in forms_of(page) if f["cmd"]].count("accept") == 1


@pytest.mark.parametrize("lang", ["zh_Hans", "zh_Hant"])
def test_what_the_page_asks_is_said_in_chinese(app, game, lang: str) -> None:
    """The box, the question before a move and its consequences in both Chinese scripts: no
    English word left (an investor's letter and the M of millions are not words)."""
    created, s, clients = game
    gid = created.game_id
    page = plain(clients[s.boss].get(f"/g/{gid}?lang={lang}").text)
    assert {"zh_Hans": "等待你决定", "zh_Hant": "等待你決定"}[lang] in page
    moves = [
        {"do": "close"},
        {"do": "fail"},
        {"do": "boss"},
        {"do": "recruit", "target": "G"},
        {"do": "travel", "card": "travel:*", "target": "investor:S"},
        {"do": "travel", "card": "travel:*", "target": "family:W@1"},
    ]
    with app.test_request_context(f"/?lang={lang}"), force_locale(lang):
        texts = [consequence(cmd) for cmd in moves]
        v = {"phase": "negotiation", "awaiting": [], "deal": None}
        for kind in ("place_marker", "turn", "discard", "last_call", "negotiation"):
            v["awaiting"] = [{"seat": 0, "for": kind, "window": "w1", "until": None}]
            texts += [a.text + a.otherwise for a in asked_of(v, 0, list(NAMES))]
    for text in texts:
        assert not re.search(r"[A-Za-z]{2,}", text), (lang, text)


def test_the_boss_forms_come_in_groups_with_the_rare_ones_folded(app, game) -> None:
    """Answers to terms, then closing or failing, then proposals: those naming an investor card
    open, the many for family cards and for no card folded (a ``<details>``, no JavaScript)."""
    created, s, clients = game
    gid = created.game_id
    boss, provider = clients[s.boss], clients[s.provider]
    act(boss, gid, {"do": "place_marker", "space": s.space})
    act(boss, gid, {"do": "open_deal"})
    act(
        provider, gid, {"do": "offer", "card": f"investor:{s.letter}"}, price="1", price_kind="cash"
    )
    page = boss.get(f"/g/{gid}").text
    titles = re.findall(r'<div class="group group-(\w+)">', page)
    assert titles[:3] == ["terms", "close", "negotiate"] and titles[-1] == "talk", titles
    group = page.split('<div class="group group-negotiate">')[1].split('<div class="group')[0]
    shown, folded = group.split('<details class="more">')
    proposals = [f["cmd"] for f in forms_of(shown) if f["cmd"]["do"] == "propose"]
    hidden = [f["cmd"] for f in forms_of(folded) if f["cmd"]["do"] == "propose"]
    assert proposals and all(c["card"].startswith("investor:") for c in proposals)
    assert hidden and all(not c.get("card", "").startswith("investor:") for c in hidden)
    assert {"to": s.provider, "do": "propose"} in hidden  # R4.5: terms for no card
    assert f"{len(hidden)} more proposals: for family cards or for no card" in folded
