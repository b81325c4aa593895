"""``imtheboss doctor``: what is stuck across all games, for the operator (docs/operations.md).

Three lists, each a row per game (its id and title; never an address, a token or a hand):

- stuck mail: notifications whose mail is ``pending`` or ``sending`` for longer than
  ``--stuck-minutes`` (the queue or a worker lost it), or ``unknown`` (a worker died mid-send);
- overdue deadlines: open deadlines past their time by more than ``--grace-seconds`` (no
  deadlines worker is firing them);
- failing webhooks: webhooks whose last post failed (``failed`` for good, or ``pending`` again
  after a failed try), with a failure code (``imtheboss.web.outbound.webhooks.FAILURES``).

Exit codes: 0 nothing found, 1 something listed, 2 the settings or the database failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from imtheboss.web import create_app
from imtheboss.web.games.basics import now_utc
from imtheboss.web.models import Deadline, Game, Notification, db
from imtheboss.web.outbound.outbox import OutboundPost
from imtheboss.web.settings import SettingsError
from sqlalchemy import and_, func, or_, select


@dataclass
class Finding:
    """One row: ``what`` (``mail``, ``deadline``, ``webhook``) of game ``game_id`` (titled
    ``title``): ``count`` rows, ``since`` the oldest one's time (aware UTC, ISO 8601) and
    ``detail`` (mail states, a webhook's id and failure code)."""

    what: str
    game_id: str
    title: str
    count: int
    since: str
    detail: str


def stuck_mail(now: datetime, stuck: timedelta) -> list[Finding]:
    """Mail stuck at ``now`` (aware UTC): ``pending``/``sending`` older than ``stuck``, or
    ``unknown``; a row per game."""
    old = now - stuck
    rows = db.session.execute(
        select(
            Game.id,
            Game.title,
            Notification.email_state,
            func.count(),
            func.min(Notification.created_at),
        )
        .join(Game, Game.id == Notification.game_id)
        .where(
            or_(
                and_(Notification.email_state == "pending", Notification.created_at < old),
                and_(
                    Notification.email_state == "sending",
                    func.coalesce(Notification.emailed_at, Notification.created_at) < old,
                ),
                Notification.email_state == "unknown",
            )
        )
        .group_by(Game.id, Game.title, Notification.email_state)
    ).all()
    games: dict[str, Finding] = {}
    for gid, title, state, count, since in sorted(rows, key=lambda row: row[4]):
        row = games.setdefault(gid, Finding("mail", gid, title, 0, _iso(since), ""))
        row.count += count
        row.detail = ",".join(sorted({*row.detail.split(","), state} - {""}))
    return list(games.values())


def overdue_deadlines(now: datetime, grace: timedelta) -> list[Finding]:
    """Open deadlines of active games more than ``grace`` past due at ``now`` (a paused game's
    wait for its resume); a row per game."""
    rows = db.session.execute(
        select(Game.id, Game.title, func.count(), func.min(Deadline.due_at))
        .join(Game, Game.id == Deadline.game_id)
        .where(Deadline.state == "open", Deadline.due_at < now - grace)
        .where(Game.status == "active")  # a paused game's deadlines wait for its resume
        .group_by(Game.id, Game.title)
        .order_by(func.min(Deadline.due_at))
    ).all()
    return [Finding("deadline", g, t, n, _iso(due), "") for g, t, n, due in rows]


def failing_webhooks() -> list[Finding]:
    """Webhooks whose posts failed (for good, or to be tried again); a row per webhook."""
    failing = and_(
        OutboundPost.webhook_id.is_not(None),
        OutboundPost.error.is_not(None),
        OutboundPost.state.in_(("failed", "pending", "unknown")),
    )
    rows = db.session.execute(
        select(
            Game.id,
            Game.title,
            OutboundPost.webhook_id,
            func.count(),
            func.min(OutboundPost.tried_at),
            func.max(OutboundPost.error),
        )
        .join(Game, Game.id == OutboundPost.game_id)
        .where(failing)
        .group_by(Game.id, Game.title, OutboundPost.webhook_id)
        .order_by(Game.id, OutboundPost.webhook_id)
    ).all()
    return [
        Finding("webhook", g, t, n, _iso(since), f"webhook {hook}: {error}")
        for g, t, hook, n, since, error in rows
    ]


def _iso(when: datetime | None) -> str:
    return when.isoformat(timespec="seconds") if when else ""


def findings(now: datetime, stuck: timedelta, grace: timedelta) -> list[Finding]:
    """All three lists at ``now`` (needs an app context)."""
    return stuck_mail(now, stuck) + overdue_deadlines(now, grace) + failing_webhooks()


HEADINGS = {"mail": "stuck mail", "deadline": "overdue deadlines", "webhook": "failing webhooks"}


def report(found: list[Finding]) -> str:
    """The findings as text: a heading per list, a line per row."""
    if not found:
        return "nothing stuck: no stuck mail, no overdue deadline, no failing webhook"
    out = []
    for what, heading in HEADINGS.items():
        rows = [f for f in found if f.what == what]
        out.append(f"{heading}: {len(rows)} game(s)" if rows else f"{heading}: none")
        for f in rows:
            detail = f" ({f.detail})" if f.detail else ""
            out.append(f"  {f.game_id} {f.title!r}: {f.count} since {f.since}{detail}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Run ``doctor`` on the database of the settings (the environment); returns the exit
    code (0 nothing, 1 something listed, 2 it could not look: also without ``DATABASE_URL``,
    where it would look at an empty SQLite file of its own, not the server's database)."""
    from sqlalchemy.exc import SQLAlchemyError

    if not os.environ.get("DATABASE_URL"):
        print("imtheboss doctor: DATABASE_URL is not set (the server's database)", file=sys.stderr)
        return 2
    try:
        app = create_app({"AUTO_MIGRATE": False, "TASKS": False})
        with app.app_context():
            found = findings(
                now_utc(),
                timedelta(minutes=args.stuck_minutes),
                timedelta(seconds=args.grace_seconds),
            )
    except (SettingsError, SQLAlchemyError) as exc:
        print(f"imtheboss doctor: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([asdict(f) for f in found], ensure_ascii=False))
    else:
        print(report(found))
    return 1 if found else 0
