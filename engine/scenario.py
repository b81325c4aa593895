"""The scenario runner (docs/scenarios.md): start a position, feed commands, compare ``expect``.

``run_scenario(doc) -> dict`` gives the result (``events``, ``errors``, ``state``);
``check_scenario(doc) -> list[str]`` the differences from ``expect`` (empty when it holds).
A malformed file raises ``ScenarioError`` (the CLI exits 2 with the field named).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from imtheboss.engine.board import BoardError, default_board, load_board
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event
from imtheboss.engine.game import COMMANDS, SYSTEM_COMMANDS, Command, decide
from imtheboss.engine.options import Options, OptionsError
from imtheboss.engine.setup import SetupError, new_game, position
from imtheboss.engine.state import GameState, apply_in_place, replay
from imtheboss.engine.views import next_deadline, snapshot

FORMAT = "imtheboss-scenario/1"
TOP_FIELDS = {
    "format",
    "about",
    "name",
    "board",
    "options",
    "players",
    "seed",
    "dice",
    "state",
    "commands",
    "expect",
}
START = datetime(2026, 1, 1, tzinfo=UTC)
SEAT_ARGS = ("to", "with", "seat")


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message names the field."""


def load_scenario(path: str | Path) -> dict[str, Any]:
    """Read a scenario file. Raises ``ScenarioError`` for an unreadable file or invalid JSON."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path} is not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{path} is not JSON: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{path} is nested too deeply") from None
    if not isinstance(doc, dict):
        raise ScenarioError("a scenario is a JSON object")
    return doc


def _field_error(where: str, key: str) -> ScenarioError:
    return ScenarioError(f"unknown field {key!r} in {where}")


def _setup(doc: dict[str, Any]) -> tuple[GameState, list, dict[str, int]]:
    unknown = set(doc) - TOP_FIELDS
    if unknown:
        raise _field_error("the scenario", sorted(unknown)[0])
    if doc.get("format") != FORMAT:
        raise ScenarioError(f"format must be {FORMAT!r}")
    players = doc.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise ScenarioError("players must be a list of names")
    seats = {name: i for i, name in enumerate(players)}
    try:
        options = Options.from_json(doc.get("options"))
        board = (
            default_board()
            if doc.get("board", "default") == "default"
            else load_board(doc["board"])
        )
    except (OptionsError, BoardError) as exc:
        raise ScenarioError(str(exc)) from None
    seed = doc.get("seed", 0)
    if not isinstance(seed, int | str) or isinstance(seed, bool):
        raise ScenarioError("seed must be an integer or a string")
    dice = doc.get("dice", [])
    if not isinstance(dice, list) or any(type(d) is not int or not 1 <= d <= 6 for d in dice):
        raise ScenarioError("dice must be a list of numbers 1-6")
    try:
        if "state" in doc:
            spec = _seat_state(doc["state"], seats)
            events = position(players, options, board, seed, START, spec, dice)
        else:
            events = new_game(players, options, board, seed, START, dice)
    except SetupError as exc:
        raise ScenarioError(f"state: {exc}") from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a shape no check foresaw
        raise ScenarioError(f"state: malformed ({type(exc).__name__}: {exc})") from None
    return replay(events), events, seats


def _seat(seats: dict[str, int], name: Any, where: str) -> int:
    if not isinstance(name, str) or name not in seats:
        raise ScenarioError(f"unknown player {name!r} in {where}")
    return seats[name]


def _seat_state(spec: Any, seats: dict[str, int]) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise ScenarioError("state must be an object")
    out = dict(spec)
    for key in ("side_pool", "discard_pile", "draw_pile_top", "covered"):
        if key in spec and not isinstance(spec[key], list):
            raise ScenarioError(f"state.{key} must be a list")
    if (
        "draw_pile" in spec
        and spec["draw_pile"] != "rest"
        and not isinstance(spec["draw_pile"], list)
    ):
        raise ScenarioError('state.draw_pile must be a list of cards or "rest"')
    for key in ("investors", "hands"):
        for name, value in (spec.get(key) or {}).items() if isinstance(spec.get(key), dict) else ():
            if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                raise ScenarioError(f"state.{key}.{name} must be a list of names")
    for key in ("side_pool", "discard_pile", "draw_pile_top"):
        if not all(isinstance(x, str) for x in spec.get(key, [])):
            raise ScenarioError(f"state.{key} must be a list of names")
    if not all(type(x) is int for x in spec.get("covered", [])):
        raise ScenarioError("state.covered must be a list of space indices")
    for key in ("investors", "hands", "money", "orders"):
        if key in spec:
            if not isinstance(spec[key], dict):
                raise ScenarioError(f"state.{key} must be an object by player")
            out[key] = {_seat(seats, k, f"state.{key}"): v for k, v in spec[key].items()}
    if "active" in spec:
        out["active"] = _seat(seats, spec["active"], "state.active")
    return out


def _command(raw: Any, seats: dict[str, int], index: int, at: datetime) -> Command:
    if not isinstance(raw, dict) or not isinstance(raw.get("do"), str):
        raise RuleError("bad_command", f"command {index} needs a 'do'")
    do = raw["do"]
    if do in COMMANDS:
        required, optional = COMMANDS[do]
        for key in raw:
            if key not in ("by", "do") and key not in required | optional:
                raise ScenarioError(f"unknown field {key!r} in command {index} ({do})")
    by = None
    if do not in SYSTEM_COMMANDS:
        if not isinstance(raw.get("by"), str) or raw["by"] not in seats:
            raise RuleError("bad_command", f"unknown player {raw.get('by')!r}")
        by = seats[raw["by"]]
    elif "by" in raw:
        raise ScenarioError(f"unknown field 'by' in command {index} ({do})")
    args = {k: v for k, v in raw.items() if k not in ("by", "do")}
    for key in SEAT_ARGS:
        if key in args:
            if not isinstance(args[key], str) or args[key] not in seats:
                raise RuleError("bad_command", f"unknown player {args[key]!r}")
            args[key] = seats[args[key]]
    target = args.get("target")
    if isinstance(target, str) and "@" in target:
        card, _, owner = target.partition("@")
        args["target"] = f"{card}@{seats[owner]}" if owner in seats else f"{card}@?"
    return Command(do, by, args, at)


def run_scenario(doc: dict[str, Any]) -> dict[str, Any]:
    """Run a scenario: ``{"events": [...], "errors": [...], "state": {...}}`` (docs/scenarios.md).
    Raises ``ScenarioError`` for a malformed scenario."""
    state, events, seats = _setup(doc)
    seats_at_start = dict(seats)
    commands = doc.get("commands", [])
    if not isinstance(commands, list):
        raise ScenarioError("commands must be a list")
    if "expect" in doc:
        _check_expect_shape(doc["expect"])
    errors: list[dict[str, Any]] = []
    now = START
    for index, raw in enumerate(commands):
        try:
            at = now
            if isinstance(raw, dict) and raw.get("do") == "timeout":
                due = next_deadline(state)
                at = max(now, due) if due else now
            command = _command(raw, seats, index, at)
            new = decide(state, command)
        except RuleError as exc:
            errors.append(
                {"command": index, "code": exc.code, "message": exc.message, "rule": exc.rule}
            )
            continue
        now = at
        for event in new:
            apply_in_place(state, event)
            if event.type == "seat_replaced":  # A13: later commands name the new player
                seats = {name: i for i, name in enumerate(state.players)}
        events += new
    return {
        "events": _named(events, list(seats_at_start)),
        "errors": errors,
        "state": snapshot(state),
    }


def _named(events: list[Event], names: list[str]) -> list[dict[str, Any]]:
    """The events as JSON with ``by`` as the seat's name when the event was made."""
    out_events = []
    for seq, event in enumerate(events, 1):
        item = {"seq": seq, **event.to_json()}
        if item["by"] is not None:
            item["by"] = names[item["by"]]
        if event.type == "seat_replaced":
            names[event.data["seat"]] = event.data["name"]
        out_events.append(item)
    return out_events


