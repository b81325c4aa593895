"""What money a share, a space and a price are worth: the one place that multiplies shares by
the value of a share (the engine, the bots, the pages and the mail all ask here).

Money is integer millions (M). A price is one kind and an amount: ``("cash", 3)`` in the
engine's terms, ``{"cash": 3}`` or ``{"shares": 1}`` in views, commands and events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from imtheboss.engine.cards import TILE_VALUES
from imtheboss.engine.options import Options


def share_value(tiles: Sequence[int], options: Options | None = None) -> int:
    """The value of one share (M) while ``tiles`` (deal tile numbers, the top first) are left,
    in a game of ``options`` (its variants; ``None``: the printed rules): the top tile's value
    (R1.2); 0 when none is left. A variant that prices a share otherwise reads ``options``
    here."""
    return TILE_VALUES[tiles[0]] if tiles else 0


def proceeds(shares: int, value: int) -> int:
    """A deal space's proceeds (M): its ``shares`` times ``value``, the value of one share
    (Terms: proceeds, paid at closing, R6.2)."""
    return shares * value


def price_value(kind: str, amount: int, value: int) -> int:
    """What a price is worth (M): ``amount`` itself when ``kind`` is ``"cash"``, else
    ``amount`` shares of ``value`` M each (R4.3, R4.4: agreements and their sum)."""
    return amount if kind == "cash" else proceeds(amount, value)


def price_worth(price: Mapping[str, int], value: int) -> int:
    """``price_value`` of a price written ``{"cash": 3}`` or ``{"shares": 1}`` (one key)."""
    kind, amount = next(iter(price.items()))
    return price_value(kind, amount, value)
