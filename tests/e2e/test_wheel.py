"""The package as an operator installs it: the wheel built from a clean copy of the source, put
into a fresh virtual environment (not editable, dependencies from the package index), then the
release step (the migrations) and the Procfile's ``web`` command (gunicorn) run from that
environment in an empty working directory, as on a host that never saw this repository.

The wheel holds one import package, ``imtheboss``, with everything the server reads at run time
(templates, compiled translations, static files, migrations, the default board); running it
writes nothing into the environment (the instance folder is ``./instance`` in the working
directory).
"""

from __future__ import annotations

import gettext
import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import requests
from support.e2e import Process, free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
# What a clean checkout does not hold (or the build must not see): local state and caches.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "instance", "__pycache__", "*.pyc",
    ".*_cache", ".hypothesis", "tests", "bench",
)  # fmt: skip
# The folders the pyproject maps into the package, and what of them the wheel must carry: every
# file (sources and data) except caches.
PACKAGE_DIRS = {"engine": "engine", "web": "web", "worker": "worker", "templates": "templates"}
MUST_HAVE = [
    "imtheboss/templates/home.html",
    "imtheboss/templates/new_game.html",
    "imtheboss/templates/email/notification.txt",
    "imtheboss/web/translations/zh_Hans/LC_MESSAGES/messages.mo",
    "imtheboss/web/translations/zh_Hant/LC_MESSAGES/messages.mo",
    "imtheboss/web/static/htmx.min.js",
    "imtheboss/web/migrations/env.py",
    "imtheboss/web/migrations/alembic.ini",
    "imtheboss/engine/data/default_board.json",
    "imtheboss/docs/rules.md",  # the rules page's sources, one per language
    "imtheboss/docs/rules.zh_Hans.md",
    "imtheboss/docs/rules.zh_Hant.md",
]
SECRET = "wheel-test-secret"
# The release step (the migrations), run once per deploy before the processes start; not a
# Procfile line: a process manager would start it with the others and stop them all when it ends.
RELEASE = 'flask --app "imtheboss.web:create_app()" db upgrade'
WORKERS = 2  # WEB_CONCURRENCY: the Procfile's web line must leave gunicorn's count to it
HTTP_TIMEOUT = 10


def procfile() -> dict[str, str]:
    """The Procfile's process types and their commands."""
    lines = (ROOT / "Procfile").read_text(encoding="utf-8").splitlines()
    kinds = [line.partition(":") for line in lines if line.strip() and not line.startswith("#")]
    return {kind.strip(): command.strip() for kind, _, command in kinds}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built by pip from a copy of the source tree (no stale ``build/`` of a
    developer's checkout can slip files into it)."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "dist")]
        + [str(source)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = (base / "dist").glob("imtheboss-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed (not editable)."""
    path = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    installed = subprocess.run(
        [str(path / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return path


def files_of(folder: Path) -> set[str]:
    """Every file below ``folder`` (relative paths), caches left out."""
    return {
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def test_the_wheel_holds_one_package_with_everything_it_reads(wheel: Path) -> None:
    """Every file is under ``imtheboss/`` or the ``.dist-info``: no top-level ``engine``, ``web``
    or ``worker`` to collide with other distributions; the templates, translations, static files,
    migrations and the default board are inside."""
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = f"{wheel.name.split('-py')[0]}.dist-info/"
    outside = [n for n in names if not n.startswith(("imtheboss/", dist_info))]
    assert outside == [], f"files outside the imtheboss package: {outside}"
    top_level = zipfile.ZipFile(wheel).read(dist_info + "top_level.txt").decode().split()
    assert top_level == ["imtheboss"]
    assert [n for n in MUST_HAVE if n not in names] == []
    missing = [
        f"imtheboss/{package}/{rel}"
        for folder, package in PACKAGE_DIRS.items()
        for rel in sorted(files_of(ROOT / folder))
        if f"imtheboss/{package}/{rel}" not in names
    ]
    assert missing == [], f"source files the wheel lacks: {missing}"
    assert dist_info + "licenses/LICENSE" in names


def test_the_installed_wheel_migrates_and_serves(venv: Path, tmp_path: Path) -> None:
    """The release command makes the schema; the Procfile's web command serves the home page,
    the create form, a translation, a static file and a database lookup, with gunicorn's worker
    count from ``WEB_CONCURRENCY``; nothing is written into the environment."""
    before = files_of(venv)
    commands = procfile()
    port = free_port()
    site = tmp_path / "site"  # the working directory: nothing of the repository in it
    site.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "SECRET_KEY": SECRET,
        "BASE_URL": f"http://127.0.0.1:{port}",
        "PORT": str(port),
        "WEB_CONCURRENCY": str(WORKERS),
    }
    release = subprocess.run(
        ["bash", "-c", RELEASE], cwd=site, env=env, capture_output=True, text=True
    )
    assert release.returncode == 0, release.stdout + release.stderr
    database = site / "instance" / "imtheboss.sqlite3"
    with sqlite3.connect(database) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"games", "seats", "events", "alembic_version"} <= tables

    web = Process("web", ["bash", "-c", "exec " + commands["web"]], env, site, tmp_path / "web.log")
    web.start()
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(base, web), 60, what="gunicorn to serve")
        home = requests.get(f"{base}/", timeout=HTTP_TIMEOUT)
        assert home.status_code == 200 and 'href="/new"' in home.text, web.tail()
        form = requests.get(f"{base}/new", timeout=HTTP_TIMEOUT)
        assert form.status_code == 200 and "csrf_token" in form.text, web.tail()
        assert requests.get(f"{base}/static/htmx.min.js", timeout=HTTP_TIMEOUT).status_code == 200
        chinese = requests.get(f"{base}/?lang=zh_Hans", timeout=HTTP_TIMEOUT).text
        assert translated("zh_Hans", "Create a game") in chinese
        lookup = requests.get(f"{base}/api/games/nosuchgame12", timeout=HTTP_TIMEOUT)
        assert lookup.status_code == 404 and lookup.json()["error"]["code"] == "no_game"
        assert len(children(web.proc.pid)) == WORKERS
    finally:
        web.stop()
    assert web.problems() == []
    assert files_of(venv) - before == set(), "running the server wrote into the environment"


def _answers(base: str, web: Process) -> bool:
    """Whether gunicorn answers with every worker booted (fails the test if it exited)."""
    if not web.running:
        pytest.fail(f"gunicorn exited:\n{web.tail()}")
    try:
        requests.get(f"{base}/", timeout=2)
    except requests.ConnectionError:
        return False
    return web.text().count("Booting worker") >= WORKERS


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (gunicorn's workers of its master)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def translated(language: str, message: str) -> str:
    """``message`` in ``language``, from the source tree's compiled catalog."""
    mo = ROOT / "web" / "translations" / language / "LC_MESSAGES" / "messages.mo"
    with mo.open("rb") as catalog:
        text = gettext.GNUTranslations(catalog).gettext(message)
    assert text != message, f"{message!r} has no {language} translation"
    return text


def test_the_readme_documents_the_procfile() -> None:
    """Each Procfile line, and the release step, is written out in the README's Production
    section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    production = readme.partition("## Production")[2].partition("\n## ")[0]
    kinds = {"web", "worker", "deadlines", "outbound", "beat", "mail", "imap"}
    assert set(procfile()) == kinds
    assert RELEASE in production
    for kind, command in procfile().items():
        assert f"{kind}: {command}" in production
