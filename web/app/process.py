"""A worker process's door into the web app's plumbing (``imtheboss.worker.celery_app`` and
``tasks``): the broker and queue settings the web app sends tasks with (``broker_settings``,
``imtheboss.web.app.tasks_out``), the log setup with its redaction and task ids (``logs``: Celery's
loggers adopt it), and the sweep's heartbeat the operator watches (``mark_sweep``,
``imtheboss.web.app.metrics``).
"""

from __future__ import annotations

from imtheboss.web.app import logs
from imtheboss.web.app.metrics import mark_sweep
from imtheboss.web.app.tasks_out import broker_settings

__all__ = ["broker_settings", "logs", "mark_sweep"]
