"""Standing orders (A10) and the away proxy (A11), through ``decide`` on chosen positions.

The flat board: every space needs C and D and pays 2 shares (4 M on tile #1). Ann (seat 0)
controls C, Bob (1) D, Cid (2) G, Dee (3) L; S and W are in the side pool.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from imtheboss.engine.orders import RECOMMENDED, Orders, OrdersError
from imtheboss.engine.settle import aimed_at, involved
from imtheboss.engine.simulate import SimulationError, simulate
from imtheboss.engine.views import redact_event, view
from support.async_play import FLAT_BOARD, T0, Table, allow_all, flat_board, of_type, types

FOUR = {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]}
ALLOW = {"stop": "allow"}
UNLESS = {"stop": "unless_aimed", "last_call": "unless_involved"}


NO_POOL = {0: ["C"], 1: ["D", "S"], 2: ["G", "W"], 3: ["L"]}


def table(hands=None, orders=None, *, board=FLAT_BOARD, investors=None, **extra: Any) -> Table:
    return Table.at_position(
        {
            "investors": investors or FOUR,
            "side_pool": [] if investors else ["S", "W"],
            "hands": hands or {},
            "draw_pile": "rest",
            "marker": 0,
            "active": 0,
            "orders": orders or {},
        },
        board=board,
        dice=[1] * 8,
        **extra,
    )


def marked(events, seat: int) -> list[str]:
    """The types of the events made by ``seat``'s orders."""
    return [e.type for e in events if e.data.get("order") and e.by == seat]


# -- the orders themselves -----------------------------------------------------------------


def test_a10_orders_round_trip_and_refuse_nonsense():
    """A10: orders read back what they wrote; a bad field is refused by name, with the rule."""
    full = {
        "stop": "unless_aimed",
        "last_call": "pass",
        "prices": {"C": {"cash": 3}, "D": {"shares": 1}},
        "boss": {"limits": {"*": 2, "C": 4}, "close": True},
        "turn": {"in_place": {"when": "needs_mine"}, "after_roll": {"when": "fill", "k": 2}},
    }
    assert Orders.from_json(full).to_json() == full
    assert Orders.from_json({}) == Orders()
    for bad in (
        {"stop": "maybe"},
        {"prices": {"X": {"cash": 1}}},
        {"prices": {"C": {"cash": -1}}},
        {"boss": {"limits": {"C": "4"}}},
        {"turn": {"in_place": {"when": "always"}}},
        {"turn": {"in_place": {"when": "fill", "k": 9}, "after_roll": {"when": "never"}}},
        {"sleep": True},
        [],
        *({key: value} for key in ("prices", "boss") for value in ([], 0, False, "")),
        {"boss": {"limits": []}},
        {"turn": {"in_place": {"when": "always", "k": 3}, "after_roll": {"when": "never"}}},
    ):
        with pytest.raises(OrdersError):
            Orders.from_json(bad)
    assert Orders.from_json({"prices": None, "boss": {"limits": None}}) == Orders()
    t = table()
    error = t.refused(1, "orders", "bad_command", {"orders": {"stop": "maybe"}})
    assert error.rule == "A10" and "stop" in error.message


def test_a10_orders_are_private_to_their_seat():
    """A10, A8: a seat's orders are in its own view and its own feed; every other seat sees
    only that something private happened, and no mark on the events the orders make."""
    t = table()
    (event,) = t.do(1, "orders", orders=ALLOW)
    assert view(t.state, 1)["you"]["orders"]["stop"] == "allow"
    for seat in (0, 2, 3, None):
        assert redact_event(event, seat) == {"type": "private", "by": None}
        assert "orders" not in str(view(t.state, seat)["seats"])
    assert redact_event(event, 1)["orders"]["stop"] == "allow"


def test_a10_an_order_acting_is_not_the_seat_acting():
    """A6, A10: events made by an order do not count as the seat's own act: a seat's missed
    windows keep counting, so an absent player with orders still becomes away."""
    t = table({2: ["travel:*"]}, {1: ALLOW})
    t.state.missed[1] = 1  # one missed window already
    t.do(0, "open_deal")
    t.do(2, "travel", card="travel:*", target="investor:C")
    assert t.state.missed[1] == 1 and not t.state.away[1]


