"""The table's pace on the pages and in the mail, on PostgreSQL: the new-game form offers it
with the default chosen, the invitation and the game page say it in one sentence, and one tap
changes a seat's orders to another pace (its turn pre-move kept); a bad pace changes nothing."""

from __future__ import annotations

import re

from imtheboss.engine.orders import BRISK, DEFAULT_PACE, RECOMMENDED, pace_orders
from imtheboss.engine.views import awaiting
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import EventRecord, Notification, Seat, db
from sqlalchemy import select
from support.organiser import csrf_of

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Cy", "cy@example.org")]
PREMOVE = {"in_place": {"when": "never"}, "after_roll": {"when": "needs_mine"}}


def _state(app, gid: str):
    with app.app_context():
        return load_state(get_game(gid))


def _events(app) -> int:
    with app.app_context():
        return db.session.scalar(select(db.func.count()).select_from(EventRecord))


def test_the_new_game_form_offers_the_paces_with_the_default_chosen(app):
    page = app.test_client().get("/new").get_data(as_text=True)
    for pace in ("brisk", "standard", "relaxed"):
        assert f'value="{pace}"' in page
    checked = re.findall(r'<input checked[^>]*name="pace"[^>]*value="(\w+)"', page)
    assert checked == [DEFAULT_PACE]


def test_the_invitation_and_the_game_page_say_the_pace_and_one_tap_changes_it(app):
    with app.app_context():
        created = create_game("Pace", PLAYERS, seed=5, starting_orders=DEFAULT_PACE)
        gid, tokens = created.game_id, created.seat_tokens
        row = db.session.scalars(
            select(Notification).where(
                Notification.game_id == gid,
                Notification.kind == "invited",
                Notification.seat_index == 1,
            )
        ).one()
        seat = db.session.scalars(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 1)
        ).one()
        from imtheboss.web.mail.compose import compose

        mail = compose(get_game(gid), seat, [row]).get_body(("plain",)).get_content()
    assert _state(app, gid).orders == [pace_orders(DEFAULT_PACE)] * 3 == [BRISK] * 3
    assert "Your standing orders follow the brisk pace:" in mail
    assert "You can change it in one tap on the game page." in mail
    bill = app.test_client()
    assert bill.get(f"/g/{gid}/s/{tokens[1]}").status_code == 303
    page = bill.get(f"/g/{gid}").get_data(as_text=True)
    assert "Your standing orders follow the brisk pace:" in page
    assert "the fair price" in page  # the summary of the brisk orders
    before = _events(app)
    bad = bill.post(f"/g/{gid}/pace", data={"pace": "turbo", "csrf_token": csrf_of(page)})
    assert bad.status_code == 400 and _events(app) == before
    orders = {**BRISK.to_json(), "turn": PREMOVE}
    form = bill.get(f"/g/{gid}/orders").get_data(as_text=True)
    assert "the fair price" in form
    with app.app_context():  # Bill also pre-moves his turn
        submit(gid, 1, {"do": "orders", "orders": orders}, "orders:premove")
    tapped = bill.post(f"/g/{gid}/pace", data={"pace": "standard", "csrf_token": csrf_of(page)})
    assert tapped.status_code == 303
    after = _state(app, gid).orders[1].to_json()
    assert after == {**RECOMMENDED.to_json(), "turn": PREMOVE}
    assert "Your standing orders follow the standard pace:" in bill.get(f"/g/{gid}").get_data(
        as_text=True
    )
    assert _state(app, gid).orders[0] == BRISK  # the others keep theirs


def _rows(app, gid: str, kind: str) -> list[tuple[int, dict]]:
    with app.app_context():
        return [
            (r.seat_index, r.body)
            for r in db.session.scalars(
                select(Notification).where(Notification.game_id == gid, Notification.kind == kind)
            )
        ]


