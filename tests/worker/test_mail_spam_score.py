"""SpamAssassin's local score (``spamassassin -L``: no network test, Debian's rules) of every
kind of mail ``imtheboss mail preview`` writes, in every language: each at most ``MAX_SCORE``.
The table of scores is printed (``pytest -s``); ``docs/deliverability.md`` keeps one run's.

The messages go to one ``spamassassin --mbox`` run (one start of its rules for all of them).
Skipped only where SpamAssassin is missing and cannot be installed (``.ci/run`` installs it)."""

from __future__ import annotations

import mailbox
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from imtheboss.web.mail.preview import KINDS, LANGUAGES
from support.mail_preview import run_preview

MAX_SCORE = 1.0
STATUS = re.compile(r"score=(-?[\d.]+) .*tests=(\S*)", re.S)


def _spamassassin() -> str:
    """The ``spamassassin`` command, Debian's package installed when missing and possible."""
    found = shutil.which("spamassassin")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ["apt-get", "install", "-y", "-qq", "spamassassin"]
        subprocess.run(install, env=env, capture_output=True, timeout=900, check=False)
        found = shutil.which("spamassassin")
    if found is None:
        pytest.skip("spamassassin is missing and cannot be installed here (Debian: spamassassin)")
    return found


def _scores(command: str, files: list[Path], home: Path) -> list[tuple[float, str]]:
    """``(score, rules that fired)`` of each of ``files``, in order."""
    box_path = home / "all.mbox"
    box = mailbox.mbox(box_path)
    for path in files:
        box.add(path.read_bytes())
    box.flush()
    done = subprocess.run(
        [command, "-L", "-t", "--mbox", str(box_path)],
        env={**os.environ, "HOME": str(home)},  # its user prefs there, not in the tester's home
        capture_output=True,
        timeout=900,
        check=True,
    )
    (home / "scored.mbox").write_bytes(done.stdout)
    scored = list(mailbox.mbox(home / "scored.mbox"))
    assert len(scored) == len(files), done.stderr.decode()[-2000:]
    found = [STATUS.search(" ".join(str(mail["X-Spam-Status"]).split())) for mail in scored]
    assert all(found), done.stdout.decode()[:2000]
    return [(float(match[1]), match[2].strip(",")) for match in found if match]


def test_every_kind_scores_at_most_one(tmp_path) -> None:
    command = _spamassassin()
    files: list[Path] = []
    for lang in LANGUAGES:
        done = run_preview(tmp_path, "--lang", lang, "--out", str(tmp_path / lang))
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        written = sorted((tmp_path / lang).glob("*.eml"))
        assert {path.stem for path in written} == KINDS, lang
        files += written
    scores = _scores(command, files, tmp_path)
    print(f"\n{'kind':<16} {'language':<8} {'score':>6}  rules")
    for path, (score, rules) in zip(files, scores, strict=True):
        print(f"{path.stem:<16} {path.parent.name:<8} {score:>6.1f}  {rules}")
    over = {
        f"{path.parent.name}/{path.stem}": (score, rules)
        for path, (score, rules) in zip(files, scores, strict=True)
        if score > MAX_SCORE
    }
    assert not over, over
