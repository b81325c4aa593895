"""Rules R4 (negotiation), R5 (influence cards) and R6 (closing, failing, what follows), with
the asynchronous windows that serialise them (A2, A3, A7). Every test names its rule."""

from __future__ import annotations

from collections import Counter

import pytest
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.lineup import lineup
from imtheboss.engine.views import legal_commands, view
from support.rules_game import SMALL_BOARD, Game

# Space 0 of SMALL_BOARD needs C, S and W and pays 3 shares (6 M at tile #1).
BASE = {
    "investors": {"Ann": ["C"], "Bob": ["S"], "Cat": ["W"], "Dan": ["D", "G", "L"]},
    "side_pool": [],
    "marker": 0,
    "active": "Ann",
}


def deal(hands=None, *, open_deal=True, **changes) -> Game:
    """A game on SMALL_BOARD where Ann (controls C) has opened a deal on space 0."""
    options = changes.pop("options", None)
    dice = changes.pop("dice", ())
    state = {**BASE, **changes, "hands": hands or {}}
    g = Game(state, board=SMALL_BOARD, options=options, dice=dice)
    if open_deal:
        g.do("Ann", "open_deal")
    return g


def W(who):  # noqa: N802 - "with" is a keyword
    return {"with": who}


def agree(g: Game, provider: str, card: str, cash: int) -> None:
    """The provider offers ``card`` for ``cash`` M and the boss accepts (R4.2, R4.3)."""
    g.do(provider, "offer", card=card, price={"cash": cash})
    g.do(g.boss, "accept", **W(provider))


def close(g: Game) -> None:
    g.do(g.boss, "close")
    g.pass_all()


def discard_counts(g: Game) -> Counter:
    return Counter(g.snap()["discard_pile"])


# -- R4 negotiation ----------------------------------------------------------------------------


def test_r4_1_opener_is_boss_and_own_investors_join():
    """R4.1: the opener is boss; investor cards the boss controls take part automatically."""
    g = deal(investors={"Ann": ["C", "S"], "Bob": ["D"], "Cat": ["W"], "Dan": ["G", "L"]})
    assert g.boss == "Ann"
    assert g.snap()["table"]["family"] == []
    assert sorted(view(g.state, 0)["deal"]["boss_investors"]) == ["C", "S"]
    assert view(g.state, 0)["deal"]["missing"] == ["W"]


