"""Making games: ``create_game`` (settings, seats and addresses checked; a running game, or one
that waits for its organiser's confirmation), ``confirm_game`` (the organiser confirmed: the
game starts and every seat is invited), the starting paces (``STARTING_ORDERS``) and the bot
seats of a new game (``bot_seats_of``, A13).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import current_app, has_request_context
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.engine import languages
from imtheboss.engine.board import Board, BoardError, default_board, load_board
from imtheboss.engine.events import Event
from imtheboss.engine.options import Options, OptionsError
from imtheboss.engine.orders import PACES, Orders, pace_orders
from imtheboss.engine.setup import SetupError, new_game
from imtheboss.engine.state import GameState, replay
from imtheboss.web.games.basics import CONTROL, ServiceError, hash_token, new_token, now_utc
from imtheboss.web.games.commit_hooks import run_after_commit
from imtheboss.web.games.deadlines import sync_deadlines
from imtheboss.web.games.load import get_game
from imtheboss.web.games.names import (
    DEFAULT_TITLE,
    MAX_PROVENANCE,
    MAX_TITLE,
    already_plays,
    check_names,
    normal_email,
    plays_twice,
)
from imtheboss.web.games.seats import seats_of
from imtheboss.web.games.submit import advance_game, play_bots, write_outbox
from imtheboss.web.mail.notify import organiser_confirmation
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.players import people
from imtheboss.web.say.display import valid_timezone
from imtheboss.web.store.negotiations import record as record_negotiations
from imtheboss.web.store.rows import event_rows, insert_rows

ENGINE_VERSION = 1


@dataclass
class CreatedGame:
    """What ``create_game`` returns: the game id and the secrets to mail (never stored);
    ``seat_tokens`` is empty for a game that waits for its organiser's confirmation (the seats'
    links are made when it is confirmed)."""

    game_id: str
    seat_tokens: list[str]
    admin_token: str


def create_game(
    title: str,
    players: list[tuple[str, str]],
    options: dict[str, Any] | None = None,
    board: str | list | dict | Board | None = None,
    creator_email: str = "",
    seed: int | str | None = None,
    *,
    confirmed: bool = True,
    starting_orders: str = "none",
    languages: list[str] | None = None,
    zones: list[str] | None = None,
    creator_zone: str = "",
    bots: list[int] | None = None,
) -> CreatedGame:
    """Create a game for ``players`` (``[(name, email)]`` in seat order) with ``options``
    (``Options.from_json`` form; every window at least ``MIN_WINDOW_SECONDS``, A1) and
    ``board`` (``"default"``, a board file's JSON, or a ``Board``). Addresses (``creator_email``
    too, when given) are stored as ``normal_email`` makes them. Raises ``ServiceError`` 400 for
    bad settings; nothing is written then.

    ``confirmed=False`` (the pages and the API: anyone may create a game) makes a game that
    waits for its organiser: ``creator_email`` is required, the only mail written is the one to
    that address with the confirm link and the admin link, and the game has no event, window
    nor invitation until ``confirm_game``. Trusted callers (tests, benchmarks, scripts) keep
    the default and get a running game whose invitations are written at once.

    ``starting_orders``: the table's pace (``orders.PACES``: ``"brisk"``, the pages' and the
    API's default ``DEFAULT_PACE``, ``"standard"`` or ``"relaxed"``; ``"recommended"`` and
    ``"none"`` are the older names of the last two): every seat starts with its standing orders
    (A10). Each seat starts with its
    address's defaults where it chose them (``imtheboss.web.players.people``); ``languages`` (one
    per player, a code of ``engine.languages``: what the organiser chose on ``/new`` or in the
    API; ``""``: none) sets the language of each seat's invitation and mail over its address's
    default. ``zones`` (one IANA name or ``""`` per player): ``_organiser_zone``;
    ``creator_zone``: ``_organiser_row`` (an unknown zone: ``ServiceError`` 400). ``bots``:
    the bot seats (A13, seat indexes; their email is ignored and stored ``""``): the server's
    bot plays them (``imtheboss.web.games.bots``); they get no invitation, mail nor link (their
    entry of ``seat_tokens`` is ``""``); a game with no person is refused (400 ``bots_only``)."""
    opts, the_board = _settings_of(options, board)
    _check_pace(starting_orders)
    bot_seats = bot_seats_of(bots, len(players))
    names, emails = _checked_players(players, languages, bot_seats)
    _check_zones(zones, len(names), creator_zone)
    creator_email = _checked_creator(creator_email, confirmed)
    title = _checked_title(title)
    now = now_utc()
    chosen_seed = seed
    seed = secrets.token_hex(16) if seed is None else seed  # 128 bits: the hash cannot be searched
    try:
        orders = people.orders_for(emails, _orders(starting_orders, len(names)))
        events = new_game(names, opts, the_board, seed, now, orders=orders, bots=bot_seats)
    except SetupError as exc:
        raise ServiceError(400, "bad_settings", str(exc)) from None
    game_id = secrets.token_urlsafe(9)
    admin_token = new_token()
    seat_tokens = [new_token() for _name in names]
    settings: dict[str, Any] = {"options": opts.to_json(), "board": the_board.name}
    if not confirmed:  # what confirm_game needs to start it (a seed only if the caller chose it)
        start = {"board": the_board.to_dict(), "seed": chosen_seed, "orders": starting_orders}
        settings["start"] = {**start, **({"bots": bot_seats} if bot_seats else {})}
    game = _new_game_row(confirmed, admin_token, id=game_id, title=title, created_at=now)
    game.settings, game.creator_email = settings, creator_email
    _add_seats(game_id, names, emails, seat_tokens, languages, zones)
    base = current_app.config["BASE_URL"].rstrip("/")
    if confirmed:
        links = [f"{base}/g/{game_id}/s/{token}" for token in seat_tokens]
        _append(game, events, replay(events), now, links)
    else:
        admin_link = f"{base}/g/{game_id}/admin/{admin_token}"
        row = _organiser_row(game_id, creator_email, admin_link, len(names), now, creator_zone)
        db.session.add(Notification(**row))
        seat_tokens = []  # never handed out: confirm_game makes the seats' links
    _commit_new(game_id, confirmed)
    seat_tokens = ["" if i in bot_seats else t for i, t in enumerate(seat_tokens)]
    return CreatedGame(game_id, seat_tokens, admin_token)


def _check_pace(starting_orders: Any) -> None:
    """``starting_orders`` is a name of ``STARTING_ORDERS``; else ``ServiceError`` 400."""
    if not isinstance(starting_orders, str) or starting_orders not in STARTING_ORDERS:
        raise ServiceError(400, "bad_settings", _('the pace is "brisk", "standard" or "relaxed"'))


def _new_game_row(confirmed: bool, admin_token: str, **columns: Any) -> Game:
    """The row of a new game (added, no event yet: ``columns`` give its id, title, creation
    time) with its status and its admin link's hash."""
    status = "active" if confirmed else "unconfirmed"
    game = Game(status=status, engine_version=ENGINE_VERSION, last_seq=0, **columns)
    game.admin_token_hash = hash_token(admin_token)
    db.session.add(game)
    return game


