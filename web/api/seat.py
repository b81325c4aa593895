"""The JSON API for bots and other clients (documented in ``docs/api.md``).

Every game endpoint is authenticated by a seat's secret token sent as
``Authorization: Bearer <token>`` (no cookies, no session), so the blueprint is exempt from
CSRF: a browser never attaches that header on its own. The organiser's admin token reads a game
as a spectator (``seat: null``) but cannot play. Tokens of one game never work in another.

Reading never changes anything (``GET``); the one write, posting a command, goes through
``imtheboss.web.games.submit.submit`` like the pages do (A7: idempotency keys, ``window_closed``,
``terms_changed``). Everything a seat receives passes through ``view``/``redact_event`` (A8).
Errors are ``{"error": {"code", "message", "rule"}}`` with a 4xx status (``web._register_errors``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue
from imtheboss.engine.events import Event
from imtheboss.engine.orders import DEFAULT_PACE
from imtheboss.engine.state import format_time
from imtheboss.engine.views import awaiting, legal_commands, redact_event, view
from imtheboss.web.app.inputs import json_body, whole_number
from imtheboss.web.app.limits import client_address, command_spending, spending
from imtheboss.web.games.basics import ServiceError, now_utc
from imtheboss.web.games.create import SEAT_LANGUAGES, SERVER_PROXY_HOURS, create_game
from imtheboss.web.games.load import get_game, load_state, require_confirmed
from imtheboss.web.games.seats import is_admin_token, seat_by_token
from imtheboss.web.games.submit import MAX_KEY, submit
from imtheboss.web.models import EventRecord, Game, db
from imtheboss.web.store import negotiations
from imtheboss.web.store.records import game_export
from sqlalchemy import select

bp = Blueprint("api", __name__, url_prefix="/api")

MAX_EVENTS = 1000  # events per page of GET .../events
DEFAULT_EVENTS = 200


@bp.after_request
def _headers(response: Response) -> Response:
    if response.status_code == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="imtheboss"'
    response.headers["Cache-Control"] = "no-store"  # answers carry a seat's secrets
    return response


# -- helpers ---------------------------------------------------------------------------------


def _iso(at: datetime) -> str:
    """ISO 8601 UTC text; SQLite hands back naive datetimes that were stored as UTC."""
    return format_time(at if at.tzinfo is not None else at.replace(tzinfo=UTC))


def bad_input(code: str, message: str) -> ServiceError:
    """The 400 refusal ``code`` with its ``message`` (a ``ServiceError`` to raise)."""
    return ServiceError(400, code, message)


def bearer_token(whose: str = "your seat's secret token") -> str:
    """The token of ``Authorization: Bearer <token>``. Raises ``ServiceError`` 401, its message
    naming ``whose`` token to send."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ServiceError(
            401,
            "unauthorized",
            f"send {whose} as the header 'Authorization: Bearer <token>'",
        )
    return token


def _authenticate(game_id: str, *, allow_admin: bool = False) -> tuple[Game, int | None]:
    """The game and the seat the bearer token signs in (``None``: the organiser, when
    ``allow_admin``). Raises ``ServiceError`` 404 (no such game), 401 (no token) or 403 (a
    token that is not one of this game's), 409 (the organiser reads a game not confirmed yet)."""
    game = get_game(game_id)
    token = bearer_token()
    try:
        return game, seat_by_token(game_id, token).seat_index
    except ServiceError as exc:
        if exc.status == 403 and allow_admin and is_admin_token(game_id, token):
            require_confirmed(game)  # nothing to read before the organiser confirms
            return game, None
        raise


def request_body() -> dict[str, Any]:
    """The request's JSON object, as ``inputs.json_body`` parsed and checked it. Raises
    ``ServiceError`` 400 for anything else (no JSON content type, unparsable text, NaN/Infinity,
    nesting too deep, characters or numbers no field may hold, not an object)."""
    if not request.is_json:  # application/json or application/*+json
        raise bad_input("bad_json", "send a JSON object with 'Content-Type: application/json'")
    body = json_body()
    if not isinstance(body, dict):
        raise bad_input("bad_json", "the request body must be a JSON object")
    return body


def only_fields(body: dict[str, Any], allowed: set[str]) -> None:
    """Raises ``ServiceError`` 400 (``bad_request``) when ``body`` has a field outside
    ``allowed``."""
    extra = sorted(set(body) - allowed)
    if extra:
        raise bad_input("bad_request", f"unknown field(s): {', '.join(extra)}")


def _int_arg(name: str, default: int, low: int, high: int) -> int:
    raw = request.args.get(name)
    if raw is None:
        return default
    number = whole_number(raw)
    if number is None or not low <= number <= high:
        raise bad_input("bad_request", f"{name} must be a whole number from {low} to {high}")
    return number


def event_json(event: Event, seat: int | None, seq: int, at: datetime) -> dict[str, Any]:
    """Event ``seq`` as ``seat`` may see it (A8; ``None``: the organiser's view), with its time
    ``at`` (aware UTC) as ISO 8601: ``{"seq", "at", "type", ...}``."""
    return {"seq": seq, "at": _iso(at), **redact_event(event, seat)}


