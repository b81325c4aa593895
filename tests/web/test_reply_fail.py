"""Failing a deal by mail is asked back, as the page asks "are you sure?": a first reply
``fail`` changes nothing and is answered "reply fail again to confirm"; a second one fails the
deal. ``fail`` is never among the words a mail suggests."""

from __future__ import annotations

import pytest
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Seat, db
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.mail import way_now
from sqlalchemy import select
from support.deal import PLAYERS, find_setup
from support.reply_game import REPLY_CONFIG, answers
from support.reply_mails import quoted, raw_mail


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


def _deal_open(app) -> tuple[str, int]:
    """A game whose boss has just opened a deal: its id and the boss's seat."""
    setup = find_setup()
    with app.app_context():
        gid = create_game("Friday", PLAYERS, seed=setup.seed).game_id
        submit(gid, setup.boss, {"do": "place_marker", "space": setup.space}, "k1")
        submit(gid, setup.boss, {"do": "open_deal"}, "k2")
    return gid, setup.boss


def _way(app, gid: str, boss: int, lang: str = "en"):
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == boss)
        ).scalar_one()
        return way_now(get_game(gid), seat, lang)


def _reply(app, to: str, boss: int, body: str, n: str) -> str:
    raw = raw_mail(body + "\n\n" + quoted(), to=to, sender=PLAYERS[boss][1], message_id=f"<{n}@c>")
    with app.app_context():
        return apply_reply(raw).status


def _failed(app, gid: str) -> list:
    with app.app_context():
        return [e for e in load_events(gid) if e.type == "deal_failed"]


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_fail_is_not_among_the_words_a_mail_suggests(app, lang) -> None:
    gid, boss = _deal_open(app)
    way = _way(app, gid, boss, lang)
    assert way is not None and way.words
    assert not {"fail", "失败", "失敗"} & set(way.words)


def test_a_first_fail_by_mail_asks_back_and_a_second_fails_the_deal(app) -> None:
    gid, boss = _deal_open(app)
    address = _way(app, gid, boss).address
    assert _reply(app, address, boss, "fail", "r1") == "answered"
    assert _failed(app, gid) == []  # one word did not end the deal
    [row] = answers(app)
    assert row.body["answer"] == "confirm_fail"
    with app.app_context():
        mail = compose(get_game(gid), None, [db.session.merge(row)])
    text = mail.get_body(("plain",)).get_content()
    assert "Do you really want to let your deal fail?" in text
    assert "Reply “fail” again to confirm." in text
    # the answer's own address (or the first mail's) takes the second "fail"
    assert _reply(app, str(mail["Reply-To"]), boss, "Fail!", "r2") == "done"
    assert len(_failed(app, gid)) == 1


def test_a_fail_asked_back_says_the_word_in_the_seat_s_language(app) -> None:
    gid, boss = _deal_open(app)
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == boss)
        ).scalar_one()
        seat.locale = "zh_Hans"
        db.session.commit()
    assert _reply(app, _way(app, gid, boss).address, boss, "失败", "r1") == "answered"
    [row] = answers(app)
    with app.app_context():
        mail = compose(get_game(gid), None, [db.session.merge(row)])
    assert "再回复一次“失败”即可确认。" in mail.get_body(("plain",)).get_content()
    assert _failed(app, gid) == []
