"""A worker or beat started outside the embedded default without ``SECRET_KEY`` or ``BASE_URL``
stops at once with a message naming what is missing, rather than running and failing every task
(``imtheboss.worker.celery_app``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CELERY = str(Path(sys.executable).with_name("celery"))
UNSET = ("SECRET_KEY", "BASE_URL", "IMTHEBOSS_EMBEDDED", "REDIS_URL", "DATABASE_URL")


def _start(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in UNSET}
    clean.update(IMTHEBOSS_INSTANCE=str(tmp_path), **env)
    return subprocess.run(
        [CELERY, "-A", "imtheboss.worker.celery_app", *args],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "args", [("worker", "-Q", "mail", "-P", "solo"), ("beat",)], ids=["worker", "beat"]
)
def test_a_worker_without_its_settings_stops_with_a_message(tmp_path: Path, args) -> None:
    done = _start(tmp_path, *args, BASE_URL="https://boss.example.org")
    assert done.returncode == 2
    said = done.stdout + done.stderr
    assert "set SECRET_KEY" in said and "BASE_URL" not in said.split("(")[0]


def test_the_embedded_default_needs_neither(tmp_path: Path) -> None:
    """With ``IMTHEBOSS_EMBEDDED=1`` the same check (called as the start signal calls it)
    passes."""
    code = "from imtheboss.worker import celery_app as c; c._require_settings(); print('started')"
    clean = {k: v for k, v in os.environ.items() if k not in UNSET}
    clean.update(IMTHEBOSS_INSTANCE=str(tmp_path), IMTHEBOSS_EMBEDDED="1")
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "started" in done.stdout


def test_beat_makes_the_folder_of_its_schedule_file(tmp_path: Path) -> None:
    """On a fresh host (a wheel's working directory without ``instance/``) beat's scheduler
    makes the instance folder and writes its schedule there instead of crashing at start."""
    code = (
        "from imtheboss.worker.celery_app import app; "
        "from celery.beat import Service; "
        "c = app.conf; Service(app, scheduler_cls=c.beat_scheduler, "
        "schedule_filename=c.beat_schedule_filename).scheduler.close(); "
        "print('scheduled')"
    )
    instance = tmp_path / "fresh" / "instance"
    clean = {k: v for k, v in os.environ.items() if k not in UNSET}
    clean.update(
        IMTHEBOSS_INSTANCE=str(instance),
        SECRET_KEY="beat-test",
        BASE_URL="https://boss.example.org",
        REDIS_URL="redis://127.0.0.1:1/0",  # never connected to: the scheduler only opens its file
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scheduled" in done.stdout
    assert list(instance.glob("celerybeat-schedule*")), "the schedule file is in the new folder"
