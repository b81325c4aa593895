"""The Celery app, Flask–Celery pattern: every task runs inside the Flask app's context.

Tasks go to three queues (``imtheboss.web.app.tasks_out.TASK_ROUTES``): ``deadlines``, ``mail`` and
``outbound`` (webhooks and push). The Procfile starts a worker for each (``celery -A
imtheboss.worker.celery_app worker -Q mail``, ``... -Q deadlines``, ``... -Q outbound``) and
beat (``celery -A imtheboss.worker.celery_app beat``), so a send that hangs on the SMTP server
can never hold up a deadline, and a webhook or push receiver that answers slowly never holds up
mail; ``./dev serve`` starts the same three workers (beat inside the deadlines one) on the
embedded broker. A worker started without ``-Q`` consumes every queue. Every process of a worker
that consumes ``deadlines`` runs the firing threads (``imtheboss.worker.firing.Firing``, a
worker bootstep): they claim due deadlines from the database and fire them. The broker, the
queues, the sweep period (``SWEEP_SECONDS``) and the beat schedule file come from the same
settings object as the web app's (``imtheboss.web.settings``). Celery's log handlers get the web
app's redaction, and every line written while a task runs carries ``task=<task id>``
(``imtheboss.web.app.logs``).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from celery import Celery, Task, signals
from celery.beat import PersistentScheduler
from flask import Flask
from imtheboss.web import create_app
from imtheboss.web.app.process import broker_settings, logs
from imtheboss.web.models import db
from imtheboss.web.settings import Settings, SettingsError
from imtheboss.worker import broker
from imtheboss.worker.firing import Firing

_flask_app: Flask | None = None


def flask_app() -> Flask:
    """The Flask app of this worker process (created once; it does not run migrations: the
    release step does)."""
    global _flask_app
    if _flask_app is None:
        _flask_app = create_app({"AUTO_MIGRATE": False, "TASKS": False})
    return _flask_app


class FlaskTask(Task):
    """A task that runs in the Flask app context."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with flask_app().app_context():
            return self.run(*args, **kwargs)


class FolderScheduler(PersistentScheduler):
    """Celery beat's own scheduler that first makes the folder of its schedule file (the
    instance folder, or ``BEAT_SCHEDULE_FILE``'s): on a fresh host nothing else has made it."""

    def setup_schedule(self) -> None:
        Path(self.schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        super().setup_schedule()


def make_celery() -> Celery:
    """The worker's Celery app: the shared broker and queue settings, late acks (a killed
    worker's task is redelivered), the beat sweeps (reminders; mail)."""
    settings = Settings.load()
    config = settings.flask_config(database=False)
    app = Celery(
        "imtheboss",
        task_cls=FlaskTask,
        include=[
            "imtheboss.worker.tasks",
            "imtheboss.worker.signin_mail",
            "imtheboss.worker.outbound",
        ],
    )
    app.conf.update(
        _consumer_broker(broker_settings(config)),
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=4,
        broker_connection_retry_on_startup=True,
        timezone="UTC",
        enable_utc=True,
        beat_schedule={
            name: {"task": f"imtheboss.worker.{task}", "schedule": settings.sweep_seconds}
            for name, task in (
                ("sweep", "tasks.sweep"),
                ("sweep_mail", "tasks.sweep_mail"),
                ("sweep_outbound", "outbound.sweep_outbound"),  # webhooks and push
            )
        },
        beat_scheduler="imtheboss.worker.celery_app:FolderScheduler",
        beat_schedule_filename=settings.beat_schedule_file
        or str(Path(config["INSTANCE_DIR"]) / "celerybeat-schedule"),
    )
    app.steps["worker"].add(Firing)
    # the sweeps run every few seconds: their INFO lines only when they did something
    logs.QUIET_TASKS.update(entry["task"] for entry in app.conf.beat_schedule.values())
    # and a post re-queued by the outbound sweep that finds its row settled: only real posts
    logs.QUIET_TASKS.add("imtheboss.worker.outbound.post_one")
    return app


def _consumer_broker(settings: dict[str, Any]) -> dict[str, Any]:
    """The shared broker settings, with the worker's Redis transport (``broker.Transport``:
    a worker outlives a Redis restart) when the broker is Redis."""
    if settings["broker_url"].startswith("redis://"):
        return {**settings, "broker_transport": broker.TRANSPORT}
    return settings


@signals.worker_process_init.connect
def _no_shared_connections(**_: Any) -> None:
    """A pool process forked after the firing threads made the app (a prefork child replaced
    later) must not use the parent's database connections."""
    if _flask_app is not None:
        with _flask_app.app_context():
            db.engine.dispose(close=False)


@signals.worker_init.connect
@signals.beat_init.connect
def _require_settings(**_: Any) -> None:
    """A worker or beat started outside the embedded default without ``SECRET_KEY`` or
    ``BASE_URL`` stops at once with the message (``Settings.require_production``): otherwise
    it would run and fail every task, or sign links that the web app refuses."""
    try:
        Settings.load().require_production()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None


@signals.after_setup_logger.connect
def _redact_worker_log(logger: logging.Logger, **_: Any) -> None:
    """The worker's and beat's log: our redaction, and each line with its task's id; Python's
    warnings (Celery's about running as root) are log records too."""
    logging.captureWarnings(True)
    logs.adopt(logger, logs.CELERY_FORMAT)


@signals.after_setup_task_logger.connect
def _redact_task_log(logger: logging.Logger, **_: Any) -> None:
    """Celery's task logger keeps its format (it names the task) and gets our redaction."""
    logs.adopt(logger)


@signals.task_prerun.connect
def _bind_task(task_id: str, **_: Any) -> None:
    logs.bind_task(task_id)


@signals.task_postrun.connect
def _unbind_task(**_: Any) -> None:
    logs.bind_task(None)


celery = make_celery()
app = celery
