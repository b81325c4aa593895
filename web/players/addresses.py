"""The player an address is: one player for every case of its local part (``Amy@example.org``
and ``amy@example.org``). Pure, imported by the service and the players' modules alike."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, func


def key(email: str) -> str:
    """The player an address is: ``email`` (as ``names.normal_email`` gives it) in lower
    case, so ``Amy@example.org`` and ``amy@example.org`` are one player."""
    return email.lower()


def of_address(column: Any, email: str) -> ColumnElement[bool]:
    """The SQL test that the address in ``column`` (``Seat.email``...) is ``email``'s player,
    whatever the case of the local part (through ``ix_seats_email_lower`` for seats)."""
    return func.lower(column) == key(email)
