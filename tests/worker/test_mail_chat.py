"""Table talk reaches mail (R4.8: chat is public): a mail carries the other seats' chat lines
since the last mail sent to its reader, never its reader's own, in both parts."""

from __future__ import annotations

from imtheboss.engine.views import legal_commands
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from sqlalchemy import select, update
from support.worker import act, find_opening, legal, open_deal_on, players, rows_of

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def _offers(state, space) -> bool:
    return any(
        c["do"] == "offer"
        for s in range(state.n)
        if s != state.deal.boss
        for c in legal_commands(state, s)
    )


def _mail_of(gid: str, seat: int, row: Notification) -> tuple[str, str]:
    reader = db.session.execute(
        select(Seat).where(Seat.game_id == gid, Seat.seat_index == seat)
    ).scalar_one()
    mail = compose(get_game(gid), reader, [row])
    return mail.get_body(("plain",)).get_content(), mail.get_body(("html",)).get_content()


def test_a_mail_carries_the_table_talk_since_its_readers_last_mail(app):
    seed, space = find_opening(3, _offers)
    with app.app_context():
        gid = create_game("Talk", players("talk"), SLOW, seed=seed).game_id
        boss = open_deal_on(gid, space, 3)
        provider, offer = next(
            (s, c) for s in range(3) if s != boss for c in legal(gid, s, "offer")
        )
        other = 3 - boss - provider
        act(gid, provider, {"do": "chat", "text": "2 M, the deal is only 8 M"}, "c1")
        act(gid, boss, {"do": "chat", "text": "my own words"}, "c2")
        act(gid, other, {"do": "chat", "text": "I <b>also</b> have S"}, "c3")
        act(gid, provider, {**offer, "price": {"cash": 2}}, "o1")
        (row,) = [r for r in rows_of(gid, boss) if r.kind == "offer"]
        plain, html = _mail_of(gid, boss, row)
        assert "2 M, the deal is only 8 M" in plain and "I <b>also</b> have S" in plain
        assert "I &lt;b&gt;also&lt;/b&gt; have S" in html
        assert "my own words" not in plain
        db.session.execute(
            update(Notification).where(Notification.id == row.id).values(email_state="sent")
        )
        db.session.commit()
        act(gid, other, {"do": "chat", "text": "last word"}, "c4")
        act(gid, provider, {**offer, "price": {"cash": 3}}, "o2")
        newer = [r for r in rows_of(gid, boss) if r.kind == "offer" and r.id != row.id]
        plain, _html = _mail_of(gid, boss, newer[-1])
        assert "last word" in plain and "2 M, the deal is only 8 M" not in plain


def test_new_terms_carry_the_deals_facts_once_per_mail(app):
    """New terms to the boss say what the deal needs and pays and until when it runs; a mail
    listing two rows of terms says it once."""
    seed, space = find_opening(3, _offers)
    with app.app_context():
        gid = create_game("Facts", players("facts"), SLOW, seed=seed).game_id
        boss = open_deal_on(gid, space, 3)
        provider, offer = next(
            (s, c) for s in range(3) if s != boss for c in legal(gid, s, "offer")
        )
        act(gid, provider, {**offer, "price": {"cash": 2}}, "o1")
        act(gid, provider, {**offer, "price": {"cash": 3}}, "o2")
        rows = [r for r in rows_of(gid, boss) if r.kind == "offer"]
        assert len(rows) == 2 and all(r.body["facts"]["until"] for r in rows)
        reader = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == boss)
        ).scalar_one()
        plain = compose(get_game(gid), reader, rows).get_body(("plain",)).get_content()
        assert plain.count("It pays") == 1 and plain.count("Its negotiation runs until") == 1
        assert plain.index("3 M") < plain.index("It pays")  # after the last terms
