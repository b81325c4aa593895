"""Presence, not acts, decides who is away (A6, A11): a proxied seat that opens its game page,
polls it, or follows its mail link is handed back at once; a look that changes nothing writes
no event."""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.games.submit import submit
from imtheboss.web.players.links import seat_link
from imtheboss.web.replies.address import reply_address
from imtheboss.web.replies.apply import apply_reply
from support.reply_mails import quoted, raw_mail

PLAYERS = [("Ann", "ann@example.org"), ("Bob", "bob@example.org"), ("Cy", "cy@example.org")]


def proxied_bob(app, clock) -> tuple[str, str]:
    """A game with a one-hour proxy where Bob (seat 1) said he is away and the proxy took over
    an hour later; returns (game id, Bob's token)."""
    with app.app_context():
        created = create_game("Presence", PLAYERS, {"proxy_hours": 1}, seed=3)
        gid = created.game_id
        submit(gid, 1, {"do": "away", "away": True}, "away", clock())
        clock.advance(hours=2)
        submit(gid, None, {"do": "timeout"}, "timeout-1", clock())
        assert load_state(get_game(gid)).proxied[1]
    return gid, created.seat_tokens[1]


def state(app, gid):
    with app.app_context():
        return load_state(get_game(gid))


def test_a_page_view_hands_a_proxied_seat_back(app, clock):
    gid, token = proxied_bob(app, clock)
    bob = app.test_client()
    assert bob.get(f"/g/{gid}/s/{token}").status_code == 303
    assert bob.get(f"/g/{gid}").status_code == 200  # the landing: a scanner may follow a link
    assert state(app, gid).proxied[1]
    assert bob.get(f"/g/{gid}").status_code == 200
    after = state(app, gid)
    assert not after.proxied[1] and not after.away[1] and 1 not in after.proxy_windows
    seq = after.seq
    assert bob.get(f"/g/{gid}/fragment").status_code == 200  # nothing new: no event
    assert state(app, gid).seq == seq


def test_a_poll_hands_a_proxied_seat_back(app, clock):
    gid, token = proxied_bob(app, clock)
    bob = app.test_client()
    assert bob.get(f"/g/{gid}/s/{token}").status_code == 303
    assert bob.get(f"/g/{gid}/fragment").status_code == 200
    assert not state(app, gid).proxied[1]


def test_a_mail_link_hands_a_proxied_seat_back(app, clock):
    """The mail link lands on the page (not counted: a scanner may follow it); the page's first
    poll, which only a browser makes, is Bob showing up."""
    gid, _ = proxied_bob(app, clock)
    bob = app.test_client()
    with app.app_context():
        link = seat_link(gid, seats_of(gid)[1])
    landing = bob.get("/g/" + link.split("/g/", 1)[1])  # the path: the test host
    assert landing.status_code in (302, 303)
    bob.get(landing.headers["Location"])
    assert state(app, gid).proxied[1]
    assert bob.get(f"/g/{gid}/fragment").status_code == 200
    assert not state(app, gid).proxied[1]


def test_a_reply_hands_a_proxied_seat_back_even_one_not_understood(app, clock):
    """A reply by mail is Bob showing up, even when it says nothing the game can take."""
    gid, _ = proxied_bob(app, clock)
    with app.app_context():
        bob = seats_of(gid)[1]
        address, email = reply_address(gid, bob), bob.email
    raw = raw_mail("frobnicate the teapot\n\n" + quoted(), to=address, sender=email)
    with app.app_context():
        assert apply_reply(raw).status == "answered"
    assert not state(app, gid).proxied[1]
