"""Values rebuilt from stored JSON data (a board, a seat's orders), kept by their content.

A game's state is rebuilt on every load, from a snapshot or a ``game_started`` event, and its
board and orders are checked as they are built (``load_board``, ``Orders.from_json``), though
few of them are in use. ``ByContent`` checks each once per process: the values seen last are
found by comparing the data (a C-level walk, cheaper than writing the text; Python's equality,
so a stored ``1`` finds what ``true`` built, where the checks might refuse the one and not the
other: stored data is what this engine wrote), any other by its JSON text, which Python hashes.
The values must be immutable: every state shares them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ByContent(Generic[T]):
    """``build(data)``, cached by the content of ``data``: the ``recent`` values seen last by
    comparison, up to ``size`` by their JSON text. What ``build`` raises is raised (and not
    cached); data that is not JSON goes to ``build`` as it is, for it to name the problem."""

    def __init__(self, build: Callable[[Any], T], recent: int = 8, size: int = 256) -> None:
        self._build = build
        self._of_text = lru_cache(maxsize=size)(self._parse)
        self._recent: tuple[tuple[Any, T], ...] = ()  # the latest first; never mutated
        self._keep = recent

    def __call__(self, data: Any) -> T:
        for known, value in self._recent:
            if known == data:
                return value
        try:
            text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):
            return self._build(data)
        value = self._of_text(text)
        # one rebinding of an immutable tuple: threads reading it meanwhile are safe
        self._recent = ((json.loads(text), value), *self._recent[: self._keep - 1])
        return value

    def _parse(self, text: str) -> T:
        return self._build(json.loads(text))
