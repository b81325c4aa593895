"""A reply answers only what its mail asked (A7): the answer to a reply names the seat's next
decision's window, and an address without a window (a digest, a confirmation while several
things wait) carries the newest window opened when it was made, so no reply to it answers a
window opened later, whatever it says. An address of the older form, without that mark,
answers no window at all: only a chat."""

from __future__ import annotations

import pytest
from imtheboss.engine.views import awaiting
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.replies.address import read_address, reply_address
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.replies.mail import way_now
from sqlalchemy import select
from support.deal import PLAYERS, find_setup
from support.reply_game import REPLY_CONFIG, answers
from support.reply_mails import quoted, raw_mail


@pytest.fixture
def app_config():
    return dict(REPLY_CONFIG)


def _deal(app):
    """A game whose boss placed the marker and opened the deal: ``(game_id, setup)``."""
    setup = find_setup()
    with app.app_context():
        gid = create_game("Friday", PLAYERS, seed=setup.seed).game_id
        submit(gid, setup.boss, {"do": "place_marker", "space": setup.space}, "k-place")
        submit(gid, setup.boss, {"do": "open_deal"}, "k-open")
    return gid, setup


def _travel(app, gid: str, setup) -> str:
    """The traveller plays its travel card: the stop window it opens."""
    card = {"do": "travel", "card": setup.travel_card, "target": f"investor:{setup.letter}"}
    with app.app_context():
        submit(gid, setup.traveller, card, "k-travel")
        return load_state(get_game(gid)).pending.window.id


def _seat(gid: str, index: int) -> Seat:
    return db.session.execute(
        select(Seat).where(Seat.game_id == gid, Seat.seat_index == index)
    ).scalar_one()


def _reply(app, to: str, body: str, n: str, who: int) -> tuple[str, str]:
    """``who``'s reply ``body`` to ``to``: the outcome's ``(status, reason)``."""
    raw = raw_mail(
        body + "\n\n" + quoted(), to=to, sender=PLAYERS[who][1], message_id=f"<{n}@client>"
    )
    with app.app_context():
        outcome = apply_reply(raw)
    return outcome.status, outcome.reason


def _answers_of(app, gid: str) -> list[tuple[str, int, str | None]]:
    """The seats' answers to windows in the log, ``(window, seat, via)``."""
    with app.app_context():
        return [
            (e.data["window"], e.data["seat"], e.data.get("via"))
            for e in load_events(gid)
            if e.type == "window_answered"
        ]


def test_the_answer_names_the_next_decision_and_a_later_window_is_not_answered(app) -> None:
    gid, setup = _deal(app)
    eve = setup.provider  # not the boss, nor the card's player: the stop window waits for her
    stop_window = _travel(app, gid, setup)
    with app.app_context():
        row = db.session.execute(
            select(Notification).where(Notification.kind == "stop", Notification.seat_index == eve)
        ).scalar_one()
        asked = compose(get_game(gid), _seat(gid, eve), [row])
    assert _reply(app, str(asked["Reply-To"]), "maybe later", "r1", eve) == ("answered", "unclear")
    with app.app_context():
        answer = compose(db.session.get(Game, gid), None, answers(app)[-1:])
        # the answer's own address answers the window that waits for Eve, and nothing later
        ticket = read_address(str(answer["Reply-To"]))
    assert ticket.window == stop_window
    with app.app_context():
        submit(gid, eve, {"do": "allow", "window": stop_window}, "k-web")
        submit(gid, setup.boss, {"do": "allow", "window": stop_window}, "k-boss")
    before = _answers_of(app, gid)
    assert _reply(app, str(answer["Reply-To"]), "allow", "r2", eve) == ("answered", "window_ended")
    assert _answers_of(app, gid) == before