def test_you_are_next_goes_to_the_seat_after_the_active_one_and_one_tap_plans_its_turn(app):
    """When a turn begins, the next seat hears "you are next" (unless it pre-moves already);
    one tap on the game page sets a turn pre-move (A10), a bad choice changes nothing."""
    with app.app_context():
        created = create_game("Next", PLAYERS, seed=5, starting_orders=DEFAULT_PACE)
        gid, tokens = created.game_id, created.seat_tokens
        state = load_state(get_game(gid))
        first = state.active
        assert state.phase == "place_marker"
        submit(gid, first, {"do": "place_marker", "space": 0}, "marker:1")
        state = load_state(get_game(gid))
    assert state.phase == "turn_start" and state.active == first
    nxt = state.left_of(first)
    turn = next(a["window"] for a in awaiting(state) if a["seat"] == first)  # whose turn it is
    assert _rows(app, gid, "you_are_next") == [(nxt, {"after": first, "turn": turn})]
    client = app.test_client()
    assert client.get(f"/g/{gid}/s/{tokens[nxt]}").status_code == 303
    page = client.get(f"/g/{gid}").get_data(as_text=True)
    assert "open a deal when I can fill at least 2" in page
    before = _events(app)
    bad = client.post(f"/g/{gid}/premove", data={"premove": "x", "csrf_token": csrf_of(page)})
    assert bad.status_code == 400 and _events(app) == before
    tapped = client.post(
        f"/g/{gid}/premove", data={"premove": "fill2", "csrf_token": csrf_of(page)}
    )
    assert tapped.status_code == 303
    orders = _state(app, gid).orders[nxt]
    assert orders.to_json()["turn"] == {
        "in_place": {"when": "fill", "k": 2},
        "after_roll": {"when": "fill", "k": 2},
    }
    assert orders.prices == BRISK.prices  # the rest of its orders kept
    with app.app_context():
        from imtheboss.web.say.messages import row_text

        row = db.session.scalars(
            select(Notification).where(
                Notification.game_id == gid, Notification.kind == "you_are_next"
            )
        ).one()
        names = [n for n, _e in PLAYERS]
        assert row_text(row, names).startswith(f"You are next, after {names[first]}.")


def test_a_running_deal_offers_one_tap_fair_price_and_boss_limit(app):
    """At the relaxed pace, a seat whose investor card the deal's space needs gets one tap to
    post it at the fair price (A10, A11), and the boss one tap for a limit of the fair price
    plus 2 M; a bad tap changes nothing."""
    from imtheboss.engine.context import fair_price

    with app.app_context():
        created = create_game("Taps", PLAYERS, seed=5, starting_orders="relaxed")
        gid, tokens = created.game_id, created.seat_tokens
        state = load_state(get_game(gid))
        boss = state.active
        submit(gid, boss, {"do": "place_marker", "space": 0}, "marker:1")
        submit(gid, boss, {"do": "open_deal"}, "deal:1")
        state = load_state(get_game(gid))
    assert state.deal is not None and state.deal.boss == boss
    space = state.board.spaces[state.deal.space]
    fair = fair_price(state)
    provider = next(
        (s for s in range(3) if s != boss and set(state.seat_investors(s)) & set(space.letters)),
        None,
    )
    client = app.test_client()
    assert client.get(f"/g/{gid}/s/{tokens[boss]}").status_code == 303
    page = client.get(f"/g/{gid}").get_data(as_text=True)
    assert f"As boss, accept offers up to the fair price plus 2 M (now {fair + 2} M) at once" in (
        page
    )
    before = _events(app)
    bad = client.post(f"/g/{gid}/tap", data={"tap": "price:Q", "csrf_token": csrf_of(page)})
    assert bad.status_code == 400 and _events(app) == before
    done = client.post(f"/g/{gid}/tap", data={"tap": "limit", "csrf_token": csrf_of(page)})
    assert done.status_code == 303
    assert _state(app, gid).orders[boss].limit_for("C") == ("fair", 2)
    assert provider is not None
    letter = sorted(set(state.seat_investors(provider)) & set(space.letters))[0]
    other = app.test_client()
    assert other.get(f"/g/{gid}/s/{tokens[provider]}").status_code == 303
    page = other.get(f"/g/{gid}").get_data(as_text=True)
    assert f"at the fair price (now {fair} M) in every deal" in page
    other.post(f"/g/{gid}/tap", data={"tap": f"price:{letter}", "csrf_token": csrf_of(page)})
    state = _state(app, gid)
    assert state.orders[provider].price_for(letter) == ("fair", 0)
    assert any(t.provider == provider for t in state.deal.agreements.values()) or (
        (provider, letter) in state.deal.terms
    )