def _commit_new(game_id: str, confirmed: bool) -> None:
    """Commit a new game, run the after-commit hooks; a running game (``confirmed``) names
    its seats' nights (A12) and its bot seats act (A13)."""
    db.session.commit()
    run_after_commit(game_id)
    if confirmed:
        people.start_nights(game_id)
        play_bots(game_id)


def bot_seats_of(bots: Any, count: int) -> list[int]:
    """The bot seats of a new game of ``count`` seats (A13), sorted: ``None`` or a list of
    distinct seat indexes. Raises ``ServiceError`` 400 (``bots_only`` when no seat is left to a
    person)."""
    if bots is None:
        return []
    if (
        not isinstance(bots, list)
        or any(isinstance(b, bool) or not isinstance(b, int) or not 0 <= b < count for b in bots)
        or len(set(bots)) != len(bots)
    ):
        raise ServiceError(400, "bad_settings", _("bot seats are distinct seat numbers"))
    if count and len(bots) >= count:
        raise ServiceError(400, "bots_only", bots_only(), "A13")
    return sorted(bots)


def bots_only() -> str:
    """The message refusing a game of bots only (A13)."""
    return _("A game of bots only is refused: at least one seat must be a person's.")


def _checked_players(
    players: list[tuple[str, str]], chosen: list[str] | None, bot_seats: list[int]
) -> tuple[list[str], list[str]]:
    """The seats' names and addresses (``normal_email``; ``""`` for a bot seat), checked, and
    ``chosen`` (each seat's language or ``""``). Raises ``ServiceError`` 400."""
    names = [name.strip() for name, _email in players]
    if chosen is not None and (
        len(chosen) != len(names) or not set(chosen) <= SEAT_LANGUAGES | {""}
    ):
        raise ServiceError(
            400,
            "bad_settings",
            _(
                "each player's language is one of %(names)s",
                names=", ".join(languages.names().values()),
            ),
        )
    if any(not n or len(n) > 40 or CONTROL.search(n) for n in names):
        raise ServiceError(
            400, "bad_settings", _("every player needs a name of 1 to 40 characters")
        )
    check_names(names)
    try:
        emails = ["" if i in bot_seats else normal_email(e) for i, (_n, e) in enumerate(players)]
    except ValueError as exc:
        raise ServiceError(400, "bad_settings", str(exc)) from None
    if plays_twice([e for e in emails if e]):  # one address, one seat (any case)
        raise ServiceError(400, "bad_settings", already_plays())
    return names, emails


