"""Game options: variants V1-V9, R3.5's reading, open money (R7.1) and window lengths (A1)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any


def N_(text: str) -> str:
    """Mark ``text`` for the catalogs (``web/babel.cfg`` reads this module) and return it as it
    is: the engine speaks no language; web/ translates it where a player reads it."""
    return text


@dataclass(frozen=True)
class Variant:
    """One variant of the rules (docs/rules.md): ``id`` (``"V1"``) and ``summary``, one English
    sentence a player reads beside its checkbox (a catalog msgid)."""

    id: str
    summary: str


VARIANT_TABLE = (
    Variant("V1", N_("Boss cards do not change the turn order (play passes left of the opener).")),
    Variant(
        "V2", N_("A player holding 10 or more influence cards must open a deal on their turn.")
    ),
    Variant(
        "V3", N_("Between two of your turns, be boss or play a card, else you must open a deal.")
    ),
    Variant("V4", N_("Draw by investors controlled: 0 → 4 cards, 1 → 3, 2 → 2, 3 or more → 1.")),
    Variant("V5", N_("A player holding fewer than 4 influence cards may not open a deal.")),
    Variant("V6", N_("From the 10th deal on, the hand limit is 10.")),
    Variant("V7", N_("Short game: tiles #3, #6, #9 removed; from tile #10 end rolls add up to 6.")),
    Variant("V8", N_("Less cut-throat: the two-player rules with 3 to 6 players.")),
    Variant("V9", N_("Two-player rules: use opponents' investors by sharing the proceeds.")),
)
"""Every variant, in the order the new-game form lists them: a variant is its row here, its
effect where its rule is (``options.has("V4")``; a share's price in ``prices``), and its
summary in the catalogs."""

VARIANTS = tuple(variant.id for variant in VARIANT_TABLE)

DEFAULT_WINDOWS = {
    "turn": 24 * 3600,
    "stop": 6 * 3600,
    "last_call": 12 * 3600,
    "negotiation": 48 * 3600,
}


MAX_PROXY_HOURS = 30 * 24


class OptionsError(ValueError):
    """Options that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Options:
    """A game's settings, fixed at creation.

    ``variants``: sorted tuple of ``"V1"``..``"V9"``. ``must_roll_after_close``: R3.5's stricter
    reading. ``open_money``: R7.1 (everyone sees every total). ``windows``: seconds for the
    ``turn``, ``stop``, ``last_call`` and ``negotiation`` windows (A1). ``proxy_hours``: A11, the
    server plays for a seat away this many hours since its last own act (0: never).
    ``quiet_hours``: A12, windows do not run out in the night of a seat they wait for.
    """

    variants: tuple[str, ...] = ()
    must_roll_after_close: bool = False
    open_money: bool = False
    windows: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_WINDOWS))
    proxy_hours: int = 0
    quiet_hours: bool = False

    def has(self, variant: str) -> bool:
        """True when ``variant`` (e.g. ``"V4"``) is on."""
        return variant in self.variants

    def window(self, kind: str) -> timedelta:
        """The length of a window kind (A1) as a ``timedelta``."""
        return timedelta(seconds=self.windows[kind])

    def two_player_rules(self, players: int) -> bool:
        """V9 applies: a 2-player game always, or V8 with 3-6 players."""
        return players == 2 or self.has("V9") or self.has("V8")

    def for_players(self, players: int) -> Options:
        """These options for a game of ``players`` seats: two players imply the two-player
        rules V9 (R2.1), which are added when missing."""
        if players == 2 and not self.has("V9"):
            return replace(self, variants=tuple(sorted({*self.variants, "V9"})))
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "variants": list(self.variants),
            "must_roll_after_close": self.must_roll_after_close,
            "open_money": self.open_money,
            "windows": dict(self.windows),
            "proxy_hours": self.proxy_hours,
            "quiet_hours": self.quiet_hours,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Options:
        """Build options from ``{"variants": [...], "must_roll_after_close": bool, "open_money":
        bool, "windows": {kind: seconds}}`` (every key optional). Raises ``OptionsError``."""
        if data is not None and not isinstance(data, dict):
            raise OptionsError("options must be an object")
        data = dict(data or {})
        unknown = set(data) - {
            "variants",
            "must_roll_after_close",
            "open_money",
            "windows",
            "proxy_hours",
            "quiet_hours",
        }
        if unknown:
            raise OptionsError(f"unknown option {sorted(unknown)[0]!r}")
        variants = data.get("variants", [])
        if not isinstance(variants, list | tuple) or any(v not in VARIANTS for v in variants):
            raise OptionsError(f"variants must be a list of {', '.join(VARIANTS)}")
        for key in ("must_roll_after_close", "open_money", "quiet_hours"):
            if not isinstance(data.get(key, False), bool):
                raise OptionsError(f"{key} must be true or false")
        windows = dict(DEFAULT_WINDOWS)
        given = data.get("windows", {})
        if not isinstance(given, dict):
            raise OptionsError("windows must be an object of seconds")
        for kind, seconds in given.items():
            if kind not in DEFAULT_WINDOWS:
                raise OptionsError(f"unknown window {kind!r}")
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int)
                or not 1 <= seconds <= 30 * 86400
            ):
                raise OptionsError(f"window {kind!r} must be 1 to 2592000 seconds")
            windows[kind] = seconds
        proxy = data.get("proxy_hours", 0)
        if type(proxy) is not int or not 0 <= proxy <= MAX_PROXY_HOURS:
            raise OptionsError(f"proxy_hours must be 0 (never) to {MAX_PROXY_HOURS} hours")
        return cls(
            proxy_hours=proxy,
            quiet_hours=data.get("quiet_hours", False),
            variants=tuple(sorted(set(variants))),
            must_roll_after_close=data.get("must_roll_after_close", False),
            open_money=data.get("open_money", False),
            windows=windows,
        )