# -- stop windows (A2) ------------------------------------------------------------------------


def test_a10_stop_allow_always_lets_it_happen_at_once():
    """A10: "always let it happen": the seat's answer is given the moment the window opens,
    marked as by order in its own feed only."""
    t = table({2: ["travel:*"], 1: ["stop"]}, {1: ALLOW, 3: ALLOW})
    t.do(0, "open_deal")
    evs = t.do(2, "travel", card="travel:*", target="investor:C")
    assert marked(evs, 1) == ["window_answered"] and marked(evs, 3) == ["window_answered"]
    assert t.waiting() == [(0, "stop")]
    answered = [e for e in evs if e.type == "window_answered" and e.by == 1][0]
    assert redact_event(answered, 1)["order"] is True
    assert "order" not in redact_event(answered, 0)


def test_a10_unless_aimed_waits_for_cards_aimed_at_the_seat():
    """A10 "aimed at me": a travel on my investor card or my family card on the table, a
    recruit of my investor, a boss card while I am boss or while I have terms or an agreement
    (they would lapse, R5.5); anything else is let happen at once."""
    t = table(
        {1: ["family:C"], 2: ["travel:*", "travel:*", "boss"], 3: ["recruit"] * 3},
        {0: UNLESS, 1: UNLESS, 2: UNLESS, 3: UNLESS},
    )
    t.do(0, "open_deal")
    t.do(1, "offer", card="family:C", price={"cash": 1})
    t.do(2, "travel", card="travel:*", target="investor:C")  # Ann's investor
    assert aimed_at(t.state, 0) and not aimed_at(t.state, 1) and not aimed_at(t.state, 3)
    assert t.waiting()[0] == (0, "stop")
    assert {s for s, f in t.waiting() if f == "stop"} == {0}
    t.do(0, "allow")
    t.do(2, "travel", card="travel:*", target="family:C@1")  # Bob's family card on the table
    assert {s for s, f in t.waiting() if f == "stop"} == {1}
    t.do(1, "allow")
    t.do(2, "boss")  # Ann is boss: aimed at her; Bob's terms lapsed with his card
    assert {s for s, f in t.waiting() if f == "stop"} == {0}
    t.do(0, "allow")
    assert t.state.deal.boss == 2


def test_a10_unless_aimed_a_boss_card_is_aimed_at_seats_with_terms():
    """A10, R5.5: a boss card makes every term and agreement lapse: a seat with terms open
    waits; a seat without lets it happen."""
    t = table({3: ["boss"]}, {1: UNLESS, 2: UNLESS})
    t.do(0, "open_deal")
    t.do(1, "offer", card="investor:D", price={"cash": 1})
    t.do(3, "boss")
    assert aimed_at(t.state, 1) and not aimed_at(t.state, 2)
    assert {s for s, f in t.waiting() if f == "stop"} == {0, 1}


def test_a10_unless_aimed_a_recruit_of_my_investor_waits():
    """A10, R5.4: a recruit aimed at my investor waits for me; the others let it happen."""
    t = table({3: ["recruit"] * 3}, {0: UNLESS, 1: UNLESS, 2: UNLESS}, investors=NO_POOL)
    t.do(0, "open_deal")
    t.do(3, "recruit", target="D")
    assert {s for s, f in t.waiting() if f == "stop"} == {1}


# -- last call (A3) ---------------------------------------------------------------------------


def test_a10_last_call_pass_unless_involved():
    """A10: "pass unless my investor card or an agreement of mine is in the deal": Cid and Dee
    pass at once; Bob, whose investor D the deal uses, is asked; "always pass" passes."""
    t = table(orders={1: UNLESS, 2: UNLESS, 3: {"last_call": "pass"}})
    t.do(0, "open_deal")
    t.do(1, "offer", card="investor:D", price={"cash": 1})
    t.do(0, "accept", {"with": 1})
    evs = t.do(0, "close")
    assert marked(evs, 2) == ["window_answered"] and marked(evs, 3) == ["window_answered"]
    assert [(s, f) for s, f in t.waiting() if f == "last_call"] == [(1, "last_call")]
    evs = t.do(1, "pass")
    assert "deal_closed" in types(evs)


