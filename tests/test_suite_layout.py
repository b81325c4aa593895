"""The suite's own layout: pytest imports each test module by its file name (``tests/`` has no
packages), so two test files of one name in two folders stop the whole run at collection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parent


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(path.name for path in TESTS.rglob("*.py") if path.name != "__init__.py")
    shared = sorted(name for name, count in names.items() if count > 1 and name != "conftest.py")
    assert not shared, f"rename one of each: {shared}"
