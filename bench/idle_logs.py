"""Idle log lines: the Procfile's ``web`` (gunicorn, two workers), ``worker``, ``deadlines`` and
``beat`` run at INFO with the default settings (``SWEEP_SECONDS`` 5) on a database of their own
and a Redis server of their own (``redis-server`` on a free port, stopped after), with nothing
to do; after they have started, the lines each writes in ``--seconds`` (60) are counted and
printed, and the lines themselves (``--show``). A probe of ``/healthz`` every ``--probe``
seconds (15; 0: none) plays a load balancer.

    .venv/bin/python bench/idle_logs.py [--seconds 60] [--probe 15] [--show]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from harness import own_database

ROOT = Path(__file__).resolve().parents[1]
SERVER = os.environ.get("IMTHEBOSS_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1")
LINES = ("web", "worker", "deadlines", "beat")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def procfile() -> dict[str, list[str]]:
    """The Procfile's lines of ``LINES`` as argument lists run by this Python."""
    out = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() in LINES:
            command = re.sub(  # ${NAME:-default}, as the shell reads it
                r"\$\{(\w+):-([^}]*)\}", lambda m: os.environ.get(m[1], m[2]), command
            )
            argv = shlex.split(command.strip())
            out[name.strip()] = [sys.executable, "-m", *argv]
    return out


def wait_until(check, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--probe", type=float, default=15.0)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, own_database(SERVER, "bench_idle_logs") as url:
        run(Path(folder), url, args)


def run(folder: Path, url: str, args: argparse.Namespace) -> None:
    redis_port, web_port = free_port(), free_port()
    redis = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{web_port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMTP_", "IMTHEBOSS_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        PORT=str(web_port),
        WEB_CONCURRENCY="2",
        DATABASE_URL=url.replace("postgresql+psycopg://", "postgresql://"),
        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        SECRET_KEY="bench-idle-logs",
        BASE_URL=base,
        IMTHEBOSS_INSTANCE=str(folder),
    )
    subprocess.run(  # the release step
        [sys.executable, "-m", "flask", "--app", "imtheboss.web:create_app()", "db", "upgrade"],
        env=env, cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    os.environ["PORT"] = str(web_port)
    procs, logs = {}, {}
    try:
        for name, argv in procfile().items():
            logs[name] = folder / f"{name}.log"
            with logs[name].open("wb") as out:
                procs[name] = subprocess.Popen(
                    argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
                )
        ready = {"web": "Booting worker", "worker": " ready.", "deadlines": " ready."}
        ready["beat"] = "beat: Starting"
        for name, word in ready.items():
            wait_until(lambda n=name, w=word: w in logs[n].read_text(), 60, f"{name} to start")
        time.sleep(10)  # let start-up finish (each worker's first lines)
        marks = {name: logs[name].stat().st_size for name in logs}
        end, probes = time.monotonic() + args.seconds, 0
        while time.monotonic() < end:
            if args.probe:
                urllib.request.urlopen(f"{base}/healthz", timeout=5).read()
                probes += 1
            time.sleep(min(args.probe or args.seconds, max(0.0, end - time.monotonic())))
        written = {}
        for name, path in logs.items():
            with path.open("rb") as fh:
                fh.seek(marks[name])
                written[name] = [x for x in fh.read().decode(errors="replace").splitlines() if x]
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            proc.wait(timeout=30)
        redis.terminate()
        redis.wait(timeout=10)
    total = sum(len(lines) for lines in written.values())
    print(f"idle {args.seconds:.0f} s at INFO, {probes} /healthz probes: {total} lines")
    for name, lines in written.items():
        print(f"  {name}: {len(lines)}")
        if args.show:
            for line in lines:
                print(f"    {line}")


if __name__ == "__main__":
    main()
