"""Each seat command's web face is one row of ``imtheboss.web.say.commands.COMMANDS``: every
command a seat can send the engine has its row, every form of the game page and every reply
word reads it, and no other module lists commands of its own. Each type of event has its row in
the web's table of events (``imtheboss.web.say.events.EVENTS``: icon, label, threads, posts)."""

from __future__ import annotations

from imtheboss.engine import languages
from imtheboss.engine.game import HANDLERS, SYSTEM_COMMANDS
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import EVENT_TYPES, replay
from imtheboss.engine.views import legal_commands, view
from imtheboss.web.replies.moves import MOVES
from imtheboss.web.say import command_forms
from imtheboss.web.say.commands import COMMANDS, GROUPS, VERB_COMMAND
from imtheboss.web.say.events import EVENTS
from support.tables import second_tables

SEAT_COMMANDS = set(HANDLERS) - SYSTEM_COMMANDS


def test_every_seat_command_of_the_engine_has_its_row() -> None:
    assert set(COMMANDS) == SEAT_COMMANDS
    assert all(face.group in GROUPS or face.group == "" for face in COMMANDS.values())


def test_every_reply_verb_is_a_word_of_every_language_and_says_its_move() -> None:
    for verb, do in VERB_COMMAND.items():
        assert all(verb in row.replies for row in languages.LANGUAGES), verb
        assert do in MOVES, do


def test_every_legal_command_of_a_game_becomes_a_form_in_its_group() -> None:
    game = simulate(4, 7)
    seen: set[str] = set()
    for upto in range(1, len(game.events), 7):
        state = replay(game.events[:upto])
        for seat in range(state.n):
            legal = legal_commands(state, seat)
            names = state.players
            for group, _title, forms in command_forms.command_forms(
                legal, view(state, seat), names
            ):
                for form in forms:
                    seen.add(form.cmd["do"])
                    assert group in (COMMANDS[form.cmd["do"]].group, "turn"), form.cmd
    assert {"roll", "open_deal", "offer", "accept", "close", "chat"} <= seen


def test_no_module_but_the_table_lists_commands_of_its_own() -> None:
    """A literal holding four or more command names outside the table is a second table."""
    only = SEAT_COMMANDS - {"stop", "discard", "place_marker", "offer", "chat", "pass"}
    assert second_tables(only, 4, "commands.py") == []


def test_every_event_type_has_its_icon_and_label_in_the_history() -> None:
    """A type of event without its row would show its raw type (``seat_present``) in a
    player's history."""
    assert set(EVENTS) == set(EVENT_TYPES) | {"game_started"}
    assert [face.type for face in EVENTS.values() if face.label is None] == []
