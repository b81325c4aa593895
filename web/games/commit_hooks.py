"""What runs around a game's commit, registered at app creation: ``on_commit`` hooks after a
commit that wrote notification rows (the worker's delivery: ``app.queue``, ``outbound.outbox``),
``on_outbox`` writers of more outbox rows inside the append's transaction (webhooks and push),
and ``run_after_commit``, which runs the hooks and never raises.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from flask import current_app
from imtheboss.engine.events import Event

AfterCommit = Callable[[str], None]


def on_commit(app: Any, hook: AfterCommit) -> None:
    """Register ``hook(game_id)`` to run after each commit that wrote notification rows for a
    game (the worker delivers them). Hooks must not raise."""
    app.extensions.setdefault("imtheboss.after_commit", []).append(hook)


OutboxWriter = Callable[[str, int, list[Event], list[dict[str, Any]], datetime], None]


def on_outbox(app: Any, writer: OutboxWriter) -> None:
    """Register ``writer(game_id, first_seq, events, notification_rows, at)`` to write more
    outbox rows in the transaction of every append (webhooks and push:
    ``imtheboss.web.outbound.outbox``)."""
    app.extensions.setdefault("imtheboss.outbox_writers", []).append(writer)


def run_after_commit(game_id: str) -> None:
    """Run the registered after-commit hooks for ``game_id`` (the worker's delivery); a hook
    that fails is logged, never raised: the game's commit stands."""
    for hook in current_app.extensions.get("imtheboss.after_commit", []):
        try:
            hook(game_id)
        except Exception:  # a lost hook is recovered by the worker's sweep
            current_app.logger.exception("after-commit hook failed for game %s", game_id)
