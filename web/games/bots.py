"""Bot seats in play (A13): after every commit that leaves a bot seat with a decision, the
server's bot makes it at once, through ``games.submit.submit`` like a person's command (which
it is handed: ``submit`` calls ``play``, so this module does not import it).

The bot is the engine's best, ``engine.bots.SeatBot``, fed only its seat's view
(``bots.seat_state``: its own hand, the public table; never another seat's hand, the draw
pile's order, the seed, others' money or standing orders) and the seat's legal commands. Its
commands are ordinary commands of its seat (``by`` the seat), sent with ``via="bot"``: their
events carry ``{"via": "bot"}``, so the history, the replay and the export tell the bot's acts
from a person's; the commands table keeps them under the seat's scope with the key
``bot:<seq>`` (the event the bot saw last), so two processes that both let a bot act after the
same event append its move once. The bot never chats (``SeatBot`` drops a chat).

A bot seat's standing orders are ``orders.bot_orders`` (posted prices and boss limits), so the
engine's orders answer for it inside every command; the bot decides the rest.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any

from imtheboss.engine.bots import SeatBot, seat_state
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.models import db

logger = logging.getLogger(__name__)
MAX_ACTS = 500  # bot commands one call makes at most (a whole game of five bots is ~1,500)
# ``games.submit.submit``, handed in by its callers (it calls ``play`` after its commit)
Submit = Callable[..., Any]


def choose(state: GameState, seat: int, key: str) -> dict[str, Any] | None:
    """The bot's command for bot seat ``seat`` in ``state`` (``{"do": ..., **args}``) or
    ``None`` (nothing to do now). Reads only ``seat_state(state, seat)`` and the seat's legal
    commands; ``key`` seeds its random choices (the same key, the same choice)."""
    legal = legal_commands(state, seat)
    if not legal:
        return None
    mine = seat_state(state, seat)
    return SeatBot().choose(mine, seat, legal, random.Random(key))


def next_move(game_id: str, state: GameState) -> tuple[int, dict[str, Any]] | None:
    """The first bot seat (in seat order) with a command to make in ``state``, and the
    command; ``None`` when no bot seat acts (none, or the game is over)."""
    if state.phase == "game_over":
        return None
    for seat in range(state.n):
        if state.bots[seat]:
            command = choose(state, seat, f"{game_id}:{state.seq}:{seat}")
            if command is not None:
                return seat, command
    return None


def play(game_id: str, state: GameState | None = None, *, submit: Submit) -> int:
    """Let the bot seats of ``game_id`` act until none has anything to do (at most
    ``MAX_ACTS`` commands), each command through ``submit`` (``games.submit.submit``).
    ``state``: the game's state just committed, when the caller has it (else it is loaded).
    Returns the commands appended. A command the rules refuse (another process moved the game
    meanwhile), or one another process appended already (its key), ends the round: the next
    commit lets the bots act again. Never raises a ``ServiceError``."""
    acts = 0
    for _ in range(MAX_ACTS):
        if state is None:
            game = get_game(game_id)
            if game.status != "active":
                db.session.rollback()
                return acts
            state = load_state(game)
            db.session.rollback()  # it only read: no transaction held open
        if not any(state.bots):
            return acts
        move = next_move(game_id, state)
        if move is None:
            return acts
        seat, command = move
        try:
            result = submit(game_id, seat, command, f"bot:{state.seq}", via="bot")
        except ServiceError as exc:
            logger.info("bot of seat %s in game %s: %s (%s)", seat, game_id, exc.code, command)
            return acts
        if result.duplicate or not result.events:  # another process made it: it plays on
            return acts
        acts += 1
        state = result.state
    logger.warning("bots of game %s made %d commands in one round", game_id, acts)
    return acts


def play_after(game_ids: list[str], *, submit: Submit) -> None:
    """``play`` each of ``game_ids`` through ``submit`` (after a batch of timeouts,
    ``worker.firing``); a game's fault is logged and the others go on."""
    for game_id in game_ids:
        try:
            play(game_id, submit=submit)
        except Exception:  # one game's fault must not stop the others
            db.session.rollback()
            logger.exception("bots of game %s failed to act", game_id)
