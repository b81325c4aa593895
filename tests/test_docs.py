"""The README and docs stand alone and say what the code does: the Quickstart is two commands,
every setting is documented (the Procfile's lines: tests/e2e/test_wheel.py), every rule id the
code and tests cite is defined in docs/rules.md and every rule is tested, and nothing points a
reader at files outside this repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from imtheboss.web.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
RULE_ID = re.compile(r"\b(R[1-7]\.\d+|V[1-9]|A1[0-3]|A[1-9])\b")
TEXT_SUFFIXES = {".py", ".md", ".json", ".html", ".txt", ".toml", ".cfg", ".ini", ".po", ""}
# A path to the folder of rule texts beside the repository, written out or built with pathlib.
OUTSIDE = re.compile(r"\.\./shared\b|/ \"shared\"")


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section of a Markdown text."""
    return text.partition(f"\n## {title}\n")[2].partition("\n## ")[0]


def our_files() -> list[Path]:
    """The repository's text files: what git tracks, and new files it does not ignore (never
    the virtualenv, caches, build output or local data)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    paths = [ROOT / name for name in listed.split("\0") if name]
    return [path for path in paths if path.is_file() and path.suffix in TEXT_SUFFIXES]


def test_the_quickstart_has_exactly_two_commands() -> None:
    block = section(README, "Quickstart").partition("```sh\n")[2].partition("```")[0]
    assert [line.split("#")[0].strip() for line in block.splitlines()] == [
        "./dev serve",
        "./dev test",
    ]


def test_the_readme_documents_every_setting() -> None:
    """Every field of the settings object has a row in the README's settings table, under the
    environment variable that sets it."""
    rows = [line for line in section(README, "Production").splitlines() if line.startswith("| `")]
    documented = {
        name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split("|")[1])
    }
    names = {
        str(field.validation_alias or name).upper() for name, field in Settings.model_fields.items()
    }
    assert sorted(names - documented) == []


def test_nothing_points_outside_the_repository() -> None:
    hits = [
        str(path.relative_to(ROOT))
        for path in our_files()
        if OUTSIDE.search(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert hits == []


def test_every_rule_is_defined_in_the_rules_and_cited_by_a_test() -> None:
    """docs/rules.md defines each id once (``- **R4.4** …``); code, tests and docs cite only
    defined ids, and each defined rule is cited by at least one test."""
    rules = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    defined = re.findall(r"^- \*\*(\S+)\*\* ", rules, flags=re.MULTILINE)
    assert len(defined) == len(set(defined)) and set(defined) == set(RULE_ID.findall(rules))
    cited: dict[str, set[str]] = {}
    for path in our_files():
        found = RULE_ID.findall(path.read_text(encoding="utf-8", errors="replace"))
        cited.setdefault(path.relative_to(ROOT).parts[0], set()).update(found)
    everywhere = set().union(*cited.values())
    assert sorted(everywhere - set(defined)) == []
    assert sorted(set(defined) - cited["tests"]) == []
