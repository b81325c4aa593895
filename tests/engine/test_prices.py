"""One function prices shares (``imtheboss.engine.prices``): a space's proceeds, a share's value,
a price's value; nowhere else is a number of shares multiplied by a share's value."""

from __future__ import annotations

import ast
from pathlib import Path

from imtheboss.engine import prices

ROOT = Path(__file__).resolve().parents[2]


def test_share_value_proceeds_and_prices() -> None:
    assert prices.share_value([1, 2]) == 2 and prices.share_value([10]) == 5  # R1.2
    assert prices.share_value([]) == 0
    assert prices.proceeds(6, 3) == 18
    assert prices.price_value("cash", 4, 3) == 4
    assert prices.price_value("shares", 2, 3) == 6
    assert prices.price_worth({"shares": 1}, 5) == 5 and prices.price_worth({"cash": 2}, 5) == 2


def _names(node: ast.AST) -> set[str]:
    return {
        n.id if isinstance(n, ast.Name) else n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Name | ast.Attribute)
    }


def test_no_module_multiplies_shares_by_a_share_value_itself() -> None:
    """A product whose operands name shares, a share's value or the tile values is written
    only in ``engine/prices.py`` (engine, web, worker, bench, tools)."""
    priced = {"shares", "share_value", "TILE_VALUES", "amount"}
    found = []
    for folder in ("engine", "web", "worker", "bench", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "prices.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                    left, right = _names(node.left), _names(node.right)
                    if (left | right) & {"share_value", "TILE_VALUES"} or (
                        left & priced and right & priced
                    ):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
