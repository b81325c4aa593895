"""A move made by mail is confirmed in words about the game, not by echoing the word: in every
state of whole bot games, each reply word that works names its move with what it was about
(whose card, on which investor, whose terms, which price, which space), in the three
languages. Pure (the catalogs, no database)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import GameState, Pending
from imtheboss.web.replies.choices import ORDER, command_for, verbs_that_work
from imtheboss.web.replies.moves import MOVES, move_said, move_text
from imtheboss.web.replies.words import Reading
from imtheboss.web.say import display, messages

PLAYERS = ["Amy", "Bill", "Carla", "Dan"]


def _reading(verb: str, state: GameState, seat: int) -> Reading:
    if verb == "place":
        first = min(x for x in range(16) if x not in state.covered)
        return Reading("place", space=display.space_number(first))  # as the player reads it
    if verb == "offer":
        return Reading("offer", price={"cash": 3})
    return Reading(verb, text="hello" if verb == "chat" else None)


@dataclass(frozen=True)
class Seen:
    """What the state was when a word was read: the card waiting, the deal's boss."""

    pending: Pending | None
    boss: int | None


def _said_in_games() -> list[tuple[str, dict, Seen, int]]:
    found: list[tuple[str, dict, Seen, int]] = []

    def check(state: GameState) -> None:
        for seat in range(state.n):
            for verb in verbs_that_work(state, seat):
                command = command_for(_reading(verb, state, seat), state, seat).command
                assert command is not None
                seen = Seen(
                    state.pending.copy() if state.pending else None,
                    state.deal.boss if state.deal else None,
                )
                found.append((verb, move_said(command, state, seat), seen, seat))

    for seed in range(4):
        simulate(
            4,
            seed,
            bots="mixed",
            on_start=check,
            observer=lambda state, _command, _events: check(state),
        )
    return found


SAID = _said_in_games()


def test_every_move_a_word_makes_has_its_own_sentence() -> None:
    ids = {said["id"] for _verb, said, _state, _seat in SAID}
    assert "move" not in ids
    assert {verb for verb, *_rest in SAID} >= set(ORDER) - {"reject", "accept", "offer"}


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_every_sentence_renders_in_every_language(lang) -> None:
    with messages.speaking(lang):
        for _verb, said, _state, _seat in SAID:
            text = move_text(said, PLAYERS)
            assert text and "%(" not in text
            if lang != "en":
                assert not any(w in text for w in ("You ", "the ", " on ")), text
    assert set(MOVES) >= {said["id"] for _verb, said, _state, _seat in SAID}


def test_allowing_or_stopping_names_the_card_its_player_and_its_target() -> None:
    cards = [(s, st) for verb, s, st, _seat in SAID if verb in ("allow", "stop")]
    assert cards
    with messages.speaking("en"):
        for said, state in cards:
            text = move_text(said, PLAYERS)
            pending = state.pending
            assert PLAYERS[pending.seat] + "'s" in text
            assert str(messages.EFFECT_KINDS[pending.kind]) in text
            letter = (pending.target or "").rpartition(":")[2]
            if pending.kind == "travel" and letter in display.INVESTOR_NAMES:
                assert str(display.INVESTOR_NAMES[letter]) in text, text


def test_an_offer_names_the_card_the_boss_and_the_price() -> None:
    offers = [(s, st) for verb, s, st, _seat in SAID if verb == "offer"]
    with messages.speaking("en"):
        for said, state in offers:
            text = move_text(said, PLAYERS)
            assert text.startswith("You offered ") and PLAYERS[state.boss] in text
            assert "for 3 M." in text


def test_the_terms_accepted_name_whose_they_were_and_their_price() -> None:
    answered = [(v, s, st, seat) for v, s, st, seat in SAID if v in ("accept", "reject")]
    with messages.speaking("en"):
        for verb, said, _state, seat in answered:
            text = move_text(said, PLAYERS)
            other = said["params"]["player"]
            assert other != seat and PLAYERS[other] in text
            assert " M for " in text or " share" in text
            assert text.startswith("You accepted" if verb == "accept" else "You rejected")
