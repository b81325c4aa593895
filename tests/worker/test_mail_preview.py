"""``imtheboss mail preview``: the console script, run as an operator or a translator runs it
(no database, no broker set), writes one ``.eml`` per kind of mail as the worker composes it, in
the language asked; the engine imports nothing of the web or the worker to offer it."""

from __future__ import annotations

import os
import subprocess
import sys
from email import policy
from email.parser import BytesParser
from pathlib import Path

from imtheboss.web.notify import ABOUT

SCRIPT = Path(sys.executable).with_name("imtheboss")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
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


def test_one_eml_per_kind_as_the_worker_composes_it(tmp_path) -> None:
    out = tmp_path / "mail"
    done = _run(tmp_path, "--lang", "zh_Hans", "--out", str(out))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    files = sorted(out.glob("*.eml"))
    assert [str(f) for f in files] == done.stdout.decode().split()
    kinds = {f.stem for f in files}
    assert {"invited", "place_marker", "your_turn", "deal_closed", "game_over"} <= kinds
    assert kinds <= set(ABOUT)
    for path in files:
        mail = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        assert mail["To"].addresses[0].domain == "example.org"
        assert "我是大老板" in str(mail["Subject"]), path.name
        assert mail.get_body(("plain",)) is not None and mail.get_body(("html",)) is not None
        assert "https://boss.example.org/" in mail.get_body(("plain",)).get_content()
    asked = BytesParser(policy=policy.default).parsebytes((out / "place_marker.eml").read_bytes())
    assert str(asked["Reply-To"]).startswith("play+")
    assert str(asked["Reply-To"]).endswith("@boss.example.org")
    assert not (tmp_path / "instance").exists() or not any((tmp_path / "instance").iterdir())


def test_an_unknown_language_is_refused(tmp_path) -> None:
    done = _run(tmp_path, "--lang", "fr", "--out", str(tmp_path / "mail"))
    assert done.returncode == 2 and b"invalid choice" in done.stderr
    assert not (tmp_path / "mail").exists()


def test_the_engine_imports_nothing_of_the_web_or_the_worker() -> None:
    code = (
        "import sys, imtheboss.engine.cli;"
        "print([m for m in sys.modules if m.startswith(('imtheboss.web', 'imtheboss.worker'))])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert done.stdout.decode().strip() == "[]"
