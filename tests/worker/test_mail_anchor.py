"""Where a mail's link lands on the game page: the terms to answer ("terms for you") open on
the "Asked of you" box, whose answering buttons follow it (templates/partials/live.html)."""

from __future__ import annotations

import re

from imtheboss.engine.views import legal_commands
from imtheboss.web.games.create import create_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Game, Seat, db
from sqlalchemy import select
from support.worker import act, find_opening, legal, open_deal_on, players, rows_of

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def test_a_terms_for_you_mail_links_to_the_asked_box(app) -> None:
    def offer_possible(state, space) -> bool:
        return any(
            c["do"] == "offer"
            for s in range(state.n)
            if s != state.deal.boss
            for c in legal_commands(state, s)
        )

    seed, space = find_opening(3, offer_possible)
    with app.app_context():
        gid = create_game("Anchor", players("anchor"), SLOW, seed=seed).game_id
        boss = open_deal_on(gid, space, 3)
        provider, offer = next(
            (s, c) for s in range(3) if s != boss for c in legal(gid, s, "offer")
        )
        act(gid, provider, {**offer, "price": {"cash": 2}}, "offer-1")
        (row,) = [r for r in rows_of(gid, boss) if r.kind == "offer"]
        game = db.session.get(Game, gid)
        seat = db.session.scalars(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == boss)
        ).one()
        mail = compose(game, seat, [row])
    text = mail.get_body(("plain",)).get_content()
    links = re.findall(r"http://testserver/g/[^\s]+", text)
    assert links and links[0].endswith("#asked"), links
