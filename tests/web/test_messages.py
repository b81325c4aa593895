"""Every event a game makes, rendered as each seat reads it in English, 简体中文 and 繁體中文
(``imtheboss.web.say.messages``): no raw id (card ids, window ids, codes) in any line, no
English word in a Chinese line, no message left untranslated; and every catalog complete."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from imtheboss.engine import languages
from imtheboss.engine.board import default_board
from imtheboss.engine.cards import CARD_NAMES
from imtheboss.engine.events import Event
from imtheboss.engine.game import Command, decide
from imtheboss.engine.history import message
from imtheboss.engine.options import Options
from imtheboss.engine.scenario import load_scenario, run_scenario
from imtheboss.engine.setup import new_game
from imtheboss.engine.simulate import START, simulate
from imtheboss.engine.state import _HANDLERS as APPLIED
from imtheboss.engine.state import replay
from imtheboss.web.say import messages

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.json"))
TRANSLATIONS = ROOT / "web" / "translations"
RAW = re.compile(r"\b(investor|family|travel|recruit|boss|stop):|\bw\d+\b|\b[a-z]+_[a-z_]+\b")
LATIN = re.compile(r"[A-Za-z]{2,}")


def _games() -> list[tuple[list[str], list[Event]]]:
    """(players, events) of simulated games (timeouts, variants, the away proxy) and of every
    scenario (orders, nights, away seats...)."""
    out = []
    for players, seed, kw in (
        (3, 1, {}),
        (5, 3, {"bots": "mixed"}),
        (4, 2, {"variants": ["V2"], "idle_seats": frozenset({1})}),
        (4, 5, {"idle_seats": frozenset({2}), "proxy_hours": 1}),
        (6, 7, {"bots": "random"}),
    ):
        game = simulate(players, seed, **kw)
        out.append((game.state.players, game.events))
    out.append(_paused())
    for path in SCENARIOS:
        items = run_scenario(load_scenario(path))["events"]
        players = list(items[0]["players"])  # game_started names the seats
        out.append((players, [_event(item, players) for item in items]))
    return out


def _paused() -> tuple[list[str], list[Event]]:
    """A game resumed after a pause (the server moves every open deadline, A1); a seat away
    and back (A6), another back by showing up (A11); a seat that names no night (A12)."""
    players = ["Amy", "Bill", "Carla"]
    events = new_game(players, Options(), default_board(), 9, START)
    hour = timedelta(hours=1)
    for at, (by, do, args) in enumerate(
        [
            (None, "extend", {"seconds": 5400}),
            (1, "away", {"away": True}),
            (1, "away", {"away": False}),
            (0, "away", {"away": True}),
            (0, "present", {}),
            (2, "night", {"night": None}),
        ],
        1,
    ):
        events += decide(replay(events), Command(do, by, args, START + at * hour))
    return players, events + _organiser(events, START + 5 * hour)


def _organiser(events: list[Event], at) -> list[Event]:
    """The organiser's acts (A13): more time for one window and for a seat's windows, with a
    reason; a seat passed to a new player (reason and name in Chinese: shown as written), one
    to a bot; a pause and a resume, a seat's new address, a new invitation."""
    out: list[Event] = []
    active = replay(events).active
    for do, args in (
        ("extend_window", {"window": "w0", "minutes": 90, "reason": "在火车上"}),
        ("extend_window", {"seat": active, "minutes": 3 * 24 * 60 + 60, "reason": "度假"}),
        ("replace_player", {"seat": 2, "name": "小明"}),
        ("pass_to_bot", {"seat": 1}),
        ("pause_game", {}),
        ("resume_game", {}),
        ("change_email", {"seat": 1}),
        ("resend_invitation", {"seat": 0}),
    ):
        out += decide(replay(events + out), Command(do, None, args, at))
    return out


def _event(item: dict, players: list[str]) -> Event:
    """A scenario's event (seats by name) as the engine's."""
    data = {k: v for k, v in item.items() if k != "seq"}
    by = data.pop("by")
    return Event.from_json({**data, "by": players.index(by) if by is not None else None})


GAMES = _games()


def test_every_event_type_and_message_is_played() -> None:
    """The games above make every event type the engine applies, and every sentence."""
    types = {e.type for _p, events in GAMES for e in events}
    assert set(APPLIED) - types == set()
    ids = {message(e, seat).id for p, events in GAMES for e in events for seat in range(len(p))}
    assert set(messages.TEXTS) - ids - {"unknown"} == set()