def test_a10_involved_means_in_the_deal_not_needed_by_the_space():
    """A10 "involved": my investor card in the deal is one that takes part in the lineup the
    deal would close with. Bob controls D, which the space needs, but Ann fills D with her own
    family card: his investor is not in the deal and his order passes at once."""
    t = table({0: ["family:D"]}, {1: UNLESS, 2: UNLESS, 3: UNLESS})
    t.do(0, "open_deal")
    t.do(0, "play_family", card="family:D")
    assert not involved(t.state, 1)
    evs = t.do(0, "close")
    assert "deal_closed" in types(evs)


# -- posted prices and boss limits (R4.2-R4.4) -----------------------------------------------


def test_a10_posted_price_is_offered_when_the_deal_opens():
    """A10: Bob posts "D for 2 M": the moment Ann opens a deal that needs D, his offer is
    there; Ann accepts it at once."""
    t = table(orders={1: {"prices": {"D": {"cash": 2}}}})
    evs = t.do(0, "open_deal")
    assert marked(evs, 1) == ["terms_set"]
    terms = t.state.deal.terms[(1, "D")]
    assert (terms.price, terms.by, terms.card) == (("cash", 2), "provider", "investor:D")
    t.do(0, "accept", {"with": 1, "price": {"cash": 2}})
    assert (1, "D") in t.state.deal.agreements


def test_a10_posted_price_once_per_boss_and_again_for_a_new_boss():
    """A10: a rejected posted offer is not made again to the same boss; a new boss (R5.5) gets
    it again, since the terms with the old one lapsed."""
    t = table({2: ["boss"]}, {1: {"prices": {"D": {"cash": 2}}}})
    t.do(0, "open_deal")
    t.do(0, "reject", {"with": 1})
    assert (1, "D") not in t.state.deal.terms
    t.do(2, "boss")
    allow_all(t)
    assert t.state.deal.boss == 2 and (1, "D") in t.state.deal.terms


def test_a10_posted_price_takes_boss_terms_at_or_above_it():
    """A10: the boss's terms for a posted investor at the price or more are accepted at once;
    below it they wait for the seat."""
    t = table(orders={1: {"prices": {"D": {"cash": 3}}}})
    t.do(0, "open_deal")
    t.do(0, "reject", {"with": 1})
    t.do(0, "propose", to=1, card="investor:D", price={"cash": 2})
    assert (1, "D") in t.state.deal.terms
    evs = t.do(0, "propose", to=1, card="investor:D", price={"cash": 3})
    assert marked(evs, 1) == ["agreement_made"]
    assert t.state.deal.agreements[(1, "D")].price == ("cash", 3)


def test_a10_posted_price_when_the_card_comes_to_me():
    """A10: Dee recruits D during Ann's deal; her posted price for D is offered at once."""
    t = table({3: ["recruit"] * 3}, {3: {"prices": {"D": {"cash": 1}}}}, investors=NO_POOL)
    t.do(0, "open_deal")
    t.do(3, "recruit", target="D")
    allow_all(t)
    assert t.state.deal.terms[(3, "D")].price == ("cash", 1)


def test_a10_boss_limits_accept_needed_letters_at_or_under_the_limit():
    """A10: Ann, boss, accepts at once any offer at or under 2 M for a letter the deal still
    needs; above the limit, or for a letter already filled, the offer waits."""
    board = flat_board(shares=3, required=("C", "D", "G"))  # 6 M on tile #1
    t = table({3: ["family:G"]}, {0: {"boss": {"limits": {"*": 2}}}}, board=board)
    t.do(0, "open_deal")
    evs = t.do(1, "offer", card="investor:D", price={"cash": 3})
    assert marked(evs, 0) == []
    evs = t.do(2, "offer", card="investor:G", price={"cash": 2})
    assert marked(evs, 0) == ["agreement_made"]
    evs = t.do(3, "offer", card="family:G", price={"cash": 1})  # G is filled already
    assert marked(evs, 0) == [] and (3, "G") in t.state.deal.terms
    evs = t.do(1, "offer", card="investor:D", price={"cash": 2})
    assert marked(evs, 0) == ["agreement_made"]


