"""``tools/screenshots.py`` remakes docs/screenshots/: the story, the replay and a mail in
简体中文 and 繁體中文, each a PNG 360 px wide at twice the pixels (real chromium, a game played
by bots on SQLite)."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
KINDS, LANGS = ("story", "replay", "mail"), ("zh_Hans", "zh_Hant")
NAMES = {f"{kind}-{lang}.png" for kind in KINDS for lang in LANGS}


def _cjk_font() -> bool:
    found = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, check=False)
    return bool(found.stdout.strip())


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
        head = path.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", head[16:24])
        assert width == 720 and height > 500, (path.name, width, height)
    printed = set(done.stdout.split())
    assert all(str(tmp_path / n) in printed for n in NAMES)
    committed = {p.name for p in (ROOT / "docs" / "screenshots").glob("*.png")}
    assert committed == NAMES  # the README links each of them
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(f"docs/screenshots/{n}" in readme for n in NAMES)
