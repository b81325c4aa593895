"""Every event type of the engine as the web shows it: one ``EventFace`` a type, in one table,
``EVENTS`` (``tests/web/test_command_table.py`` fails when the engine folds an event type this
table does not describe).

A row says the icon and the label of the type's rows in the history and a negotiation's
timeline (``imtheboss.web.say.timeline``), whether it is about a seat rather than a deal (never
in a negotiation's timeline), its part in the story's threads (``imtheboss.web.say.chapters``),
and the kind of post a webhook makes of it (``imtheboss.web.outbound.webhooks``). Which events only
their own seat sees is the engine's (``imtheboss.engine.views.PRIVATE_EVENTS``, A8); what each
says is the engine's message (``imtheboss.engine.history``) in the reader's language
(``imtheboss.web.say.messages``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask_babel import lazy_gettext as _l


@dataclass(frozen=True)
class EventFace:
    """One event type's web face. ``type``: the engine's name. ``icon`` and ``label``: its row's
    in the history (``label`` ``None``: the row shows the type's name). ``seat_event``: about a
    seat, not a deal: in the game's history, never in a negotiation's timeline. ``thread``: its
    part in a negotiation's story: ``terms`` (a line of the terms' thread between the boss and
    a provider), ``window_end`` (ends a card's stop window or a last call), ``""`` (any other).
    ``post``: the kind of post a webhook makes of it (``""``: none)."""

    type: str
    icon: str
    label: Any = None
    seat_event: bool = False
    thread: str = ""
    post: str = ""


_FACES = (
    EventFace("game_started", "★", _l("Game started"), post="turn"),
    EventFace("marker_placed", "$", _l("Marker")),
    EventFace("die_rolled", "⚄", _l("Die")),
    EventFace("pile_reshuffled", "↻", _l("Reshuffle")),
    EventFace("cards_drawn", "+", _l("Draw")),
    EventFace("discard_step", "✂", _l("Hand limit"), post="window_opened"),
    EventFace("cards_discarded", "−", _l("Discard")),
    EventFace("turn_started", "▶", _l("Turn"), post="turn"),
    EventFace("deal_opened", "🤝", _l("Deal opened"), post="deal_opened"),
    EventFace("family_played", "♦", _l("Family card")),
    EventFace("terms_set", "✎", _l("Terms"), thread="terms"),
    EventFace("terms_removed", "✗", _l("Terms ended"), thread="terms"),
    EventFace("agreement_made", "✔", _l("Agreement"), thread="terms"),
    EventFace("card_pending", "⚑", _l("Card played"), post="window_opened"),
    EventFace("window_answered", "↩", _l("Answer")),
    EventFace("card_stopped", "⛔", _l("Stopped"), thread="window_end"),
    EventFace("card_took_effect", "⚡", _l("Took effect"), thread="window_end"),
    EventFace("close_called", "🔔", _l("Last call"), post="window_opened"),
    EventFace("negotiation_expired", "⌛", _l("Deadline")),
    EventFace("timed_out", "⌛", _l("Timed out"), thread="window_end"),
    EventFace("deal_closed", "💰", _l("Deal closed"), post="deal_closed"),
    EventFace("deal_failed", "✗", _l("Deal failed"), post="deal_failed"),
    EventFace("game_ended", "🏁", _l("Game over"), post="game_over"),
    EventFace("chat", "💬", _l("Chat")),
    EventFace("deadlines_extended", "⏸", _l("Deadlines moved")),
    EventFace("seat_away", "☾", _l("Away"), seat_event=True),
    EventFace("seat_present", "☀", _l("I'm back")),  # only its own seat sees it (A11)
    EventFace("orders_set", "⚙", _l("Your standing orders"), seat_event=True),
    EventFace("night_set", "☾", _l("Night"), seat_event=True),
    EventFace("proxy_scheduled", "⏲", _l("Away"), seat_event=True),
    EventFace("proxy_started", "🤖", _l("Server plays")),
    # the organiser's acts (A13)
    EventFace("window_extended", "⏳", _l("More time")),
    EventFace("seat_replaced", "⇄", _l("New player")),
    EventFace("seat_to_bot", "⇄", _l("Bot")),
    EventFace("game_paused", "⏸", _l("Paused")),
    EventFace("game_resumed", "▶", _l("Resumed")),
    EventFace("seat_email_changed", "✉", _l("Email address")),
    EventFace("invitation_resent", "✉", _l("New invitation")),
)
EVENTS: dict[str, EventFace] = {face.type: face for face in _FACES}

# Kinds of one event type that have an icon and a label of their own: (type, key, value).
SUBKINDS = {
    ("card_took_effect", "kind", "boss"): ("👑", _l("New boss")),  # R5.5
    ("terms_removed", "reason", "lapsed"): ("⌁", _l("Lapsed")),  # R4.7, R5.5
}

# Events about a seat, not a deal: in the game's history, never in a negotiation's timeline.
SEAT_EVENTS = frozenset(face.type for face in _FACES if face.seat_event)


def types_where(**facts: Any) -> frozenset[str]:
    """The event types whose rows have every one of ``facts`` (``thread="terms"``)."""
    return frozenset(
        face.type for face in _FACES if all(getattr(face, k) == v for k, v in facts.items())
    )
