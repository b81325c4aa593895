"""The game's history and the seat's inbox: every event the seat may see, a page at a time, and
the seat's own notifications, each a link to what it names."""

from __future__ import annotations

import math
from functools import partial

from flask import (
    render_template,
    request,
    url_for,
)
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting
from imtheboss.web.games.basics import now_utc
from imtheboss.web.games.load import load_state
from imtheboss.web.mail.kinds import DEAL_NEWS, IN_WINDOW, KINDS, NOT_IN_HISTORY
from imtheboss.web.models import Game, Notification, db
from imtheboss.web.pages.common import bp, frame, seat_only, viewer
from imtheboss.web.replies.choices import has_stop_card
from imtheboss.web.say import messages, timeline
from imtheboss.web.store import negotiations
from sqlalchemy import select, update

HISTORY_PAGE = 100
INBOX_LIMIT = 200


@bp.get("/g/<gid>/history")
def history(gid: str) -> str:
    """The whole game's history, newest first, 100 events a page."""
    game, seat, admin = viewer(gid)
    state = load_state(game)
    pages = max(1, math.ceil(game.last_seq / HISTORY_PAGE))
    try:
        page = min(max(1, int(request.args.get("page", "1"))), pages)
    except ValueError:
        page = 1
    upto = game.last_seq - (page - 1) * HISTORY_PAGE
    after = max(0, upto - HISTORY_PAGE)
    players = negotiations.names_by_seq(gid, state)
    since = negotiations.handed_over(gid, seat)  # A13: the old player's events are not the new's
    rows = [
        timeline.event_row(seq, at, ev, players, seat if seq > since else None)
        for seq, at, ev in negotiations.records(gid, after=after, upto=upto)
        if timeline.visible(ev, seat if seq > since else None)
    ]
    rows.reverse()
    ctx = frame(game, seat, admin, state)
    ctx.update(rows=rows, page=page, pages=pages)
    return render_template("history.html", **ctx)


# -- inbox and settings ----------------------------------------------------------------------


@bp.get("/g/<gid>/inbox")
def inbox(gid: str) -> str:
    """The seat's own notifications, newest first, each a link to what it names; the rows
    unread until now are highlighted, and showing them marks them read (not on ``HEAD``)."""
    game, seat, admin = seat_only(gid)
    rows = (
        db.session.execute(
            select(Notification)
            .where(Notification.game_id == gid, Notification.seat_index == seat)
            .order_by(Notification.id.desc())
            .limit(INBOX_LIMIT)
        )
        .scalars()
        .all()
    )
    state = load_state(game)
    ctx = frame(game, seat, admin, state)
    links = _inbox_links(game, state, seat, rows)
    text = partial(messages.row_text, can_stop=has_stop_card(state, seat), facts=False)
    waiting = {a["window"] for a in awaiting(state) if a["seat"] == seat}
    over = [
        r.kind in IN_WINDOW and (r.body or {}).get("window") not in waiting for r in rows
    ]  # a question whose window no longer waits for the seat (answered, or ended)
    icons = {name: kind.icon for name, kind in KINDS.items()}
    ctx.update(rows=rows, links=links, icons=icons, row_text=text, over=over)
    page = render_template("inbox.html", **ctx)
    if rows and request.method != "HEAD":
        _mark_read(gid, seat, rows[0].id)
    return page


def _inbox_links(game: Game, state: GameState, seat: int, rows: list[Notification]) -> list[str]:
    """Where each row leads: a window still waiting for the seat to its line on the game page,
    news of a deal to its place in that negotiation's timeline, any other row with an event to
    that event in the history, the rest to the game page."""
    waiting = {a["window"] for a in awaiting(state) if a["seat"] == seat}
    negs = negotiations.rows_of(game.id)
    out = []
    for row in rows:
        window = (row.body or {}).get("window")
        number = next(
            (n.number for n in reversed(negs) if n.first_seq <= row.seq <= (n.last_seq or row.seq)),
            None,
        )
        if window in waiting:
            out.append(url_for("pages.game_page", gid=game.id, _anchor=f"window-{window}"))
        elif row.kind in DEAL_NEWS and number is not None:
            out.append(url_for("pages.deal", gid=game.id, number=number, _anchor=f"ev-{row.seq}"))
        elif row.seq and row.kind not in NOT_IN_HISTORY:
            page = (game.last_seq - row.seq) // HISTORY_PAGE + 1
            anchor = f"ev-{row.seq}"
            out.append(url_for("pages.history", gid=game.id, page=page, _anchor=anchor))
        else:
            out.append(url_for("pages.game_page", gid=game.id))
    return out


def _mark_read(gid: str, seat: int, upto: int) -> None:
    """Mark the seat's rows up to id ``upto`` read (rows written since stay new)."""
    db.session.execute(
        update(Notification)
        .where(
            Notification.game_id == gid,
            Notification.seat_index == seat,
            Notification.id <= upto,
            Notification.read_at.is_(None),
        )
        .values(read_at=now_utc())
    )
    db.session.commit()
