"""Bots: a random legal-move bot, a simple sensible one, and the bot seats' ``SeatBot`` (the
sensible bot fed ``seat_state``, the seat's own view only).

A bot answers ``choose(state, seat, legal, rng)`` with a complete command dict (``{"do": ...,
**args}``) taken from ``legal_commands`` with its ``needs`` filled in, or ``None`` to wait. Bots
read the full state for convenience but only use what ``view(state, seat)`` shows (their own
hand, public table), so they never cheat on hidden information.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Protocol

from imtheboss.engine import prices
from imtheboss.engine.cards import CARD_NAMES, card_kind, card_letter
from imtheboss.engine.context import fair_price
from imtheboss.engine.lineup import sources
from imtheboss.engine.orders import NO_ORDERS
from imtheboss.engine.state import GameState


class Bot(Protocol):
    """Chooses a move for one seat."""

    def choose(
        self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random
    ) -> dict[str, Any] | None: ...


def _proceeds(state: GameState) -> int:
    return prices.proceeds(state.board.spaces[state.deal.space].shares, state.share_value)


def _fill(cmd: dict[str, Any], state: GameState, seat: int, rng: random.Random, price: int) -> dict:
    out = {k: v for k, v in cmd.items() if k not in ("needs", "count")}
    for need in cmd.get("needs", []):
        if need == "price":
            out["price"] = {"cash": max(0, price)}
        elif need == "text":
            out["text"] = rng.choice(["Deal?", "Too expensive.", "I'm in.", "Not today."])
        elif need == "cards":
            hand = [CARD_NAMES[c] for c in state.hands[seat]]
            out["cards"] = _least_useful(state, seat, hand, cmd["count"])
    return out


def _least_useful(state: GameState, seat: int, hand: list[str], count: int) -> list[str]:
    """The cards to discard first: lettered travel, then family cards of one's own investors,
    then other family cards (side-pool letters last), single recruits, boss, stop."""
    mine = set(state.seat_investors(seat))
    pool = set(state.side_pool)
    recruits = hand.count("recruit")

    def score(name: str) -> int:
        kind = card_kind(name)
        letter = card_letter(name)
        if kind == "travel":
            return 0 if letter else 3
        if kind == "family":
            return 1 if letter in mine else 6 if letter in pool else 2
        if kind == "recruit":
            return 4 if recruits % 3 else 7
        return {"boss": 5, "stop": 8}[kind]

    return sorted(hand, key=lambda n: (score(n), n))[:count]


class RandomBot:
    """Plays at random among the legal commands: first a kind of command (``do``), then one of
    its forms; prices are random. ``fail`` is rare and ``close`` likely, so that random games
    still end; it never waits and never chats."""

    WEIGHTS = {"fail": 0.005, "close": 4.0, "pass": 6.0, "accept": 2.0}

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random):
        options = [c for c in legal if c["do"] != "chat"]
        if not options:
            return None
        kinds = sorted({c["do"] for c in options})
        if kinds == ["fail"] and rng.random() > self.WEIGHTS["fail"]:
            return None  # a boss waiting out the last call
        kind = rng.choices(kinds, [self.WEIGHTS.get(k, 1.0) for k in kinds])[0]
        cmd = rng.choice([c for c in options if c["do"] == kind])
        top = _proceeds(state) if state.deal else 10
        return _fill(cmd, state, seat, rng, rng.randint(0, max(1, top // 2)))


class SensibleBot:
    """Makes deals on good spaces, asks and pays fair prices (proceeds split evenly among the
    investors a space needs), closes when it can, stops attacks on its own investors and deals,
    and otherwise lets things happen."""

    def __init__(self) -> None:
        # How often this bot named terms, by (deal, seat, letter); a deal is known by its
        # negotiation window's id, the same in every process and every replay.
        self.counters: Counter[tuple[str, int, str | None]] = Counter()

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random):
        by_do: dict[str, list[dict[str, Any]]] = {}
        for c in legal:
            by_do.setdefault(c["do"], []).append(c)
        s = state
        if "recruit" in by_do and s.pending is None:
            wanted = self._recruit_target(s, seat, by_do["recruit"])
            if wanted is not None:
                return wanted
        if "discard" in by_do:
            return _fill(by_do["discard"][0], s, seat, rng, 0)
        if "place_marker" in by_do:
            best = max(by_do["place_marker"], key=lambda c: self._space_score(s, seat, c["space"]))
            return best
        if s.phase in ("turn_start", "after_roll") and s.active == seat:
            score = self._space_score(s, seat, s.marker)
            good = score >= 0.5 or s.must_deal or (len(s.hands[seat]) >= 8 and score >= 0.2)
            if "open_deal" in by_do and (good or (s.phase == "after_roll" and "draw" not in by_do)):
                return by_do["open_deal"][0]
            if s.phase == "turn_start":
                return by_do.get("roll", [None])[0]
            return by_do.get("draw", by_do.get("open_deal", [None]))[0]
        if s.pending is not None and "allow" in by_do:
            if "stop" in by_do and self._hurts(s, seat):
                return by_do["stop"][0]
            return by_do["allow"][0]
        if s.last_call is not None and "pass" in by_do:
            return by_do["pass"][0]
        if s.deal is not None:
            return self._negotiate(s, seat, by_do, rng)
        return None

    # -- judgement ---------------------------------------------------------------------------
    def _space_score(self, s: GameState, seat: int, space_index: int | None) -> float:
        """Share of the space's investors this seat supplies itself; 0 when the deal looks
        impossible (a letter nobody can supply: side-pool investor and no family card here)."""
        if space_index is None:
            return 0.0
        space = s.board.spaces[space_index]
        mine = set(s.seat_investors(seat))
        hand = {
            card_letter(CARD_NAMES[c]) for c in s.hands[seat] if CARD_NAMES[c].startswith("family:")
        }

        def possible(x: str) -> bool:
            return x in mine or x in hand or s.investors.get(x) is not None

        if not all(possible(x) for x in space.required):
            return 0.0
        if any(sum(possible(x) for x in c.of) < c.k for c in space.choices):
            return 0.0
        have = sum(1 for x in space.letters if x in mine or x in hand)
        return have / space.investor_count

    def _recruit_target(self, s: GameState, seat: int, options: list[dict]) -> dict | None:
        """Recruit from the side pool whenever possible; in a deal, recruit a letter it needs."""
        if s.side_pool:
            return options[0]
        deal = s.deal
        if deal is None:
            return None
        space = s.board.spaces[deal.space]
        mine = deal.boss == seat
        for c in options:
            letter = c["target"]
            if (
                mine
                and letter in space.letters
                and letter not in deal.travel_on
                and letter not in sources(s)
            ):
                return c
        return None

    def _fair(self, s: GameState) -> int:
        return fair_price(s)

    def _hurts(self, s: GameState, seat: int) -> bool:
        p = s.pending
        deal = s.deal
        if p.kind == "boss":
            return deal is not None and deal.boss == seat
        if p.kind == "recruit":
            return s.investors.get(p.target) == seat
        if p.kind == "travel" and deal is not None and p.target.startswith("investor:"):
            letter = p.target.split(":")[1]
            owner = s.investors.get(letter)
            return (
                owner == seat
                or (deal.boss == seat)
                or (owner, letter) in deal.agreements
                and owner == seat
            )
        return False

    def _negotiate(self, s: GameState, seat: int, by_do: dict, rng: random.Random):
        deal = s.deal
        fair = self._fair(s)
        if deal.boss == seat:
            if "close" in by_do:
                return by_do["close"][0]
            covered = set(sources(s))
            space = s.board.spaces[deal.space]
            if s.pending is None and not self._hopeful(s, space, covered):
                return by_do.get("fail", [None])[0]
            for c in by_do.get("play_family", []):
                if card_letter(c["card"]) not in covered:
                    return c
            for c in by_do.get("accept", []):
                letter = c.get("letter")
                amount = prices.price_worth(c["price"], s.share_value)
                if letter and letter not in covered and amount <= fair * 2:
                    return c
            for c in by_do.get("reject", []):
                key = (deal.window.id, c["with"], c.get("letter"))
                if c.get("letter") in covered or self.counters[key] >= 2:
                    return c
            for c in by_do.get("propose", []):
                letter = card_letter(c["card"]) if c.get("card") else None
                key = (deal.window.id, c["to"], letter)
                current = deal.terms.get((c["to"], letter))
                waiting = current is not None and current.by == "boss"
                if letter and letter not in covered and self.counters[key] < 2 and not waiting:
                    self.counters[key] += 1
                    return _fill(c, s, seat, rng, fair)
            return None
        # a provider
        for c in by_do.get("accept", []):
            amount = prices.price_worth(c["price"], s.share_value)
            if amount >= fair * 0.7:
                return c
        for c in by_do.get("offer", []):
            if "card" not in c:  # a counter to terms for no card: the accept above decides
                continue
            letter = card_letter(c["card"])
            key = (deal.window.id, seat, letter)
            if (
                letter not in set(sources(s))
                and self.counters[key] < 2
                and (seat, letter) not in deal.terms
            ):
                self.counters[key] += 1
                return _fill(c, s, seat, rng, fair + rng.randint(0, 2))
            if (
                (seat, letter) in deal.terms
                and deal.terms[(seat, letter)].by == "boss"
                and self.counters[key] < 2
            ):
                self.counters[key] += 1
                return _fill(c, s, seat, rng, fair + 1)
        if (
            "boss" in by_do
            and _proceeds(s) >= 20
            and not any(p == seat for p, _ in deal.agreements)
            and rng.random() < 0.05
        ):
            return by_do["boss"][0]
        return None

    def _hopeful(self, s: GameState, space: Any, covered: set[str]) -> bool:
        """Every missing letter can still come from somewhere: a card already taking part, an
        investor card on no travel, or a family card on the table."""
        deal = s.deal
        on_table = {card_letter(CARD_NAMES[c]) for c, _ in deal.table_family}
        on_table |= {
            card_letter(CARD_NAMES[c])
            for c in s.hands[deal.boss]
            if CARD_NAMES[c].startswith("family:")
        }

        def possible(x: str) -> bool:
            return (
                x in covered
                or x in on_table
                or (s.investors.get(x) is not None and x not in deal.travel_on)
            )

        if not all(possible(x) for x in space.required):
            return False
        return all(sum(possible(x) for x in c.of) >= c.k for c in space.choices)


BOTS = {"random": RandomBot, "sensible": SensibleBot}


def seat_state(state: GameState, seat: int) -> GameState:
    """A copy of ``state`` holding only what ``seat`` may know (``views.view``'s rules, A8):
    other seats' hands emptied, the draw pile's order and the seed gone, other seats' money 0
    (unless ``open_money`` or the game is over), their standing orders and nights none, the
    forced dice gone. A bot seat reads this, never the full state."""
    s = state.clone()
    others = [i for i in range(s.n) if i != seat]
    for i in others:
        s.hands[i] = []
        if not (s.options.open_money or s.phase == "game_over"):
            s.money[i] = 0
    s.orders = [o if i == seat else NO_ORDERS for i, o in enumerate(s.orders)]
    s.nights = [n if i == seat else None for i, n in enumerate(s.nights)]
    s.draw_pile = []
    s.forced_dice = []
    s.seed = None
    return s


class SeatBot:
    """The engine's best bot for a bot seat (A13): ``SensibleBot``'s choices made on
    ``seat_state`` (the seat's own view only), never a chat. Its policy: recruit from the side
    pool, deal on spaces where it supplies at least half the investors itself, ask and pay the
    fair price (``context.fair_price``), close as soon as it can, stop cards aimed at its own
    investors or deals and let other cards happen, pass every last call, discard the least
    useful cards (``_least_useful``)."""

    def __init__(self) -> None:
        self.bot = SensibleBot()

    def choose(self, state: GameState, seat: int, legal: list[dict[str, Any]], rng: random.Random):
        """A complete command for ``seat`` or ``None`` (nothing to do now)."""
        choice = self.bot.choose(seat_state(state, seat), seat, legal, rng)
        return None if choice is not None and choice["do"] == "chat" else choice
