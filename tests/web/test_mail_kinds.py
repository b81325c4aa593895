"""The kinds of outbox rows are declared once, in ``imtheboss.web.mail.kinds``: every kind the
server writes has its record there, and no other module lists kinds of its own (the inbox's
icons, push, replies, the thread of a mail, the worker's batching all read the table)."""

from __future__ import annotations

import ast
from pathlib import Path

from imtheboss.engine import state as engine_state
from imtheboss.engine.game import HANDLERS
from imtheboss.engine.simulate import START, simulate
from imtheboss.engine.state import apply_in_place, replay
from imtheboss.web.mail import kinds, notify

ROOT = Path(__file__).resolve().parents[2]
ASKED_FOR = {"place_marker", "turn", "discard", "stop", "last_call", "negotiation"}
# names that are a mail kind and nothing else (not a command, an event type, what a window
# asks, or the end's phase): a literal holding two of them is a second table of kinds
ONLY_KINDS = (
    set(kinds.KINDS) - set(HANDLERS) - set(engine_state.EVENT_TYPES) - ASKED_FOR - {"game_over"}
)


def _literal_strings(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Dict):
        items = [k for k in node.keys if k is not None]
    elif isinstance(node, ast.Set | ast.Tuple | ast.List):
        items = node.elts
    else:
        return set()
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}


def test_no_module_but_the_table_lists_mail_kinds() -> None:
    assert len(ONLY_KINDS) >= 8, ONLY_KINDS  # the check reads enough names to bite
    found = []
    for room in ("web", "worker"):
        for path in sorted((ROOT / room).rglob("*.py")):
            if path.name == "kinds.py" or "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                named = _literal_strings(node) & ONLY_KINDS
                if len(named) >= 2:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {sorted(named)}")
    assert found == []


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
