"""A game driven from outside a request: the worker's door into a game's life
(``imtheboss.worker.tasks``, ``firing``, ``outbound``, ``smtp``, ``delivery``). What it takes:
the server's clock (``now_utc``), a game and its state (``get_game``, ``load_state``), the one
write path (``submit``: a deadline's timeout or a bot's move, as any command) and the error it
raises (``ServiceError``).
"""

from __future__ import annotations

from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.submit import submit

__all__ = ["ServiceError", "get_game", "load_state", "now_utc", "submit"]
