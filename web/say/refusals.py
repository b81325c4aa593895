"""Refusals in plain words for the pages: what a player reads when a move or a page is refused,
in their language, with no HTTP status, error code or rule id (the JSON API keeps those).

``refusal(code, message)`` gives the sentence for ``code`` (the engine's ``RuleError`` codes,
``imtheboss.engine.errors.CODES``, and the web's own); a code without one keeps its message,
which the web layer already wrote for people (translated where it was raised).
"""

from __future__ import annotations

from typing import Any

from flask_babel import lazy_gettext as _l

SENTENCES: dict[str, Any] = {
    # the engine's refusals (imtheboss.engine.errors.CODES)
    "not_your_turn": _l("It is not your turn."),
    "wrong_phase": _l("That cannot be done at this point of the game."),
    "must_roll": _l("You must roll the die first."),
    "must_deal": _l("You must open a deal this turn."),
    "cannot_deal": _l("A deal cannot be opened here now."),
    "card_not_in_hand": _l("You do not hold that card."),
    "invalid_target": _l("That card cannot be played on that target."),
    "own_investor": _l("You cannot do that with your own investor card."),
    "side_pool_first": _l("The investors in the side pool must be used first."),
    "not_enough_recruits": _l("Recruiting takes three recruit cards."),
    "nothing_to_stop": _l("There is no card to stop."),
    "card_pending": _l("A card waits for answers first."),
    "not_boss": _l("Only the boss can do that."),
    "over_proceeds": _l("That would pay out more than the deal's proceeds."),
    "requirements_not_met": _l("The deal does not have every investor it needs yet."),
    "hand_over_limit": _l("Discard down to your hand limit first."),
    "window_closed": _l("That decision is over: its time has passed or it was answered."),
    "terms_changed": _l("The terms changed while you were deciding: look at them again."),
    "bad_command": _l("That move is not possible."),
    "no_terms": _l("There are no terms to answer."),
    "already_agreed": _l("That card is already in an agreement."),
    "already_answered": _l("You have already answered."),
    "not_needed": _l("This deal does not need that investor."),
    "deadline_passed": _l("The time for negotiating has run out: no new cards now."),
    "bots_only": _l("A game of bots only is refused: at least one seat must be a person's."),
    "not_due": _l("Nothing is due yet."),
    "game_over": _l("The game is over."),
    # the web's
    "paused": _l("The organiser has paused the game."),
    "not_started": _l("The game has not started yet."),
    "no_game": _l("There is no such game (or the link is incomplete)."),
    "not_found": _l("There is no such page (or the link is incomplete)."),
    "method_not_allowed": _l("That page cannot be used that way."),
    "request_entity_too_large": _l("That is too large to send."),
    "csrf": _l("The form has expired: reload the page and try again."),
    "csrf_host": _l(
        "This server is set up wrongly (its proxy changes the site's address), so your form "
        "could not be sent. Please tell whoever runs it; reloading will not help."
    ),
    "key_reused": _l("That form was already used for another move: reload the page."),
    "bad_key": _l("The form is incomplete: reload the page and try again."),
    "database_unavailable": _l("The game is unavailable for a moment: try again in a minute."),
    "internal": _l("Something went wrong on our side; nothing was changed."),
}

TITLES: dict[int, Any] = {
    403: _l("Not allowed"),
    404: _l("Not found"),
    405: _l("Not possible"),
    409: _l("Refused"),
    429: _l("Too many requests"),
    503: _l("Unavailable for a moment"),
}


def refusal(code: str, message: str) -> str:
    """The sentence a player reads for a refusal with ``code``; ``message`` when none."""
    sentence = SENTENCES.get(code)
    return str(sentence) if sentence is not None else message


def title(status: int) -> str:
    """The heading of an error page for HTTP ``status``, in words."""
    found = TITLES.get(status)
    if found is not None:
        return str(found)
    return str(_l("Something went wrong") if status >= 500 else _l("Not possible"))
