"""Running ``imtheboss mail preview`` as an operator does: the console script, no database nor
broker set, this server's mail settings those of ``boss.example.org``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("imtheboss")


def run_preview(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``imtheboss mail preview *args`` (its instance folder under ``tmp_path``), finished."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REDIS"))}
    env.update(
        IMTHEBOSS_INSTANCE=str(tmp_path / "instance"),
        SECRET_KEY="preview-test-key",
        BASE_URL="https://boss.example.org",
        MAIL_DOMAIN="boss.example.org",
        MAIL_FROM="boss@boss.example.org",
    )
    return subprocess.run(
        [str(SCRIPT), "mail", "preview", *args], env=env, capture_output=True, timeout=300
    )
