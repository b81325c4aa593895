"""The game page, its live fragment, and acting: each game-page form posts one command through
``imtheboss.web.games.submit.submit`` (with a confirmation step before moves that cannot be taken
back). The page shows a seat only what ``view`` and ``redact_event`` give it (A8)."""

from __future__ import annotations

from typing import Any

from flask import (
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import gettext as _
from imtheboss.engine.game import MAX_CHAT, MAX_PRICE
from imtheboss.engine.state import GameState
from imtheboss.engine.views import legal_commands, view
from imtheboss.web.app import inputs
from imtheboss.web.app.limits import command_spending
from imtheboss.web.games import presence
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.load import get_game, load_state
from imtheboss.web.games.seats import mark_seen, seats_of
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Game
from imtheboss.web.pages import organiser as organiser_pages
from imtheboss.web.pages.common import bp, frame, htmx, seat_row, viewer
from imtheboss.web.players.auth import current_seat, is_admin
from imtheboss.web.say import command_forms, decisions, display, messages, money_chart, timeline
from imtheboss.web.say.commands import CONFIRM
from imtheboss.web.store import negotiations

RECENT = 8
CHAT = 20  # the running deal's last messages on the game page


def _live_context(game: Game, seat: int | None, admin: bool) -> dict[str, Any]:
    """Everything the live part of the game page shows ``seat`` (A8: through ``view``)."""
    state = load_state(game)
    chat = negotiations.running_chat(game.id, CHAT) if state.deal is not None else []
    recent = negotiations.records(game.id, newest=RECENT)
    terms = (
        negotiations.running_records(game.id, timeline.TERMS_HISTORY)
        if state.deal is not None
        else []
    )
    ctx = state_context(
        game, seat, admin, state, chat, recent, acting=game.status == "active", terms=terms
    )
    if state.phase == "game_over":  # the end shows every seat's money (R7.1)
        ctx["money_chart"] = money_chart.for_game(game.id, ctx["v"])
    return ctx


def state_context(
    game: Game,
    seat: int | None,
    admin: bool,
    state: GameState,
    chat: list[negotiations.Record],
    recent: list[negotiations.Record],
    *,
    acting: bool,
    terms: list[negotiations.Record] | None = None,
) -> dict[str, Any]:
    """What ``partials/live.html`` shows ``seat`` of ``state`` (A8: through ``view`` and
    ``redact_event``): the running deal's ``chat`` and the ``recent`` events as
    ``(seq, at, event)``; its ``terms`` events (``timeline.TERMS_HISTORY``: an open offer is
    told from a counter); the forms of the seat's legal commands when ``acting`` (the live game
    page; the replay shows none)."""
    ctx = frame(game, seat, admin, state)
    v = view(state, seat)
    players = ctx["players"]
    forms: list = []
    if seat is not None and acting:
        forms = command_forms.command_forms(legal_commands(state, seat), v, players)
        for _key, _title, group in forms:
            decisions.explain_missing_accepts(group, v, seat)
            decisions.explain_missing_close(group, v, seat)
    # the live page names each event's seats as they were then (the replay's state already does)
    names = negotiations.names_by_seq(game.id, state) if acting else players
    since = negotiations.handed_over(game.id, seat)  # A13: the old player's are not the new one's
    chat_rows = [timeline.event_row(seq, at, ev, names, seat) for seq, at, ev in chat]
    recent_rows = [
        timeline.event_row(seq, at, ev, names, seat if seq > since else None)
        for seq, at, ev in recent
        if timeline.visible(ev, seat if seq > since else None)
    ]
    recent_rows.reverse()
    space_of_deal = v["deal"]["space"] if v["deal"] else None
    ctx.update(
        v=v,
        forms=forms,
        back_form=command_forms.CommandForm(  # A6, A11: "I'm back" (any own command would do)
            cmd={"do": "away", "away": False},
            needs=[],
            label=_("I'm back"),
            button=_("I'm back"),
            group="turn",
            style="primary",
        ),
        chat=chat_rows,
        recent=recent_rows,
        ring=display.RING,
        deal_space=v["board"][space_of_deal] if space_of_deal is not None else None,
        requirement_html=display.requirement_html,
        missing_text=display.missing_text,
        chips=display.chips,
        investor_names=display.INVESTOR_NAMES,  # the board's legend: letters have no hover
        pending_text=display.pending_text,
        named_sides=timeline.named_sides(terms or []),
        terms_named_by=timeline.terms_named_by,
        wait_reasons=timeline.WAIT_REASONS,
        notices=[],
        error=None,
        asked=decisions.asked_of(v, seat, players),
        reoffers=decisions.reoffers(v, seat, [f for _k, _t, group in forms for f in group])
        if seat is not None
        else [],
        confirming=None,
    )
    return ctx


@bp.get("/g/<gid>")
def game_page(gid: str) -> str:
    """The game page: board, seats, your hand and money, the negotiation, deadlines, who the
    game waits for, and one form per legal command. Marks the game seen for the seat, except
    on ``HEAD`` and on the landing from an emailed link (a mail scanner's prefetch follows the
    redirect: it must not stop the seat's news by mail)."""
    waiting = organiser_pages.rematch_waiting(gid)  # a rematch before it starts: who is in
    if waiting is not None:
        return waiting
    game, seat, admin = viewer(gid)
    landing = session.pop("landing", None) == gid
    looked = seat is not None and not landing and request.method != "HEAD"
    if looked and presence.note_presence(gid, seat, now_utc()):  # A11: back from the proxy
        game = get_game(gid)
    ctx = _live_context(game, seat, admin)
    ctx["notices"] = get_flashed_messages()
    if looked:
        mark_seen(gid, seat, game.last_seq)
    return render_template("game.html", **ctx)


@bp.get("/g/<gid>/fragment")
def fragment(gid: str) -> str:
    """The live part of the game page alone (htmx polls it every 15 s)."""
    game, seat, admin = viewer(gid)
    ctx = _live_context(game, seat, admin)
    if seat is not None:
        mark_seen(gid, seat, game.last_seq)
    return render_template("partials/live.html", **ctx)


# -- acting ----------------------------------------------------------------------------------


def parse_price(amount: str, kind: str) -> dict[str, int]:
    """A price from the form: a whole number from 0 to ``MAX_PRICE`` of ``cash`` (M) or
    ``shares``. Raises ``ServiceError`` 400 with a clear message otherwise."""
    text = (amount or "").strip()
    number = inputs.whole_number(text)
    if number is None or number > MAX_PRICE:
        raise ServiceError(
            400,
            "bad_price",
            _(
                "A price is a whole number from 0 to %(max)d (you sent “%(sent)s”).",
                max=MAX_PRICE,
                sent=text[:20],
            ),
            "R4.2",
        )
    if kind not in ("cash", "shares"):
        raise ServiceError(400, "bad_price", _("A price is in M (cash) or in shares."), "R4.2")
    return {kind: number}


def command_from_form(form: Any) -> dict[str, Any]:
    """The command a game-page form posts: its hidden ``cmd`` JSON plus the inputs of its
    ``needs`` (price, text, cards). Raises ``ServiceError`` 400 for a malformed form."""
    raw = form.get("cmd", "")
    try:
        cmd = inputs.loads(raw, "cmd") if len(raw) <= 2000 else None
    except (ValueError, RecursionError):
        cmd = None
    if not isinstance(cmd, dict) or not isinstance(cmd.get("do"), str):
        raise ServiceError(
            400, "bad_form", _("This form's command could not be read; reload the page.")
        )
    cmd = {k: v for k, v in cmd.items() if k not in ("needs", "count", "by", "at")}
    if "price" in form or "price_kind" in form:
        cmd["price"] = parse_price(form.get("price", ""), form.get("price_kind", "cash"))
    if "text" in form:
        text = form.get("text", "")
        if not text.strip() or len(text) > MAX_CHAT:
            raise ServiceError(
                400, "bad_text", _("Write 1 to %(max)d characters.", max=MAX_CHAT), "R4.8"
            )
        cmd["text"] = text
    if cmd["do"] == "discard":
        cards = form.getlist("cards")
        count = form.get("count", "")
        if count and inputs.whole_number(count) is None:
            raise ServiceError(
                400, "bad_form", _("This form's command could not be read; reload the page.")
            )
        if not cards or len(cards) > 30:
            raise ServiceError(400, "bad_cards", _("Choose the cards to discard."), "R6.6")
        if count and len(cards) != int(count):
            raise ServiceError(
                400,
                "bad_cards",
                _(
                    "Choose exactly %(num)d cards to discard (you chose %(got)d).",
                    num=int(count),
                    got=len(cards),
                ),
                "R6.6",
            )
        cmd["cards"] = cards
    return cmd


@bp.post("/g/<gid>/act")
def act(gid: str) -> Any:
    """Post one command (from a game-page form) through ``submit``; then back to the game page
    (303, Post/Redirect/Get) or, for htmx, the refreshed live fragment. Refusals are 4xx pages
    (or, for htmx, the fragment with the message) and change nothing."""
    get_game(gid)  # 404 for an unknown game
    seat = current_seat(gid)
    if seat is None:
        raise ServiceError(
            403, "not_a_seat", _("Only a player of this game can act: open your invitation.")
        )
    try:
        command = command_from_form(request.form)
        if command["do"] in CONFIRM and request.form.get("confirmed") != "yes":
            asking = _confirmation(gid, seat, command)
            if asking is not None:
                return asking
        with command_spending(gid, seat, command) as charge:
            result = submit(gid, seat, command, request.form.get("key", ""))
            charge.free = result.duplicate  # a double tap is one move
    except ServiceError as exc:
        if htmx() and exc.status in (400, 409):
            ctx = _live_context(get_game(gid), seat, is_admin(gid))
            ctx["error"] = exc
            return render_template("partials/live.html", **ctx), exc.status
        raise
    players = [s.name for s in seats_of(gid)]
    if result.duplicate:
        notices = [_("That was already done (the same form was sent twice).")]
    else:
        tz = seat_row(gid, seat).timezone or "UTC"
        notices = [messages.line(event, players, seat, tz) for _seq, event in result.events]
    if htmx():
        ctx = _live_context(get_game(gid), seat, is_admin(gid))
        ctx["notices"] = notices
        return render_template("partials/live.html", **ctx)
    for line in notices[:8]:  # the session cookie holds them: keep it small (a chat may be long)
        flash(line if len(line) <= 200 else line[:199] + "…")
    return redirect(url_for("pages.game_page", gid=gid), 303)


def _confirmation(gid: str, seat: int, command: dict[str, Any]) -> str | None:
    """The step before a move that cannot be taken back: the game page (or, for htmx, its live
    part) asking "are you sure?" with what the move sets going, and the same command with the
    same key to confirm. ``None`` when the command is not one of the seat's legal moves now:
    it goes on to ``submit``, which refuses it with the usual message."""
    ctx = _live_context(get_game(gid), seat, is_admin(gid))
    found = [f for _key, _title, group in ctx["forms"] for f in group if f.cmd == command]
    if not found:
        return None
    ctx["confirming"] = {
        "cmd": command,
        "key": request.form.get("key", ""),
        "label": found[0].label,
        "consequence": decisions.consequence(command),
    }
    return render_template("partials/live.html" if htmx() else "confirm_move.html", **ctx)
