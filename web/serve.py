"""``python -m web.serve``: the zero-setup default (README's first command).

Starts a Celery worker with embedded beat on the embedded broker (kombu's filesystem
transport; Redis when ``REDIS_URL`` is set), then serves the web app on ``--host``/``--port``
(default 127.0.0.1:5000) with SQLite in ``instance/`` unless ``DATABASE_URL`` is set. Mail goes
to the local outbox at ``/operator/mail`` unless ``SMTP_HOST`` is set. Ctrl-C stops both.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

from web import create_app


def main(argv: list[str] | None = None) -> int:
    """Run the web app and, beside it, a worker with beat. Returns the exit code."""
    parser = argparse.ArgumentParser(prog="imtheboss serve", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "5000")))
    parser.add_argument("--no-worker", action="store_true", help="serve pages only")
    args = parser.parse_args(argv)
    os.environ.setdefault("BASE_URL", f"http://{args.host}:{args.port}")
    app = create_app()  # runs the migrations before the worker starts
    worker = None
    if not args.no_worker:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "worker.celery_app",
                "worker",
                "-B",
                "--pool",
                "threads",
                "--concurrency",
                "4",
                "--loglevel",
                "warning",
            ],
            start_new_session=True,  # its own process group: beat is its child
        )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the worker on SIGTERM too
    try:
        print(
            f"imtheboss: serving on {os.environ['BASE_URL']} (mail outbox: /operator/mail)",
            flush=True,
        )
        app.run(host=args.host, port=args.port, threaded=True, use_reloader=False)
    finally:
        if worker is not None:  # warm shutdown; tasks are acked late and idempotent anyway
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