def event_times(game_id: str, seqs: list[int]) -> dict[int, datetime]:
    """When each stored event ``seq`` of the game was written (its ``created_at``)."""
    query = select(EventRecord.seq, EventRecord.created_at).where(
        EventRecord.game_id == game_id, EventRecord.seq.in_(seqs)
    )
    return dict(db.session.execute(query).all())


def _game_json(game: Game) -> dict[str, Any]:
    return {
        "id": game.id,
        "title": game.title,
        "status": game.status,
        "last_seq": game.last_seq,
        "created_at": _iso(game.created_at),
    }


# -- endpoints -------------------------------------------------------------------------------


def _players(players: list[Any]) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """``[(name, email)]`` (``""`` for a bot seat, ``_bot_seats``), each player's ``language``
    (``""``: none given, the address's default stands) and each player's ``timezone``
    (stripped; ``""``: none given) of the request's ``players``. Raises the 400
    ``bad_settings`` error for a malformed player or a language the server does not have
    (``create.SEAT_LANGUAGES``); an unknown zone is ``create_game``'s 400."""
    pairs: list[tuple[str, str]] = []
    languages: list[str] = []
    for player in players:
        bot = isinstance(player, dict) and player.get("bot", False)
        if (
            not isinstance(player, dict)
            or set(player) - {"name", "email", "language", "timezone", "bot"}
            or not isinstance(player.get("name"), str)
            or not isinstance(player.get("email", "" if bot is True else None), str)
            or not isinstance(player.get("timezone", ""), str)
            or not isinstance(bot, bool)
        ):
            raise bad_input(
                "bad_settings",
                'each player is {"name": text, "email": text, "language": text, "timezone":'
                ' text} or a bot seat {"name": text, "bot": true}',
            )
        language = player.get("language", "")
        if not isinstance(language, str) or language not in SEAT_LANGUAGES | {""}:
            raise bad_input(
                "bad_settings",
                f"language is one of {', '.join(sorted(SEAT_LANGUAGES))} (or left out)",
            )
        pairs.append((player["name"], "" if bot else player["email"]))
        languages.append(language)
    return pairs, languages, [player.get("timezone", "").strip() for player in players]


@bp.post("/games")
def create() -> ResponseReturnValue:
    """Create a game; no authentication. Body: ``{"title", "players": [{"name", "email",
    "language", "timezone"}], "options", "board", "creator_email", "creator_timezone",
    "orders"}`` (a bot seat is ``{"name", "bot": true}``, A13: no address; a game of bots
    only is refused, 400 ``bots_only``; ``creator_email`` required; ``language``: the
    player's invitation and mail,
    a code of ``engine.languages``, else the address's default; each ``timezone`` optional,
    an IANA name: the seat's zone unless the address chose one, ``creator_timezone`` the
    organiser's mail's; ``orders``: the table's pace, every seat's first standing orders,
    ``"brisk"`` (the default, ``orders.DEFAULT_PACE``), ``"standard"`` or ``"relaxed"``
    (``orders.PACES``), A10; the
    away proxy, ``options.proxy_hours``, defaults to ``SERVER_PROXY_HOURS``, A11). Answers 201
    ``{"game_id", "admin_token", "status": "unconfirmed"}``: the game starts, and each seat's
    secret link goes to that seat's email only (the invitation), once the organiser confirms
    their address by the link mailed to it (``create_game(confirmed=False)``). Abuse limits:
    ``imtheboss.web.app.limits``."""
    body = request_body()
    only_fields(
        body,
        {"title", "players", "options", "board", "creator_email", "orders", "creator_timezone"},
    )
    title = body.get("title", "")
    players = body.get("players")
    options = body.get("options", {})
    board = body.get("board", "default")
    creator_email = body.get("creator_email", "")
    if not isinstance(title, str) or not isinstance(creator_email, str):
        raise bad_input("bad_settings", "title and creator_email are strings")
    if not isinstance(players, list) or not 2 <= len(players) <= 6:
        raise bad_input("bad_settings", 'players is a list of 2 to 6 {"name", "email"} objects')
    pairs, languages, zones = _players(players)
    bots = [i for i, player in enumerate(players) if player.get("bot") is True]  # A13
    creator_zone = body.get("creator_timezone", "")
    if not isinstance(creator_zone, str):
        raise bad_input("bad_settings", "creator_timezone is a string")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise bad_input("bad_settings", "options is an object")
    if not (board == "default" or isinstance(board, dict | list)):
        raise bad_input("bad_settings", 'board is "default" or a board file\'s JSON')
    options = {"proxy_hours": SERVER_PROXY_HOURS, **options}
    with spending("invitations", client_address(), cost=len(pairs) - len(bots)):
        created = create_game(
            title,
            pairs,
            options,
            board,
            creator_email=creator_email,
            confirmed=False,
            starting_orders=body.get("orders", DEFAULT_PACE),
            languages=languages if any(languages) else None,
            zones=zones,
            creator_zone=creator_zone.strip(),
            bots=bots,
        )
    return jsonify(
        {"game_id": created.game_id, "admin_token": created.admin_token, "status": "unconfirmed"}
    ), 201


