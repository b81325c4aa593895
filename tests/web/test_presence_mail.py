"""A11 with mail: a seat that looks at each of its mails is never played for two decisions in
a row. The start of the away proxy is mailed at once, whatever the seat's mail setting (but
``off``: the web inbox only), and the look that mail brings hands the seat back."""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from imtheboss.worker import tasks
from sqlalchemy import select, update
from support.organiser import mail_text

BACK = "The moment you open the game, you are back and the server stops playing for you."

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]


def mailed_at_once(gid: str, seat: int, after: int) -> list[Notification]:
    """The outbox rows for ``seat`` after row ``after`` that its mail goes out with at once:
    urgent ones (the worker mails them to every setting but ``off``, unbatched, no digest)."""
    return list(
        db.session.execute(
            select(Notification).where(
                Notification.game_id == gid,
                Notification.seat_index == seat,
                Notification.id > after,
                Notification.urgent.is_(True),
            )
        ).scalars()
    )


def last_row() -> int:
    return db.session.execute(select(db.func.max(Notification.id))).scalar() or 0


def play_turn(gid: str, seat: int, at) -> None:
    """``seat`` rolls and draws (its own turn, by hand)."""
    submit(gid, seat, {"do": "roll"}, f"roll-{seat}-{at.isoformat()}", at)
    submit(gid, seat, {"do": "draw"}, f"draw-{seat}-{at.isoformat()}", at)


def proxied_turns(gid: str, seat: int) -> int:
    """How many of ``seat``'s turns the proxy played (its draws marked ``proxy``)."""
    return sum(
        1
        for e in load_events(gid)
        if e.type == "cards_drawn" and e.data.get("proxy") and e.data.get("seat") == seat
    )


def test_a11_a_seat_that_looks_at_each_of_its_mails_is_never_proxied_twice_in_a_row(app, clock):
    """Bob reads only the mail that asks him something (``must_act``). He says he is away; an
    hour later the server starts playing for him and plays his turn. The mail saying so goes
    to him at once, and says that opening the game brings him back; he opens it (his page's
    poll: presence), so his next turn is his own, not the proxy's."""
    with app.app_context():
        created = create_game("Mails", PLAYERS, {"proxy_hours": 1}, seed=3)
        gid, token = created.game_id, created.seat_tokens[1]
        db.session.execute(
            update(Seat).where(Seat.game_id == gid, Seat.seat_index == 1).values(notify="must_act")
        )
        db.session.execute(update(Notification).values(email_state="sent"))  # invitations
        db.session.commit()
        assert load_state(get_game(gid)).active == 1  # Bob starts: the marker is his
        submit(gid, 1, {"do": "away", "away": True}, "away", clock())
        seen = last_row()
        clock.advance(hours=2)
        submit(gid, None, {"do": "timeout"}, "timeout-1", clock())
        state = load_state(get_game(gid))
        assert state.proxied[1] and state.active == 2  # the proxy played Bob's first turn
        mails = mailed_at_once(gid, 1, seen)
        texts = [mail_text(compose(get_game(gid), seats_of(gid)[1], [row])) for row in mails]
        kinds = [row.kind for row in mails]
        sent = [tasks.deliver.run(row.id) for row in mails]  # the worker, in this process
    bob = app.test_client()
    if mails:  # he looks at each of his mails
        assert bob.get(f"/g/{gid}/s/{token}").status_code == 303
        assert bob.get(f"/g/{gid}/fragment").status_code == 200
    with app.app_context():
        clock.advance(minutes=30)
        play_turn(gid, 2, clock())
        play_turn(gid, 0, clock())
        assert proxied_turns(gid, 1) == 1  # one decision played for him, not two in a row
        state = load_state(get_game(gid))
        assert not state.proxied[1] and (state.active, state.phase) == (1, "turn_start")
    assert kinds == ["played_for"]  # the proxy's start, nothing else
    assert sent == ["sent"]
    assert all(BACK in text for text in texts)  # both parts say how to come back


def test_a11_the_proxys_start_is_not_mailed_to_a_seat_back_already(app, clock):
    """Bob's page was open when the server started playing for him: its next poll hands him
    back, and the mail telling him to come back is dropped (``skipped``), not sent."""
    with app.app_context():
        created = create_game("Back", PLAYERS, {"proxy_hours": 1}, seed=3)
        gid, token = created.game_id, created.seat_tokens[1]
        db.session.execute(update(Notification).values(email_state="sent"))  # invitations
        db.session.commit()
        submit(gid, 1, {"do": "away", "away": True}, "away", clock())
        seen = last_row()
        clock.advance(hours=2)
        submit(gid, None, {"do": "timeout"}, "timeout-1", clock())
        (start,) = [row.id for row in mailed_at_once(gid, 1, seen)]
    bob = app.test_client()
    assert bob.get(f"/g/{gid}/s/{token}").status_code == 303
    assert bob.get(f"/g/{gid}/fragment").status_code == 200
    with app.app_context():
        assert not load_state(get_game(gid)).proxied[1]
        assert tasks.deliver.run(start) == "skipped"
