"""Which cards fill a deal's requirements (R6.1, R6.3) and whether a provider can still supply a
letter (R4.7)."""

from __future__ import annotations

from dataclasses import dataclass

from imtheboss.engine.cards import CARD_NAMES, card_letter
from imtheboss.engine.state import GameState

# R6.3: investor cards before family cards (no card is discarded when an investor card can fill
# the letter); within each, the boss's own before cards under agreement (V9: opponents'
# investor cards rank with agreed ones). See docs/rules-decisions.md.
BOSS_INVESTOR, AGREED_INVESTOR, BOSS_FAMILY, AGREED_FAMILY = 0, 1, 2, 3


@dataclass(frozen=True)
class Source:
    """One card that can fill ``letter``: ``seat`` owns it, ``kind`` is ``investor`` or
    ``family`` (then ``card`` is its id), ``auto`` marks a V9 opponent investor used without
    an agreement."""

    rank: int
    letter: str
    seat: int
    kind: str
    card: int | None = None
    auto: bool = False

    def to_json(self) -> dict:
        return {
            "letter": self.letter,
            "seat": self.seat,
            "kind": self.kind,
            "card": self.card,
            "auto": self.auto,
        }


def sources(state: GameState) -> dict[str, list[Source]]:
    """Every card that can take part in the running deal, per letter the space uses, best first
    (R4.1, R5.1, R6.3; V9 adds opponents' investor cards)."""
    deal = state.deal
    assert deal is not None
    space = state.board.spaces[deal.space]
    boss = deal.boss
    v9 = state.options.two_player_rules(state.n)
    out: dict[str, list[Source]] = {}
    for letter in space.letters:
        found: list[Source] = []
        ctrl = state.investors.get(letter)
        if ctrl is not None and letter not in deal.travel_on:
            if ctrl == boss:
                found.append(Source(BOSS_INVESTOR, letter, boss, "investor"))
            elif (ctrl, letter) in deal.agreements:
                found.append(Source(AGREED_INVESTOR, letter, ctrl, "investor"))
            elif v9:
                found.append(Source(AGREED_INVESTOR, letter, ctrl, "investor", auto=True))
        if letter not in space.investor_only:
            for card, owner in deal.table_family:
                if card_letter(CARD_NAMES[card]) != letter:
                    continue
                if owner == boss:
                    found.append(Source(BOSS_FAMILY, letter, owner, "family", card))
                elif (owner, letter) in deal.agreements:
                    found.append(Source(AGREED_FAMILY, letter, owner, "family", card))
        found.sort(key=lambda s: (s.rank, s.card if s.card is not None else -1))
        if found:
            out[letter] = found
    return out


def lineup(state: GameState) -> dict[str, Source] | None:
    """The cards that fill the running deal's requirements, one per letter, picked
    deterministically (R6.3); ``None`` when the requirements are not met (R6.1)."""
    deal = state.deal
    assert deal is not None
    space = state.board.spaces[deal.space]
    avail = sources(state)
    chosen: dict[str, Source] = {}
    for letter in space.required:
        if letter not in avail:
            return None
        chosen[letter] = avail[letter][0]
    for choice in space.choices:
        ranked = sorted((avail[x][0].rank, x) for x in choice.of if x in avail)
        if len(ranked) < choice.k:
            return None
        for _, letter in ranked[: choice.k]:
            chosen[letter] = avail[letter][0]
    return chosen


def missing(state: GameState) -> list[str]:
    """A readable list of what the running deal still lacks (for messages and pages)."""
    deal = state.deal
    assert deal is not None
    space = state.board.spaces[deal.space]
    avail = sources(state)
    out = [letter for letter in space.required if letter not in avail]
    for choice in space.choices:
        have = sum(1 for x in choice.of if x in avail)
        if have < choice.k:
            out.append(f"{choice.k - have} more of {'/'.join(choice.of)}")
    return out


def still_needed(state: GameState) -> set[str]:
    """The letters a card would help with now (A10, boss limits): a required letter nothing
    taking part fills yet, or any unfilled letter of a choice group that is still short."""
    deal = state.deal
    assert deal is not None
    space = state.board.spaces[deal.space]
    avail = sources(state)
    out = {letter for letter in space.required if letter not in avail}
    for choice in space.choices:
        if sum(1 for x in choice.of if x in avail) < choice.k:
            out |= {x for x in choice.of if x not in avail}
    return out


def can_supply(state: GameState, seat: int, letter: str) -> bool:
    """R4.7: ``seat`` still has a card for ``letter`` that can take part: an investor card it
    controls that is not on travel, or one of its family cards on the table."""
    deal = state.deal
    assert deal is not None
    if state.investors.get(letter) == seat and letter not in deal.travel_on:
        return True
    if letter in state.board.spaces[deal.space].investor_only:
        return False
    return any(o == seat and card_letter(CARD_NAMES[c]) == letter for c, o in deal.table_family)
