"""The web pages: home, new game, seat and admin sign-in, the game page
and its live fragment, the action endpoint, negotiations, history, inbox, settings, admin.

Every page shows a seat only what ``imtheboss.engine.views.view`` and ``redact_event`` give that
seat (A8). A ``GET`` never changes game state (sign-in links only set the session cookie); every
action is a ``POST`` with a CSRF token that goes through ``imtheboss.web.service.submit``. Tokens
are never logged nor shown again after sign-in; no page shows a seat's link, not even to the
organiser (a resent invitation goes to the seat's address only). Abuse limits:
``imtheboss.web.limits``.
"""

from __future__ import annotations

import math
import re
import uuid
from typing import Any
from urllib.parse import urlencode
from zoneinfo import available_timezones

from flask import (
    Blueprint,
    Flask,
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.engine.game import MAX_CHAT, MAX_PRICE
from imtheboss.engine.options import Options
from imtheboss.engine.setup import tile_stack
from imtheboss.engine.state import GameState
from imtheboss.engine.views import awaiting, legal_commands, view
from imtheboss.web import LANGUAGES, decisions, display, inputs, money_chart, negotiations, story
from imtheboss.web.auth import current_seat, is_admin, remember_admin, remember_seat
from imtheboss.web.forms import VARIANT_HELP, NewGameForm, SettingsForm
from imtheboss.web.limits import TooMany, client_address, command_spending, spending
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.service import (
    SERVER_PROXY_HOURS,
    ServiceError,
    create_game,
    get_game,
    is_admin_token,
    load_state,
    mark_seen,
    now_utc,
    resend_invitation,
    seat_by_token,
    seats_of,
    set_seat_email,
    set_status,
    submit,
)
from imtheboss.web.undelivered import undelivered_mail
from sqlalchemy import func, select, update
from werkzeug.wrappers import Response

bp = Blueprint("pages", __name__)

HISTORY_PAGE = 100
INBOX_LIMIT = 200
RECENT = 8
CHAT = 20  # the running deal's last messages on the game page


def register(app: Flask) -> None:
    """Add the pages blueprint to ``app`` (called by ``web.create_app``)."""
    app.register_blueprint(bp)


# -- every page ------------------------------------------------------------------------------


@bp.app_context_processor
def _page_globals() -> dict[str, Any]:
    """The language switch and helpers every template (error pages too) can use."""
    return {
        "languages": LANGUAGES,
        "current_lang": str(get_locale() or "en"),
        "lang_url": _lang_url,
        "local_time": display.page_time,  # with the zone: pages are read in many zones
        "card_text": display.card_text,
        "price_text": display.price_text,
    }


def _lang_url(code: str) -> str:
    """This page in another language (``?lang=``; ``select_locale`` keeps it in the session).
    After a POST the link leads to the game's page (or home), never back to the action URL."""
    if request.method == "GET":
        path = request.path
        args = {k: v for k, v in request.args.items() if k != "lang"}
    else:
        gid = (request.view_args or {}).get("gid")
        path = url_for("pages.game_page", gid=gid) if gid else url_for("pages.home")
        args = {}
    args["lang"] = code
    return f"{path}?{urlencode(args)}"


def _htmx() -> bool:
    return request.headers.get("HX-Request") == "true"


# -- home and a new game ---------------------------------------------------------------------


@bp.get("/")
def home() -> str:
    """What this is, and a link to create a game."""
    return render_template("home.html")


@bp.route("/new", methods=["GET", "POST"])
def new_game() -> Any:
    """Create a game: players, windows (A1), variants, R3.5, R7.1 and the board (R1.4). It
    waits for the organiser to confirm their address (``create_game(confirmed=False)``): the
    page says where the confirm link went; the admin link goes by mail only."""
    form = NewGameForm()
    errors: list[str] = []
    if request.method == "POST":
        if form.validate_on_submit():
            try:
                players = form.player_rows()
                board = _board_from(form)
                with spending("invitations", client_address(), cost=len(players)):
                    created = create_game(
                        form.title.data or "",
                        players,
                        {
                            "variants": list(form.variants.data or []),
                            "must_roll_after_close": bool(form.must_roll_after_close.data),
                            "open_money": bool(form.open_money.data),
                            "windows": form.window_seconds(),
                            "proxy_hours": SERVER_PROXY_HOURS
                            if form.proxy_hours.data is None
                            else form.proxy_hours.data,
                            "quiet_hours": bool(form.quiet_hours.data),
                        },
                        board=board,
                        creator_email=form.creator_email.data or "",
                        confirmed=False,
                        starting_orders="recommended" if form.recommended_orders.data else "none",
                    )
            except ValueError as exc:
                errors.append(str(exc))
            except TooMany:
                raise
            except ServiceError as exc:
                errors.append(exc.message)
            else:
                remember_admin(created.game_id)
                # after a POST, a GET: reloading the page cannot make a second game
                return redirect(url_for("pages.created_page", gid=created.game_id), 303)
        else:
            errors.append(_("Some fields need another look (see below)."))
        return render_template(
            "new_game.html", form=form, errors=errors, variant_help=VARIANT_HELP
        ), 400
    return render_template("new_game.html", form=form, errors=errors, variant_help=VARIANT_HELP)


@bp.get("/g/<gid>/created")
def created_page(gid: str) -> str:
    """What the organiser reads after creating a game: the confirm mail went to their address,
    and nobody is invited before they confirm. Only the organiser's browser sees it (403)."""
    game = _admin_only(gid)
    players = [(seat.name, seat.email) for seat in seats_of(gid)]
    return render_template(
        "created.html",
        gid=gid,
        title=game.title or "I'm the Boss!",
        organiser=game.creator_email,
        players=players,
    )


def _board_from(form: NewGameForm) -> Any:
    """``"default"`` or the uploaded board file's JSON (``load_board`` validates it inside
    ``create_game``). Raises ``ValueError`` with a message."""
    if form.board_choice.data != "upload":
        return "default"
    upload = form.board_file.data
    if upload is None or not getattr(upload, "filename", ""):
        raise ValueError(_("choose a board file to upload, or pick the default board"))
    raw = upload.read(1 << 20)
    try:
        return inputs.loads(raw.decode("utf-8"), "board_file")
    except RecursionError:
        raise ValueError(_("the board file is nested too deeply")) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(_("the board file is not valid JSON: %(error)s", error=str(exc))) from None


@bp.before_app_request
def _remember_language() -> None:
    """A seat that picks a language in the header (``?lang=``) reads its mail in it too: the
    choice is the seat's language from then on (its settings page shows it)."""
    lang = request.args.get("lang")
    gid = (request.view_args or {}).get("gid")
    if lang not in LANGUAGES or not isinstance(gid, str) or request.method != "GET":
        return
    row = _seat_row(gid, current_seat(gid))
    if row is not None and row.locale != lang:
        row.locale = lang
        db.session.commit()


# -- signing in ------------------------------------------------------------------------------


@bp.get("/g/<gid>/s/<token>")
def seat_link(gid: str, token: str) -> Response:
    """A seat's secret link: signs this browser in as that seat (the session cookie only; no
    game state changes on a GET) and goes on to the game page, so the token leaves the URL."""
    seat = seat_by_token(gid, token)
    remember_seat(gid, seat)
    if seat.locale in LANGUAGES and "lang" not in session:
        session["lang"] = seat.locale
    return redirect(url_for("pages.game_page", gid=gid), 303)


@bp.get("/g/<gid>/admin/<token>")
def admin_link(gid: str, token: str) -> Response:
    """The organiser's secret link: signs this browser in as the game's admin."""
    if not is_admin_token(gid, token):
        raise ServiceError(403, "bad_token", _("this link is not valid for this game"))
    remember_admin(gid)
    return redirect(url_for("pages.admin_page", gid=gid), 303)


# -- who is looking --------------------------------------------------------------------------


def _viewer(gid: str) -> tuple[Game, int | None, bool]:
    """The game, the session's seat (or ``None``) and whether it is the organiser; 404 for an
    unknown game, 403 for a browser that is neither."""
    game = get_game(gid)
    seat = current_seat(gid)
    admin = is_admin(gid)
    if seat is None and not admin:
        raise ServiceError(
            403, "not_signed_in", _("Open the link from your invitation to see this game.")
        )
    return game, seat, admin


def _seat_only(gid: str) -> tuple[Game, int, bool]:
    game, seat, admin = _viewer(gid)
    if seat is None:
        raise ServiceError(
            403, "not_a_seat", _("Only a player of this game can do this: open your invitation.")
        )
    return game, seat, admin


def _seat_row(gid: str, seat: int | None) -> Seat | None:
    if seat is None:
        return None
    return db.session.execute(
        select(Seat).where(Seat.game_id == gid, Seat.seat_index == seat)
    ).scalar_one_or_none()


def _unread(gid: str, seat: int | None) -> int:
    if seat is None:
        return 0
    return db.session.execute(
        select(func.count())
        .select_from(Notification)
        .where(
            Notification.game_id == gid,
            Notification.seat_index == seat,
            Notification.read_at.is_(None),
        )
    ).scalar_one()


def _frame(game: Game, seat: int | None, admin: bool, state: GameState | None = None) -> dict:
    """What every game page's frame needs: the game, who is looking, their zone, the nav."""
    row = _seat_row(game.id, seat)
    players = list(state.players) if state is not None else [s.name for s in seats_of(game.id)]
    return {
        "game": game,
        "gid": game.id,
        "seat": seat,
        "admin": admin,
        "players": players,
        "me": players[seat] if seat is not None else None,
        "tz": (row.timezone if row is not None else "UTC") or "UTC",
        "now": now_utc(),
        "unread": _unread(game.id, seat),
        "time_left": display.time_left,
        "is_past": display.is_past,
    }


# -- the game page ---------------------------------------------------------------------------


def _live_context(game: Game, seat: int | None, admin: bool) -> dict[str, Any]:
    """Everything the live part of the game page shows ``seat`` (A8: through ``view``)."""
    state = load_state(game)
    chat = negotiations.running_chat(game.id, CHAT) if state.deal is not None else []
    recent = negotiations.records(game.id, newest=RECENT)
    ctx = state_context(game, seat, admin, state, chat, recent, acting=game.status == "active")
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
) -> dict[str, Any]:
    """What ``partials/live.html`` shows ``seat`` of ``state`` (A8: through ``view`` and
    ``redact_event``): the running deal's ``chat`` and the ``recent`` events as
    ``(seq, at, event)``; the forms of the seat's legal commands when ``acting`` (the live game
    page; the replay shows none)."""
    ctx = _frame(game, seat, admin, state)
    v = view(state, seat)
    players = ctx["players"]
    forms: list = []
    if seat is not None and acting:
        forms = display.command_forms(legal_commands(state, seat), v, players)
        for _key, _title, group in forms:
            decisions.explain_missing_accepts(group, v, seat)
    chat_rows = [display.event_row(seq, at, ev, players, seat) for seq, at, ev in chat]
    recent_rows = [
        display.event_row(seq, at, ev, players, seat)
        for seq, at, ev in recent
        if display.visible(ev, seat)
    ]
    recent_rows.reverse()
    space_of_deal = v["deal"]["space"] if v["deal"] else None
    ctx.update(
        v=v,
        forms=forms,
        back_form=display.CommandForm(  # A6, A11: "I'm back" (any own command would do)
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
        wait_reasons=display.WAIT_REASONS,
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
    game, seat, admin = _viewer(gid)
    ctx = _live_context(game, seat, admin)
    ctx["notices"] = get_flashed_messages()
    landing = session.pop("landing", None) == gid
    if seat is not None and not landing and request.method != "HEAD":
        mark_seen(gid, seat, game.last_seq)
    return render_template("game.html", **ctx)


@bp.get("/g/<gid>/fragment")
def fragment(gid: str) -> str:
    """The live part of the game page alone (htmx polls it every 15 s)."""
    game, seat, admin = _viewer(gid)
    ctx = _live_context(game, seat, admin)
    if seat is not None:
        mark_seen(gid, seat, game.last_seq)
    return render_template("partials/live.html", **ctx)


# -- acting ----------------------------------------------------------------------------------

_WHOLE = re.compile(r"[0-9]{1,9}")  # ASCII digits: str.isdigit() also takes "²"


def parse_price(amount: str, kind: str) -> dict[str, int]:
    """A price from the form: a whole number from 0 to ``MAX_PRICE`` of ``cash`` (M) or
    ``shares``. Raises ``ServiceError`` 400 with a clear message otherwise."""
    text = (amount or "").strip()
    if not _WHOLE.fullmatch(text) or int(text) > MAX_PRICE:
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
    return {kind: int(text)}


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
        if count and not _WHOLE.fullmatch(count):
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
        if command["do"] in decisions.CONFIRM and request.form.get("confirmed") != "yes":
            asking = _confirmation(gid, seat, command)
            if asking is not None:
                return asking
        with command_spending(gid, seat, command):
            result = submit(gid, seat, command, request.form.get("key", ""))
    except ServiceError as exc:
        if _htmx() and exc.status in (400, 409):
            ctx = _live_context(get_game(gid), seat, is_admin(gid))
            ctx["error"] = exc
            return render_template("partials/live.html", **ctx), exc.status
        raise
    players = [s.name for s in seats_of(gid)]
    if result.duplicate:
        notices = [_("That was already done (the same form was sent twice).")]
    else:
        tz = _seat_row(gid, seat).timezone or "UTC"
        notices = [story.line(event, players, seat, tz) for _seq, event in result.events]
    if _htmx():
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
    return render_template("partials/live.html" if _htmx() else "confirm_move.html", **ctx)


# -- negotiations and history ----------------------------------------------------------------


@bp.get("/g/<gid>/deals")
def deals(gid: str) -> str:
    """Every negotiation of the game, numbered 1..n (each ``deal_opened`` starts one): one row
    of the ranges table each, and of the log only the events that ended them."""
    game, seat, admin = _viewer(gid)
    state = load_state(game)
    negs = negotiations.listed(game.id, list(state.players), seat)
    tiles = tile_stack(Options.from_json(game.settings.get("options")))
    ctx = _frame(game, seat, admin, state)
    ctx.update(
        negotiations=negs,
        board=state.board.to_json(),
        tiles=tiles,
        fail_reasons=display.FAIL_REASONS,
        requirement_html=display.requirement_html,
    )
    return render_template("deals.html", **ctx)


@bp.get("/g/<gid>/deals/<int:number>")
def deal(gid: str, number: int) -> str:
    """One negotiation's timeline: opened, cards, offers and counters, agreements, windows and
    who answered, boss changes and lapses, and how it ended (payouts per seat). Reads only the
    events of its range."""
    game, seat, admin = _viewer(gid)
    state = load_state(game)
    found = negotiations.one(game, number, list(state.players), seat)
    if found is None:
        raise ServiceError(404, "no_deal", _("There is no negotiation number %(n)d.", n=number))
    neg, count = found
    board = state.board.to_json()
    space = board[neg.space]
    tiles = tile_stack(Options.from_json(game.settings.get("options")))
    ctx = _frame(game, seat, admin, state)
    ctx.update(
        neg=neg,
        count=count,
        space=space,
        proceeds=neg.proceeds(space["shares"], tiles),
        fail_reasons=display.FAIL_REASONS,
        answers=display.ANSWERS,
        window_results=display.WINDOW_RESULTS,
        requirement_html=display.requirement_html,
        terms_reasons={
            "rejected": _("rejected"),
            "withdrawn": _("withdrawn"),
            "lapsed": _("lapsed"),
        },
    )
    return render_template("deal.html", **ctx)


@bp.get("/g/<gid>/history")
def history(gid: str) -> str:
    """The whole game's history, newest first, 100 events a page."""
    game, seat, admin = _viewer(gid)
    state = load_state(game)
    pages = max(1, math.ceil(game.last_seq / HISTORY_PAGE))
    try:
        page = min(max(1, int(request.args.get("page", "1"))), pages)
    except ValueError:
        page = 1
    upto = game.last_seq - (page - 1) * HISTORY_PAGE
    after = max(0, upto - HISTORY_PAGE)
    players = list(state.players)
    rows = [
        display.event_row(seq, at, ev, players, seat)
        for seq, at, ev in negotiations.records(gid, after=after, upto=upto)
        if display.visible(ev, seat)
    ]
    rows.reverse()
    ctx = _frame(game, seat, admin, state)
    ctx.update(rows=rows, page=page, pages=pages)
    return render_template("history.html", **ctx)


# -- inbox and settings ----------------------------------------------------------------------

NOTIFICATION_KINDS = {
    "invited": "✉",
    "your_turn": "▶",
    "place_marker": "$",
    "discard": "✂",
    "stop": "⚑",
    "last_call": "🔔",
    "offer": "✎",
    "deal_opened": "🤝",
    "agreement": "✔",
    "boss_changed": "👑",
    "deal_closed": "💰",
    "deal_failed": "✗",
    "game_over": "🏁",
}


@bp.get("/g/<gid>/inbox")
def inbox(gid: str) -> str:
    """The seat's own notifications, newest first, each a link to what it names; the rows
    unread until now are highlighted, and showing them marks them read (not on ``HEAD``)."""
    game, seat, admin = _seat_only(gid)
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
    ctx = _frame(game, seat, admin, state)
    links = _inbox_links(game, state, seat, rows)
    ctx.update(rows=rows, links=links, icons=NOTIFICATION_KINDS, row_text=story.row_text)
    page = render_template("inbox.html", **ctx)
    if rows and request.method != "HEAD":
        _mark_read(gid, seat, rows[0].id)
    return page


DEAL_NOTES = frozenset({"deal_opened", "offer", "agreement", "boss_changed"})
DEAL_NOTES |= {"deal_closed", "deal_failed"}


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
        elif row.kind in DEAL_NOTES and number is not None:
            out.append(url_for("pages.deal", gid=game.id, number=number, _anchor=f"ev-{row.seq}"))
        elif row.seq and row.kind not in ("invited", "game_over"):
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


@bp.route("/g/<gid>/settings", methods=["GET", "POST"])
def settings(gid: str) -> Any:
    """The seat's settings: email preference, time zone, language, and away (A6: an ``away``
    command through ``submit``, so windows stop waiting for the seat)."""
    game, seat, admin = _seat_only(gid)
    row = _seat_row(gid, seat)
    state = load_state(game)
    away_now = state.away[seat]
    form = SettingsForm(
        data=None
        if request.method == "POST"
        else {
            "notify": row.notify,
            "timezone": row.timezone or "UTC",
            "language": row.locale,
            "away": away_now,
        }
    )
    if request.method == "POST":
        if form.validate_on_submit():
            if bool(form.away.data) != away_now and state.phase != "game_over":
                key = request.form.get("key") or uuid.uuid4().hex
                submit(gid, seat, {"do": "away", "away": bool(form.away.data)}, key[:100])
            row.notify = form.notify.data
            row.timezone = form.timezone.data.strip()
            row.locale = form.language.data or ""
            db.session.commit()
            if row.locale:
                session["lang"] = row.locale
            else:
                session.pop("lang", None)
            flash(_("Settings saved."))
            return redirect(url_for("pages.settings", gid=gid), 303)
        ctx = _frame(game, seat, admin)
        ctx.update(form=form, zones=_zones(), notices=[], **_settings_extras(state))
        return render_template("settings.html", **ctx), 400
    ctx = _frame(game, seat, admin)
    ctx.update(form=form, zones=_zones(), notices=get_flashed_messages(), **_settings_extras(state))
    return render_template("settings.html", **ctx)


@bp.post("/g/<gid>/zone")
def zone(gid: str) -> Response:
    """Show the seat's times in the zone its browser is in (the game page offers it when the
    browser's zone is not the seat's). Raises ``ServiceError`` 400 for a zone this server does
    not know; nothing is changed then."""
    _game, seat, _admin = _seat_only(gid)
    name = (request.form.get("timezone") or "").strip()
    if not display.valid_timezone(name):
        message = _("unknown time zone: use a name like Europe/Berlin or UTC")
        raise ServiceError(400, "bad_zone", message)
    _seat_row(gid, seat).timezone = name
    db.session.commit()
    flash(_("Times are now shown in %(zone)s.", zone=name))
    return redirect(url_for("pages.game_page", gid=gid), 303)


def _settings_extras(state: Any) -> dict[str, Any]:
    return {"key": uuid.uuid4().hex, "game_over": state.phase == "game_over"}


def _zones() -> list[str]:
    return sorted(z for z in available_timezones() if "/" in z and not z.startswith("Etc/"))


# -- admin -----------------------------------------------------------------------------------


def _admin_only(gid: str) -> Game:
    game = get_game(gid)
    if not is_admin(gid):
        raise ServiceError(
            403, "not_admin", _("Only the organiser can do this: open the admin link.")
        )
    return game


@bp.get("/g/<gid>/admin")
def admin_page(gid: str) -> str:
    """The organiser's page: pause or resume, fix a seat's email, resend an invitation, see
    the mail that did not go out."""
    game = _admin_only(gid)
    ctx = _frame(game, current_seat(gid), True)
    ctx.update(seats=seats_of(gid), notices=get_flashed_messages())
    ctx.update(undelivered=undelivered_mail(gid))
    return render_template("admin.html", **ctx)


@bp.post("/g/<gid>/admin/pause")
def admin_pause(gid: str) -> Response:
    """Pause the game: commands are refused (409) until it is resumed."""
    _admin_only(gid)
    set_status(gid, "paused")
    flash(_("The game is paused."))
    return redirect(url_for("pages.admin_page", gid=gid), 303)


@bp.post("/g/<gid>/admin/resume")
def admin_resume(gid: str) -> Response:
    """Resume a paused game."""
    _admin_only(gid)
    set_status(gid, "active")
    flash(_("The game is running again."))
    return redirect(url_for("pages.admin_page", gid=gid), 303)


@bp.post("/g/<gid>/admin/seat/<int:index>/email")
def admin_email(gid: str, index: int) -> Response:
    """Fix a seat's email address; the old address is told (a mail, counted as an
    invitation by the abuse limits)."""
    _admin_only(gid)
    with spending("invitations", client_address()):
        set_seat_email(gid, index, request.form.get("email", ""))
    flash(_("Email address of seat %(n)d saved.", n=index + 1))
    return redirect(url_for("pages.admin_page", gid=gid), 303)


@bp.post("/g/<gid>/admin/seat/<int:index>/resend")
def admin_resend(gid: str, index: int) -> str:
    """Give the seat a new secret link (the old one stops working) and mail it in a new
    invitation to the seat's address; the page says where it went and never shows the link."""
    game = _admin_only(gid)
    viewer = current_seat(gid)  # before the resend: the request may carry the replaced token
    with spending("invitations", client_address()):
        sent_to = resend_invitation(gid, index)
    seat = _seat_row(gid, index)
    ctx = _frame(game, viewer, True)
    ctx.update(sent_to=sent_to, target=seat)
    return render_template("admin_resend.html", **ctx)
