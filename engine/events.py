"""Events: the facts of a game's append-only log (docs/architecture.md).

An event is a small frozen record: ``type``, ``data`` (JSON-native values only), ``by`` (the seat
whose command produced it, ``None`` for the scheduler or the game itself) and ``v`` (schema
version). ``Event.from_json(e.to_json()) == e`` always holds; old versions are upgraded on read.

It is a named tuple: a replay builds one for every event of the log, and a tuple is built and
read faster than any class with attributes of its own.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

SCHEMA_VERSION = 1

_tuple_new = tuple.__new__


class Event(namedtuple("Event", ("type", "data", "by", "v"))):
    """One fact. ``data`` holds only JSON-native values (dict, list, str, int, bool, None)."""

    __slots__ = ()
    type: str
    data: dict[str, Any]
    by: int | None
    v: int

    def __new__(
        cls,
        type: str,
        data: dict[str, Any] | None = None,
        by: int | None = None,
        v: int = SCHEMA_VERSION,
    ) -> Event:
        return _tuple_new(cls, (type, {} if data is None else data, by, v))

    def to_json(self) -> dict[str, Any]:
        """``{"type", "v", "by", **data}`` ready for ``json.dumps``."""
        out: dict[str, Any] = {"type": self.type, "v": self.v, "by": self.by}
        out.update(self.data)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Event:
        """Inverse of ``to_json``; upgrades older schema versions; ``obj`` is left as it was.
        Raises ``ValueError`` on a malformed record."""
        if not isinstance(obj, dict):
            raise ValueError("an event is an object with a 'type'")
        return cls.take_json(dict(obj))

    @classmethod
    def take_json(cls, obj: dict[str, Any]) -> Event:
        """``from_json`` that takes ``obj`` over (a dict fresh from ``json.loads`` or the
        database, that nobody else holds): the dict itself becomes ``data`` (``take_record``),
        so building the event copies nothing. Raises ``ValueError`` on a malformed record."""
        return _tuple_new(cls, take_record(obj))


def take_record(obj: dict[str, Any]) -> tuple[str, dict[str, Any], int | None, int]:
    """``(type, data, by, v)`` of the JSON record ``obj`` (``Event.to_json`` form), upgraded to
    ``SCHEMA_VERSION``: ``type``, ``v`` and ``by`` are popped from ``obj``, which is ``data``
    then. Raises ``ValueError`` on a malformed record."""
    if not isinstance(obj, dict) or "type" not in obj:
        raise ValueError("an event is an object with a 'type'")
    if obj.get("v", SCHEMA_VERSION) != SCHEMA_VERSION:
        obj = upgrade(obj)
    return obj.pop("type"), obj, obj.pop("by", None), obj.pop("v", SCHEMA_VERSION)


def upgrade(obj: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored event up to ``SCHEMA_VERSION``. Version 1 is the first; later rule fixes add
    steps here so history is never rewritten."""
    obj.setdefault("v", SCHEMA_VERSION)
    return obj


# Events a seat's command emits that are not its own act but what follows from it: the card it
# let through takes effect, the next turn starts, the pile is shuffled, the game ends.
CONSEQUENCES = frozenset(
    {"card_took_effect", "turn_started", "discard_step", "pile_reshuffled", "game_ended"}
)


def own_act(type_: str, data: dict[str, Any], do: str | None = None) -> bool:
    """Whether an event of ``type_`` with ``data``, emitted for the command ``do`` of its seat
    (``None``: not known, as when the history reads it back), is that seat's own act, as "by
    mail" marks it: not a consequence (``CONSEQUENCES``), not terms that lapsed, and a deal that
    closed or failed only by the boss's own ``close`` or ``fail`` (not by the last answer to a
    window that let it end)."""
    if type_ in CONSEQUENCES:
        return False
    if type_ == "terms_removed":
        return data.get("reason") == "withdrawn"
    if type_ in ("deal_closed", "deal_failed"):
        if do is not None:
            return do in ("close", "fail")
        return data.get("reason", "declared") in ("declared", "requirements_not_met")
    return True