def _checked_creator(creator_email: str, confirmed: bool) -> str:
    """The organiser's address (``normal_email``, or ``""``). Raises ``ServiceError`` 400."""
    try:
        creator_email = normal_email(creator_email) if (creator_email or "").strip() else ""
    except ValueError as exc:
        message = _("the organiser's email address: %(problem)s", problem=str(exc))
        raise ServiceError(400, "bad_settings", message) from None
    if not confirmed and not creator_email:
        raise ServiceError(
            400,
            "bad_settings",
            _("the organiser's email address is needed: the game starts once you confirm it"),
        )
    return creator_email


def _checked_title(title: str) -> str:
    """The game's title, one line of at most ``MAX_TITLE`` characters (default the game's
    name). Raises ``ServiceError`` 400."""
    title = CONTROL.sub(" ", title or "").strip()
    if len(title) > MAX_TITLE:
        raise ServiceError(
            400,
            "bad_settings",
            _("the title is at most %(num)d characters: make it shorter", num=MAX_TITLE),
        )
    return title or DEFAULT_TITLE


def _add_seats(
    game_id: str,
    names: list[str],
    emails: list[str],
    tokens: list[str],
    chosen_languages: list[str] | None,
    zones: list[str] | None,
) -> None:
    """Add a new game's seat rows (flushed), each with its address's defaults and the
    organiser's choice of language (``chosen_languages``) and zone on top."""
    chosen = people.seat_defaults([e for e in emails if e])
    for i, (name, email) in enumerate(zip(names, emails, strict=True)):
        seat = Seat(
            game_id=game_id,
            seat_index=i,
            name=name,
            email=email,
            token_hash=hash_token(tokens[i]),
        )
        people.apply_defaults(seat, chosen.get(email))
        if chosen_languages is not None and chosen_languages[i]:  # the organiser's choice
            seat.locale = chosen_languages[i]
        _organiser_zone(seat, zones[i] if zones else "", chosen.get(email))
        db.session.add(seat)
    db.session.flush()


def _settings_of(
    options: dict[str, Any] | None, board: str | list | dict | Board | None
) -> tuple[Options, Board]:
    """The options and the board of a new game (the board's name at most ``MAX_TITLE``
    characters, its provenance ``MAX_PROVENANCE``: longer is refused, never cut). Raises
    ``ServiceError`` 400."""
    if board not in (None, "default") and not isinstance(board, list | dict | Board):
        # never a path: a string from a form or an upload must not read files on the server
        raise ServiceError(400, "bad_settings", _('a board is "default" or a board file\'s JSON'))
    try:
        opts = Options.from_json(options)
        the_board = default_board() if board in (None, "default") else load_board(board)
    except (OptionsError, BoardError) as exc:
        raise ServiceError(400, "bad_settings", str(exc)) from None
    except RecursionError:
        raise ServiceError(400, "bad_settings", _("the board file is nested too deeply")) from None
    if len(the_board.name) > MAX_TITLE or len(the_board.provenance) > MAX_PROVENANCE:
        raise ServiceError(
            400,
            "bad_settings",
            _(
                "the board's name is at most %(name)d characters and its provenance at most"
                " %(provenance)d: make them shorter",
                name=MAX_TITLE,
                provenance=MAX_PROVENANCE,
            ),
        )
    least = int(current_app.config["MIN_WINDOW_SECONDS"])
    if min(opts.windows.values()) < least:
        raise ServiceError(
            400,
            "bad_settings",
            _("every window must last at least %(num)d seconds", num=least),
            "A1",
        )
    return opts, the_board


