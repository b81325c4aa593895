"""The kinds of outbox rows are declared once, in ``imtheboss.web.mail.kinds``: every kind the
server writes has its record there, and no other module lists kinds of its own (the inbox's
icons, push, replies, the thread of a mail, the worker's batching all read the table)."""

from __future__ import annotations

from imtheboss.engine import state as engine_state
from imtheboss.engine.game import HANDLERS
from imtheboss.engine.simulate import START, simulate
from imtheboss.engine.state import apply_in_place, replay
from imtheboss.web.mail import kinds, notify
from support.tables import second_tables

ASKED_FOR = {"place_marker", "turn", "discard", "stop", "last_call", "negotiation"}
# names that are a mail kind and nothing else (not a command, an event type, what a window
# asks, or the end's phase): a literal holding two of them is a second table of kinds
ONLY_KINDS = (
    set(kinds.KINDS) - set(HANDLERS) - set(engine_state.EVENT_TYPES) - ASKED_FOR - {"game_over"}
)


def test_no_module_but_the_table_lists_mail_kinds() -> None:
    assert len(ONLY_KINDS) >= 8, ONLY_KINDS  # the check reads enough names to bite
    assert second_tables(ONLY_KINDS, 2, "kinds.py") == []


def test_every_row_the_writers_make_is_a_declared_kind_with_its_urgency() -> None:
    game = simulate(4, 5, idle_seats=frozenset({2}))  # the server plays for seat 2
    before = replay(game.events[:1])
    links = [f"link-{seat}" for seat in range(before.n)]
    rows = notify.notifications_for("g", None, game.events[:1], before, 1, START, links)
    for seq, event in enumerate(game.events[1:], 2):
        after = before.clone()
        apply_in_place(after, event)
        rows += notify.notifications_for("g", before, [event], after, seq, START)
        before = after
    written = {row["kind"] for row in rows}
    assert written >= {"invited", "your_turn", "deal_opened", "played_for", "game_over"}
    assert written <= set(kinds.KINDS)
    for row in rows:
        urgent = kinds.KINDS[row["kind"]].urgent
        proxy = row["kind"] == "played_for" and row["text"] == "proxy_started"
        assert row["urgent"] == (urgent or proxy), row