def test_r4_1_boss_plays_family_cards_face_up():
    """R4.1: the boss plays family cards from hand onto the table; they count toward closing."""
    g = deal({"Ann": ["family:S", "family:W", "family:D"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    assert g.snap()["table"]["family"] == ["family:S@Ann", "family:W@Ann"]
    assert g.hand("Ann") == {"family:D": 1}
    assert lineup(g.state) is not None
    close(g)
    assert g.snap()["money"]["Ann"] == 6


def test_r4_1_play_family_refusals():
    """R4.1, R4.2: only the boss plays family cards; the letter must be used; card in hand."""
    g = deal({"Ann": ["family:D", "boss"], "Bob": ["family:S"]})
    g.refused("Bob", "play_family", "not_boss", "R4.1", card="family:S")
    g.refused("Ann", "play_family", "not_needed", "R4.2", card="family:D")
    g.refused("Ann", "play_family", "card_not_in_hand", card="family:W")
    g.refused("Ann", "play_family", "bad_command", "R4.1", card="boss")


def test_r4_2_offer_investor_card_stays_in_front_of_provider():
    """R4.2: a provider offers an investor card they control with a price; it is not moved."""
    g = deal()
    g.do("Bob", "offer", card="investor:S", price={"cash": 3})
    snap = g.snap()
    assert snap["offers"] == [
        {
            "provider": "Bob",
            "letter": "S",
            "price": {"cash": 3},
            "card": "investor:S",
            "by": "provider",
        }
    ]
    assert snap["investors"]["Bob"] == ["S"]
    assert snap["table"]["family"] == []


def test_r4_2_offer_family_card_is_played_face_up():
    """R4.2: offering a family card from hand plays it onto the table."""
    g = deal({"Dan": ["family:W"]})
    g.do("Dan", "offer", card="family:W", price={"shares": 1})
    assert g.snap()["table"]["family"] == ["family:W@Dan"]
    assert g.hand("Dan") == {}
    assert g.snap()["offers"][0]["price"] == {"shares": 1}


def test_r4_2_new_offer_replaces_the_old_one_for_that_letter():
    """R4.2: one open offer per provider and letter; a new one replaces it (no new card)."""
    g = deal({"Bob": ["family:S", "family:S"]})
    g.do("Bob", "offer", card="family:S", price={"cash": 4})
    g.do("Bob", "offer", card="family:S", price={"cash": 2})
    snap = g.snap()
    assert [(o["letter"], o["price"]) for o in snap["offers"]] == [("S", {"cash": 2})]
    assert snap["table"]["family"] == ["family:S@Bob"]  # the same card, not a second one
    g.do("Bob", "offer", card="investor:S", price={"cash": 1})
    assert [(o["card"], o["price"]) for o in g.snap()["offers"]] == [("investor:S", {"cash": 1})]


def test_r4_2_offer_refusals():
    """R4.2: offers name a card of a used letter the provider holds or controls, and a price."""
    g = deal({"Bob": ["family:D", "recruit"], "Dan": ["family:S"]})
    g.refused("Bob", "offer", "invalid_target", "R4.2", card="investor:W", price={"cash": 1})
    g.refused("Bob", "offer", "not_needed", "R4.2", card="family:D", price={"cash": 1})
    g.refused("Bob", "offer", "card_not_in_hand", card="family:C", price={"cash": 1})
    g.refused("Bob", "offer", "bad_command", "R4.2", card="recruit", price={"cash": 1})
    g.refused("Ann", "offer", "bad_command", "R4.3", card="investor:C", price={"cash": 1})
    for price in ({"cash": -1}, {"cash": 1.5}, {"euros": 2}, {"cash": 1, "shares": 1}, 3):
        g.refused("Dan", "offer", "bad_command", card="family:S", price=price)
    g.refused("Bob", "offer", "bad_command", card="investor:S")  # no price


def test_r4_3_boss_accepts_provider_terms():
    """R4.3: accepting the other side's current terms makes a binding agreement."""
    g = deal()
    agree(g, "Bob", "investor:S", 2)
    snap = g.snap()
    assert snap["offers"] == []
    assert snap["agreements"] == [
        {"provider": "Bob", "letter": "S", "price": {"cash": 2}, "card": "investor:S"}
    ]


def test_r4_3_counters_and_provider_accepts_boss_terms():
    """R4.3: either side may counter; the provider accepts the boss's current terms."""
    g = deal()
    g.do("Bob", "offer", card="investor:S", price={"cash": 5})
    g.do("Ann", "propose", to="Bob", card="investor:S", price={"cash": 1})
    g.refused("Ann", "accept", "no_terms", "R4.3", **W("Bob"))  # Ann's own terms stand
    g.do("Bob", "offer", card="investor:S", price={"cash": 3})
    g.do("Ann", "propose", to="Bob", card="investor:S", price={"cash": 2})
    g.do("Bob", "accept", **W("Ann"))
    assert g.snap()["agreements"][0]["price"] == {"cash": 2}


def test_r4_3_reject_and_withdraw_end_the_terms():
    """R4.3, R4.2: the boss rejects an offer; a provider withdraws one not yet accepted."""
    g = deal({"Cat": ["family:S"]})
    g.do("Bob", "offer", card="investor:S", price={"cash": 5})
    g.do("Ann", "reject", **W("Bob"))
    assert g.snap()["offers"] == []
    g.refused("Ann", "reject", "no_terms", "R4.3", **W("Bob"))
    g.do("Cat", "offer", card="family:S", price={"cash": 1})
    g.do("Cat", "withdraw")
    assert g.snap()["offers"] == []
    assert g.snap()["table"]["family"] == ["family:S@Cat"]  # R4.6: it stays face up
    g.refused("Cat", "withdraw", "no_terms", "R4.2")


def test_r4_3_terms_are_only_between_boss_and_one_player():
    """R4.3: two non-boss players cannot make terms with each other; a provider does not
    propose."""
    g = deal()
    g.do("Bob", "offer", card="investor:S", price={"cash": 2})
    g.refused("Cat", "accept", "not_boss", "R4.3", **W("Bob"))
    g.refused("Bob", "propose", "not_boss", "R4.3", to="Cat", price={"cash": 1})


def test_r4_3_agreement_is_binding():
    """R4.3: an agreed letter cannot be re-offered or re-proposed (already_agreed)."""
    g = deal({"Bob": ["family:S"]})
    agree(g, "Bob", "investor:S", 2)
    g.refused("Bob", "offer", "already_agreed", "R4.3", card="investor:S", price={"cash": 5})
    g.refused("Bob", "offer", "already_agreed", "R4.3", card="family:S", price={"cash": 5})
    g.refused(
        "Ann", "propose", "already_agreed", "R4.3", to="Bob", card="investor:S", price={"cash": 0}
    )
    g.refused("Bob", "withdraw", "no_terms", "R4.2")


def test_r4_3_provider_accepting_a_family_proposal_plays_the_card():
    """R4.3 (rules-decisions): accepting the boss's terms for a family card in hand plays it."""
    g = deal({"Dan": ["family:W"]})
    g.do("Ann", "propose", to="Dan", card="family:W", price={"cash": 1})
    assert g.hand("Dan") == {"family:W": 1}
    g.do("Dan", "accept", **W("Ann"))
    assert g.hand("Dan") == {}
    assert g.snap()["table"]["family"] == ["family:W@Dan"]


def test_r4_3_agreement_binds_the_letter_not_the_card():
    """R4.3, R6.3: Bob agreed with his family card S, but he controls investor S too: at
    closing the investor card is used and the family card goes back to his hand."""
    g = deal({"Bob": ["family:S"], "Cat": ["family:W"]})
    agree(g, "Bob", "family:S", 1)
    agree(g, "Cat", "investor:W", 1)
    close(g)
    closed = next(e for e in g.events if e.type == "deal_closed")
    used = {x["letter"]: (x["kind"], x["seat"]) for x in closed.data["lineup"]}
    assert used == {"C": ("investor", 0), "S": ("investor", 1), "W": ("investor", 2)}
    assert g.hand("Bob") == {"family:S": 1}
    assert g.hand("Cat") == {"family:W": 1}
    assert "family:S" not in g.snap()["discard_pile"]


def test_r4_4_agreements_may_not_exceed_the_proceeds():
    """R4.4: the acceptance that would push agreements above the proceeds is refused."""
    g = deal()
    agree(g, "Bob", "investor:S", 4)  # proceeds 3 shares x 2 M = 6 M
    g.do("Cat", "offer", card="investor:W", price={"cash": 3})
    err = g.refused("Ann", "accept", "over_proceeds", "R4.4", **W("Cat"))
    assert "6" in err.message
    g.do("Cat", "offer", card="investor:W", price={"cash": 2})
    g.do("Ann", "accept", **W("Cat"))  # exactly the proceeds: allowed
    assert len(g.snap()["agreements"]) == 2


def test_r4_4_shares_are_valued_at_the_share_value():
    """R4.2, R4.4: a price in shares is worth shares x the top tile's value."""
    g = deal(deals_closed=6)  # tile #7: 4 M a share, proceeds 12 M
    g.do("Bob", "offer", card="investor:S", price={"shares": 2})
    g.do("Ann", "accept", **W("Bob"))
    g.do("Cat", "offer", card="investor:W", price={"shares": 2})
    g.refused("Ann", "accept", "over_proceeds", "R4.4", **W("Cat"))
    g.do("Cat", "offer", card="investor:W", price={"cash": 4})
    g.do("Ann", "accept", **W("Cat"))
    close(g)
    assert g.snap()["money"] == {"Ann": 0, "Bob": 8, "Cat": 4, "Dan": 0}


def test_r4_4_offer_above_proceeds_may_be_made_but_not_accepted():
    """R4.4 (rules-decisions): a high offer stands; only its acceptance is refused."""
    g = deal()
    g.do("Bob", "offer", card="investor:S", price={"cash": 50})
    assert g.snap()["offers"][0]["price"] == {"cash": 50}
    g.refused("Ann", "accept", "over_proceeds", "R4.4", **W("Bob"))
    g.do("Ann", "propose", to="Bob", card="investor:S", price={"cash": 7})
    g.refused("Bob", "accept", "over_proceeds", "R4.4", **W("Ann"))


def test_r4_5_paying_a_player_who_contributes_no_card():
    """R4.5: the boss may agree to pay a player for no card; paid at closing like any other."""
    g = deal({"Ann": ["family:S", "family:W"]})
    g.do("Ann", "propose", to="Dan", price={"cash": 1})
    g.do("Dan", "accept", **W("Ann"))
    assert g.snap()["agreements"] == [
        {"provider": "Dan", "letter": None, "price": {"cash": 1}, "card": None}
    ]
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    close(g)
    assert g.snap()["money"] == {"Ann": 5, "Bob": 0, "Cat": 0, "Dan": 1}


def test_r4_5_no_card_agreement_counts_toward_proceeds():
    """R4.4, R4.5: a no-card agreement counts toward the proceeds limit."""
    g = deal()
    g.do("Ann", "propose", to="Dan", price={"cash": 5})
    g.do("Dan", "accept", **W("Ann"))
    g.do("Bob", "offer", card="investor:S", price={"cash": 2})
    g.refused("Ann", "accept", "over_proceeds", "R4.4", **W("Bob"))


def test_r4_6_family_cards_stay_on_the_table_until_the_deal_ends():
    """R4.6, R6.3: an offered family card stays face up even when its offer is rejected; at
    closing an unused family card goes back to its owner."""
    g = deal({"Dan": ["family:S", "family:W"]})
    g.do("Dan", "offer", card="family:S", price={"cash": 1})
    g.do("Ann", "reject", **W("Dan"))
    g.do("Dan", "offer", card="family:W", price={"cash": 1})
    g.do("Dan", "withdraw")
    assert g.snap()["table"]["family"] == ["family:S@Dan", "family:W@Dan"]
    assert g.hand("Dan") == {}
    agree(g, "Bob", "investor:S", 1)
    agree(g, "Cat", "investor:W", 1)
    close(g)
    assert g.hand("Dan") == {"family:S": 1, "family:W": 1}


def test_r4_7_travel_makes_terms_and_agreements_lapse():
    """R4.7, R5.1: Bob's agreement on S lapses when investor S is sent on travel; Cat's open
    offer on W stays (Cat can still supply W)."""
    g = deal({"Dan": ["travel:S"]})
    agree(g, "Bob", "investor:S", 2)
    g.do("Cat", "offer", card="investor:W", price={"cash": 2})
    g.do("Dan", "travel", card="travel:S", target="investor:S")
    g.allow_all()
    snap = g.snap()
    assert snap["agreements"] == []
    assert [o["letter"] for o in snap["offers"]] == ["W"]
    assert [t["letter"] for t in view(g.state, 0)["deal"]["lapsed"]] == ["S"]


def test_r4_7_agreement_survives_while_another_card_of_the_provider_can_take_part():
    """R4.7, R4.3: Bob agreed with his family card S; his investor S goes on travel, but the
    family card still takes part: the agreement stands and closing uses the family card."""
    g = deal({"Bob": ["family:S"], "Dan": ["travel:S"], "Ann": ["family:W"]})
    agree(g, "Bob", "family:S", 2)
    g.do("Dan", "travel", card="travel:S", target="investor:S")
    g.allow_all()
    assert [a["letter"] for a in g.snap()["agreements"]] == ["S"]
    g.do("Ann", "play_family", card="family:W")
    close(g)
    closed = next(e for e in g.events if e.type == "deal_closed")
    assert {x["letter"]: x["kind"] for x in closed.data["lineup"]}["S"] == "family"
    assert g.snap()["money"] == {"Ann": 4, "Bob": 2, "Cat": 0, "Dan": 0}
    assert discard_counts(g) == {"family:S": 1, "family:W": 1, "travel:S": 1}


def test_r4_7_recruiting_an_investor_away_makes_its_agreement_lapse():
    """R4.7, R5.4: Dan recruits investor S from Bob; Bob's agreement for S lapses and Dan
    now controls S."""
    g = deal({"Dan": ["recruit"] * 3})
    agree(g, "Bob", "investor:S", 2)
    g.do("Dan", "recruit", target="S")
    g.allow_all()
    snap = g.snap()
    assert snap["investors"]["Dan"] == ["D", "G", "L", "S"]
    assert snap["agreements"] == []
    assert discard_counts(g)["recruit"] == 3


def test_r4_7_travel_on_a_family_card_makes_its_offer_lapse():
    """R4.7, R5.2: Dan's offer with his family card W lapses when the card is discarded."""
    g = deal({"Dan": ["family:W"], "Bob": ["travel:W"]})
    g.do("Dan", "offer", card="family:W", price={"cash": 1})
    g.do("Bob", "travel", card="travel:W", target="family:W@Dan")
    g.allow_all()
    assert g.snap()["offers"] == []


def test_r4_8_chat_is_public_and_free():
    """R4.8: any seat may chat during a negotiation; empty text is refused."""
    g = deal()
    (event,) = g.do("Dan", "chat", text="I'll lend you S for 2")
    assert (event.type, event.data["deal"], event.data["seat"]) == ("chat", 0, 3)
    g.refused("Bob", "chat", "bad_command", "R4.8", text="   ")
    g.refused("Bob", "chat", "bad_command", "R4.8", text="x" * 5000)


@pytest.mark.parametrize("text", ["a\ud800b", "\udfff", "a\x00b"])
def test_r4_8_chat_text_must_be_storable(text):
    """R4.8: a chat holding a lone surrogate or NUL is refused (it could be neither stored nor
    shown to anyone); other text, new lines included, is taken as written."""
    g = deal()
    g.refused("Bob", "chat", "bad_command", "R4.8", text=text)
    (event,) = g.do("Bob", "chat", text="line one\nline two\t😀")
    assert event.data["text"] == "line one\nline two\t😀"


# -- R5 influence cards -------------------------------------------------------------------------


def test_r5_1_travel_on_an_investor_keeps_it_out_until_the_deal_ends():
    """R5.1, A2: after the stop window the investor cannot take part; the travel card stays
    on it until the deal ends, then goes to the discard pile."""
    g = deal({"Dan": ["travel:W"], "Ann": ["family:S", "family:W"]})
    events = g.do("Dan", "travel", card="travel:W", target="investor:W")
    assert g.types(events) == ["card_pending"]
    assert g.snap()["table"]["travel"] == {}  # A2: not yet
    g.allow_all()
    assert g.snap()["table"]["travel"] == {"W": "travel:W"}
    g.refused("Cat", "offer", "invalid_target", "R5.1", card="investor:W", price={"cash": 1})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    close(g)
    assert discard_counts(g) == {"travel:W": 1, "family:S": 1, "family:W": 1}


def test_r5_1_travel_refusals():
    """R5.1: no travel on one's own investor, on a letter the space does not use, on the side
    pool, or twice on the same investor."""
    g = deal(
        {"Ann": ["travel:*"], "Bob": ["travel:*", "travel:D"], "Cat": ["travel:*"]},
        investors={"Ann": ["C"], "Bob": ["S"], "Cat": ["D"], "Dan": ["G"]},
        side_pool=["L", "W"],
    )
    g.refused("Bob", "travel", "own_investor", "R5.1", card="travel:*", target="investor:S")
    g.refused("Bob", "travel", "invalid_target", "R5.1", card="travel:D", target="investor:D")
    g.refused("Bob", "travel", "invalid_target", "R5.1", card="travel:*", target="investor:W")
    g.refused("Bob", "travel", "invalid_target", "R5.1", card="travel:*", target="investor:X")
    g.refused("Bob", "travel", "invalid_target", "R5.1", card="travel:*", target="S")
    g.refused("Bob", "travel", "card_not_in_hand", card="travel:C", target="investor:C")
    g.refused("Bob", "travel", "bad_command", "R5.1", card="boss", target="investor:C")
    g.do("Bob", "travel", card="travel:*", target="investor:C")  # the boss's own investor
    g.allow_all()
    g.refused("Cat", "travel", "invalid_target", "R5.1", card="travel:*", target="investor:C")
    g.refused("Ann", "travel", "invalid_target", "R5.2", card="travel:*", target="family:S@Bob")


def test_r5_2_travel_on_a_family_card_discards_both_at_once():
    """R5.2: both cards go to the discard pile as soon as the travel takes effect."""
    g = deal({"Ann": ["family:W"], "Bob": ["travel:*"]})
    g.do("Ann", "play_family", card="family:W")
    g.do("Bob", "travel", card="travel:*", target="family:W@Ann")
    assert g.snap()["table"]["family"] == ["family:W@Ann"]
    g.allow_all()
    snap = g.snap()
    assert snap["table"]["family"] == []
    assert snap["table"]["travel"] == {}
    assert snap["discard_pile"] == {"family:W": 1, "travel:*": 1}
    g.do("Ann", "fail")
    assert g.hand("Ann") == {}  # R6.5: not returned, it went on travel


def test_r5_3_lettered_travel_targets_only_its_letter():
    """R5.3: travel:S may target investor S or a family S card, nothing else; wild any."""
    g = deal({"Ann": ["family:W"], "Dan": ["travel:S", "travel:*"], "Bob": ["family:S"]})
    g.do("Ann", "play_family", card="family:W")
    g.do("Bob", "offer", card="family:S", price={"cash": 1})
    g.refused("Dan", "travel", "invalid_target", "R5.3", card="travel:S", target="investor:W")
    g.refused("Dan", "travel", "invalid_target", "R5.3", card="travel:S", target="investor:C")
    g.refused("Dan", "travel", "invalid_target", "R5.3", card="travel:S", target="family:W@Ann")
    g.do("Dan", "travel", card="travel:S", target="family:S@Bob")
    g.allow_all()
    g.do("Dan", "travel", card="travel:*", target="family:W@Ann")
    g.allow_all()
    assert g.snap()["table"]["family"] == []


def test_r5_4_recruit_takes_control_for_the_rest_of_the_game():
    """R5.4: three recruit cards and a named investor not one's own; control lasts."""
    g = deal({"Dan": ["recruit"] * 4})
    events = g.do("Dan", "recruit", target="W")
    assert events[0].data["kind"] == "recruit"
    assert g.hand("Dan") == {"recruit": 1}
    g.allow_all()
    assert g.snap()["investors"]["Dan"] == ["D", "G", "L", "W"]
    assert g.snap()["investors"]["Cat"] == []
    assert discard_counts(g) == {"recruit": 3}
    g.do("Ann", "fail")
    assert g.snap()["investors"]["Dan"] == ["D", "G", "L", "W"]  # kept after the deal


def test_r5_4_side_pool_first():
    """R5.4: while the side pool holds investors, only side-pool investors may be recruited."""
    g = deal(
        {"Dan": ["recruit"] * 3},
        investors={"Ann": ["C"], "Bob": ["S"], "Cat": ["W"], "Dan": ["D"]},
        side_pool=["G", "L"],
    )
    err = g.refused("Dan", "recruit", "side_pool_first", "R5.4", target="W")
    assert "G" in err.message and "L" in err.message
    g.do("Dan", "recruit", target="L")
    g.allow_all()
    assert g.snap()["side_pool"] == ["G"]
    assert g.snap()["investors"]["Dan"] == ["D", "L"]


def test_r5_4_recruit_refusals():
    """R5.4: not one's own investor, exactly three recruit cards, letters only (no family)."""
    g = deal({"Dan": ["recruit"] * 3, "Bob": ["recruit"] * 2})
    g.refused("Dan", "recruit", "own_investor", "R5.4", target="G")
    g.refused("Bob", "recruit", "not_enough_recruits", "R5.4", target="W")
    g.refused("Dan", "recruit", "invalid_target", "R1.1", target="family:W")
    g.refused("Dan", "recruit", "invalid_target", "R1.1", target="X")


def test_r5_4_recruited_investor_keeps_its_travel_card():
    """R5.4: a recruited investor keeps the travel card already on it."""
    g = deal({"Bob": ["travel:W"], "Dan": ["recruit"] * 3})
    g.do("Bob", "travel", card="travel:W", target="investor:W")
    g.allow_all()
    g.do("Dan", "recruit", target="W")
    g.allow_all()
    snap = g.snap()
    assert snap["investors"]["Dan"] == ["D", "G", "L", "W"]
    assert snap["table"]["travel"] == {"W": "travel:W"}
    g.refused("Dan", "offer", "invalid_target", "R5.1", card="investor:W", price={"cash": 1})


def test_r5_4_the_boss_may_recruit_too():
    """R5.4: any player, the boss included, may recruit; the boss's new investor joins."""
    g = deal({"Ann": ["recruit"] * 3})
    g.do("Ann", "recruit", target="S")
    g.allow_all()
    assert view(g.state, 0)["deal"]["missing"] == ["W"]


def test_r5_5_boss_card_takes_over_and_agreements_lapse():
    """R5.5: the new boss's investors join, the former boss's do not; family cards and travel
    stay; every open offer and agreement lapses (kept as lapsed terms)."""
    g = deal(
        {"Ann": ["family:S"], "Cat": ["boss"], "Dan": ["travel:C", "family:W"]},
        investors={"Ann": ["C"], "Bob": ["S"], "Cat": ["W", "D"], "Dan": ["G", "L"]},
    )
    g.do("Ann", "play_family", card="family:S")
    agree(g, "Bob", "investor:S", 2)
    g.do("Dan", "offer", card="family:W", price={"cash": 1})
    g.do("Cat", "boss")
    assert g.boss == "Ann"  # A2: not before the stop window ends
    g.allow_all()
    snap = g.snap()
    assert snap["boss"] == "Cat"
    assert snap["agreements"] == [] and snap["offers"] == []
    assert sorted(t["provider"] for t in view(g.state, 2)["deal"]["lapsed"]) == [1, 3]
    assert snap["table"]["family"] == ["family:S@Ann", "family:W@Dan"]
    assert snap["table"]["boss_cards"] == 1
    deal_view = view(g.state, 2)["deal"]
    assert deal_view["boss_investors"] == ["W"]
    assert deal_view["missing"] == ["C", "S"]  # Ann's family S is not the boss's
    # The former boss stays in as a normal player and may offer.
    g.do("Ann", "offer", card="investor:C", price={"cash": 1})
    g.do("Cat", "accept", **W("Ann"))
    g.do("Ann", "offer", card="family:S", price={"cash": 1})
    g.do("Cat", "accept", **W("Ann"), letter="S")
    close(g)
    assert g.snap()["money"] == {"Ann": 2, "Bob": 0, "Cat": 4, "Dan": 0}
    assert (g.active, discard_counts(g)["boss"]) == ("Dan", 1)


def test_r5_5_boss_card_refused_for_the_current_boss():
    """R5.5: only a player other than the current boss plays a boss card."""
    g = deal({"Ann": ["boss"], "Bob": []})
    g.refused("Ann", "boss", "not_boss", "R5.5")
    g.refused("Bob", "boss", "card_not_in_hand")


def test_r5_6_stop_cancels_and_both_cards_are_discarded():
    """R5.6: a stop right after a travel cancels it; the stop and the travel go to the discard
    pile at once. Anyone may stop, not only the player hurt."""
    g = deal({"Bob": ["travel:W"], "Dan": ["stop"]})
    g.do("Bob", "travel", card="travel:W", target="investor:W")
    events = g.do("Dan", "stop")
    assert g.types(events) == ["card_stopped"]
    snap = g.snap()
    assert snap["table"]["travel"] == {}
    assert snap["discard_pile"] == {"stop": 1, "travel:W": 1}
    assert (snap["phase"], snap["window"]) == ("negotiation", None)


def test_r5_6_a_stop_cannot_be_stopped():
    """R5.6, A2: a stop opens no window: a second stop is refused and stays in hand."""
    g = deal({"Bob": ["boss"], "Cat": ["stop"], "Dan": ["stop"]})
    g.do("Bob", "boss")
    window = g.snap()["window"]["id"]
    g.do("Cat", "stop")
    g.refused("Dan", "stop", "nothing_to_stop", "R5.6")
    g.refused("Dan", "stop", "window_closed", "A7", window=window)
    assert g.hand("Dan") == {"stop": 1}
    assert g.boss == "Ann"


def test_r5_6_stop_refusals():
    """R5.6, A2: the player of the pending card may not stop it; a stop needs a stop card;
    one answer per seat."""
    g = deal({"Bob": ["travel:W", "stop"], "Cat": [], "Dan": ["stop"]})
    g.do("Bob", "travel", card="travel:W", target="investor:W")
    g.refused("Bob", "stop", "nothing_to_stop", "R5.6")
    g.refused("Bob", "allow", "nothing_to_stop", "A2")
    g.refused("Cat", "stop", "card_not_in_hand")
    g.do("Dan", "allow")
    g.refused("Dan", "stop", "already_answered", "R5.6")
    g.refused("Dan", "allow", "already_answered", "A2")


def test_r5_6_stop_a_triple_recruit():
    """R5.6: a stop cancels a triple recruit; all four cards are discarded."""
    g = deal({"Dan": ["recruit"] * 3, "Cat": ["stop"]})
    g.do("Dan", "recruit", target="W")
    g.do("Cat", "stop")
    assert g.snap()["investors"]["Cat"] == ["W"]
    assert discard_counts(g) == {"recruit": 3, "stop": 1}


def test_r5_7_several_boss_cards_the_last_unstopped_decides():
    """R5.7, R3.3: boss cards fly; a stopped one changes nothing; the last one that took
    effect decides the boss and where the turn goes."""
    g = deal(
        {"Bob": ["boss"], "Cat": ["boss", "stop"], "Dan": ["boss"]},
        investors={"Ann": ["D"], "Bob": ["G"], "Cat": ["L"], "Dan": ["C", "S", "W"]},
    )
    g.do("Bob", "boss")
    g.do("Cat", "stop")
    assert g.boss == "Ann"
    g.do("Cat", "boss")
    g.allow_all()
    assert g.boss == "Cat"
    g.do("Dan", "boss")
    g.allow_all()
    assert g.boss == "Dan"
    close(g)
    assert g.active == "Ann"  # left of Dan
    assert discard_counts(g) == {"boss": 3, "stop": 1}


def test_a2_one_card_at_a_time_but_talk_goes_on():
    """A2: while a stop window is open no other travel/recruit/boss card, no close or fail;
    offers, acceptances and chat go on."""
    g = deal(
        {
            "Ann": ["family:S", "family:W"],
            "Bob": ["travel:*"],
            "Cat": ["boss"],
            "Dan": ["recruit"] * 3,
        }
    )
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Bob", "travel", card="travel:*", target="investor:C")
    g.refused("Cat", "boss", "card_pending", "A2")
    g.refused("Dan", "recruit", "card_pending", "A2", target="W")
    g.refused("Ann", "close", "card_pending", "A2")
    g.refused("Ann", "fail", "card_pending", "A2")
    g.do("Cat", "offer", card="investor:W", price={"cash": 1})
    g.do("Ann", "accept", **W("Cat"))
    g.do("Dan", "chat", text="hm")
    g.timeout()  # the stop window's deadline: the travel takes effect
    assert g.snap()["table"]["travel"] == {"C": "travel:*"}
    assert g.phase == "negotiation"


def test_a7_window_closed_and_terms_changed():
    """A7: an answer naming an ended window is refused; an accept naming stale terms too."""
    g = deal({"Bob": ["travel:W"], "Dan": ["stop"]})
    g.do("Bob", "travel", card="travel:W", target="investor:W")
    window = g.snap()["window"]["id"]
    g.allow_all()
    g.refused("Dan", "stop", "window_closed", "A7", window=window)
    g.refused("Dan", "allow", "window_closed", "A7", window=window)
    g.do("Bob", "offer", card="investor:S", price={"cash": 2})
    g.do("Bob", "offer", card="investor:S", price={"cash": 3})
    err = g.refused("Ann", "accept", "terms_changed", "A7", **W("Bob"), price={"cash": 2})
    assert "3" in err.message
    g.do("Ann", "accept", **W("Bob"), price={"cash": 3})
    assert g.snap()["agreements"][0]["price"] == {"cash": 3}


# -- R6 closing, failing, and what follows ------------------------------------------------------


def test_r6_1_close_needs_the_requirements_and_the_boss():
    """R6.1: only the boss closes, and only when the requirements are met by cards that take
    part (own cards and cards under agreement; an open offer does not count)."""
    g = deal({"Ann": ["family:S"]})
    g.do("Cat", "offer", card="investor:W", price={"cash": 1})
    err = g.refused("Ann", "close", "requirements_not_met", "R6.1")
    assert "S" in err.message and "W" in err.message
    g.do("Ann", "play_family", card="family:S")
    g.refused("Ann", "close", "requirements_not_met", "R6.1")
    g.do("Ann", "accept", **W("Cat"))
    g.refused("Cat", "close", "not_boss", "R6.1")
    g.do("Ann", "close")
    assert g.phase == "last_call"


def test_r6_1_a3_last_call_then_close():
    """R6.1, A3: closing opens a last call for every other player; when all pass it closes.
    During the last call agreements cannot change and the boss does not answer."""
    g = deal({"Ann": ["family:S", "family:W"], "Bob": ["family:S"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Ann", "close")
    assert g.snap()["window"]["waiting_for"] == ["Bob", "Cat", "Dan"]
    g.refused("Bob", "offer", "wrong_phase", "A3", card="family:S", price={"cash": 1})
    g.refused("Ann", "propose", "wrong_phase", "A3", to="Bob", price={"cash": 1})
    g.refused("Ann", "pass", "not_your_turn", "A3")
    g.refused("Ann", "close", "wrong_phase", "A3")
    g.do("Bob", "pass")
    g.refused("Bob", "pass", "already_answered", "A3")
    g.do("Cat", "pass")
    assert g.phase == "last_call"
    g.do("Dan", "pass")
    assert g.state.deals_closed == 1


def test_r6_1_a3_a_card_in_the_last_call_cancels_the_closing():
    """R6.1, A3: a travel card during the last call cancels the closing attempt; the boss may
    close again later (if the requirements are still met)."""
    g = deal({"Ann": ["family:S", "family:W", "family:W"], "Bob": ["travel:W"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Ann", "close")
    g.do("Cat", "pass")
    g.do("Bob", "travel", card="travel:W", target="family:W@Ann")
    assert g.snap()["window"]["kind"] == "stop"
    g.allow_all()
    assert g.phase == "negotiation"
    g.refused("Ann", "close", "requirements_not_met", "R6.1")
    g.do("Ann", "play_family", card="family:W")
    g.do("Ann", "close")
    assert g.snap()["window"]["waiting_for"] == ["Bob", "Cat", "Dan"]  # a fresh last call
    g.pass_all()
    assert g.state.deals_closed == 1


def test_r6_1_boss_may_not_play_cards_in_the_last_call():
    """A3: during the last call the boss waits; cards come from the others."""
    g = deal({"Ann": ["family:S", "family:W", "travel:*"], "Bob": ["family:S"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Bob", "offer", card="family:S", price={"cash": 1})
    g.do("Ann", "close")
    g.refused("Ann", "travel", "wrong_phase", "A3", card="travel:*", target="family:S@Bob")


def test_r6_2_payments_at_closing():
    """R6.2: the bank pays the proceeds to the boss; the boss pays every agreement."""
    g = deal(deals_closed=9, covered=[6, 7, 8, 9, 10, 11, 12, 13, 14], dice=[6])
    agree(g, "Bob", "investor:S", 4)
    agree(g, "Cat", "investor:W", 5)
    g.do("Ann", "propose", to="Dan", price={"shares": 1})
    g.do("Dan", "accept", **W("Ann"))
    close(g)
    closed = next(e for e in g.events if e.type == "deal_closed")
    assert closed.data["proceeds"] == 15
    assert closed.data["payments"] == {"0": 1, "1": 4, "2": 5, "3": 5}
    assert g.snap()["money"] == {"Ann": 1, "Bob": 4, "Cat": 5, "Dan": 5}


def test_r6_2_no_influence_card_after_closing():
    """R6.2: once the deal has closed no influence card can be played on it."""
    g = deal({"Ann": ["family:S", "family:W"], "Bob": ["travel:*", "boss", "stop"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    close(g)
    g.refused("Bob", "travel", "wrong_phase", "R5.1", card="travel:*", target="investor:C")
    g.refused("Bob", "boss", "wrong_phase", "R5.5")
    g.refused("Bob", "stop", "nothing_to_stop", "R5.6")


def test_r6_3_card_disposition_at_closing():
    """R6.3: needed family cards are discarded; other family cards go home; the boss's own
    investor is used before the boss's family card; travel and boss cards are discarded."""
    g = deal(
        {
            "Ann": ["family:C", "family:S"],
            "Bob": ["family:W", "travel:*"],
            "Cat": ["family:W"],
            "Dan": ["family:S", "boss", "boss"],
        },
        investors={"Ann": ["C"], "Bob": ["D"], "Cat": ["G"], "Dan": ["L", "S", "W"]},
    )
    g.do("Ann", "play_family", card="family:C")
    g.do("Ann", "play_family", card="family:S")
    g.do("Bob", "offer", card="family:W", price={"cash": 1})
    g.do("Cat", "offer", card="family:W", price={"cash": 1})
    g.do("Dan", "offer", card="family:S", price={"cash": 1})
    g.do("Ann", "accept", **W("Cat"))
    g.do("Bob", "travel", card="travel:*", target="investor:W")
    g.allow_all()
    close(g)
    closed = next(e for e in g.events if e.type == "deal_closed")
    used = {x["letter"]: (x["kind"], x["seat"]) for x in closed.data["lineup"]}
    assert used == {"C": ("investor", 0), "S": ("family", 0), "W": ("family", 2)}
    assert g.hand("Ann") == {"family:C": 1}  # the investor card was used instead
    assert g.hand("Bob") == {"family:W": 1}  # offered, never agreed
    assert g.hand("Cat") == {}  # used
    assert g.hand("Dan") == {"boss": 2, "family:S": 1}
    assert discard_counts(g) == {"family:S": 1, "family:W": 1, "travel:*": 1}


def test_r6_4_tile_covers_the_space_and_marker_moves_on():
    """R6.4, R1.2: the closed space takes the top tile; the marker moves clockwise to the next
    uncovered space; the next tile sets the share value."""
    g = deal(
        {"Ann": ["family:S", "family:W"]},
        deals_closed=2,
        covered=[1, 2],
    )
    assert g.snap()["share_value"] == 2
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    close(g)
    snap = g.snap()
    assert g.state.covered[0] == 3
    assert (snap["covered"], snap["marker"], snap["share_value"]) == ([0, 1, 2], 3, 3)
    assert (snap["active"], snap["deals_closed"]) == ("Bob", 3)


def test_r6_5_failing_returns_family_cards_and_discards_the_rest():
    """R6.5: family cards not sent on travel go back to their owners; travel, boss cards are
    discarded; the marker stays; no money moves; the turn passes left of the last boss."""
    g = deal(
        {
            "Ann": ["family:S", "family:W"],
            "Bob": ["family:W", "travel:C"],
            "Cat": ["boss"],
            "Dan": ["family:S"],
        }
    )
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Dan", "offer", card="family:S", price={"cash": 1})
    g.do("Ann", "accept", **W("Dan"))
    g.do("Bob", "offer", card="family:W", price={"cash": 1})
    g.do("Bob", "travel", card="travel:C", target="investor:C")
    g.allow_all()
    g.do("Cat", "boss")
    g.allow_all()
    g.refused("Ann", "fail", "not_boss", "R6.5")
    g.do("Cat", "fail")
    snap = g.snap()
    assert snap["hands"] == {
        "Ann": {"family:S": 1, "family:W": 1},
        "Bob": {"family:W": 1},
        "Cat": {},
        "Dan": {"family:S": 1},
    }
    assert snap["discard_pile"] == {"boss": 1, "travel:C": 1}
    assert (snap["marker"], snap["covered"], snap["deals_closed"]) == (0, [], 0)
    assert set(snap["money"].values()) == {0}
    assert (snap["phase"], snap["active"], snap["table"]) == ("turn_start", "Dan", {})


def test_r6_5_boss_may_fail_during_the_last_call():
    """R6.5 (rules-decisions): the boss may declare failure in the last call, not during a
    stop window."""
    g = deal({"Ann": ["family:S", "family:W"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Ann", "close")
    g.do("Ann", "fail")
    assert g.hand("Ann") == {"family:S": 1, "family:W": 1}
    assert g.state.deals_closed == 0


def test_r6_6_hand_limit_after_drawing():
    """R6.6: a player above 12 cards after drawing must discard down to 12 at once; nothing
    else is taken from them until then; the next turn starts afterwards."""
    g = deal(
        {"Bob": ["recruit"] * 11},
        open_deal=False,
        active="Bob",
        draw_pile_top=["boss", "stop", "family:C"],
        dice=[1],
    )
    g.do("Bob", "roll")
    events = g.do("Bob", "draw")
    assert g.types(events) == ["cards_drawn", "discard_step"]
    assert (g.phase, dict(g.state.discard_owed)) == ("discard", {1: 2})
    g.refused("Bob", "chat", "hand_over_limit", "R6.6", text="ouch")
    g.refused("Bob", "roll", "hand_over_limit", "R6.6")
    g.refused("Cat", "roll", "wrong_phase", "R3.1")
    g.refused("Cat", "discard", "not_your_turn", "R6.6", cards=["boss"])
    g.refused("Bob", "discard", "bad_command", "R6.6", cards=["boss", "stop", "recruit"])
    g.refused("Bob", "discard", "card_not_in_hand", "R6.6", cards=["travel:*"])
    g.refused("Bob", "discard", "card_not_in_hand", "R6.6", cards=["boss", "boss"])
    g.do("Bob", "discard", cards=["boss"])
    assert g.phase == "discard"
    g.do("Bob", "discard", cards=["family:C"])
    assert (g.phase, g.active) == ("turn_start", "Cat")
    assert sum(g.hand("Bob").values()) == 12
    assert discard_counts(g) == {"boss": 1, "family:C": 1}


def test_r6_6_triple_recruit_instead_of_discarding():
    """R6.6, R5.4: above the limit a player may play a triple recruit, then discard what is
    still above 12."""
    g = deal(
        {"Bob": ["recruit"] * 11},
        open_deal=False,
        active="Bob",
        draw_pile_top=["boss", "stop", "recruit", "family:C"],
        dice=[1],
        investors={"Ann": ["C"], "Bob": ["S"], "Cat": ["W"], "Dan": ["D"]},
        side_pool=["G", "L"],
    )
    g.do("Bob", "roll")
    g.do("Bob", "draw")  # 14 cards: owes 2
    g.refused("Bob", "recruit", "side_pool_first", "R5.4", target="W")
    g.do("Bob", "recruit", target="G")
    g.allow_all()
    assert g.snap()["investors"]["Bob"] == ["G", "S"]
    assert g.phase == "turn_start" and g.active == "Cat"  # 11 cards: nothing owed
    assert sum(g.hand("Bob").values()) == 11


def test_r6_6_family_cards_coming_back_can_push_a_hand_over_the_limit():
    """R6.6 (rules-decisions): after a failed deal every seat above the limit discards before
    the next turn starts."""
    g = deal({"Dan": ["family:S", "family:W"] + ["recruit"] * 11})
    g.do("Dan", "offer", card="family:S", price={"cash": 1})
    g.do("Dan", "offer", card="family:W", price={"cash": 1})
    g.do("Ann", "fail")
    assert (g.phase, dict(g.state.discard_owed)) == ("discard", {3: 1})
    g.refused("Bob", "roll", "wrong_phase", "R3.1")
    g.do("Dan", "discard", cards=["recruit"])
    assert (g.phase, g.active) == ("turn_start", "Bob")


def test_r6_7_empty_draw_pile_reshuffles_the_discard_pile():
    """R6.7: when the draw pile runs out mid-draw the discard pile becomes the new draw
    pile, shuffled; the draw goes on from it."""
    names = list(CARD_NAMES)
    for name in ("boss", "stop"):
        names.remove(name)
    g = deal(
        open_deal=False,
        draw_pile=["boss", "stop"],
        discard_pile=names,
        dice=[1],
    )
    g.do("Ann", "roll")
    events = g.do("Ann", "draw")
    assert g.types(events) == ["cards_drawn", "pile_reshuffled", "cards_drawn", "turn_started"]
    new_pile = events[1].data["draw_pile"]
    assert sorted(new_pile) == sorted(g.events[0].data["discard_pile"])
    assert events[2].data["cards"] == new_pile[:1]
    assert sum(g.hand("Ann").values()) == 3
    assert g.snap()["discard_pile"] == {}
    assert g.snap()["draw_pile_count"] == 95


def test_r6_7_both_piles_empty_draw_gives_what_there_is():
    """R6.7: with nothing left to reshuffle the draw gives what there is."""
    rest = list(CARD_NAMES)
    rest.remove("boss")
    hands = {"Ann": rest[:20], "Bob": rest[20:46], "Cat": rest[46:72], "Dan": rest[72:]}
    g = deal(hands, open_deal=False, draw_pile=["boss"], discard_pile=[], dice=[1])
    g.do("Ann", "roll")
    events = g.do("Ann", "draw")
    assert g.types(events)[:2] == ["cards_drawn", "discard_step"]
    assert [CARD_NAMES[c] for c in events[0].data["cards"]] == ["boss"]
    assert g.snap()["draw_pile_count"] == 0
    assert dict(g.state.discard_owed) == {0: 9, 1: 14, 2: 14, 3: 13}


def test_legal_commands_are_accepted_during_a_negotiation():
    """R4-R6: every command the views list for a seat is accepted by decide (sanity check of
    the rules both sides implement)."""
    from imtheboss.engine.game import Command, decide

    g = deal(
        {
            "Ann": ["family:S"],
            "Bob": ["travel:*", "family:W"],
            "Cat": ["boss"],
            "Dan": ["recruit"] * 3,
        }
    )
    g.do("Bob", "offer", card="investor:S", price={"cash": 1})
    for seat in range(4):
        for cmd in legal_commands(g.state, seat):
            args = {k: v for k, v in cmd.items() if k not in ("do", "needs", "count")}
            for need in cmd.get("needs", []):
                args[need] = {"price": {"cash": 1}, "text": "hi", "cards": []}[need]
            decide(g.state, Command(cmd["do"], seat, args, g.now))


@pytest.mark.parametrize("who", ["Bob", "Cat", "Dan"])
def test_a3_every_other_player_is_asked_in_the_last_call(who):
    """A3: the deal does not close while any other player has not passed."""
    g = deal({"Ann": ["family:S", "family:W"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Ann", "close")
    for other in ("Bob", "Cat", "Dan"):
        if other != who:
            g.do(other, "pass")
    assert g.phase == "last_call"
    assert g.snap()["window"]["waiting_for"] == [who]
    g.do(who, "pass")
    assert g.state.deals_closed == 1


def test_r6_2_agreement_is_paid_even_when_its_card_is_not_used():
    """R6.2, R6.3 (rules-decisions): Ann agreed with Dan for family W, then played her own
    family W: her card fills W, Dan's goes back, and Dan is still paid."""
    g = deal({"Ann": ["family:S", "family:W"], "Dan": ["family:W"]})
    agree(g, "Dan", "family:W", 2)
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    close(g)
    assert g.snap()["money"] == {"Ann": 4, "Bob": 0, "Cat": 0, "Dan": 2}
    assert g.hand("Dan") == {"family:W": 1}
    assert discard_counts(g) == {"family:S": 1, "family:W": 1}


def test_r6_3_choice_group_prefers_the_boss_investor():
    """R6.3, R1.4: on a space needing C plus 1 of {G, S} the boss's investor G is used before
    the boss's family card S, which goes back to hand."""
    g = Game(
        {
            "investors": {"Ann": ["C", "G"], "Bob": ["S"], "Cat": ["W"], "Dan": ["D", "L"]},
            "side_pool": [],
            "hands": {"Ann": ["family:S"]},
            "marker": 0,
            "active": "Ann",
        }
    )  # default board: space 0 needs C and 1 of G/S, 2 shares
    g.do("Ann", "open_deal")
    g.do("Ann", "play_family", card="family:S")
    close(g)
    closed = next(e for e in g.events if e.type == "deal_closed")
    assert [(x["letter"], x["kind"]) for x in closed.data["lineup"]] == [
        ("C", "investor"),
        ("G", "investor"),
    ]
    assert g.hand("Ann") == {"family:S": 1}
    assert g.snap()["money"]["Ann"] == 4


def test_r5_5_new_boss_family_cards_on_the_table_count_for_the_new_boss():
    """R5.5: family cards already on the table stay; the new boss's own now fill letters."""
    g = deal(
        {"Cat": ["family:S", "boss"]},
        investors={"Ann": ["D"], "Bob": ["G"], "Cat": ["C", "W"], "Dan": ["L", "S"]},
    )
    g.do("Cat", "offer", card="family:S", price={"cash": 3})
    g.do("Cat", "boss")
    g.allow_all()
    assert view(g.state, 2)["deal"]["missing"] == []
    close(g)
    assert g.snap()["money"]["Cat"] == 6


def test_a7_pass_naming_an_ended_last_call():
    """A7, A3: a pass naming a last call cancelled by a card is refused (window_closed)."""
    g = deal({"Ann": ["family:S", "family:W"], "Bob": ["boss"], "Cat": ["stop"]})
    g.do("Ann", "play_family", card="family:S")
    g.do("Ann", "play_family", card="family:W")
    g.do("Ann", "close")
    last_call = g.snap()["window"]["id"]
    g.do("Bob", "boss")
    g.do("Cat", "stop")
    assert (g.phase, g.boss) == ("negotiation", "Ann")
    g.refused("Dan", "pass", "window_closed", "A7", window=last_call)


# -- regressions found by a fresh user's trial ------------------------------------------------


def test_r4_7_no_terms_for_an_investor_on_travel():
    """R4.7, R5.1: once Bob's S is on travel, the boss cannot propose terms for it, and Bob
    cannot accept terms for a letter he can no longer supply."""
    g = deal({"Cat": ["travel:S"]})
    g.do("Ann", "propose", to="Bob", card="investor:S", price={"cash": 3})
    g.do("Cat", "travel", card="travel:S", target="investor:S")
    g.allow_all()
    assert g.state.deal.terms == {}  # the proposal lapsed when S left (R4.7)
    g.refused(
        "Ann", "propose", "invalid_target", "R5.1", to="Bob", card="investor:S", price={"cash": 3}
    )


def test_r6_3_agreed_investor_before_the_boss_family_card():
    """R6.3 (rules-decisions): an investor card fills a letter before any family card, so the
    boss's own family card of that letter goes back to hand instead of the discard pile."""
    g = deal({"Ann": ["family:S"]})
    g.do("Ann", "play_family", card="family:S")
    agree(g, "Bob", "investor:S", 1)
    agree(g, "Cat", "investor:W", 1)
    chosen = lineup(g.state)
    assert (chosen["S"].kind, chosen["S"].seat) == ("investor", 1)
    close(g)
    assert "family:S" in [CARD_NAMES[c] for c in g.state.hands[0]]
    assert "family:S" not in [CARD_NAMES[c] for c in g.state.discard_pile]


def test_a3_a_seat_that_passed_plays_no_card_in_that_last_call():
    """A3 (rules-decisions): after answering pass, a seat may not cancel the same last call
    with a card (as allow-then-stop is refused in a stop window, A2)."""
    g = deal({"Dan": ["boss"]})
    agree(g, "Bob", "investor:S", 1)
    agree(g, "Cat", "investor:W", 1)
    g.do("Ann", "close")
    g.do("Dan", "pass")
    g.refused("Dan", "boss", "already_answered", "A3")
    assert not any(c["do"] == "boss" for c in legal_commands(g.state, 3))