def _organiser_zone(seat: Seat, zone: str, own: Any) -> None:
    """Give ``seat`` the zone the organiser chose for it (``""``: none, UTC) unless its address
    chose a zone of its own (``own``: its ``players`` row or ``None``): the player's own default
    wins, they set it themselves."""
    if zone and not (own is not None and own.timezone):
        seat.timezone = zone


def _organiser_row(
    game_id: str, to: str, admin_link: str, players: int, at: datetime, zone: str
) -> dict[str, Any]:
    """The organiser's confirmation row (``notify.organiser_confirmation``) in the request's
    language, its times in ``zone`` (``""``: UTC); it may name the game's title only when this
    browser is signed in as ``to`` (that address is proved to be the creator's)."""
    named = has_request_context() and people.signed_in() == to.lower()
    return organiser_confirmation(game_id, to, admin_link, players, _locale(), at, zone, named)


def _check_zones(zones: list[str] | None, count: int, creator_zone: str) -> None:
    """``zones`` is ``None`` or one known zone (or ``""``) per player, and ``creator_zone``
    a known zone or ``""``; else ``ServiceError`` 400."""
    given = [*(zones or []), creator_zone]
    if (zones is not None and len(zones) != count) or not all(
        isinstance(z, str) and (not z or valid_timezone(z)) for z in given
    ):
        raise ServiceError(
            400, "bad_settings", _("unknown time zone: use a name like Europe/Berlin or UTC")
        )


def _locale() -> str:
    """The language of the request (the organiser's mail is written in it), else English."""
    if has_request_context():
        return str(get_locale() or "en")
    return "en"


# The pace choices (``orders.PACES``), and the two older names: "recommended" is "standard",
# "none" is "relaxed".
STARTING_ORDERS = (*PACES, "recommended", "none")


OLD_PACE_NAMES = {"recommended": "standard", "none": "relaxed"}


SEAT_LANGUAGES = frozenset(languages.CODES)


SERVER_PROXY_HOURS = 48  # A11: the away proxy of games made on the pages and the API


def _orders(starting: str, seats: int) -> list[Orders]:
    """Every seat's first standing orders (A10): those of the pace ``starting`` (a name of
    ``STARTING_ORDERS``), from ``orders.pace_orders``."""
    return [pace_orders(OLD_PACE_NAMES.get(starting, starting))] * seats


def confirm_game(game_id: str) -> int:
    """The organiser confirmed their address: the game starts now (its first events are dated
    now, so its windows run from now) and every seat is invited with a fresh secret link.
    Returns the number of invitations written; 0 when the game was confirmed before (nothing
    changes). Raises ``ServiceError`` 404."""
    game = get_game(game_id, lock=True)
    if game.status != "unconfirmed":
        db.session.rollback()
        return 0
    settings = dict(game.settings)
    start = settings.pop("start")
    seats = seats_of(game_id)
    now = now_utc()
    seed = secrets.token_hex(16) if start.get("seed") is None else start["seed"]
    opts = Options.from_json(settings["options"])
    starting = _orders(start.get("orders", "none"), len(seats))
    orders = people.orders_for([s.email for s in seats], starting)
    board = load_board(start["board"])
    bots = start.get("bots", [])  # A13
    events = new_game([s.name for s in seats], opts, board, seed, now, orders=orders, bots=bots)
    base = current_app.config["BASE_URL"].rstrip("/")
    links = []
    for seat in seats:
        token = new_token()
        seat.token_hash = hash_token(token)
        links.append(f"{base}/g/{game_id}/s/{token}")
    game.settings = settings
    game.status = "active"
    _append(game, events, replay(events), now, links)
    db.session.commit()
    run_after_commit(game_id)
    people.start_nights(game_id)
    play_bots(game_id)
    return len(seats) - len(bots)


def _append(
    game: Game,
    events: list[Event],
    state: GameState,
    at: datetime,
    links: list[str],
) -> None:
    """A new game's first events (``create_game``, ``confirm_game``): append them, keep the
    negotiations' ranges, write the snapshot, the deadlines and the invitations (``links``:
    each seat's secret link). The game's own changes are flushed at commit."""
    first = game.last_seq + 1
    insert_rows("events", event_rows(game.id, first, events, at, None))
    record_negotiations(game.id, first, events, at)
    advance_game(game, state, first + len(events) - 1)
    sync_deadlines(game.id, None, state)
    write_outbox(game.id, None, events, state, first, at, links)
