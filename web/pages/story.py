"""The story page, ``/g/<gid>/story``: the history grouped as a story
(``imtheboss.web.say.chapters``): the start, each negotiation as threads per provider and letter
with its cards, windows, lineup, returned family cards and payouts, the end roll, and the end.
``story_read.STORY_PAGE`` chapters a page (a negotiation, or the turns between two), as the history
pages: page 1 holds the newest, each page reads oldest first, older and newer are plain links (no
script). A page reads only its own chapters' events, with the last ``story_read.CHAT_SHOWN`` chat
messages of each; shows only what the viewing seat could see (A8).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, render_template, request
from flask_babel import lazy_gettext
from imtheboss.web.games.load import load_state, require_confirmed
from imtheboss.web.pages import common
from imtheboss.web.say import chapters, messages, story_read
from imtheboss.web.store import negotiations

bp = Blueprint("story", __name__)

OUTCOMES = {
    "open": lazy_gettext("still open"),
    "agreed": lazy_gettext("agreed"),
    "rejected": lazy_gettext("rejected"),
    "withdrawn": lazy_gettext("withdrawn"),
    "lapsed": lazy_gettext("lapsed"),
}
FILLED_BY = {
    "investor": lazy_gettext("%(letter)s: the investor card of %(player)s"),
    "family": lazy_gettext("%(letter)s: %(card)s of %(player)s"),
}


def register(app: Flask) -> None:
    """Add the story blueprint to ``app`` (called by ``web.create_app``)."""
    app.register_blueprint(bp)


@bp.get("/g/<gid>/story")
def story_page(gid: str) -> str:
    """The story of the game so far as the viewer may read it, one page of it (``?page=``: 1,
    the default, is the newest; a page out of range or not a number shows the nearest)."""
    game, seat, admin = common.viewer(gid)
    require_confirmed(game)
    state = load_state(game)
    ctx = common.frame(game, seat, admin, state)
    read = story_read.read_page(gid, game.last_seq, seat, request.args.get("page", "1"))
    tz = ctx["tz"]
    names = negotiations.names_by_seq(gid, state)

    def say(line: chapters.Line) -> str:
        return messages.render(line.msg, names.at(line.seq), tz)

    ctx.update(
        told=read.told,
        chapters=read.told.chapters,
        page=read.page,
        pages=read.pages,
        left_out=read.left_out,
        say=say,
        named=lambda line: names.at(line.seq),  # the headings' names as they were then (A13)
        words=messages.card_words,
        outcomes=OUTCOMES,
        filled=_filled,
        fail_reasons=messages.FAIL_REASONS,
    )
    return render_template("story.html", **ctx)


def _filled(f: chapters.Filled, players: list[str]) -> str:
    text = FILLED_BY.get(f.kind, FILLED_BY["investor"])
    params: dict[str, Any] = {
        "letter": messages.card_words(f.letter),
        "player": players[f.seat],
        "card": messages.card_words(f.card),
    }
    return str(text) % params
