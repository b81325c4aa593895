"""Events: the facts of a game's append-only log (docs/architecture.md).

An event is a small frozen record: ``type``, ``data`` (JSON-native values only), ``by`` (the seat
whose command produced it, ``None`` for the scheduler or the game itself) and ``v`` (schema
version). ``Event.from_json(e.to_json()) == e`` always holds; old versions are upgraded on read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


@dataclass(frozen=True, eq=True)
class Event:
    """One fact. ``data`` holds only JSON-native values (dict, list, str, int, bool, None)."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)
    by: int | None = None
    v: int = SCHEMA_VERSION

    __hash__ = None  # type: ignore[assignment]  # data is a dict

    def to_json(self) -> dict[str, Any]:
        """``{"type", "v", "by", **data}`` ready for ``json.dumps``."""
        out: dict[str, Any] = {"type": self.type, "v": self.v, "by": self.by}
        out.update(self.data)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Event:
        """Inverse of ``to_json``; upgrades older schema versions. Raises ``ValueError`` on a
        malformed record."""
        if not isinstance(obj, dict) or "type" not in obj:
            raise ValueError("an event is an object with a 'type'")
        obj = upgrade(dict(obj))
        data = {k: v for k, v in obj.items() if k not in ("type", "v", "by")}
        return cls(type=obj["type"], data=data, by=obj.get("by"), v=obj.get("v", SCHEMA_VERSION))


def upgrade(obj: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored event up to ``SCHEMA_VERSION``. Version 1 is the first; later rule fixes add
    steps here so history is never rewritten."""
    obj.setdefault("v", SCHEMA_VERSION)
    return obj
