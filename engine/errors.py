"""Refusals: a command the rules do not allow is refused with a stable code (docs/scenarios.md)."""

from __future__ import annotations

# Codes from docs/scenarios.md, plus the engine's own (documented in docs/rules-decisions.md).
CODES = frozenset(
    {
        "not_your_turn",
        "wrong_phase",
        "must_roll",
        "must_deal",
        "cannot_deal",
        "card_not_in_hand",
        "invalid_target",
        "own_investor",
        "side_pool_first",
        "not_enough_recruits",
        "nothing_to_stop",
        "card_pending",
        "not_boss",
        "over_proceeds",
        "requirements_not_met",
        "hand_over_limit",
        "window_closed",
        "terms_changed",
        "bad_command",
        # engine additions
        "no_terms",  # accept/reject with nobody's terms to answer
        "already_agreed",  # offering or proposing on a letter already under agreement (R4.3)
        "already_answered",  # a second answer to the same window (A2, A3)
        "not_needed",  # a family card or offer for a letter this deal space does not use (R4.2)
        "deadline_passed",  # a new influence card after the negotiation deadline (A4)
        "not_due",  # a timeout before any deadline has passed (A4-A6)
        "game_over",  # any command after the game ended (R7.2)
        "bots_only",  # a seat passed to a bot would leave no person at the table (A13)
    }
)


class RuleError(Exception):
    """A refused command. ``code`` is stable (see ``CODES``), ``message`` is for people, ``rule``
    the docs/rules.md id that refuses it (e.g. ``"R5.4"``). A refused command changes nothing."""

    def __init__(self, code: str, message: str, rule: str = "") -> None:
        assert code in CODES, code
        super().__init__(message)
        self.code = code
        self.message = message
        self.rule = rule

    def to_dict(self) -> dict[str, str]:
        """``{"code", "message", "rule"}`` for APIs and scenario output."""
        return {"code": self.code, "message": self.message, "rule": self.rule}

    def __repr__(self) -> str:
        return f"RuleError({self.code!r}, {self.message!r}, {self.rule!r})"