def test_a_reply_to_a_mail_without_a_window_answers_no_window_opened_after_it(app) -> None:
    gid, setup = _deal(app)
    eve = setup.provider  # not the boss, nor the card's player: the stop window waits for her
    with app.app_context():  # what a confirmation or a digest carries while no window waits
        way = way_now(get_game(gid), _seat(gid, eve), "en")
        assert way is not None and "offer 3" in way.words  # she may offer, nothing waits
        assert read_address(way.address).window == ""
    stop_window = _travel(app, gid, setup)
    with app.app_context():
        assert eve in {a["seat"] for a in awaiting(load_state(get_game(gid)))}
    assert _reply(app, way.address, "allow", "r1", eve) == ("answered", "newer")
    assert _answers_of(app, gid) == []
    with app.app_context():  # the mark: the newest window opened when it was made
        assert read_address(way.address).newest < int(stop_window[1:])
    with app.app_context():
        answer = compose(db.session.get(Game, gid), None, answers(app)[-1:])
        # the answer's own address asks about the stop window: answering it there works
        assert read_address(str(answer["Reply-To"])).window == stop_window
    text = answer.get_body(("plain",)).get_content()
    assert "asked after the mail you answered" in text and "answer the newer mail" in text
    assert _reply(app, str(answer["Reply-To"]), "allow", "r2", eve) == ("done", "")
    assert _answers_of(app, gid) == [(stop_window, eve, "mail")]


def test_an_address_of_the_older_form_only_chats(app) -> None:
    gid, setup = _deal(app)
    eve = setup.provider  # not the boss, nor the card's player: the stop window waits for her
    with app.app_context():
        old = reply_address(gid, _seat(gid, eve))  # no window, no mark
    _travel(app, gid, setup)
    assert _reply(app, old, "allow", "r1", eve) == ("answered", "newer")
    assert _answers_of(app, gid) == []
    assert _reply(app, old, "chat: hello", "r2", eve) == ("done", "")
    with app.app_context():
        assert [e.data["text"] for e in load_events(gid) if e.type == "chat"] == ["hello"]


def test_a_reply_to_the_place_marker_mail_does_not_take_the_next_step_of_the_turn(app) -> None:
    """The turn's steps share its window: the mail that asks to place the marker carries that
    step, so once the marker is placed on the web, its ``roll`` or ``deal`` makes nothing and
    is told to answer the newer mail; a reply to the address made now takes the step."""
    setup = find_setup()
    with app.app_context():
        gid = create_game("Friday", PLAYERS, seed=setup.seed).game_id
        boss = setup.boss
        placing = way_now(get_game(gid), _seat(gid, boss), "en").address
        submit(gid, boss, {"do": "place_marker", "space": setup.space}, "k-place")
        now = way_now(get_game(gid), _seat(gid, boss), "en").address
        before = len(load_events(gid))
        old, new = read_address(placing), read_address(now)
    assert old.step == "p" and new.step != "p" and new.window == old.window
    for n, word in enumerate(("deal", "roll")):
        assert _reply(app, placing, word, f"old-{n}", boss) == ("answered", "newer")
    with app.app_context():
        assert len(load_events(gid)) == before
    assert _reply(app, now, "deal", "new-0", boss)[0] == "done"
    with app.app_context():
        assert any(e.type == "deal_opened" for e in load_events(gid)[before:])


def test_a_chat_to_the_mail_of_an_ended_window_is_still_taken(app) -> None:
    gid, setup = _deal(app)
    eve = setup.provider
    stop_window = _travel(app, gid, setup)
    with app.app_context():
        row = _seat(gid, eve)
        address = reply_address(gid, row, stop_window)
        submit(gid, eve, {"do": "allow", "window": stop_window}, "k-web")
        submit(gid, setup.boss, {"do": "allow", "window": stop_window}, "k-boss")
    assert _reply(app, address, "allow", "late-0", eve) == ("answered", "window_ended")
    assert _reply(app, address, "chat: still here", "late-1", eve)[0] == "done"
    with app.app_context():
        said = [e.data["text"] for e in load_events(gid) if e.type == "chat"]
    assert said == ["still here"]
