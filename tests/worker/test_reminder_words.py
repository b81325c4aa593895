"""Reminders only to seats with a choice, saying what they are about (``write_reminders``): a
card's stop window reminds the seat holding a stop card, not the one that can only let it
happen; the reminder names what it asks, until when (in the reader's zone) and what silence
does, in each language."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

from flask_babel import force_locale
from imtheboss.engine.state import GameState
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.mail.reminders import write_reminders
from imtheboss.web.models import Deadline, db
from imtheboss.web.replies.choices import has_stop_card
from imtheboss.web.say import messages
from sqlalchemy import select
from support.worker import act, card_plays, find_opening, open_deal_on, players, rows_of

WINDOWS = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
SILENCE = {"en": "you let it happen", "zh_Hans": "视为让它生效", "zh_Hant": "視為讓它生效"}


def _split_play(state: GameState) -> tuple[int, dict] | None:
    """A card play after which one seat to answer holds a stop card and the other does not."""
    for seat, cmd in card_plays(state):
        others = [s for s in range(state.n) if s != seat]
        if sorted(has_stop_card(state, s) for s in others) == [False, True]:
            return seat, cmd
    return None


def test_a_stop_window_reminds_only_the_seat_that_can_stop_and_says_what(app):
    seed, space = find_opening(3, lambda state, space: _split_play(state) is not None)
    with app.app_context():
        gid = create_game("Words", players("words"), WINDOWS, seed=seed).game_id
        open_deal_on(gid, space, 3)
        seat, card = _split_play(load_state(get_game(gid)))
        act(gid, seat, card, "k3")
        state = load_state(get_game(gid))
        (can,) = [s for s in range(3) if s != seat and has_stop_card(state, s)]
        window = state.pending.window.id
        deadline = db.session.execute(
            select(Deadline).where(Deadline.game_id == gid, Deadline.window_id == window)
        ).scalar_one()
        claims, due = [(deadline.id, gid)], deadline.due_at
        write_reminders(claims, due - timedelta(seconds=1))
        rows = [r for r in rows_of(gid) if r.kind == "reminder"]
        assert [(r.seat_index, r.body["for"]) for r in rows] == [(can, "stop")]
        names = [name for name, _address in players("words")]
        for lang, silence in SILENCE.items():
            with force_locale(lang):
                row = SimpleNamespace(kind="reminder", body=rows[0].body, seat_index=can, text="")
                text = messages.row_text(row, names, "Asia/Shanghai")
            assert silence in text, (lang, text)
            assert "UTC+8" in text, (lang, text)
