"""Every scenario file (``docs/scenarios.md``) in tests/scenarios/ holds, the rule texts' worked
example included. And the ``imtheboss scenario check`` CLI exit codes (0, 1, 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from imtheboss.engine.scenario import FORMAT, check_scenario, load_scenario, run_scenario
from imtheboss.worker.cli import main
from support.rules_game import scenario_doc, write_json

OURS = Path(__file__).resolve().parents[1] / "scenarios"


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


OUR_FILES = _files(OURS)


def test_we_keep_at_least_ten_scenarios():
    """Scenario coverage of the tricky rules: at least 10 files, each saying what it checks."""
    assert len(OUR_FILES) >= 10
    for path in OUR_FILES:
        doc = load_scenario(path)
        assert doc["format"] == FORMAT
        assert re.search(r"\b[RA]\d", doc.get("about", "")), f"{path.name}: about names no rule"
        assert "expect" in doc, path.name


@pytest.mark.parametrize("path", OUR_FILES, ids=[p.name for p in OUR_FILES])
def test_our_scenario_holds(path):
    """The scenario's expect holds (its "about" names the rule)."""
    _result, diffs = check_scenario(load_scenario(path))
    assert diffs == []


# -- the CLI: imtheboss scenario check FILE ------------------------------------------------------

PASSING = scenario_doc(
    about="R3.1: Ann rolls 2 and draws; the turn passes to Bob (R3.2).",
    state={
        "investors": {"Ann": ["C"], "Bob": ["D"], "Cat": ["G"], "Dan": ["L"]},
        "side_pool": ["S", "W"],
        "marker": 0,
        "active": "Ann",
    },
    dice=[2],
    commands=[{"by": "Ann", "do": "roll"}, {"by": "Ann", "do": "draw"}],
    expect={"errors": [], "state": {"active": "Bob", "marker": 2, "phase": "turn_start"}},
)


def test_cli_check_passing_file_exits_0(tmp_path, capsys):
    path = write_json(tmp_path / "ok.json", PASSING)
    assert main(["scenario", "check", str(path)]) == 0
    assert "ok" in capsys.readouterr().out


def test_cli_check_expect_not_holding_exits_1(tmp_path, capsys):
    doc = json.loads(json.dumps(PASSING))
    doc["expect"]["state"]["active"] = "Cat"
    path = write_json(tmp_path / "wrong.json", doc)
    assert main(["scenario", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "state.active" in err and "Cat" in err and "Bob" in err


def test_cli_check_wrong_error_codes_exit_1(tmp_path, capsys):
    doc = json.loads(json.dumps(PASSING))
    doc["commands"].insert(0, {"by": "Bob", "do": "roll"})  # refused: not_your_turn
    path = write_json(tmp_path / "codes.json", doc)
    assert main(["scenario", "check", str(path)]) == 1
    assert "not_your_turn" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d["commands"][0].update(speed=3), "speed"),
        (lambda d: d["expect"].update(events=[]), "events"),
        (lambda d: d["expect"]["state"].update(mood="good"), "mood"),
        (lambda d: d["state"].update(weather="rain"), "weather"),
    ],
)
def test_cli_check_unknown_field_exits_2_naming_it(tmp_path, capsys, change, field):
    doc = json.loads(json.dumps(PASSING))
    change(doc)
    path = write_json(tmp_path / "unknown.json", doc)
    assert main(["scenario", "check", str(path)]) == 2
    assert field in capsys.readouterr().err


def test_cli_check_invalid_json_exits_2(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "imtheboss-scenario/1", "players": [', encoding="utf-8")
    assert main(["scenario", "check", str(path)]) == 2
    assert "JSON" in capsys.readouterr().err


def test_cli_check_missing_file_exits_2(tmp_path, capsys):
    assert main(["scenario", "check", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_cli_run_prints_the_result(tmp_path, capsys):
    path = write_json(tmp_path / "ok.json", PASSING)
    assert main(["scenario", "run", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["state"]["active"] == "Bob"
    assert [e["type"] for e in out["events"]] == [
        "game_started",
        "die_rolled",
        "cards_drawn",
        "turn_started",
    ]


MALFORMED_STATES = [
    ("options", 3),
    ("state", {"investors": 5}),
    ("state", {"side_pool": 5}),
    ("state", {"hands": {"David": "boss"}}),
    ("state", {"hands": {"David": [["boss"]]}}),
    ("state", {"draw_pile": 7}),
    ("state", {"covered": [True]}),
    ("state", {"covered": 3}),
    ("state", {"covered": [0, 1, 2], "deals_closed": 0}),
    ("dice", [2.0]),
    ("board", "/etc/hostname"),
]


@pytest.mark.parametrize(("key", "value"), MALFORMED_STATES)
def test_malformed_scenarios_exit_2_naming_the_problem(tmp_path, capsys, key, value) -> None:
    """docs/scenarios.md: a malformed file is an error (exit 2) with the problem named, never a
    traceback."""
    doc = {
        "format": "imtheboss-scenario/1",
        "players": ["David", "Larry", "Bill", "Amy"],
        "seed": 1,
        "commands": [],
        key: value,
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert main(["scenario", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert key.split("_")[0] in err or "state" in err


def test_unhashable_command_arguments_are_bad_commands() -> None:
    """A list where a player or card name belongs is a refused command (bad_command), and the
    run goes on."""
    doc = {
        "format": "imtheboss-scenario/1",
        "players": ["David", "Larry", "Bill", "Amy"],
        "seed": 1,
        "state": {"draw_pile": "rest", "marker": 0, "active": "David"},
        "commands": [
            {"by": ["David"], "do": "roll"},
            {"by": "David", "do": "open_deal"},
            {"by": "David", "do": "play_family", "card": ["family:W"]},
            {"by": "David", "do": "propose", "to": ["Larry"], "price": {"cash": 1}},
            {"by": "David", "do": "chat", "text": "still here"},
        ],
    }
    result = run_scenario(doc)
    assert [(e["command"], e["code"]) for e in result["errors"]] == [
        (0, "bad_command"),
        (2, "bad_command"),
        (3, "bad_command"),
    ]
    assert result["events"][-1]["type"] == "chat"
