"""What the game page asks of its seat (imtheboss.web.say.decisions), through the pages' own forms
on PostgreSQL with CSRF on: the "Asked of you" box lists every decision that waits for the seat,
its windows and the terms it is to answer; a move that cannot be taken back (close, fail, a
boss card, a travel card, a recruit) asks first, with and without htmx, and nothing is written
before "Yes, do it"; a missing Accept says why."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest
from flask_babel import force_locale
from imtheboss.engine.board import default_board
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.options import Options
from imtheboss.engine.setup import new_game
from imtheboss.engine.state import replay
from imtheboss.engine.views import awaiting
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import CommandRecord, EventRecord, Notification, Seat, db
from imtheboss.web.replies.address import reply_address
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.choices import has_stop_card
from imtheboss.web.say.command_forms import CommandForm
from imtheboss.web.say.decisions import asked_of, consequence, reoffers
from imtheboss.web.say.display import INVESTOR_NAMES, card_text
from sqlalchemy import select
from support.deal import NAMES, PLAYERS
from support.page_forms import act, count, form_for, forms_of
from support.reply_game import REPLY_CONFIG, answers
from support.reply_mails import quoted, raw_mail

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
    stop = form_for(clients[s.stopper], gid, do="stop")  # a scarce card: it asks too
    before = written(app)
    page = clients[s.stopper].post(stop["action"], data=fields(stop))
    assert page.status_code == 200 and written(app) == before
    assert "Your stop card cancels the card waiting to happen" in html.unescape(page.text)
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
        lapsed = {"provider": 1, "letter": "S", "price": {"cash": 2}, "card": "investor:S"}
        deal = {"boss": 0, "terms": [], "agreements": [], "lapsed": [lapsed]}
        for seat, cmd in (
            (0, {"do": "propose", "to": 1, "card": "investor:S"}),
            (1, {"do": "offer", "card": "investor:S"}),
        ):
            legal = [CommandForm(cmd, [], "", "", "negotiate")]
            texts += [f.label for f in reoffers({"deal": deal}, seat, legal) if f]
        assert len(texts) == 13
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


def boss_change_setup() -> tuple[int, int, int, int, int, str]:
    """A seed whose first player (the boss) opens a deal on a space where another seat (the
    provider) can offer one of its investor cards, while the third holds a boss card: ``(seed,
    boss, provider, usurper, space, card)``."""
    board = default_board()
    for seed in range(1000):
        start = new_game(NAMES, Options(), board, seed, datetime(2026, 3, 1, tzinfo=UTC))
        state = replay(start)
        boss = state.active
        for usurper in set(range(3)) - {boss}:
            if "boss" not in [CARD_NAMES[c] for c in state.hands[usurper]]:
                continue
            provider = 3 - boss - usurper
            for space, spec in enumerate(board.spaces):
                for letter in state.seat_investors(provider):
                    if letter in spec.letters:
                        return seed, boss, provider, usurper, space, f"investor:{letter}"
    raise AssertionError("no seed found")


def lapsed_list(client, gid: str) -> str:
    """The game page's list of lapsed terms, as HTML."""
    page = client.get(f"/g/{gid}").text
    return page.split('<ul class="plain lapsed">')[1].split("</ul>")[0]


def test_lapsed_terms_are_made_again_in_one_step(app) -> None:
    """R5.5: a boss card makes the terms with the old boss lapse; the provider offers them
    again, and the new boss could propose them again, each with one button (the price as it
    was); once open again they have no button."""
    seed, boss, provider, usurper, space, card = boss_change_setup()
    with app.app_context():
        created = create_game("Lapsed", PLAYERS, seed=seed)
    gid = created.game_id
    clients = {}
    for seat, token in enumerate(created.seat_tokens):
        clients[seat] = app.test_client()
        clients[seat].get(f"/g/{gid}/s/{token}")
    act(clients[boss], gid, {"do": "place_marker", "space": space})
    act(clients[boss], gid, {"do": "open_deal"})
    act(clients[provider], gid, {"do": "offer", "card": card}, price="1", price_kind="shares")
    act(clients[usurper], gid, {"do": "boss"})
    for seat in (boss, provider):
        act(clients[seat], gid, {"do": "allow"})
    with app.app_context():
        deal = load_state(get_game(gid)).deal
    assert deal.boss == usurper and not deal.terms and deal.lapsed

    lapsed = lapsed_list(clients[provider], gid)
    (again,) = forms_of(lapsed)
    assert again["cmd"] == {"do": "offer", "card": card}
    assert (again["fields"]["price"], again["fields"]["price_kind"]) == ("1", "shares")
    assert f"Offer {card_text(card)} again for 1 share" in html.unescape(lapsed)
    (proposal,) = [f["cmd"] for f in forms_of(lapsed_list(clients[usurper], gid))]
    assert proposal == {"do": "propose", "to": provider, "card": card}
    assert not forms_of(lapsed_list(clients[boss], gid))  # the old boss is neither side

    response = clients[provider].post(again["action"], data=fields(again))
    assert response.status_code == 303
    with app.app_context():
        deal = load_state(get_game(gid)).deal
    (terms,) = deal.terms.values()
    assert (terms.provider, terms.card, terms.price, terms.by) == (
        provider,
        card,
        ("shares", 1),
        "provider",
    )
    assert not forms_of(lapsed_list(clients[provider], gid))


