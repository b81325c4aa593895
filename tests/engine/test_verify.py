"""A9: a game's record (docs/export.md) and ``imtheboss verify``: the seed against its published
hash, the deal, every roll, reshuffle and draw re-derived from the seed; the first difference
named (which event, what the seed gives, what the file says); a malformed file refused.

The game: three seats, two of them "hoarders" that always roll and draw, so the draw pile runs
out and the discard pile is reshuffled (R6.7)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from imtheboss.engine.bots import SensibleBot
from imtheboss.engine.record import RECORD_FORMAT, RecordError, game_record, read_record
from imtheboss.engine.rng import seed_hash
from imtheboss.engine.simulate import simulate
from imtheboss.engine.verify import verify
from support.bots import Hoarder

CLI = str(Path(sys.executable).with_name("imtheboss"))


GAME = simulate(3, 1, bots=[Hoarder(), Hoarder(), SensibleBot()])
RECORD = game_record(GAME.events)


def doc() -> dict[str, Any]:
    """A fresh copy of the record's JSON."""
    return copy.deepcopy(RECORD)


def entries(d: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["event"] for e in d["events"] if e["event"]["type"] == kind]


def seq_of(d: dict[str, Any], event: dict[str, Any]) -> int:
    return next(e["seq"] for e in d["events"] if e["event"] is event)


def test_the_record_holds_the_whole_game_and_verifies() -> None:
    d = doc()
    assert d["format"] == RECORD_FORMAT
    assert d["players"] == GAME.state.players and d["seed"] == 1
    assert d["seed_hash"] == seed_hash(1) and d["board"] == GAME.state.board.to_json()
    assert d["result"] == {"money": GAME.state.money, "winners": GAME.state.winners}
    assert [e["seq"] for e in d["events"]] == list(range(1, len(GAME.events) + 1))
    verdict = verify(read_record(json.loads(json.dumps(d))))
    assert verdict.ok, verdict.difference
    assert verdict.events == len(GAME.events)
    assert verdict.rolls == len(entries(d, "die_rolled")) > 20
    assert verdict.reshuffles == len(entries(d, "pile_reshuffled")) >= 1
    assert verdict.draws == len(entries(d, "cards_drawn")) > 20


def _roll(d: dict[str, Any]) -> dict[str, Any]:
    return entries(d, "die_rolled")[3]


def _bump_roll(d: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    event = _roll(d)
    old = event["value"]
    event["value"] = old % 6 + 1
    return event, old, event["value"]


def _move_marker(d: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    event = next(e for e in entries(d, "die_rolled") if e["purpose"] == "move")
    old = event["space"]
    event["space"] = (old + 1) % 16
    return event, old, event["space"]


def _force_roll(d: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    event = _roll(d)
    event["source"] = "forced"
    return event, "rng", "forced"


def _swap_reshuffle(d: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    event = entries(d, "pile_reshuffled")[0]
    old = list(event["draw_pile"])
    pile = event["draw_pile"]
    pile[0], pile[-1] = pile[-1], pile[0]
    return event, old, list(pile)


def _other_card(d: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    event = entries(d, "cards_drawn")[2]
    old = list(event["cards"])
    start = d["events"][0]["event"]
    event["cards"][0] = start["draw_pile"][-1]  # a card from the bottom of the pile
    return event, old, list(event["cards"])


def _swap_hands(d: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
    start = d["events"][0]["event"]
    old = copy.deepcopy(start["hands"])
    start["hands"][0], start["hands"][1] = start["hands"][1], start["hands"][0]
    return start, old, start["hands"]


MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], tuple[dict, Any, Any]], str]] = {
    "a die roll changed": (_bump_roll, "die"),
    "the marker moved elsewhere": (_move_marker, "space"),
    "a roll set by hand": (_force_roll, "forced"),
    "a reshuffle reordered": (_swap_reshuffle, "reshuffle"),
    "a card drawn from elsewhere": (_other_card, "draw"),
    "the hands dealt swapped": (_swap_hands, "deal"),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_one_change_is_the_first_difference(name: str) -> None:
    """Each change is found at its event, with what the seed gives and what the file says."""
    mutate, what = MUTATIONS[name]
    d = doc()
    event, expected, found = mutate(d)
    verdict = verify(read_record(d))
    diff = verdict.difference
    assert diff is not None and diff.what == what, diff
    assert diff.seq == seq_of(d, event) and diff.type == event["type"]
    assert (diff.expected, diff.found) == (expected, found)


def test_a_changed_seed_or_hash_is_found() -> None:
    d = doc()
    d["seed"] = d["events"][0]["event"]["seed"] = 2  # another seed, the published hash kept
    diff = verify(read_record(d)).difference
    assert (diff.what, diff.expected, diff.found) == ("seed_hash", seed_hash(2), seed_hash(1))
    d = doc()
    d["seed"] = 2  # the header alone
    diff = verify(read_record(d)).difference
    assert (diff.what, diff.field, diff.expected, diff.found) == ("header", "seed", 1, 2)
    d = doc()
    new_hash = seed_hash(2)
    d["seed"] = d["events"][0]["event"]["seed"] = 2
    d["seed_hash"] = d["events"][0]["event"]["seed_hash"] = new_hash
    diff = verify(read_record(d)).difference  # a seed and hash that agree, but not the dice
    assert diff is not None and diff.what in ("deal", "die"), diff
    published = seed_hash(1)
    assert verify(read_record(doc()), published[:12]).ok  # as the pages show it
    assert verify(read_record(doc()), published.upper()).ok
    diff = verify(read_record(doc()), seed_hash(3)[:12]).difference
    assert (diff.what, diff.found) == ("published", published)


def test_a_changed_result_or_end_is_found() -> None:
    d = doc()
    d["result"]["money"][0] += 1
    diff = verify(read_record(d)).difference
    assert (diff.what, diff.field, diff.seq) == ("result", "money", 0)
    d = doc()
    ended = entries(d, "game_ended")[0]
    ended["winners"] = [(ended["winners"][0] + 1) % 3]
    diff = verify(read_record(d)).difference
    assert (diff.what, diff.field, diff.seq) == ("end", "winners", len(d["events"]))


def test_an_event_that_cannot_follow_is_found() -> None:
    """A card discarded that the seat does not hold: the replay itself breaks there."""
    d = doc()
    event = entries(d, "cards_discarded")[0]
    event["cards"] = [event["cards"][0]] * 2
    diff = verify(read_record(d)).difference
    assert (diff.what, diff.seq) == ("replay", seq_of(d, event)), diff


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"format": "something/1"},
        {k: v for k, v in RECORD.items() if k != "events"},
        {**RECORD, "events": []},
        {**RECORD, "events": RECORD["events"][1:]},
        {**RECORD, "events": [RECORD["events"][0], RECORD["events"][2]]},  # seq 3 second
        {**RECORD, "events": [{"seq": 1, "event": {"type": "game_started"}}]},
        {**RECORD, "events": [{"seq": 1, "event": {"by": 0}}]},
        {**RECORD, "players": "Amy"},
    ],
)
def test_a_malformed_record_is_refused(bad: Any) -> None:
    with pytest.raises(RecordError):
        read_record(bad)


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