def test_a_rematch_keeps_the_tables_pace(app, clock):
    """The rematch of a brisk table starts brisk again (the pace every seat began with)."""
    import random

    from imtheboss.engine.bots import SensibleBot
    from support.api_client import signed_in
    from support.play import play_to_end

    with app.app_context():
        old = create_game(
            "Brisk group", PLAYERS, {"windows": {"turn": 7200}}, starting_orders="brisk"
        )
        state = load_state(get_game(old.game_id))
    bots = [SensibleBot() for _ in PLAYERS]
    play_to_end(app, clock, old.game_id, state, bots, random.Random(5))
    organiser, csrf = signed_in(app, old.game_id, old.admin_token, admin=True)
    made = organiser.post(f"/g/{old.game_id}/admin/rematch", data={"csrf_token": csrf})
    assert made.status_code == 303
    new = made.headers["Location"].split("/g/")[1].split("/")[0]
    with app.app_context():
        assert get_game(new).settings["start"]["orders"] == "brisk"


def test_the_deal_s_mails_carry_its_one_tap_orders_while_they_are_unset(app) -> None:
    """At the relaxed pace, the deal-opened mail to a seat whose investor card the space needs
    lists the tap that posts it at the fair price, and the boss's mail of terms the tap for a
    limit, each linking the game page's tap buttons (``#taps``); once set, or once the deal is
    over, the mail lists none."""
    from imtheboss.engine.context import fair_price
    from imtheboss.web.games.seats import seats_of
    from imtheboss.web.mail.compose import compose

    def mail(kind: str, seat: int) -> str:
        with app.test_request_context():
            row = db.session.execute(
                select(Notification)
                .where(Notification.kind == kind, Notification.seat_index == seat)
                .order_by(Notification.id.desc())
                .limit(1)
            ).scalar_one()
            sent = compose(get_game(gid), seats_of(gid)[seat], [row])
        return sent.get_body(("plain",)).get_content()

    with app.app_context():
        created = create_game("Mailed taps", PLAYERS, seed=5, starting_orders="relaxed")
        gid = created.game_id
        state = load_state(get_game(gid))
        boss = state.active
        submit(gid, boss, {"do": "place_marker", "space": 0}, "marker:1")
        submit(gid, boss, {"do": "open_deal"}, "deal:1")
        state = load_state(get_game(gid))
    space = state.board.spaces[state.deal.space]
    fair = fair_price(state)
    provider = next(
        s for s in range(3) if s != boss and set(state.seat_investors(s)) & set(space.letters)
    )
    letter = sorted(set(state.seat_investors(provider)) & set(space.letters))[0]
    opened = mail("deal_opened", provider)
    assert f"at the fair price (now {fair} M) in every deal" in opened, opened
    assert re.search(rf"/g/{gid}/m/\S+#taps", opened), opened
    with app.app_context():
        submit(
            gid,
            provider,
            {"do": "offer", "card": f"investor:{letter}", "price": {"cash": 1}},
            "o:1",
        )
    terms = mail("offer", boss)
    assert f"accept offers up to the fair price plus 2 M (now {fair + 2} M)" in terms, terms
    with app.app_context():
        submit(gid, provider, {"do": "orders", "orders": pace_orders("brisk").to_json()}, "s:1")
    assert "#taps" not in mail("deal_opened", provider)