@pytest.mark.parametrize("lang", languages.CODES)
def test_every_line_reads_as_words_in_its_language(lang: str) -> None:
    seen = 0
    with messages.speaking(lang):
        for players, events in GAMES:
            names = re.compile("|".join(re.escape(n) for n in sorted(players, key=len)[::-1]))
            for event in events:
                for seat in [None, *range(len(players))]:
                    text = messages.line(event, players, seat, "Asia/Shanghai")
                    seen += 1
                    assert not RAW.search(text), (lang, event.type, text)
                    if lang == "en":
                        continue
                    bare = names.sub("", text)
                    if event.type == "chat":
                        continue  # what the players wrote
                    bare = re.sub(r"[0-9a-f]{12}…", "", bare)  # the seed's hash
                    bare = re.sub(r"[A-Za-z_]+/[A-Za-z_]+|UTC", "", bare)  # a zone's name
                    assert not LATIN.search(bare), (lang, event.type, text)
    assert seen > 1000


@pytest.mark.parametrize("lang", languages.CODES[1:])
def test_every_catalog_is_complete(lang: str) -> None:
    with (TRANSLATIONS / "messages.pot").open("rb") as f:
        wanted = {m.id for m in read_po(f) if m.id}
    with (TRANSLATIONS / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalog = read_po(f)
    done = {
        m.id
        for m in catalog
        if m.id and (all(m.string) if isinstance(m.string, tuple) else m.string)
    }
    assert wanted - done == set()
    for m in catalog:  # a translation fills the same placeholders
        if m.id and isinstance(m.id, str):
            assert set(re.findall(r"%\((\w+)\)", m.id)) == set(
                re.findall(r"%\((\w+)\)", m.string)
            ), m.id


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_simulate_prints_its_log_in_the_language_asked(lang: str) -> None:
    """``imtheboss simulate --players 5 --seed 3 --lang L``: the readable log and the scores,
    in that language (only the players' names are Latin letters in a Chinese log)."""
    import subprocess
    import sys

    cli = str(Path(sys.executable).with_name("imtheboss"))
    done = subprocess.run(
        [cli, "simulate", "--players", "5", "--seed", "3", "--lang", lang],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) > 50
    winner = {"en": "(winner)", "zh_Hans": "（获胜）", "zh_Hant": "（獲勝）"}[lang]
    assert any(line.endswith(winner) for line in lines[-6:])
    for text in lines:
        assert not RAW.search(text), text
        if lang != "en":
            bare = re.sub(r"Amy|Bill|Carla|David|Erin|[0-9a-f]{12}…", "", text)
            assert not LATIN.search(bare), text


@pytest.mark.parametrize(("lang", "agreed"), [("zh_Hans", "已达成协议"), ("zh_Hant", "已達成協議")])
def test_an_agreement_in_an_open_negotiation_reads_as_an_agreement_not_a_closed_deal(
    app, lang, agreed
) -> None:
    """A thread that ended in an agreement is tagged as one: the deal may still be open, so it
    never reads as a closed deal (成交)."""
    from flask_babel import force_locale
    from flask_babel import gettext as _
    from imtheboss.web.pages.story import OUTCOMES

    with app.test_request_context("/"), force_locale(lang):
        said = str(OUTCOMES["agreed"])
        assert said == agreed and said != _("closed") and "成交" not in said


def test_a_card_of_no_letter_reads_with_its_article_in_a_list() -> None:
    cards = [CARD_NAMES.index(name) for name in ("family:G", "recruit", "travel:*")]
    drawn = Event("cards_drawn", {"seat": 0, "cards": cards}, 0)
    with messages.speaking("en"):
        line = messages.line(drawn, ["Carol", "Dan"], 0)
    assert line.endswith("the Goldman family card (G), a recruit card, and a wild travel card")


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "Amy: +2 M; 王芳: +4 M"),
        ("zh_Hans", "Amy：+2 M；王芳：+4 M"),
        ("ja", "Amy：+2 M；王芳：+4 M"),
    ],
)
def test_a_deal_s_payouts_read_as_names_and_amounts_in_the_language_s_punctuation(
    lang: str, expected: str
) -> None:
    """Each payout is said of its seat with the language's colon and the payouts are parted by
    its semicolon: a Chinese list never reads "阿明 +2 M和小白 +2 M"."""
    closed = Event(
        "deal_closed",
        {"boss": 1, "space": 3, "tile": 6, "proceeds": 6, "payments": {"0": 2, "1": 4}},
        0,
    )
    with messages.speaking(lang):
        line = messages.render(message(closed, None), ["Amy", "王芳"])
    assert line.endswith(expected), line


def test_no_space_is_left_between_two_chinese_characters() -> None:
    """A placeholder filled with Chinese words, or sentences joined by a space, leave no space
    between two Chinese characters; a space beside Latin letters or digits stays."""
    facts = {"shares": 2, "share_value": 3, "needs": {"required": ["C"]}, "fits": []}
    with messages.speaking("zh_Hans"):
        said = messages.facts_text(5, facts)
    assert re.search(r"\S 凯许曼", said) is None and "需要凯许曼" in said
    assert "。 " not in said and "交易格 6" in said  # space 5 is the board's number 6
    assert messages.display.tidy("需要 凯许曼（C） 和 Amy 好") == "需要凯许曼（C）和 Amy 好"
