"""Rules help in the game: ``/rules`` shows the rules in the page's language with every rule an
anchor (``#R5.1``), the hand's cards open a line on what they do and a link to their rule,
every page links the rules, and every mail about a game too."""

from __future__ import annotations

import re

import pytest
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from sqlalchemy import select
from support.organiser import mail_text

RULE_IDS = re.compile(r"^- \*\*([RVA]\d+(?:\.\d+)?)\*\*", re.M)


def test_the_rules_page_anchors_every_rule(app, client) -> None:
    from imtheboss.web.pages.rules import DOCS

    page = client.get("/rules")
    assert page.status_code == 200
    ids = RULE_IDS.findall((DOCS / "rules.md").read_text(encoding="utf-8"))
    assert len(ids) > 50
    for rule in ids:
        assert f'<li id="{rule}">' in page.text, rule
    assert '<h2 id="the-board">' in page.text
    assert 'href="rules-decisions.md"' not in page.text  # the developers' documents: plain text
    assert 'href="/rules"' in client.get("/").text  # every page links the rules


@pytest.mark.parametrize(("lang", "word"), [("zh_Hans", "规则"), ("zh_Hant", "規則")])
def test_the_rules_page_is_in_the_page_s_language(app, client, lang: str, word: str) -> None:
    page = client.get("/rules", query_string={"lang": lang})
    assert page.status_code == 200
    assert word in page.text and '<li id="R5.1">' in page.text
    assert "The rules the engine implements" not in page.text


@pytest.mark.parametrize(
    ("lang", "joined"), [("zh_Hans", "两份繁体中文"), ("zh_Hant", "兩份繁體中文")]
)
def test_a_wrapped_chinese_line_leaves_no_space(app, client, lang: str, joined: str) -> None:
    """The sources wrap at 100 columns; a line break between two Chinese characters is no
    space in the sentence (``两份繁体 中文`` read as two words)."""
    text = client.get("/rules", query_string={"lang": lang}).text
    assert joined in text
    body = text.split('<section class="card rules">')[1]
    assert not re.search(r"[\u4e00-\u9fff，。、；：（）]\s+[\u4e00-\u9fff，。、；：（）]", body)


def test_the_rules_page_leads_back_to_the_game_of_the_seat(app, client, game) -> None:
    """A player who came by their seat's link reads "Back to the game" (not "Sign in") in the
    rules page's header; a stranger reads "Sign in"."""
    created, _s, clients = game
    header = clients[0].get("/rules").text.split("</header>")[0]
    assert f'href="/g/{created.game_id}">Back to the game</a>' in header
    assert "Sign in" not in header
    assert "Sign in" in client.get("/rules").text.split("</header>")[0]


def test_each_card_in_the_hand_says_what_it_does(app, game) -> None:
    created, s, clients = game
    gid = created.game_id
    with app.app_context():
        kinds = {CARD_NAMES[c].split(":")[0] for c in load_state(get_game(gid)).hands[s.traveller]}
    page = clients[s.traveller].get(f"/g/{gid}").text
    box = re.search(r'<details class="card-help">.*?</details>', page, re.S)
    assert box, "no card help under the hand"
    assert set(re.findall(r'<dt id="card-help-(\w+)">', box.group(0))) == kinds
    assert "travel" in kinds and 'href="/rules#R5.1"' in box.group(0)
    assert "Sends an investor card or a family card out of the running deal" in box.group(0)


def test_mails_link_the_rules_in_the_reader_s_language(app, game) -> None:
    created, _s, _clients = game
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == created.game_id, Seat.seat_index == 0)
        ).scalar_one()
        seat.locale = "zh_Hant"
        db.session.commit()
        row = (
            db.session.execute(
                select(Notification).where(
                    Notification.game_id == created.game_id, Notification.seat_index == 0
                )
            )
            .scalars()
            .first()
        )
        text = mail_text(compose(get_game(created.game_id), seat, [row]))
    assert "/rules?lang=zh_Hant" in text


def test_the_board_says_what_each_space_asks_on_a_tap(app, game) -> None:
    created, _s, clients = game
    page = clients[0].get(f"/g/{created.game_id}").text
    box = re.search(r'<details class="space-help">.*?</details>', page, re.S)
    assert box, "no space help under the board"
    spaces = re.findall(r'<li id="space-help-(\d+)">Space (\d+), (\d+) shares?: ', box.group(0))
    assert [(int(i), int(n)) for i, n, _shares in spaces] == [(i, i + 1) for i in range(16)]
    assert 'href="/rules#R1.4"' in box.group(0) and 'href="/rules#R6.1"' in box.group(0)
