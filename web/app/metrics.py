"""What the operator watches: the Prometheus series of ``/metrics`` (``imtheboss.web.app.health``).

Two kinds, so that several gunicorn workers and the separate Celery processes give one answer:

- Counters and histograms counted where things happen (requests by route template and status,
  submit latency, replies by outcome) use ``prometheus_client``; with ``PROMETHEUS_MULTIPROC_DIR``
  set (the same empty folder for every process of a host) each process writes them there and
  a scrape adds them up (its multiprocess mode); without it, they are the scraped process's own.
- Gauges of the system's state are computed from the database (and the broker) at scrape
  time, so every web process answers the same: pending mail and the age of the oldest, open
  deadlines past due, webhook posts failed, the queues' depths, and the time since beat's last
  sweep (``mark_sweep``: written by the sweep task into Redis with ``REDIS_URL``, else into a
  file of the instance folder).

No label holds an address, a token or a game id: routes are Flask's templates
(``/g/<gid>/s/<token>``), reply outcomes and reasons are fixed codes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

from flask import current_app
from imtheboss.web.app.tasks_out import QUEUES, client
from imtheboss.web.games.basics import now_utc
from imtheboss.web.models import Deadline, Game, Notification, db
from imtheboss.web.outbound.outbox import OutboundPost
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

REQUESTS = Counter(
    "imtheboss_http_requests",
    "HTTP requests answered, by route template, method and status",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "imtheboss_http_request_seconds", "Time to answer a request, by route template", ["route"]
)
SUBMIT_SECONDS = Histogram(
    "imtheboss_submit_seconds",
    "Time of one submitted command (lock, decide, store, commit), whichever way it came",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
REPLIES = Counter(
    "imtheboss_replies", "Replies by mail received, by outcome and reason", ["outcome", "reason"]
)
SWEEP_KEY = "imtheboss:last_sweep"  # Redis key (or file name in the instance folder)
F = TypeVar("F", bound=Callable[..., Any])


def timed_submit(function: F) -> F:
    """Decorator: the call's duration (seconds) goes to ``imtheboss_submit_seconds``."""

    @wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        with SUBMIT_SECONDS.time():
            return function(*args, **kwargs)

    return timed  # type: ignore[return-value]


def counted_reply(function: F) -> F:
    """Decorator of ``apply_reply``: each reply is counted in ``imtheboss_replies`` by its
    ``Outcome``'s ``status`` and ``reason`` (fixed codes)."""

    @wraps(function)
    def counted(*args: Any, **kwargs: Any) -> Any:
        outcome = function(*args, **kwargs)
        count_reply(outcome.status, outcome.reason)
        return outcome

    return counted  # type: ignore[return-value]


def count_reply(status: str, reason: str = "") -> None:
    """Count one reply by mail in ``imtheboss_replies`` (``status`` and ``reason``: fixed codes;
    a recipient refused at ``RCPT`` is ``refused``/``not_ours``, as ``apply_reply`` says of a
    mail to no reply address of ours)."""
    REPLIES.labels(outcome=status, reason=reason or "-").inc()


def count_request(route: str, method: str, status: int, seconds: float) -> None:
    """Count one answered request: ``route`` is the URL rule's template (``unmatched`` when no
    rule matched), never the raw path."""
    REQUESTS.labels(route=route, method=method, status=str(status)).inc()
    REQUEST_SECONDS.labels(route=route).observe(seconds)


# -- beat's last sweep -----------------------------------------------------------------------


def _redis(config: Any) -> Any:
    import redis

    return redis.Redis.from_url(config["REDIS_URL"], socket_timeout=2, socket_connect_timeout=2)


def mark_sweep(now: datetime) -> None:
    """Record that a sweep ran at ``now`` (aware UTC) where every process sees it: Redis with
    ``REDIS_URL``, else ``<instance>/last_sweep``. Needs an app context."""
    config = current_app.config
    stamp = f"{now.timestamp():.3f}"
    if config.get("REDIS_URL"):
        _redis(config).set(SWEEP_KEY, stamp)
        return
    path = Path(config["INSTANCE_DIR"]) / "last_sweep"
    temporary = path.with_suffix(f".{os.getpid()}.part")
    temporary.write_text(stamp)
    os.replace(temporary, path)


def last_sweep() -> float | None:
    """When the last sweep ran (POSIX seconds), ``None`` if none was recorded."""
    config = current_app.config
    if config.get("REDIS_URL"):
        value = _redis(config).get(SWEEP_KEY)
    else:
        path = Path(config["INSTANCE_DIR"]) / "last_sweep"
        value = path.read_text() if path.exists() else None
    return float(value) if value else None


# -- the state, computed at scrape time ------------------------------------------------------