def test_a10_boss_close_closes_at_once_when_the_requirements_are_met():
    """A10: with "close when met", the boss calls the close the moment the lineup is complete;
    seats whose orders pass let the deal close in the same moment."""
    t = table(
        orders={
            0: {"boss": {"limits": {"D": 2}, "close": True}},
            1: {"prices": {"D": {"cash": 1}}, **UNLESS},
            2: UNLESS,
            3: UNLESS,
        }
    )
    evs = t.do(0, "open_deal")
    assert "deal_closed" not in types(evs)  # Bob's agreement puts D in: he is asked
    assert [(s, f) for s, f in t.waiting() if f == "last_call"] == [(1, "last_call")]
    evs = t.do(1, "pass")
    closed = of_type(evs, "deal_closed")[0]
    assert closed.data["payments"] == {"0": 3, "1": 1}


# -- turn pre-moves (R3.1) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("in_place", "after_roll", "expected"),
    [
        ({"when": "never"}, {"when": "never"}, ["die_rolled", "cards_drawn", "turn_started"]),
        ({"when": "always"}, {"when": "never"}, ["deal_opened"]),
        ({"when": "never"}, {"when": "always"}, ["die_rolled", "deal_opened"]),
        ({"when": "needs_mine"}, {"when": "never"}, ["deal_opened"]),
        (
            {"when": "fill", "k": 2},
            {"when": "never"},
            ["die_rolled", "cards_drawn", "turn_started"],
        ),
        ({"when": "fill", "k": 1}, {"when": "never"}, ["deal_opened"]),
    ],
)
def test_a10_turn_pre_move(in_place, after_roll, expected):
    """A10: at the start of Ann's turn her pre-move deals in place if its condition holds,
    else rolls; after the roll it opens a deal if the second holds, else draws. Ann controls
    C, which every space needs (needs_mine holds; she fills 1 letter herself, not 2)."""
    t = table(orders={1: {"stop": "ask"}})
    evs = t.do(0, "orders", orders={"turn": {"in_place": in_place, "after_roll": after_roll}})
    assert marked(evs, 0) == expected
    if expected[-1] == "turn_started":
        assert t.state.active == 1 and t.phase == "turn_start"
    else:
        assert t.phase == "negotiation" and t.state.deal.boss == 0


def test_a10_turn_pre_move_fill_counts_family_cards_in_hand():
    """A10: "a space where I can fill at least k letters myself" counts my investor cards and
    the family cards in my own hand (the seat's own turn: it may read its own hand)."""
    turn = {"in_place": {"when": "fill", "k": 2}, "after_roll": {"when": "never"}}
    t = table({0: ["family:D"]}, {0: {"turn": turn}})
    t.do(3, "chat", text="hello")  # any command lets the orders act
    assert t.phase == "negotiation" and t.state.deal.boss == 0


# -- the away proxy (A11) ---------------------------------------------------------------------


def test_a11_the_proxy_plays_for_a_seat_away_too_long():
    """A11: Bob never acts. His turn runs out (one miss), then a stop window (two: away, A6);
    24 h (the game's proxy hours) after he became away (not seen since) the server plays for
    him: his investor D is offered at the fair price in Ann's deal, his next turn is roll then
    draw at once, marked as the server's acts; when he acts again it stops."""
    t = table({2: ["travel:*"]}, proxy_hours=24)
    t.do(0, "roll", h=1)
    t.do(0, "draw")
    t.timeout(25)  # Bob's turn runs out (A5): one miss
    assert t.state.active == 2 and t.state.missed[1] == 1
    for seat in (2, 3):
        t.do(seat, "roll", h=26)
        t.do(seat, "draw")
    t.do(0, "open_deal")
    t.do(2, "travel", card="travel:*", target="investor:C")
    t.timeout(32)  # the stop window runs out without Bob: his second miss, away (A6)
    assert t.state.away[1] and not t.state.proxied[1]
    assert t.state.proxy_windows[1].deadline == T0 + timedelta(hours=32 + 24)
    evs = t.timeout(56)
    assert types(evs)[0] == "proxy_started" and t.state.proxied[1]
    offered = of_type(evs, "terms_set")[0]
    assert offered.data == {
        "provider": 1,
        "letter": "D",
        "price": {"cash": 1},
        "by_side": "provider",
        "card": "investor:D",
        "proxy": True,
    }
    assert view(t.state, 0)["seats"][1]["proxied"] is True
    evs = t.do(0, "fail", h=57)  # the turn passes to Bob: played at once for him
    by_proxy = [e.type for e in evs if e.data.get("proxy")]
    assert by_proxy == ["die_rolled", "cards_drawn", "turn_started"]
    assert all(e.by is None for e in evs if e.data.get("proxy"))
    assert t.state.active == 2
    t.do(1, "chat", text="I am back")
    assert not t.state.proxied[1] and not t.state.away[1] and 1 not in t.state.proxy_windows