@bp.get("/games/<game_id>")
def game_view(game_id: str) -> ResponseReturnValue:
    """The seat's view of the game, its legal commands and whom the game waits for (A8)."""
    game, seat = _authenticate(game_id, allow_admin=True)
    state = load_state(game)
    return jsonify(
        {
            "game": _game_json(game),
            "seat": seat,
            "view": view(state, seat),
            "legal": legal_commands(state, seat) if seat is not None else [],
            "awaiting": [{**a, "until": format_time(a["until"])} for a in awaiting(state)],
        }
    )


@bp.get("/games/<game_id>/events")
def events(game_id: str) -> ResponseReturnValue:
    """The events after ``?after=N`` (default 0), at most ``?limit=M`` (default 200, at most
    1000), each redacted for the seat (A8) with its ``seq`` and ``at``."""
    game, seat = _authenticate(game_id, allow_admin=True)
    after = _int_arg("after", 0, 0, 10**9)
    limit = _int_arg("limit", DEFAULT_EVENTS, 1, MAX_EVENTS)
    rows = db.session.execute(
        select(
            EventRecord.seq,
            EventRecord.type,
            EventRecord.body,
            EventRecord.seat,
            EventRecord.created_at,
        )
        .where(EventRecord.game_id == game_id, EventRecord.seq > after)
        .order_by(EventRecord.seq)
        .limit(limit + 1)
    ).all()
    more = len(rows) > limit
    rows = rows[:limit]
    since = negotiations.handed_over(game_id, seat)  # A13: the old player's are not the new's
    out = [
        event_json(
            Event.from_json({**body, "type": type_, "by": by}),
            seat if seq > since else None,
            seq,
            at,
        )
        for seq, type_, body, by, at in rows
    ]
    last_seq = max([game.last_seq] + [e["seq"] for e in out])
    return jsonify({"events": out, "last_seq": last_seq, "more": more})


@bp.get("/games/<game_id>/export")
def export(game_id: str) -> ResponseReturnValue:
    """The finished game's record (docs/export.md): the whole log with nothing redacted, the
    seed and the result; ``imtheboss verify`` checks it. 409 ``not_over`` before the end (it
    shows every hand and the seed)."""
    game, _seat = _authenticate(game_id, allow_admin=True)
    return jsonify(game_export(game))


@bp.post("/games/<game_id>/join")
def join(game_id: str) -> ResponseReturnValue:
    """Take the seat the token belongs to: records when it first joined. Answers the seat."""
    get_game(game_id)
    seat = seat_by_token(game_id, bearer_token())
    if seat.joined_at is None:
        seat.joined_at = now_utc()
        db.session.commit()
    return jsonify({"seat": seat.seat_index, "name": seat.name, "joined_at": _iso(seat.joined_at)})


@bp.post("/games/<game_id>/commands")
def command(game_id: str) -> ResponseReturnValue:
    """Submit one command: ``{"command": {"do": ..., **args}, "idempotency_key": "..."}`` (or
    the key in an ``Idempotency-Key`` header). 201 with the new events; 200 with
    ``duplicate: true`` and the first result for a repeated key (A7); 409 for a rule refusal
    (the engine's code and rule), 400 for a malformed request. A refusal changes nothing."""
    _, seat = _authenticate(game_id, allow_admin=True)
    if seat is None:
        raise ServiceError(403, "not_a_seat", "the organiser's link cannot play; use a seat link")
    body = request_body()
    only_fields(body, {"command", "idempotency_key"})
    cmd = body.get("command")
    if not isinstance(cmd, dict) or not isinstance(cmd.get("do"), str):
        raise bad_input("bad_command", 'command is an object {"do": NAME, ...arguments}')
    in_body, in_header = body.get("idempotency_key"), request.headers.get("Idempotency-Key")
    if in_body is not None and in_header is not None and in_body != in_header:
        raise bad_input("bad_key", "the Idempotency-Key header and idempotency_key differ")
    key = in_body if in_body is not None else in_header
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY:
        raise bad_input(
            "bad_key",
            f"every command needs an idempotency_key: a string of 1 to {MAX_KEY} characters",
        )
    now = now_utc()
    try:
        with command_spending(game_id, seat, cmd) as charge:
            result = submit(game_id, seat, cmd, key, now)
            charge.free = result.duplicate  # a retry of the same decision is not another
    except ServiceError as exc:
        if exc.code == "bad_command":  # malformed rather than against the rules
            raise ServiceError(400, exc.code, exc.message, exc.rule) from None
        raise
    if result.duplicate:
        times = event_times(game_id, [seq for seq, _ in result.events])
        last_seq = get_game(game_id).last_seq
    else:
        times = {seq: now for seq, _ in result.events}
        last_seq = result.events[-1][0] if result.events else get_game(game_id).last_seq
    out = [event_json(ev, seat, seq, times[seq]) for seq, ev in result.events]
    return (
        jsonify({"events": out, "duplicate": result.duplicate, "last_seq": last_seq}),
        200 if result.duplicate else 201,
    )
