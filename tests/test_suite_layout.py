"""The suite's own layout: pytest imports each test module by its file name (only the shared
helpers form a package, ``tests/support/``), so two test files of one name in two folders stop
the whole run at collection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parent


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(path.name for path in TESTS.rglob("*.py") if path.name != "__init__.py")
    shared = sorted(name for name, count in names.items() if count > 1 and name != "conftest.py")
    assert not shared, f"rename one of each: {shared}"


def test_what_the_tests_share_lives_in_the_support_package() -> None:
    """Shared helpers are ``tests/support/`` modules, imported as ``support.<name>``, never loose
    ``helpers_*.py`` files imported by a bare name that one folder may shadow."""
    loose = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("helpers_*.py"))
    assert loose == []
    assert (TESTS / "support" / "__init__.py").is_file()
