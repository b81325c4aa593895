"""Reply words become only the commands ``legal_commands`` offers the seat now: in every state
of whole bot games, each word a mail would show gives a command the rules accept, a word for
no legal move is "not now", and a word that fits several moves is never guessed. Pure."""

from __future__ import annotations

from datetime import datetime, timedelta

from imtheboss.engine.errors import RuleError
from imtheboss.engine.game import Command, decide
from imtheboss.engine.simulate import START, simulate
from imtheboss.engine.state import GameState
from imtheboss.web.replies.apply import open_windows
from imtheboss.web.replies.choices import (
    ANSWER_VERBS,
    ORDER,
    choices,
    command_for,
    command_window,
    has_stop_card,
    verbs_that_work,
)
from imtheboss.web.replies.words import MEANS, Reading
from imtheboss.web.say.display import space_number

SECOND = timedelta(seconds=1)
ARGS = {"offer": {"price": {"cash": 3}}, "chat": {"text": "hi"}}


def _reading(verb: str, state: GameState, seat: int) -> Reading:
    if verb == "place":
        space = min((c["space"] for c in choices(state, seat).get("place", [])), default=0)
        return Reading("place", space=space_number(space))  # as the player reads it
    extra = ARGS.get(verb, {})
    return Reading(verb, price=extra.get("price"), text=extra.get("text"))


def test_every_shown_word_is_a_legal_command_in_whole_games() -> None:
    seen: set[str] = set()
    several: set[str] = set()
    no_stop_card: list[int] = []

    def check(state: GameState, at: datetime) -> None:
        for seat in range(state.n):
            working = verbs_that_work(state, seat)
            for verb in ORDER:
                choice = command_for(_reading(verb, state, seat), state, seat)
                if verb in working:
                    assert choice.command is not None, (verb, choice)
                    args = {k: v for k, v in choice.command.items() if k != "do"}
                    try:
                        decide(state, Command(choice.command["do"], seat, args, at))
                    except RuleError as exc:  # pragma: no cover - the assertion says which
                        raise AssertionError((verb, choice.command, exc.code)) from None
                    seen.add(verb)
                elif verb in choices(state, seat):
                    assert choice.problem == "several"
                    several.add(verb)
                elif verb == "stop" and "allow" in choices(state, seat):
                    # a stop window the seat can only allow: the answer says why
                    assert choice.problem == "no_stop_card" and not has_stop_card(state, seat)
                    no_stop_card.append(seat)
                elif verb not in MEANS:  # "deal" may mean accept: the test below
                    assert choice.problem == "not_now", (verb, choice)

    for seed in range(6):
        simulate(
            4,
            seed,
            bots="mixed",
            on_start=lambda state: check(state, START),
            observer=lambda state, command, _events: check(state, command.at + SECOND),
        )
    assert {"allow", "stop", "pass", "accept", "roll", "draw", "deal", "close", "fail"} <= seen
    assert {"offer", "place", "chat", "reject"} <= seen | several
    assert no_stop_card  # the games reached a stop window of a seat with no stop card


def test_unclear_and_several_are_not_guessed() -> None:
    game = simulate(3, 1, max_commands=10_000)
    assert command_for(None, game.state, 0).problem == "unclear"


def test_a_reply_to_a_card_s_or_last_call_mail_only_answers_that_window() -> None:
    """Terms waiting for the seat are legal during a stop window, but the window's mail does not
    show them: a reply to it may allow, stop, pass or chat, never accept terms it never saw."""
    narrowed: set[str] = set()

    def check(state: GameState) -> None:
        windows = [
            w.id for w in (state.pending.window if state.pending else None, state.last_call) if w
        ]
        for window in windows:
            for seat in range(state.n):
                everything = set(choices(state, seat))
                answers = set(choices(state, seat, window))
                assert answers <= ANSWER_VERBS and answers == everything & ANSWER_VERBS
                assert set(verbs_that_work(state, seat, window)) <= ANSWER_VERBS
                narrowed.update(everything - answers)
                if "accept" in everything:
                    reading = Reading("accept")
                    assert command_for(reading, state, seat, window).problem == "not_now"

    for seed in range(6):
        simulate(4, seed, bots="mixed", observer=lambda state, _command, _events: check(state))
    assert "accept" in narrowed  # the games reached a window with terms waiting


def test_every_shown_word_answers_an_open_window_no_newer_than_the_mail_s_mark() -> None:
    """A mail made now carries the newest window opened (``window_seq - 1``): each word it shows
    answers an open window no newer than that, so no word it lists is refused as asked after
    it (A7); a chat answers none."""
    seen: set[str] = set()

    def check(state: GameState) -> None:
        open_now = open_windows(state)
        for seat in range(state.n):
            for verb in verbs_that_work(state, seat):
                command = command_for(_reading(verb, state, seat), state, seat).command
                answers = command_window(state, command)
                if verb == "chat":
                    assert answers is None
                    continue
                assert answers is not None and answers <= state.window_seq - 1
                assert f"w{answers}" in open_now, (verb, command, open_now)
                seen.add(verb)

    for seed in range(3):
        simulate(4, seed, bots="mixed", observer=lambda state, _command, _events: check(state))
    assert {"allow", "pass", "roll", "close"} <= seen


def test_people_s_words_make_a_move_only_where_one_alone_fits_in_whole_games() -> None:
    """``yes``/``好``/``同意``, ``no``/``不要`` and ``Deal!`` (``MEANS``): the one move of theirs
    that fits now, which the rules accept; two fitting are "several", none "not now"."""
    made: dict[str, set[str]] = {"yes": set(), "no": set(), "deal": set()}
    refused: set[str] = set()

    def check(state: GameState, at: datetime) -> None:
        for seat in range(state.n):
            now = choices(state, seat)
            for word, verbs in MEANS.items():
                fitting = [v for v in verbs if v in now]
                choice = command_for(Reading(word), state, seat)
                if len(fitting) == 1 and len(now[fitting[0]]) == 1:
                    assert choice.command is not None and choice.verb == fitting[0]
                    args = {k: v for k, v in choice.command.items() if k != "do"}
                    decide(state, Command(choice.command["do"], seat, args, at))
                    made[word].add(choice.verb)
                elif fitting:
                    assert choice.problem == "several", (word, fitting, choice)
                    refused.add(word)
                else:
                    assert choice.command is None and choice.problem in ("not_now", "no_stop_card")

    for seed in range(4):
        simulate(
            4,
            seed,
            bots="mixed",
            on_start=lambda state: check(state, START),
            observer=lambda state, command, _events: check(state, command.at + SECOND),
        )
    assert made == {
        "yes": {"accept", "allow"},
        "no": {"reject", "pass"},
        "deal": {"deal", "accept"},
    }
