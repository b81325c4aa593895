"""Sending work to the worker by task name (docs/architecture.md: web never imports worker).

The broker is Redis when ``REDIS_URL`` is set, else the embedded default: kombu's filesystem
transport in the instance folder's ``broker/`` (no server, works across the processes
``./dev serve`` starts). ``broker_settings()`` is shared with the worker so both sides agree,
on the broker and on the queues: ``deadlines``, ``mail`` and ``outbound`` (``TASK_ROUTES``), each
consumed by a worker of its own (``-Q``), so a hanging mail server never holds up a deadline and
a slow webhook or push receiver never holds up mail or a deadline. A worker started without
``-Q`` consumes all three. The web sends only mail and the posts of webhooks and push
(``imtheboss.web.outbound.outbox``): a commit that made none sends nothing.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from time import monotonic
from typing import Any

from celery import Celery
from flask import Flask, current_app
from imtheboss.web.games.commit_hooks import on_commit
from kombu import Exchange, Queue
from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

QUEUES = ("deadlines", "mail", "outbound")
TASK_ROUTES = {
    "imtheboss.worker.tasks.fire_deadline": {"queue": "deadlines"},
    "imtheboss.worker.tasks.sweep": {"queue": "deadlines"},
    "imtheboss.worker.tasks.sweep_mail": {"queue": "mail"},
    "imtheboss.worker.tasks.game_changed": {"queue": "mail"},
    "imtheboss.worker.tasks.remind": {"queue": "mail"},
    "imtheboss.worker.tasks.deliver": {"queue": "mail"},
    "imtheboss.worker.tasks.deliver_many": {"queue": "mail"},
    "imtheboss.worker.tasks.send_batch": {"queue": "mail"},
    "imtheboss.worker.signin_mail.send_sign_in": {"queue": "mail"},
    # webhooks and push: posts to servers others chose, on a queue of their own
    "imtheboss.worker.outbound.post_game": {"queue": "outbound"},
    "imtheboss.worker.outbound.post_one": {"queue": "outbound"},
    "imtheboss.worker.outbound.sweep_outbound": {"queue": "outbound"},
}
ROUTING = {
    "task_routes": TASK_ROUTES,
    "task_queues": tuple(Queue(name, Exchange(name), routing_key=name) for name in QUEUES),
    "task_default_queue": "deadlines",
}


def broker_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Celery settings for the broker from the app's settings (``REDIS_URL``, ``BROKER_DIR``,
    ``INSTANCE_DIR``): Redis when ``REDIS_URL`` is set, else the filesystem broker; and the
    queues (``ROUTING``)."""
    return {**_broker(config), **ROUTING}


def _broker(config: Mapping[str, Any]) -> dict[str, Any]:
    url = config.get("REDIS_URL") or ""
    if url:
        return {
            "broker_url": url,
            # ETA tasks are only ever minutes ahead (the sweep schedules the rest), so an unacked
            # task is redelivered well after it was due, not days later.
            "broker_transport_options": {"visibility_timeout": 3600},
        }
    folder = Path(config.get("BROKER_DIR") or Path(config["INSTANCE_DIR"]) / "broker")
    for sub in ("queue", "processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        "broker_url": "filesystem://",
        "broker_transport": "imtheboss.web.app.tasks_out:AtomicFilesystemTransport",
        "broker_transport_options": {
            "data_folder_in": str(folder / "queue"),
            "data_folder_out": str(folder / "queue"),
            "processed_folder": str(folder / "processed"),
            "control_folder": str(folder / "control"),
            "store_processed": False,
        },
    }


class AtomicFilesystemChannel(filesystem.Channel):
    """kombu's filesystem channel, but a message file appears only once it is whole: it is
    written under a name readers ignore and renamed into place (kombu writes in place, so a
    reader could take a half-written file, fail to decode it, and bring the worker down)."""

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        temporary = os.path.join(self.data_folder_out, f".{uuid.uuid4()}.part")
        try:
            with open(temporary, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(temporary, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            raise ChannelError(f"cannot add a message to {self.data_folder_out!r}") from exc


class AtomicFilesystemTransport(filesystem.Transport):
    """The embedded broker's transport (see ``AtomicFilesystemChannel``)."""

    Channel = AtomicFilesystemChannel


def client(app: Flask | None = None) -> Celery:
    """The app's Celery client, which only sends (made once per app)."""
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    made = app.extensions.get("imtheboss.queue")
    if made is None:
        made = Celery("imtheboss-web", set_as_current=False)
        made.conf.update(
            broker_settings(app.config), task_ignore_result=True, broker_connection_retry=False
        )
        app.extensions["imtheboss.queue"] = made
    return made


def send(name: str, *args: Any, **options: Any) -> None:
    """Queue task ``name`` (e.g. ``imtheboss.worker.tasks.game_changed``) with ``args``, through
    the current app's broker."""
    client().send_task(name, args=args, **options)


def init_queue(app: Flask) -> None:
    """After each commit that made mail, tell the mail worker (``TASKS`` config, default on):
    one ``game_changed`` task. Deadlines need no task: the deadlines workers find them in the
    database. A lost message is recovered by the worker's periodic sweep."""
    if app.config.get("TASKS", True):
        on_commit(app, lambda game_id: send("imtheboss.worker.tasks.game_changed", game_id))
