"""One negotiation, one conversation: every mail about a deal (its opening, terms, its end)
names the same anchor in ``References`` and ``In-Reply-To`` and has the same subject, whoever
it goes to; the rest of the game is the game's own thread, whose subjects still say what is
asked and by when. A long title is cut so the subject keeps that."""

from __future__ import annotations

import re

from imtheboss.engine.views import legal_commands
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from sqlalchemy import select


def _mails(app, gid: str) -> dict[tuple[int, str], object]:
    """Each row's mail, composed alone, by (seat, kind)."""
    out = {}
    with app.app_context():
        game = get_game(gid)
        rows = db.session.execute(
            select(Notification).where(Notification.game_id == gid).order_by(Notification.id)
        ).scalars()
        for row in rows:
            seat = db.session.execute(
                select(Seat).where(Seat.game_id == gid, Seat.seat_index == row.seat_index)
            ).scalar_one()
            out[(row.seat_index, row.kind)] = compose(game, seat, [row])
    return out


def _play_a_failed_deal(app, game) -> tuple[str, int, int, int]:
    created, setup, _clients = game
    gid = created.game_id
    with app.app_context():
        submit(gid, setup.boss, {"do": "place_marker", "space": setup.space}, "m1")
        submit(gid, setup.boss, {"do": "open_deal"}, "m2")
        state = load_state(get_game(gid))
        offer = next(c for c in legal_commands(state, setup.provider) if c["do"] == "offer")
        command = {"do": "offer", "price": {"cash": 3}}
        if "card" in offer:
            command["card"] = offer["card"]
        submit(gid, setup.provider, command, "m3")
        submit(gid, setup.boss, {"do": "fail"}, "m4")
    return gid, setup.boss, setup.provider, setup.space


def test_the_mails_of_one_negotiation_share_its_anchor_and_subject(app, game) -> None:
    gid, boss, provider, space = _play_a_failed_deal(app, game)
    mails = _mails(app, gid)
    deal = [mails[(provider, "deal_opened")], mails[(boss, "offer")]]
    deal.append(mails[(provider, "deal_failed")])
    anchor = f"<{gid.lower()}.deal-1@imtheboss.local>"
    subject = f"[I'm the Boss!] Test deal: Negotiation #1 on space {space + 1}"
    for msg in deal:
        assert msg["In-Reply-To"] == anchor
        assert str(msg["References"]).split() == [f"<{gid.lower()}.game@imtheboss.local>", anchor]
        assert str(msg["Subject"]) == subject
    # what happened leads the body, since the subject no longer says it
    first = deal[0].get_body(("plain",)).get_content().splitlines()[0]
    assert first == "A deal was opened"
    turn = next(m for (s, kind), m in mails.items() if kind == "your_turn")
    assert turn["In-Reply-To"] == f"<{gid.lower()}.game@imtheboss.local>"
    assert str(turn["Subject"]).startswith("[I'm the Boss!] Test deal: your turn (by ")
    invited = mails[(provider, "invited")]
    assert invited["References"] == turn["References"]


def test_a_long_title_is_cut_in_the_subject(app) -> None:
    from imtheboss.web.games.create import create_game
    from support.reply_game import PLAYERS

    title = "The very long name of our Friday evening club's championship game of 2026"
    with app.app_context():
        gid = create_game(title.strip(), PLAYERS).game_id
    mail = next(m for (_s, kind), m in _mails(app, gid).items() if kind == "place_marker")
    subject = str(mail["Subject"])
    assert subject.startswith("[I'm the Boss!] The very long name of o…: place the marker to")
    # a deadline within the week by its weekday: "(by Mon 09:00 UTC)"; the body has its date
    assert re.search(r" \(by \w+ \d\d:\d\d UTC[^)]*\)$", subject), subject
    assert len(subject) <= 90
    text = mail.get_body(("plain",)).get_content()
    assert re.search(r"\w+ \d{4}-\d\d-\d\d \d\d:\d\d UTC", text)
