"""Snapshots carry a format and a fingerprint of the engine code that folds events: a snapshot
from before a state field existed, or one written by other engine code, is refused with a clear
``SnapshotError`` (never a ``KeyError``, never silently read)."""

from __future__ import annotations

import ast
import json
from importlib import resources

import pytest
from imtheboss.engine.simulate import simulate
from imtheboss.engine.state import (
    ENGINE_FINGERPRINT,
    FOLDING_MODULES,
    SNAPSHOT_FORMAT,
    SnapshotError,
    replay,
    snapshot_is_current,
    source_fingerprint,
    state_from_json,
    state_to_json,
)


@pytest.fixture(scope="module")
def snapshot() -> dict:
    """The JSON snapshot of a bot game halfway through, as the web layer stores it."""
    game = simulate(4, 7)
    state = replay(game.events[: len(game.events) // 2])
    return json.loads(json.dumps(state_to_json(state)))


def test_a_current_snapshot_round_trips(snapshot: dict) -> None:
    assert snapshot_is_current(snapshot)
    assert (snapshot["format"], snapshot["engine"]) == (SNAPSHOT_FORMAT, ENGINE_FINGERPRINT)
    assert state_to_json(state_from_json(snapshot)) == snapshot


def test_a_snapshot_from_before_a_field_existed_is_refused(snapshot: dict) -> None:
    """As stored before snapshots had a format: no ``format``/``engine``, and one field fewer."""
    old = {k: v for k, v in snapshot.items() if k not in ("format", "engine", "away")}
    assert not snapshot_is_current(old)
    with pytest.raises(SnapshotError, match="format None"):
        state_from_json(old)


def test_a_snapshot_of_other_engine_code_is_refused(snapshot: dict) -> None:
    other = {**snapshot, "engine": "0" * 64}
    assert not snapshot_is_current(other)
    with pytest.raises(SnapshotError, match="other engine code"):
        state_from_json(other)


def test_a_malformed_snapshot_of_this_engine_is_refused_not_a_key_error(snapshot: dict) -> None:
    broken = {k: v for k, v in snapshot.items() if k != "window_seq"}
    with pytest.raises(SnapshotError, match="malformed snapshot: KeyError"):
        state_from_json(broken)
    with pytest.raises(SnapshotError):
        state_from_json([1, 2])  # type: ignore[arg-type]


def _engine_imports(module: str) -> set[str]:
    source = resources.files("imtheboss.engine").joinpath(f"{module}.py").read_text("utf-8")
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.module == "imtheboss.engine":  # from imtheboss.engine import prices, quiet
            found.update(alias.name for alias in node.names)
        elif (node.module or "").startswith("imtheboss.engine."):
            found.add(node.module.rsplit(".", 1)[1])
    return found


def test_the_fingerprint_covers_every_engine_module_that_apply_can_run() -> None:
    """Every ``imtheboss.engine`` module ``state`` imports, directly or not, is fingerprinted:
    a new import into ``state`` fails here until ``FOLDING_MODULES`` names it."""
    reached, todo = set(), ["state"]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(_engine_imports(module))
    assert reached == set(FOLDING_MODULES)
    assert source_fingerprint(FOLDING_MODULES) == ENGINE_FINGERPRINT
    assert source_fingerprint(FOLDING_MODULES[:-1]) != ENGINE_FINGERPRINT
