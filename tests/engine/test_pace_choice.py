"""The table's pace (A10): the standing orders every seat starts with, and the fair price (A11)
as one engine function that fair posted prices, fair boss limits, the proxy and the bots use."""

from __future__ import annotations

import pytest
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.context import fair_price, fair_price_of
from imtheboss.engine.orders import (
    BRISK,
    DEFAULT_PACE,
    NO_ORDERS,
    PACES,
    RECOMMENDED,
    Orders,
    OrdersError,
    pace_of,
    pace_orders,
)
from support.async_play import Table, flat_board

FOUR = {0: ["C"], 1: ["D"], 2: ["G"], 3: ["L"]}
BOARD = flat_board(shares=9, required=("C", "D", "G"))  # 18 M on tile #1: fair 18 // 4 = 4 M


def table(orders: dict) -> Table:
    return Table.at_position(
        {
            "investors": FOUR,
            "side_pool": ["S", "W"],
            "hands": {},
            "draw_pile": "rest",
            "marker": 0,
            "active": 0,
            "orders": orders,
        },
        board=BOARD,
        dice=[1] * 8,
    )


def by_order(events, seat: int) -> list[str]:
    return [e.type for e in events if e.data.get("order") and e.by == seat]


def test_fair_price_is_the_proceeds_split_among_investors_and_boss_at_least_1_m():
    assert fair_price_of(9, 3, 2) == 4
    assert fair_price_of(1, 3, 1) == 1  # at least 1 M
    t = table({})
    t.do(0, "open_deal")
    assert fair_price(t.state) == 4


def test_the_paces_are_documented_sets_that_never_play_a_turn():
    """relaxed asks everything, standard is the recommended set, brisk adds fair posted prices
    for every letter, a boss limit of the fair price plus 2 M and close when met; none plays a
    seat's own turn (no pre-move) nor an influence card (orders have no such order)."""
    assert PACES == {"relaxed": NO_ORDERS, "standard": RECOMMENDED, "brisk": BRISK}
    assert DEFAULT_PACE == "brisk" and pace_orders(DEFAULT_PACE) is BRISK
    assert all(o.turn is None for o in PACES.values())
    assert BRISK.to_json()["prices"] == {x: {"fair": 0} for x in "CDGLSW"}
    assert BRISK.to_json()["boss"] == {"limits": {"*": {"fair": 2}}, "close": True}
    assert Orders.from_json(BRISK.to_json()) == BRISK
    assert pace_of(BRISK) == "brisk" and pace_of(Orders(stop="allow")) is None
    with pytest.raises(OrdersError):
        pace_orders("turbo")
    for bad in (
        {"prices": {"C": {"fair": -1}}},
        {"boss": {"limits": {"*": {"fair": "2"}}}},
        {"boss": {"limits": {"*": {"fair": 1, "cash": 2}}}},
    ):
        with pytest.raises(OrdersError):
            Orders.from_json(bad)


def test_a_fair_posted_price_offers_at_the_fair_price_of_the_deal():
    """Bob posts D at the fair price: the moment Ann opens the deal his offer is there at
    4 M; Ann's terms at 4 M or more are taken by his order, under it they wait."""
    t = table({1: {"prices": {"D": {"fair": 0}}}})
    evs = t.do(0, "open_deal")
    assert by_order(evs, 1) == ["terms_set"]
    assert t.state.deal.terms[(1, "D")].price == ("cash", 4)
    t.do(0, "reject", {"with": 1})
    t.do(0, "propose", to=1, card="investor:D", price={"cash": 3})
    assert (1, "D") in t.state.deal.terms
    evs = t.do(0, "propose", to=1, card="investor:D", price={"cash": 4})
    assert by_order(evs, 1) == ["agreement_made"]
    t.replayed()


def test_a_brisk_boss_accepts_up_to_the_fair_price_plus_2_and_closes():
    """Ann at the brisk pace, boss: an offer at 7 M (fair 4 + 3) waits, one at 6 M is taken at
    once; the brisk providers' fair offers fill the deal and her order calls the close."""
    t = table({0: BRISK.to_json()})
    t.do(0, "open_deal")
    assert by_order(t.do(1, "offer", card="investor:D", price={"cash": 7}), 0) == []
    assert by_order(t.do(1, "offer", card="investor:D", price={"cash": 6}), 0) == ["agreement_made"]
    brisk = table({seat: BRISK.to_json() for seat in range(4)})
    evs = brisk.do(0, "open_deal")
    made = [e for e in evs if e.type == "agreement_made"]
    assert sorted(e.data["price"]["cash"] for e in made) == [4, 4]
    assert "close_called" in by_order(evs, 0)
    brisk.replayed()  # the fair orders are in the log and replay to the same game


def test_the_bot_names_the_engines_fair_price():
    """The bot reckons the fair price with the engine's one function."""
    t = table({})
    t.do(0, "open_deal")
    assert SensibleBot()._fair(t.state) == fair_price(t.state)


def test_a_brisk_game_of_bot_seats_is_in_its_record_and_replays_the_same():
    """The fair orders (A10) are in the game's record (the export, A9): read back, it replays
    to the same final state, and its first event carries every seat's brisk orders."""
    import json

    from imtheboss.engine.bots import SeatBot
    from imtheboss.engine.record import game_record, read_record
    from imtheboss.engine.simulate import simulate
    from imtheboss.engine.state import replay
    from imtheboss.engine.views import snapshot

    game = simulate(4, 31, bots=[SeatBot() for _ in range(4)], orders=[BRISK] * 4)
    assert game.state.phase == "game_over"
    assert any(e.data.get("order") and e.type == "agreement_made" for e in game.events)
    record = read_record(json.loads(json.dumps(game_record(game.events))))
    assert snapshot(replay(record.events)) == snapshot(game.state)
    assert Orders.from_json(record.events[0].data["orders"][0]) == BRISK