def test_simulate_json_writes_the_record_and_verify_reads_it(tmp_path: Path) -> None:
    """``imtheboss simulate --json`` writes the record; ``imtheboss verify`` passes on it (exit
    0), fails on a copy with one die roll changed or another seed (exit 1, the event named),
    refuses a file that is no record (exit 2), and speaks the language asked."""
    done = _run("simulate", "--players", "4", "--seed", "3", "--json")
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert d["format"] == RECORD_FORMAT and d["players"] == ["Amy", "Bill", "Carla", "David"]
    assert {"options", "board", "seed", "seed_hash", "result", "events"} <= set(d)
    assert d["events"][0]["event"]["type"] == "game_started"
    good = tmp_path / "game.json"
    good.write_text(done.stdout)
    ok = _run("verify", str(good))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"ok {good}") and d["seed_hash"] in ok.stdout
    assert _run("verify", "-", "--hash", d["seed_hash"][:12], stdin=done.stdout).returncode == 0

    event, _old, new = _bump_roll(d)
    bad = tmp_path / "roll.json"
    bad.write_text(json.dumps(d))
    failed = _run("verify", str(bad))
    assert failed.returncode == 1, failed.stderr
    assert f"Event {seq_of(d, event)} (a die roll)" in failed.stderr
    assert f"the record says {new}." in failed.stderr

    d = json.loads(done.stdout)
    d["seed"] = d["events"][0]["event"]["seed"] = "4"
    seeded = tmp_path / "seed.json"
    seeded.write_text(json.dumps(d))
    failed = _run("verify", str(seeded))
    assert failed.returncode == 1 and "published seed hash" in failed.stderr

    chinese = _run("verify", str(bad), "--lang", "zh_Hans")
    assert chinese.returncode == 1 and "骰" in chinese.stderr, chinese.stderr
    chinese = _run("verify", str(good), "--lang", "zh_Hant")
    assert chinese.returncode == 0 and "種子" in chinese.stdout, chinese.stdout

    malformed = tmp_path / "not.json"
    malformed.write_text('{"format": "imtheboss-game/1", "events": [')
    assert _run("verify", str(malformed)).returncode == 2
    assert _run("verify", str(tmp_path / "missing.json")).returncode == 2
    assert _run("verify", "-", stdin='{"format": "x"}').returncode == 2
    assert _run("verify", str(good), "--hash", "xyz").returncode == 2
