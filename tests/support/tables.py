"""The check that a kind of thing is declared in one table: no other module of web/ or worker/
holds a literal (dict keys, set, tuple, list) naming several of its names."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def literal_strings(node: ast.AST) -> set[str]:
    """The string constants of a dict's keys or of a set, tuple or list; ``set()`` otherwise."""
    if isinstance(node, ast.Dict):
        items = [k for k in node.keys if k is not None]
    elif isinstance(node, ast.Set | ast.Tuple | ast.List):
        items = node.elts
    else:
        return set()
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}


def second_tables(names: set[str], at_least: int, table: str) -> list[str]:
    """``path:line [names]`` of each literal outside the module named ``table`` (a file name)
    and the migrations that holds ``at_least`` of ``names``."""
    found = []
    for room in ("web", "worker"):
        for path in sorted((ROOT / room).rglob("*.py")):
            if path.name == table or "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                named = literal_strings(node) & names
                if len(named) >= at_least:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {sorted(named)}")
    return found
