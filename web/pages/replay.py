"""The replay and the record of a game: ``/g/<gid>/replay?at=N`` shows the game as it stood
after event N, and ``/g/<gid>/export`` downloads a finished game's record (docs/export.md).

The replay's state after event N is the engine's fold of events 1..N, started from the last
stored state at or before N (the snapshot, or a checkpoint: ``load.state_after``), and shown
through ``view(state, seat)`` with the game page's own partial (``partials/live.html``, without
forms or polling): a seat sees what it could see at that moment, never more (A8), also after
the end (the end reveals only the final position). No later event is read, and each part
(the latest events, the running deal's chat, the money chart's closed deals) is found by
index, so the page costs the same early and late in a long game. Previous and next are plain links
and the event number a plain ``GET`` form, so the page works without script.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Flask, Response, render_template, request
from flask_babel import gettext as _
from imtheboss.web.app.inputs import whole_number
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import require_confirmed, state_after
from imtheboss.web.models import Game
from imtheboss.web.pages import common
from imtheboss.web.pages import game as game_pages
from imtheboss.web.say import messages, money_chart, timeline
from imtheboss.web.store import negotiations
from imtheboss.web.store.records import export_filename, game_export

bp = Blueprint("replay", __name__)

JUMPS = (10, 100)  # the page's links besides the next and previous event


def register(app: Flask) -> None:
    """Add the replay blueprint to ``app`` (called by ``web.create_app``)."""
    app.register_blueprint(bp)


def _event_number(total: int) -> int:
    """``?at=N``: a whole number from 1 to ``total`` (default: the last event). Raises
    ``ServiceError`` 400 otherwise."""
    raw = request.args.get("at")
    if raw is None or raw == "":
        return total
    number = whole_number(raw)
    if number is None or not 1 <= number <= total:
        raise ServiceError(
            400,
            "bad_event",
            _("Choose an event number from 1 to %(total)d.", total=total),
        )
    return number


@bp.get("/g/<gid>/replay")
def replay_page(gid: str) -> str:
    """The game after event ``?at=N`` (default: the last) as the viewer could see it then: the
    board, the seats, its own hand and money, the negotiation, who the game waited for, the
    latest events and the money chart up to then; links to step through."""
    game, seat, admin = common.viewer(gid)
    require_confirmed(game)
    total = game.last_seq
    at = _event_number(total)
    if at <= negotiations.handed_over(gid, seat):  # A13: then the old player's seat
        seat = None
    state = state_after(game, at)
    recent = negotiations.records(gid, upto=at, newest=game_pages.RECENT)
    chat = negotiations.running_chat(gid, game_pages.CHAT, upto=at) if state.deal else []
    terms = negotiations.running_records(gid, timeline.TERMS_HISTORY, upto=at) if state.deal else []
    ctx = game_pages.state_context(
        game, seat, admin, state, chat, recent, acting=False, terms=terms
    )
    _seq, when, event = recent[-1]
    ctx.update(
        replay=True,
        now=when,  # deadlines read as they did at that moment
        at=at,
        total=total,
        step_text=_step_text(event, ctx["players"], seat, ctx["tz"]),
        step_icon=timeline.event_kind(event)[0] if timeline.visible(event, seat) else "•",
        jumps=_jumps(at, total),
        chart=money_chart.for_game(gid, ctx["v"], upto=at, players=ctx["players"]),
    )
    return render_template("replay.html", **ctx)


def _step_text(event: Any, players: list[str], seat: int | None, tz: str) -> str:
    if not timeline.visible(event, seat):
        return _("Another player changed something only they can see.")
    return messages.line(event, players, seat, tz)


def _jumps(at: int, total: int) -> list[tuple[str, int]]:
    """The step links: ``(label, event number)`` for the first, back 100, 10 and 1, on 1, 10
    and 100, and the last event, each only where it leads somewhere else."""
    out: list[tuple[str, int]] = []
    if at > 1:
        out.append((_("first"), 1))
        out += [(f"−{n}", at - n) for n in reversed(JUMPS) if at - n >= 1]
        out.append((_("← previous"), at - 1))
    if at < total:
        out.append((_("next →"), at + 1))
        out += [(f"+{n}", at + n) for n in JUMPS if at + n <= total]
        out.append((_("last"), total))
    return out


@bp.get("/g/<gid>/export")
def export_page(gid: str) -> Response:
    """The finished game's record as a JSON download, for a seat or the organiser. Refused
    (409, in plain words) until the game is over: the record shows every hand and the seed."""
    game, _seat, _admin = common.viewer(gid)
    return export_response(game)


def export_response(game: Game) -> Response:
    """``game_export(game)`` as an ``application/json`` attachment. Raises ``ServiceError``
    409 before the end."""
    body = json.dumps(game_export(game), ensure_ascii=False, indent=1)
    response = Response(body + "\n", mimetype="application/json")
    response.headers["Content-Disposition"] = f'attachment; filename="{export_filename(game)}"'
    response.headers["Cache-Control"] = "private, no-store"
    return response
