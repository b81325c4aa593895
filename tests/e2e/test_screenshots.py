"""``tools/screenshots.py`` remakes docs/screenshots/: the story, the replay, the question
before a close, the help boxes of the game page, the rules page, and mail (a deal opened in each
language, a deal closed), each a PNG 360 px wide (real chromium, a game played by bots on
SQLite); the README's table links every picture, and every picture it links is committed."""

from __future__ import annotations

import importlib.util
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
SHOTS_DIR = ROOT / "docs" / "screenshots"
# What the README promises: each kind of picture in its languages.
PROMISED = {
    "story": ("zh_Hans", "zh_Hant"),
    "replay": ("zh_Hans", "zh_Hant"),
    "confirm-close": ("zh_Hans", "en"),
    "card-help": ("zh_Hans",),
    "space-help": ("zh_Hans",),
    "rules": ("zh_Hans",),
    "mail-deal_opened": ("en", "zh_Hans", "zh_Hant", "ja"),
    "mail-deal_closed": ("zh_Hans", "zh_Hant"),
}
NAMES = {f"{kind}-{lang}.png" for kind, langs in PROMISED.items() for lang in langs}
MAX_FOLDER_BYTES = 3_000_000  # the committed pictures together: a few MB at most


def _cjk_font() -> bool:
    found = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, check=False)
    return bool(found.stdout.strip())


def _size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path.name
    return struct.unpack(">II", head[16:24])


def _tool_shots() -> tuple[str, ...]:
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "tools" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SHOTS


def test_the_readme_links_every_committed_screenshot_and_each_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/screenshots/([^)]+)\)", readme))
    committed = {p.name for p in SHOTS_DIR.iterdir()}
    assert linked == committed == NAMES == set(_tool_shots())
    assert len(_tool_shots()) == len(NAMES)  # each made once
    for name in NAMES:
        width, height = _size(SHOTS_DIR / name)
        assert width == 360 and 200 < height <= 3000, (name, width, height)
    assert sum((SHOTS_DIR / n).stat().st_size for n in NAMES) < MAX_FOLDER_BYTES


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
@pytest.mark.skipif(not _cjk_font(), reason="no CJK font (.ci/run installs fonts-noto-cjk)")
def test_the_screenshots_are_remade(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "screenshots.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert {p.name for p in tmp_path.glob("*.png")} == NAMES
    for path in tmp_path.glob("*.png"):
        width, height = _size(path)
        assert width == 360 and height > 200, (path.name, width, height)
    # the question is shot at the phone's screen size, the question on it (the tool waits for
    # it to hold the focus, else it fails)
    for lang in PROMISED["confirm-close"]:
        assert _size(tmp_path / f"confirm-close-{lang}.png") == (360, 740)
    printed = set(done.stdout.split())
    assert all(str(tmp_path / n) in printed for n in NAMES)