def test_a11_the_proxy_offers_a_fair_price_and_takes_fair_terms():
    """A11: the proxied seat's investor cards the deal needs are offered at the fair price
    (the proceeds split among the space's investors and the boss: 4 M // 3 = 1 M); the boss's
    terms at that price or more, or for no card, are accepted; below it the proxy counters."""
    t = table(proxy_hours=1)
    t.do(1, "away", away=True)  # Bob is away; an hour later the server plays for him
    assert t.state.proxy_windows[1].deadline == T0 + timedelta(hours=1)
    assert types(t.timeout(1)) == ["proxy_started"] and t.state.proxied[1]
    t.do(0, "open_deal")
    assert t.state.deal.terms[(1, "D")].price == ("cash", 1)
    t.do(0, "reject", {"with": 1})
    t.do(0, "propose", to=1, card="investor:D", price={"cash": 0})
    assert t.state.deal.terms[(1, "D")].price == ("cash", 1)  # below the fair price: a counter
    evs = t.do(0, "propose", to=1, card="investor:D", price={"cash": 1})
    assert [e.type for e in evs if e.data.get("proxy")] == ["agreement_made"]
    t.do(0, "propose", to=1, price={"cash": 0})
    assert (1, None) in t.state.deal.agreements


def test_recommended_orders_read_public_information_only():
    """A10: the set a new seat starts with answers windows only, reading nothing hidden: cards
    not aimed at the seat happen, last calls pass (no prices, limits or pre-moves)."""
    assert RECOMMENDED.stop == "unless_aimed" and RECOMMENDED.last_call == "pass"
    assert not RECOMMENDED.prices and not RECOMMENDED.limits and RECOMMENDED.turn is None


def test_a11_the_proxy_counters_terms_under_its_price_at_once():
    """A11: the boss's terms under the fair price for a proxied seat's investor card get the
    proxy's answer at once, a counter at the fair price (R4.5), instead of an answer that never
    comes while the deal runs out (48 h, then it fails); the boss can then accept it."""
    t = table(proxy_hours=1)
    t.do(1, "away", away=True)
    t.timeout(1)
    t.do(0, "open_deal")
    evs = t.do(0, "propose", to=1, card="investor:D", price={"cash": 0})
    counter = [e for e in evs if e.data.get("proxy")]
    assert [(e.type, e.by, e.data["by_side"], e.data["price"]) for e in counter] == [
        ("terms_set", None, "provider", {"cash": 1})
    ]
    assert t.state.deal.terms[(1, "D")].by == "provider"
    evs = t.do(0, "accept", {"with": 1, "letter": "D", "price": {"cash": 1}})
    assert (1, "D") in t.state.deal.agreements
    assert t.replayed() == t.state


def test_a11_with_every_seat_away_turns_wait_for_their_deadlines():
    """A11: a game every seat has left does not loop: once all seats are played for, each
    command (a timeout) plays one turn (A5), not turn after turn up to the settle cap."""
    sizes: list[int] = []
    with pytest.raises(SimulationError):  # nobody plays: the game does not end
        simulate(
            4,
            7,
            idle_seats=frozenset(range(4)),
            proxy_hours=1,
            max_commands=300,
            observer=lambda _s, _c, events: sizes.append(len(events)),
        )
    assert len(sizes) == 300 and max(sizes) <= 20
