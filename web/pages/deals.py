"""The negotiations: the list of every deal of the game, and one negotiation's timeline. Each
reads only the events of the ranges it shows (``imtheboss.web.store.negotiations``)."""

from __future__ import annotations

from flask import (
    render_template,
)
from flask_babel import gettext as _
from imtheboss.engine.options import Options
from imtheboss.engine.setup import tile_stack
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import load_state
from imtheboss.web.pages.common import bp, frame, viewer
from imtheboss.web.say import display, messages, timeline
from imtheboss.web.store import negotiations


@bp.get("/g/<gid>/deals")
def deals(gid: str) -> str:
    """Every negotiation of the game, numbered 1..n (each ``deal_opened`` starts one): one row
    of the ranges table each, and of the log only the events that ended them."""
    game, seat, admin = viewer(gid)
    state = load_state(game)
    negs = negotiations.listed(game.id, negotiations.names_by_seq(gid, state), seat)
    options = Options.from_json(game.settings.get("options"))
    tiles = tile_stack(options)
    ctx = frame(game, seat, admin, state)
    ctx.update(
        negotiations=negs,
        board=state.board.to_json(),
        tiles=tiles,
        options=options,
        fail_reasons=messages.FAIL_REASONS,
        requirement_html=display.requirement_html,
    )
    return render_template("deals.html", **ctx)


@bp.get("/g/<gid>/deals/<int:number>")
def deal(gid: str, number: int) -> str:
    """One negotiation's timeline: opened, cards, offers and counters, agreements, windows and
    who answered, boss changes and lapses, and how it ended (payouts per seat). Reads only the
    events of its range."""
    game, seat, admin = viewer(gid)
    state = load_state(game)
    names = negotiations.names_by_seq(gid, state)
    found = negotiations.one(game, number, names, seat)
    if found is None:
        raise ServiceError(404, "no_deal", _("There is no negotiation number %(n)d.", n=number))
    neg, count = found
    board = state.board.to_json()
    space = board[neg.space]
    options = Options.from_json(game.settings.get("options"))
    tiles = tile_stack(options)
    ctx = frame(game, seat, admin, state)
    ctx.update(
        neg=neg,
        count=count,
        space=space,
        proceeds=neg.proceeds(space["shares"], tiles, options),
        fail_reasons=messages.FAIL_REASONS,
        answers=timeline.ANSWERS,
        window_results=timeline.WINDOW_RESULTS,
        requirement_html=display.requirement_html,
        terms_reasons={
            "rejected": _("rejected"),
            "withdrawn": _("withdrawn"),
            "lapsed": _("lapsed"),
        },
    )
    return render_template("deal.html", **ctx)
