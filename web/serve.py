"""``python -m imtheboss.web.serve``: the zero-setup default (README's first command).

Starts three Celery workers on the embedded broker (kombu's filesystem transport; Redis when
``REDIS_URL`` is set), as the Procfile does: one for the ``deadlines`` queue (with embedded
beat), one for the ``mail`` queue and one for ``outbound`` (webhooks and push), each a
supervised process of its own, so a hanging mail server cannot hold up a deadline and a slow
webhook receiver cannot hold up mail. Then it serves the web app on ``--host``/``--port`` (default
127.0.0.1:5000) with SQLite in ``instance/`` unless ``DATABASE_URL`` is set. Mail goes to the
local outbox at ``/operator/mail`` unless ``SMTP_HOST`` is set. Ctrl-C stops them all.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading

from imtheboss.web import create_app
from imtheboss.web.settings import Settings


def main(argv: list[str] | None = None) -> int:
    """Run the web app and, beside it, the deadlines worker (with beat) and the mail worker.
    Returns the exit code."""
    parser = argparse.ArgumentParser(prog="imtheboss serve", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=Settings.load().port)
    parser.add_argument("--no-worker", action="store_true", help="serve pages only")
    args = parser.parse_args(argv)
    taken = _port_taken(args.host, args.port)
    if taken:
        print(taken, file=sys.stderr)
        return 2
    # The embedded default (its children inherit it): a key of its own, links to itself.
    os.environ["IMTHEBOSS_EMBEDDED"] = "1"
    os.environ.setdefault("BASE_URL", f"http://{args.host}:{args.port}")
    app = create_app()  # runs the migrations before the worker starts
    workers = [] if args.no_worker else [Supervised(c) for c in WORKER_COMMANDS.values()]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the workers on SIGTERM too
    try:
        print(
            f"imtheboss: serving on {app.config['BASE_URL']} (mail outbox: /operator/mail)",
            flush=True,
        )
        app.run(host=args.host, port=args.port, threaded=True, use_reloader=False)
    finally:
        for worker in workers:
            worker.stop()
    return 0


def _port_taken(host: str, port: int) -> str:
    """Why the server cannot listen on ``host:port`` (another program holds it), else ``""``;
    checked before any worker starts, so a taken port leaves nothing running."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return (
                f"imtheboss: cannot listen on {host}:{port} ({exc.strerror}): another program"
                f" uses it. Choose another: ./dev serve --port {port + 1} (or PORT={port + 1})."
            )
    return ""


CELERY = [sys.executable, "-m", "celery", "-A", "imtheboss.worker.celery_app", "worker"]
QUIET = ["--pool", "threads", "--loglevel", "warning", "--without-mingle", "--without-gossip"]
WORKER_COMMANDS = {
    "deadlines": [*CELERY, "-B", "-Q", "deadlines", "-n", "deadlines@%h", "--concurrency", "2"]
    + QUIET,
    "mail": [*CELERY, "-Q", "mail", "-n", "mail@%h", "--concurrency", "4"] + QUIET,
    "outbound": [*CELERY, "-Q", "outbound", "-n", "outbound@%h", "--concurrency", "4"] + QUIET,
}


class Supervised:
    """A child process (a worker) in its own process group, restarted when it exits: a game
    must never freeze silently because its worker died. Deadlines and mail it
    missed are recovered by the sweep (the database is the source of truth)."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.stopping = threading.Event()
        self.process = self._start()
        threading.Thread(target=self._watch, name="worker-watchdog", daemon=True).start()

    def _start(self) -> subprocess.Popen:
        return subprocess.Popen(self.command, start_new_session=True)

    def _watch(self) -> None:
        while not self.stopping.wait(2):
            code = self.process.poll()
            if code is not None and not self.stopping.is_set():
                print(f"imtheboss: the worker exited ({code}); starting it again", flush=True)
                self.process = self._start()

    def stop(self) -> None:
        """Warm shutdown (tasks are acked late and idempotent anyway), then kill."""
        self.stopping.set()
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
