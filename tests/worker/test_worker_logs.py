"""The worker's log lines carry the id of the task that wrote them or that they are about
(``task=<id>``: also the consumer's "received" line), through the same redacting handlers as
the web app's (``imtheboss.web.app.logs``); lines written outside any task carry none. Idle, the
worker and beat write nothing."""

from __future__ import annotations

import re

import redis
from imtheboss.web.app.metrics import SWEEP_KEY
from imtheboss.web.games.create import create_game
from imtheboss.web.models import Deadline, Notification, db
from imtheboss.web.outbound.outbox import OutboundPost
from sqlalchemy import delete
from support.worker import players, wait_for

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}
LINE = re.compile(
    r"^\[[^\]]+: (?P<level>\w+)/\w+\] (?P<logger>\S+) (?P<context>\S+): (?P<text>.*)$"
)
TASK = re.compile(r"Task [\w.]+\[(?P<id>[0-9a-f-]{36})\] (?P<what>\w+)")


def test_every_line_a_task_writes_carries_its_id(app, smtp, worker):
    """Mail that cannot go out (the SMTP server is down) makes the delivery tasks log a
    warning through the app's logger; Celery's own lines name the task too."""
    mark = worker.mark()
    smtp.stop()
    with app.app_context():
        create_game("Task ids", players("taskids", 3), SLOW)

    def lines() -> list[re.Match]:
        text = worker.log_since(mark)
        return [m for m in map(LINE.match, text.splitlines()) if m]

    def warned() -> list[re.Match]:
        return [m for m in lines() if m["logger"] == "imtheboss.web" and m["level"] == "WARNING"]

    warnings = wait_for(warned, 30, what="a delivery task's warning")
    smtp.start()
    seen = lines()
    celery = [(m, TASK.search(m["text"])) for m in seen if TASK.search(m["text"])]
    finished = [(m, t) for m, t in celery if t["what"] in ("succeeded", "retry", "raised")]
    assert finished
    for line, task in finished:  # written by the task's own thread, after it ran
        assert line["context"] == f"task={task['id']}", line.group(0)
    for line, task in celery:  # "received" too: the consumer's line, before the task runs
        assert line["context"] == f"task={task['id']}", line.group(0)
    known = {task["id"] for _, task in celery}
    for warning in warnings:
        assert warning["context"].startswith("task=")
        assert warning["context"].removeprefix("task=") in known, warning.group(0)


def test_idle_workers_and_beat_write_nothing(app, worker, redis_url):
    """Idle, the sweeps still run (beat sends them every ``SWEEP_SECONDS``, 1 s here; each
    records its time) but nothing is logged: no "sending due task", "received" or
    "succeeded" line of a sweep that found nothing to do. Idle for real: the worker starts
    again with no mail, deadline or post of earlier tests left to do, queued or scheduled."""
    sweeps = redis.Redis.from_url(redis_url)
    worker.kill()
    with app.app_context():
        for table in (OutboundPost, Deadline, Notification):
            db.session.execute(delete(table))
        db.session.commit()
    sweeps.flushdb()  # the broker's queues and the tasks held for later
    worker.start()

    def last() -> float:
        stamp = sweeps.get(SWEEP_KEY)
        return float(stamp) if stamp else 0.0

    first = wait_for(last, 30, what="a first sweep")
    mark = worker.mark()
    wait_for(lambda: last() >= first + 6, 60, what="six more sweeps")
    written = [line for line in worker.log_since(mark).splitlines() if line.strip()]
    assert written == []
