"""Property tests over many seeded bot games.

Every game ends within 15 closed deals (R7.2); the 98 influence cards are always all accounted
for (R1.1); money only comes from proceeds and what is paid equals the proceeds (R6.2, R4.4); no
hand exceeds its limit outside the discard step (R6.6); ``apply`` equals the in-place fold and
``replay(events)`` equals the live state; events survive a JSON round trip (docs/architecture.md);
every command ``legal_commands`` offers is accepted by ``decide``.

The number of games is ``IMTHEBOSS_PROPERTY_GAMES`` (default 1000).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imtheboss.engine.bots import _fill
from imtheboss.engine.cards import DECK_SIZE
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.options import VARIANTS
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import (
    GameState,
    apply,
    every_card,
    replay,
    state_from_json,
    state_to_json,
)
from imtheboss.engine.views import legal_commands
from support.orders import random_orders

GAMES = int(os.environ.get("IMTHEBOSS_PROPERTY_GAMES", "1000"))


def in_discard_step(state: GameState) -> bool:
    return state.phase == "discard" or (state.phase == "stop_window" and state.deal is None)


class Checker:
    """Checks the invariants after every accepted command of one game."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.proceeds = 0
        self.previous: GameState | None = None
        self.checkpoints: list[tuple[int, GameState]] = []
        self.events = 0
        self.legal_checked = 0

    def start(self, state: GameState) -> None:
        self.previous = state.clone()

    def __call__(self, state: GameState, command: Command, events: list[Event]) -> None:
        # apply() (a copy per event) equals the in-place fold the simulation did.
        folded = self.previous
        for event in events:
            folded = apply(folded, event)
            # JSON round trip, unchanged
            assert Event.from_json(json.loads(json.dumps(event.to_json()))) == event
            if event.type == "deal_closed":
                paid = sum(event.data["payments"].values())
                assert paid == event.data["proceeds"], "R6.2: payments equal the proceeds"
                self.proceeds += event.data["proceeds"]
        assert folded == state
        self.events += len(events)
        # R1.1: 98 cards, each exactly once.
        cards = every_card(state)
        assert len(cards) == DECK_SIZE and set(cards) == set(range(DECK_SIZE)), Counter(cards)
        # Money only from proceeds (R6.2), never negative (R4.4).
        assert sum(state.money) == self.proceeds
        assert min(state.money) >= 0
        # R6.6 hand limit outside the discard step (a game that ends with a deal never comes
        # to the discard step that would follow it).
        if not in_discard_step(state) and state.phase not in ("closing", "game_over"):
            limit = state.hand_limit()
            assert all(len(h) <= limit for h in state.hands), [len(h) for h in state.hands]
        assert state.deals_closed <= 15
        if self.rng.random() < 0.02:
            self.checkpoints.append((state.seq, state.clone()))
            # snapshots (the web layer stores them) survive JSON unchanged
            text = json.dumps(state_to_json(state))
            assert state_from_json(json.loads(text)) == state
        self._check_legal(state, command)
        self.previous = state.clone()

    def _check_legal(self, state: GameState, command: Command) -> None:
        """A few commands that legal_commands offers must be accepted by decide."""
        if state.phase == "game_over":
            assert all(legal_commands(state, s) == [] for s in range(state.n))
            return
        seat = self.rng.randrange(state.n)
        legal = [c for c in legal_commands(state, seat) if c["do"] != "chat"]
        for cmd in self.rng.sample(legal, min(2, len(legal))):
            filled = _fill(cmd, state, seat, self.rng, self.rng.randint(0, 4))
            args = {k: v for k, v in filled.items() if k != "do"}
            try:
                decide(state, Command(filled["do"], seat, args, command.at))
            except RuleError as exc:  # pragma: no cover - the failure message is the point
                raise AssertionError(
                    f"legal_commands offered {filled} but decide said {exc!r}"
                ) from exc
            self.legal_checked += 1


@settings(
    max_examples=GAMES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 6),
    variants=st.sets(st.sampled_from(VARIANTS), max_size=4),
    bots=st.sampled_from(["sensible", "sensible", "mixed", "random"]),
    orders_share=st.sampled_from([0.0, 0.5, 1.0]),
    proxy_hours=st.sampled_from([0, 0, 24, 48]),
)
def test_bot_games_keep_the_invariants(
    seed: int, players: int, variants: set[str], bots: str, orders_share: float, proxy_hours: int
) -> None:
    """R1.1, R4.4, R6.2, R6.6, R7.2, A9, A10, A11: invariants hold after every command of whole
    games, with random standing orders on random seats and the away proxy on or off."""
    if players == 2:
        variants = variants | {"V9"}
    checker = Checker(seed)
    game = simulate(
        players,
        seed,
        variants=sorted(variants),
        bots=bots,
        max_commands=6000,
        observer=checker,
        on_start=checker.start,
        orders=random_orders(random.Random(f"orders:{seed}"), players, orders_share),
        proxy_hours=proxy_hours,
    )
    state = game.state
    assert state.phase == "game_over"
    assert state.deals_closed <= 15
    assert state.winners and all(state.money[w] == max(state.money) for w in state.winners)
    assert replay(game.events) == state
    for seq, expected in checker.checkpoints:
        assert replay(game.events[:seq]) == expected
    assert checker.events == len(game.events) - 1