@pytest.mark.parametrize(
    ("lang", "names"),
    [("en", ("Cashman", "Wadsworth")), ("zh_Hans", ("凯许曼",)), ("zh_Hant", ("凱許曼",))],
)
def test_the_board_names_the_investors_beside_their_letters(app, game, lang, names) -> None:
    """A phone shows no hover title: the board's legend names each investor by its letter."""
    created, _s, clients = game
    page = clients[0].get(f"/g/{created.game_id}?lang={lang}").text
    legend = plain(page.split('<p class="legend">')[1].split("</p>")[0])
    assert len(re.findall(r"\b[CDGLSW]\b", legend)) == 6
    with app.test_request_context(), force_locale(lang):
        wanted = [str(n) for n in INVESTOR_NAMES.values()]
    assert all(n in legend for n in [*names, *wanted]), legend


def test_a_stop_window_offers_only_what_a_seat_without_a_stop_card_can_do(app, game) -> None:
    """The provider holds no stop card: its page and its mail about the travel card's window
    say it can only let it happen (never "stop it"), and a reply "stop" says why nothing was
    done."""
    created, s, clients = game
    gid = created.game_id
    act(clients[s.boss], gid, {"do": "place_marker", "space": s.space})
    act(clients[s.boss], gid, {"do": "open_deal"})
    act(
        clients[s.traveller],
        gid,
        {"do": "travel", "card": s.travel_card, "target": f"investor:{s.letter}"},
    )
    with app.app_context():
        assert not has_stop_card(load_state(get_game(gid)), s.provider)
    asked = plain(section(clients[s.provider].get(f"/g/{gid}").text, "asked"))
    assert "you have no stop card, so you can only let it happen" in asked
    assert "stop it or" not in asked
    assert "stop it or let it happen" in plain(
        section(clients[s.stopper].get(f"/g/{gid}").text, "asked")
    )

    app.config.update(REPLY_CONFIG)
    with app.app_context():
        game_row = get_game(gid)
        seats = {
            x.seat_index: x
            for x in db.session.execute(select(Seat).where(Seat.game_id == gid)).scalars()
        }
        rows = {
            r.seat_index: r
            for r in db.session.execute(
                select(Notification).where(Notification.game_id == gid, Notification.kind == "stop")
            ).scalars()
        }
        mine = (
            compose(game_row, seats[s.provider], [rows[s.provider]])
            .get_body(("plain",))
            .get_content()
        )
        theirs = (
            compose(game_row, seats[s.stopper], [rows[s.stopper]])
            .get_body(("plain",))
            .get_content()
        )
        assert "You have no stop card, so you can only let it happen" in mine
        assert "stop it or" not in mine
        assert "stop it or let it happen" in theirs
        address = reply_address(gid, seats[s.provider], rows[s.provider].body["window"])
        email = seats[s.provider].email
    raw = raw_mail("stop\n\n" + quoted(), to=address, sender=email)
    with app.app_context():
        assert apply_reply(raw).status == "answered"
    row = answers(app)[-1]
    assert row.body["answer"] == "no_stop_card"
    with app.app_context():
        said = compose(get_game(gid), None, [row]).get_body(("plain",)).get_content()
    assert "You have no stop card, so you cannot stop this card" in said