def _check_expect_shape(expect: Any) -> None:
    if not isinstance(expect, dict):
        raise ScenarioError("expect must be an object")
    unknown = set(expect) - {"errors", "state"}
    if unknown:
        raise _field_error("expect", sorted(unknown)[0])
    errors = expect.get("errors", [])
    if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
        raise ScenarioError("expect.errors must be a list of error codes")


EXACT = {"discard_pile", "hands.*", "covered", "winners", "side_pool", "agreements", "offers"}


def _compare(path: str, want: Any, got: Any, out: list[str], pattern: str) -> None:
    exact = pattern in EXACT
    if isinstance(want, dict) and isinstance(got, dict) and not exact:
        for key, value in want.items():
            sub = f"{path}.{key}"
            child = (
                f"{pattern}.*"
                if pattern in ("hands",)
                else (key if not pattern else f"{pattern}.{key}")
            )
            if key not in got:
                out.append(f"{sub}: expected {json.dumps(value)}, but the result has no such key")
            else:
                _compare(sub, value, got[key], out, child)
    elif want != got:
        out.append(
            f"{path}: expected {json.dumps(want, sort_keys=True)}, "
            f"got {json.dumps(got, sort_keys=True)}"
        )


def check_scenario(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Run and compare with ``expect``: ``(result, differences)``; no differences means it
    holds. Raises ``ScenarioError`` for a malformed scenario."""
    result = run_scenario(doc)
    expect = doc.get("expect") or {}
    diffs: list[str] = []
    if "errors" in expect:
        got = [e["code"] for e in result["errors"]]
        if expect["errors"] != got:
            diffs.append(f"errors: expected {json.dumps(expect['errors'])}, got {json.dumps(got)}")
            diffs += [
                f"  command {e['command']}: {e['code']}: {e['message']}" for e in result["errors"]
            ]
    if "state" in expect:
        if not isinstance(expect["state"], dict):
            raise ScenarioError("expect.state must be an object")
        for key, value in expect["state"].items():
            if key not in result["state"]:
                raise _field_error("expect.state", key)
            _compare(f"state.{key}", value, result["state"][key], diffs, key)
    elif result["errors"] and "errors" not in expect:
        pass
    return result, diffs