def queue_depths() -> dict[str, int]:
    """Messages waiting in each queue (``imtheboss.web.app.tasks_out.QUEUES``) of the broker. Raises
    kombu's/redis's connection errors when the broker cannot be reached."""
    from kombu.exceptions import ChannelError

    depths = {}
    with client().connection_for_write() as connection:
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=2)
        channel = connection.default_channel
        for name in QUEUES:
            try:
                depths[name] = channel.queue_declare(queue=name, passive=True).message_count
            except ChannelError:  # never declared: nothing waits in it
                depths[name] = 0
    return depths


def state_counts(now: datetime) -> dict[str, float]:
    """The database's side of the state at ``now``: ``mail_pending`` (notifications whose mail
    is still to send), ``mail_oldest_pending_seconds`` (0 when none), ``deadlines_overdue``
    (open deadlines of active games whose ``due_at`` has passed: a paused game's wait),
    ``webhook_posts_failed`` (posts failed for good)."""
    pending, oldest = db.session.execute(
        select(func.count(), func.min(Notification.created_at)).where(
            Notification.email_state == "pending"
        )
    ).one()
    overdue = db.session.execute(  # a paused game's deadlines wait for its resume
        select(func.count())
        .select_from(Deadline)
        .join(Game, Game.id == Deadline.game_id)
        .where(Deadline.state == "open", Deadline.due_at < now, Game.status == "active")
    ).scalar_one()
    failed = db.session.execute(
        select(func.count()).where(OutboundPost.state == "failed")
    ).scalar_one()
    return {
        "mail_pending": pending,
        "mail_oldest_pending_seconds": (now - oldest).total_seconds() if oldest else 0.0,
        "deadlines_overdue": overdue,
        "webhook_posts_failed": failed,
    }


class StateCollector:
    """The gauges computed at scrape time (see the module docstring); needs an app context."""

    HELP = {
        "mail_pending": "Notifications whose mail is still to send",
        "mail_oldest_pending_seconds": "Age of the oldest notification whose mail is pending",
        "deadlines_overdue": "Open deadlines whose time has passed",
        "webhook_posts_failed": "Webhook and push posts that failed for good",
    }

    def _database(self, now: datetime) -> tuple[int, bool, dict[str, float]]:
        """``(database_up, schema_current, the database gauges)``: none of the gauges while
        the database cannot be reached or its schema is behind (they would read tables the
        release step has not made yet)."""
        try:
            if not self.schema_current():
                return 1, False, {}
            return 1, True, state_counts(now)
        except SQLAlchemyError:
            db.session.rollback()
            return 0, False, {}

    def __init__(self, schema_current: Callable[[], bool]) -> None:
        self.schema_current = schema_current

    def collect(self) -> Iterator[GaugeMetricFamily]:
        now = now_utc()
        up, current, counts = self._database(now)
        yield GaugeMetricFamily(
            "imtheboss_database_up", "1 when the database answered this scrape", value=up
        )
        yield GaugeMetricFamily(
            "imtheboss_schema_current",
            "1 when the database's schema is the code's (0: run the release step)",
            value=int(current),
        )
        for name, value in counts.items():
            yield GaugeMetricFamily(f"imtheboss_{name}", self.HELP[name], value=value)
        try:
            swept, depths = last_sweep(), queue_depths()
        except Exception:  # the broker is down: /readyz says so; the rest still answers
            swept, depths = None, None
        yield GaugeMetricFamily(
            "imtheboss_broker_up",
            "1 when the broker answered this scrape",
            value=int(depths is not None),
        )
        yield GaugeMetricFamily(
            "imtheboss_sweep_age_seconds",
            "Seconds since beat's last sweep ran (NaN: none recorded)",
            value=now.timestamp() - swept if swept is not None else float("nan"),
        )
        depth = GaugeMetricFamily(
            "imtheboss_queue_depth", "Messages waiting in a broker queue", labels=["queue"]
        )
        for name, count in (depths or {}).items():
            depth.add_metric([name], count)
        yield depth


def exposition(schema_current: Callable[[], bool]) -> tuple[bytes, str]:
    """The text ``/metrics`` answers and its content type: the counted series (added up over
    the host's processes in multiprocess mode) and the state gauges. A database that cannot be
    reached or whose schema is behind (``schema_current``, ``imtheboss.web.app.health``) gives
    ``imtheboss_database_up`` or ``imtheboss_schema_current`` 0 and no database gauge; a broker
    down gives ``imtheboss_broker_up`` 0: the scrape itself always answers."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        counted = CollectorRegistry()
        MultiProcessCollector(counted)
    else:
        counted = REGISTRY
    state = CollectorRegistry(auto_describe=False)
    state.register(StateCollector(schema_current))  # type: ignore[arg-type]
    return generate_latest(counted) + generate_latest(state), CONTENT_TYPE_LATEST
