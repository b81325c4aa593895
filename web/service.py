"""The game service: the only code that writes events (docs/architecture.md, web).

``submit(game_id, seat, command, idempotency_key)`` runs in one transaction: lock the game row,
rebuild the state from the snapshot plus the tail of the log, ``engine.decide``, append the events
with the next sequence numbers, update the game's deadlines, write the notification rows
(outbox), remember the idempotency key. After a commit that wrote notification rows it calls
the registered ``after_commit`` hooks (the worker's delivery); deadlines need no hook, the
deadlines workers find them in the database.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from email_validator import EmailNotValidError, validate_email
from flask import current_app, has_request_context
from flask_babel import get_locale
from flask_babel import gettext as _
from imtheboss.engine import languages
from imtheboss.engine.board import Board, BoardError, default_board, load_board
from imtheboss.engine.errors import RuleError
from imtheboss.engine.events import Event, take_record
from imtheboss.engine.game import COMMANDS, Command, decide_state, due_windows
from imtheboss.engine.options import Options, OptionsError
from imtheboss.engine.orders import PACES, Orders, pace_orders
from imtheboss.engine.setup import SetupError, new_game
from imtheboss.engine.state import (
    GameState,
    SnapshotError,
    Window,
    fold,
    replay,
    replay_json,
    snapshot_is_current,
    state_from_json,
    state_to_json,
)
from imtheboss.web.app.metrics import timed_submit
from imtheboss.web.mail.notify import (
    email_changed,
    invitation,
    notifications_for,
    organiser_confirmation,
    remind_time,
)
from imtheboss.web.models import (
    SERVER_SCOPE,
    Checkpoint,
    CommandRecord,
    Deadline,
    EventRecord,
    Game,
    Notification,
    Seat,
    db,
)
from imtheboss.web.players.addresses import key
from imtheboss.web.say.display import valid_timezone
from imtheboss.web.store.negotiations import record as record_negotiations
from imtheboss.web.store.rows import (
    STATES,
    Held,
    LockedGame,
    event_rows,
    insert_new,
    insert_rows,
    lock_game,
    write_command,
)
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

SNAPSHOT_EVERY = 32  # events: loading reads at most this many past the snapshot
ENGINE_VERSION = 1
MAX_KEY = 100


# Control characters, lone surrogates (text that cannot be encoded), line and bidi controls.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
MAX_TITLE = 120  # characters of a game's title (and of a board's name)
DEFAULT_TITLE = "I'm the Boss!"  # a game created with no title of its own
MAX_PROVENANCE = 2000  # characters of a board file's provenance
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,24}")  # secrets.token_urlsafe(9) makes 12 of these
TOKEN = re.compile(r"[A-Za-z0-9_-]{10,100}")  # secret link tokens (``new_token``)


def normal_email(address: str) -> str:
    """``address`` as it is stored and mailed to: one plain address ``local@domain``, checked by
    email-validator (no display name, list, quoting, IP literal, control characters, or a
    special-use domain such as ``.invalid`` or ``.test``), the domain in IDNA ASCII
    (``bill@例子.中国`` -> ``bill@xn--fsqu00a.xn--fiqs8s``). A local part beyond ASCII
    (``用户@…``) needs a mail server that accepts SMTPUTF8: it is taken only when the setting
    ``MAIL_SMTPUTF8`` is on. Raises ``ValueError`` with a message for people."""
    text = address.strip() if isinstance(address, str) else ""
    try:
        checked = validate_email(text, check_deliverability=False, allow_smtputf8=True)
    except EmailNotValidError:
        raise ValueError(
            _(
                "“%(address)s” is not one plain email address (such as amy@example.org)",
                address=text,
            )
        ) from None
    if checked.smtputf8 and not current_app.config.get("MAIL_SMTPUTF8"):
        raise ValueError(
            _(
                "“%(address)s” needs a mail server that accepts international addresses, and"
                " this server's does not: use another address",
                address=text,
            )
        )
    normal = f"{checked.local_part}@{checked.ascii_domain}"
    if len(normal) > 254:
        raise ValueError(_("an email address is at most 254 characters"))
    return normal


class ServiceError(Exception):
    """A request the service refuses. ``status`` is the HTTP status the web layer answers with,
    ``code`` a stable string, ``message`` for people, ``rule`` the rule id when the engine
    refused (``RuleError``)."""

    def __init__(self, status: int, code: str, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.rule = rule

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "rule": self.rule}


def now_utc() -> datetime:
    """The app's clock (``CLOCK`` in config, for tests), else the real UTC time."""
    clock: Callable[[], datetime] | None = current_app.config.get("CLOCK")
    return clock() if clock else datetime.now(UTC)


def hash_token(token: str) -> str:
    """sha256 hex of a secret token: only hashes are stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh secret link token (192 bits)."""
    return secrets.token_urlsafe(24)


# -- creating games --------------------------------------------------------------------------


@dataclass
class CreatedGame:
    """What ``create_game`` returns: the game id and the secrets to mail (never stored);
    ``seat_tokens`` is empty for a game that waits for its organiser's confirmation (the seats'
    links are made when it is confirmed)."""

    game_id: str
    seat_tokens: list[str]
    admin_token: str


def name_key(name: str) -> str:
    """What two seat names are compared by: NFKC, case folded, spaces trimmed and runs of them
    made one (``"ＡＭＹ"``, ``"amy"`` and ``" Amy "`` are one name)."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def invisible(text: str) -> bool:
    """Whether ``text`` holds a format character (Unicode category Cf: zero-width spaces and
    joiners, direction marks and controls, the soft hyphen...)."""
    return any(unicodedata.category(char) == "Cf" for char in text)


EAST_ASIAN_SCRIPTS = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO"})


def mixed_alphabets(name: str) -> bool:
    """Whether ``name`` (after NFKC) holds letters of two alphabets that can look alike, such
    as Latin and Cyrillic ("Bob" and "Воb"): at most one script besides the East Asian ones
    (which mix with each other and with Latin in real names, UTS #39's restriction levels)."""
    scripts = {
        unicodedata.name(char, "?").split()[0]
        for char in unicodedata.normalize("NFKC", name)
        if char.isalpha()
    }
    return len(scripts - EAST_ASIAN_SCRIPTS) > 1


def check_names(names: list[str]) -> None:
    """Seat names people can tell apart: no invisible (format) character, no letters of two
    look-alike alphabets in one name (``mixed_alphabets``), and no two alike by ``name_key``.
    Raises ``ServiceError`` 400 ``bad_settings``."""
    for name in names:
        if invisible(name):
            raise ServiceError(400, "bad_settings", invisible_in_name())
        if mixed_alphabets(name):
            raise ServiceError(
                400,
                "bad_settings",
                _(
                    "The name %(name)s mixes letters of two alphabets (such as Latin and"
                    " Cyrillic letters that look alike): type it in one alphabet.",
                    name=name,
                ),
            )
    seen: set[str] = set()
    for name in names:
        if name_key(name) in seen:
            raise ServiceError(
                400,
                "bad_settings",
                _(
                    "two players have the same name (%(name)s): give each a name of their own",
                    name=name,
                ),
            )
        seen.add(name_key(name))


def invisible_in_name() -> str:
    """The message for a name with an invisible character (see ``invisible``)."""
    return _(
        "A name may not hold invisible characters (such as a zero-width space or a direction"
        " mark): type it again."
    )


def _players() -> ModuleType:
    """The ``imtheboss.web.players.people`` module: each seat's defaults and nights."""
    from imtheboss.web.players import people as players  # cycle: players imports this module

    return players


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
    defaults_of = _players()

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
        orders = defaults_of.orders_for(emails, _orders(starting_orders, len(names)))
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
    defaults_of = _players()

    db.session.commit()
    run_after_commit(game_id)
    if confirmed:
        defaults_of.start_nights(game_id)
        _bots_play(game_id)


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
    if _twice([e for e in emails if e]):  # one address, one seat (any case)
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
    defaults_of = _players()

    chosen = defaults_of.seat_defaults([e for e in emails if e])
    for i, (name, email) in enumerate(zip(names, emails, strict=True)):
        seat = Seat(
            game_id=game_id,
            seat_index=i,
            name=name,
            email=email,
            token_hash=hash_token(tokens[i]),
        )
        defaults_of.apply_defaults(seat, chosen.get(email))
        if chosen_languages is not None and chosen_languages[i]:  # the organiser's choice
            seat.locale = chosen_languages[i]
        _organiser_zone(seat, zones[i] if zones else "", chosen.get(email))
        db.session.add(seat)
    db.session.flush()


def _bots_play(game_id: str, state: GameState | None = None) -> None:
    """Let the bot seats act (``imtheboss.web.games.bots.play``; ``state``: the one just
    committed)."""
    from imtheboss.web.games import bots  # (bots imports this module)

    bots.play(game_id, state)


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
    from imtheboss.web.players.people import signed_in  # (players imports this module)

    named = has_request_context() and signed_in() == to.lower()
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
    defaults_of = _players()

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
    orders = defaults_of.orders_for([s.email for s in seats], starting)
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
    defaults_of.start_nights(game_id)
    _bots_play(game_id)
    return len(seats) - len(bots)


def require_confirmed(game: Game) -> None:
    """Raises ``ServiceError`` 409 while ``game`` waits for its organiser's confirmation (the
    transaction rolled back)."""
    if game.status == "unconfirmed" and (game.settings or {}).get("rematch"):
        db.session.rollback()
        raise ServiceError(
            409,
            "unconfirmed",
            _(
                "This rematch starts once each player has said by the link in their mail that"
                " they play."
            ),
        )
    if game.status == "unconfirmed":
        db.session.rollback()
        raise ServiceError(
            409,
            "unconfirmed",
            _(
                "This game starts once its organiser confirms their email address, by the link"
                " in the mail sent to it."
            ),
        )


# -- loading ---------------------------------------------------------------------------------


def load_events(game_id: str, after: int = 0, upto: int | None = None) -> list[Event]:
    """The game's events with ``after < seq <= upto``, in order."""
    return [Event.take_json(record) for record in _records(_event_rows(game_id, after, upto))]


def _event_rows(game_id: str, after: int, upto: int | None) -> list[Any]:
    """``(type, body, seat)`` of the stored events with ``after < seq <= upto``, in order."""
    query = select(EventRecord.type, EventRecord.body, EventRecord.seat).where(
        EventRecord.game_id == game_id, EventRecord.seq > after
    )
    if upto is not None:
        query = query.where(EventRecord.seq <= upto)
    return list(db.session.execute(query.order_by(EventRecord.seq)).all())


def _records(rows: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """Stored ``(type, body, seat)`` rows as ``Event.to_json`` records: each fresh body from the
    database becomes its record (taken over, not copied)."""
    for type_, body, seat in rows:
        body["type"] = type_
        body["by"] = seat
        yield body


def load_state(game: Game, tail: list[Any] | None = None) -> GameState:
    """The game's state after exactly ``game.last_seq`` events, so it agrees with the row even
    while others commit: the snapshot plus the events after it (at most ``SNAPSHOT_EVERY``), so
    loading does not slow down as a game grows. ``tail``: those events' ``(type, body, seat)``
    rows when the caller read them already (``_lock``); they are used only when they are all of
    them. A snapshot this engine refuses (``SnapshotError``: written before a format change or
    by other engine code) is ignored and the whole log replayed; the next write (``submit``)
    stores a current one. Raises ``ServiceError`` 409 for a game that waits for its organiser
    (it has no state yet)."""
    require_confirmed(game)
    if tail is None or len(tail) != game.last_seq - game.snapshot_seq:
        tail = _event_rows(game.id, game.snapshot_seq, game.last_seq)
    return _folded(game.id, game.snapshot, game.snapshot_seq, tail, game.last_seq)


def state_after(game: Game, seq: int) -> GameState:
    """The game's state after its first ``seq`` events (1 <= ``seq`` <= ``game.last_seq``):
    from the latest stored state at or before ``seq`` (the game's snapshot, else its last
    ``Checkpoint``) and the events after it, so the cost does not grow with the game; a stored
    state this engine refuses is passed over (the events from the start are folded instead).
    Raises ``ServiceError`` 409 for a game that waits for its organiser."""
    require_confirmed(game)
    base_seq, stored = 0, None
    if game.snapshot is not None and game.snapshot_seq <= seq:
        base_seq, stored = game.snapshot_seq, game.snapshot
    else:
        found = db.session.execute(
            select(Checkpoint.seq, Checkpoint.state)
            .where(Checkpoint.game_id == game.id, Checkpoint.seq <= seq)
            .order_by(Checkpoint.seq.desc())
            .limit(1)
        ).first()
        if found is not None:
            base_seq, stored = found
    return _folded(game.id, stored, base_seq, _event_rows(game.id, base_seq, seq), seq)


def _folded(game_id: str, stored: Any, base_seq: int, tail: list[Any], upto: int) -> GameState:
    """The state ``stored`` (the snapshot's format, after ``base_seq`` events; ``None``: none)
    with the stored event rows ``tail`` (``base_seq < seq <= upto``) folded in; the events
    ``1..upto`` replayed when there is no stored state or this engine refuses it."""
    state = None
    if stored is not None:
        try:
            state = state_from_json(stored)
        except SnapshotError as exc:
            current_app.logger.debug("stored state of game %s ignored: %s", game_id, exc)
    if state is None:
        rows = tail if base_seq == 0 else _event_rows(game_id, 0, upto)
        return replay_json(_records(rows))
    for kind, data, by, _v in map(take_record, _records(tail)):
        fold(state, kind, data, by)
    return state


def get_game(game_id: str, *, lock: bool = False) -> Game:
    """The game row (locked ``FOR UPDATE`` when ``lock``, and then read afresh even if the
    session holds it). Raises ``ServiceError`` 404, also for an id no game can have
    (``GAME_ID``)."""
    _check_game_id(game_id)
    query = select(Game).where(Game.id == game_id)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    game = db.session.execute(query).scalar_one_or_none()
    if game is None:
        raise ServiceError(404, "no_game", "there is no such game")
    return game


def _check_game_id(game_id: Any) -> None:
    if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
        raise ServiceError(404, "no_game", "there is no such game")


def _lock(game_id: str, held: Held | None) -> tuple[LockedGame, list[Any] | None]:
    """The game row locked, with the events after its snapshot, or after ``held`` (the state
    this process holds), on PostgreSQL (``store.lock_game``). Raises ``ServiceError`` 404."""
    _check_game_id(game_id)
    game, tail = lock_game(game_id, held)
    if game is None:
        raise ServiceError(404, "no_game", "there is no such game")
    return game, tail


def locked_state(game: LockedGame, tail: list[Any] | None, held: Held | None) -> GameState:
    """The state of the locked ``game``: ``held`` plus the events after it when the lock read
    those (``base_seq`` is its seq), else ``load_state``. May be ``held``'s own state: read it,
    never change it."""
    if held is None or game.base_seq != held.seq:
        return load_state(game, tail)
    require_confirmed(game)
    if tail is None or len(tail) != game.last_seq - game.base_seq:
        tail = _event_rows(game.id, game.base_seq, game.last_seq)
    if not tail:
        return held.state
    state = held.state.clone()
    for kind, data, by, _v in map(take_record, _records(tail)):
        fold(state, kind, data, by)
    return state


# -- the one way in --------------------------------------------------------------------------


@dataclass
class SubmitResult:
    """``events``: ``[(seq, Event)]`` the command appended; ``duplicate``: the key was seen
    before and nothing was appended (A7); ``state``: the state after (this process keeps it for
    the game's next submit, ``store.STATES``: read it, never change it); ``notified``: the seats
    that got outbox rows."""

    events: list[tuple[int, Event]]
    duplicate: bool
    state: GameState | None = None
    notified: list[int] = field(default_factory=list)
    deadlines_changed: bool = False  # a deadline row was opened, moved or ended


def parse_command(seat: int | None, body: dict[str, Any], at: datetime) -> Command:
    """A command from JSON-like input ``{"do": ..., **args}``. Raises ``ServiceError`` 400."""
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("do"), str)
        or body["do"] not in COMMANDS
    ):
        raise ServiceError(400, "bad_command", 'a command is {"do": NAME, ...arguments}')
    args = {k: v for k, v in body.items() if k not in NOT_ARGUMENTS}
    return Command(body["do"], seat, args, at)


NOT_ARGUMENTS = ("do", "by", "at")  # the seat and the time are the server's, never the body's
# The organiser's acts a paused game takes, and the game's status after a pause or a resume.
WHILE_PAUSED = frozenset({"resume_game", "change_email", "resend_invitation"})
STATUS_AFTER = {"pause_game": "paused", "resume_game": "active"}


def _while_paused(command: Any) -> bool:
    """Whether ``command`` (a body) is one a paused game takes (``WHILE_PAUSED``)."""
    return isinstance(command, dict) and command.get("do") in WHILE_PAUSED


@timed_submit
def submit(
    game_id: str,
    seat: int | None,
    command: dict[str, Any],
    idempotency_key: str,
    now: datetime | None = None,
    via: str = "",
) -> SubmitResult:
    """Decide and store one command of ``seat`` (``None``: the server's own, ``timeout`` and
    ``extend``); ``via`` ``"mail"`` marks it as sent by a reply to a mail (``Command.via``).

    One transaction with the game row locked. Raises ``ServiceError``: 404 unknown game, 400
    malformed command or key, 409 the game is paused or over, or the rules refused it (the
    engine's code: ``window_closed``, ``terms_changed``, ...); a refused command changes
    nothing. Keys are scoped (A7): a seat's keys are its own, the server's live in
    ``SERVER_SCOPE``, where no seat can write; a key repeated in its scope returns the first
    result (``duplicate=True``). After the commit the bot seats act (A13, ``web.bots.play``;
    not after a bot's own command, ``via="bot"``: that loop is ``play``'s)."""
    if (
        not isinstance(idempotency_key, str)
        or not 1 <= len(idempotency_key) <= MAX_KEY
        or CONTROL.search(idempotency_key)
    ):
        raise ServiceError(
            400,
            "bad_key",
            f"an idempotency key is 1 to {MAX_KEY} characters, with no control characters",
        )
    try:
        result = _submit(game_id, seat, command, idempotency_key, now, via)
    except ServiceError:
        db.session.rollback()
        raise
    except IntegrityError:  # a concurrent duplicate key on a database without row locks
        db.session.rollback()
        result = _submit(game_id, seat, command, idempotency_key, now, via)
    except BaseException:
        db.session.rollback()
        raise
    if result.notified:  # a commit that made no mail tells nobody
        run_after_commit(game_id)
    if via != "bot" and result.state is not None and any(result.state.bots):
        _bots_play(game_id, result.state)  # A13: the bot seats act at once
    return result


def _submit(game_id, seat, command, key, now, via="") -> SubmitResult:
    """One try of ``submit``. The key is checked by the unique constraint of the command's own
    insert (``store.write_command``), not by a read before it; a command refused before that
    insert is looked up as a repeat first (``_repeated``: a repeat is answered as such, even
    when the game has moved on so far that the rules would refuse the command now)."""
    held = STATES.get(game_id)
    game, tail = _lock(game_id, held)
    scope = SERVER_SCOPE if seat is None else seat
    try:
        if game.status == "paused" and not _while_paused(command):
            raise ServiceError(409, "paused", "the game is paused by its organiser")
        at = now or now_utc()
        cmd = replace(parse_command(seat, command, at), via=via)
        before = locked_state(game, tail, held)
        try:
            events, state = decide_state(before, cmd)
        except RuleError as exc:
            raise ServiceError(409, exc.code, exc.message, exc.rule) from None
    except ServiceError:
        repeated = _repeated(game_id, scope, key, command)
        if repeated is not None:
            return repeated
        raise
    read, first = replace(game), game.last_seq + 1
    game.status = STATUS_AFTER.get(cmd.do, game.status)  # a pause or a resume (A13)
    advance_game(game, state, game.last_seq + len(events))
    row = command_row(game_id, cmd, scope, key, first, game.last_seq)
    if write_command(game, read, row, event_rows(game_id, first, events, at, None)) is None:
        db.session.rollback()  # the key was used before: nothing of this try is kept
        repeated = _repeated(game_id, scope, key, command)
        if repeated is None:  # pragma: no cover - a row that conflicts was just there
            raise IntegrityError("commands", None, Exception("idempotency key"))
        return repeated
    record_negotiations(game_id, first, events, at)  # a statement only when a deal opens, ends
    deadlines_changed = _sync_deadlines(game_id, before, state)
    notified = _outbox(game_id, before, events, state, first, at)
    db.session.commit()
    if events:
        STATES.put(game_id, Held(game.last_seq, at, state))
    appended = list(zip(range(first, first + len(events)), events, strict=True))
    return SubmitResult(appended, False, state, notified, deadlines_changed)


def _body_of(command: Any) -> dict[str, Any] | None:
    """What the ``commands`` row stores of a command body (``{"do", ...arguments}``)."""
    if not isinstance(command, dict):
        return None
    return {"do": command.get("do"), **{k: v for k, v in command.items() if k not in NOT_ARGUMENTS}}


def command_row(
    game_id: str, cmd: Command, scope: int, key: str, first: int, last: int
) -> dict[str, Any]:
    """The ``commands`` row of ``cmd``, which appended the events ``first`` to ``last``."""
    return {
        "game_id": game_id,
        "seat": cmd.by,
        "scope": scope,
        "idempotency_key": key,
        "body": {"do": cmd.do, **cmd.args},
        "first_seq": first,
        "last_seq": last,
        "created_at": cmd.at,
    }


def stored_command(game_id: str, scope: int, key: str) -> Any:
    """``(first_seq, last_seq, body)`` of the command stored with ``key`` in ``scope`` (a seat,
    or ``SERVER_SCOPE``), or ``None``; the transaction is left open."""
    return db.session.execute(
        select(CommandRecord.first_seq, CommandRecord.last_seq, CommandRecord.body).where(
            CommandRecord.game_id == game_id,
            CommandRecord.scope == scope,
            CommandRecord.idempotency_key == key,
        )
    ).one_or_none()


def _repeated(game_id: str, scope: int, key: str, command: Any) -> SubmitResult | None:
    """The first result of ``key`` in ``scope`` (A7: a repeat appends nothing), the transaction
    ended; ``None`` when the key was not used. Raises ``ServiceError`` 409 ``key_reused`` when
    the key was used for another command (a client bug, or a form changed and sent again)."""
    db.session.rollback()
    seen = stored_command(game_id, scope, key)
    db.session.rollback()
    if seen is None:
        return None
    first_seq, last_seq, body = seen
    if body != _body_of(command):
        raise ServiceError(
            409, "key_reused", "this idempotency key was used for another command", "A7"
        )
    events = load_events(game_id, first_seq - 1, last_seq)
    db.session.commit()
    return SubmitResult(list(zip(range(first_seq, last_seq + 1), events, strict=True)), True)


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
    _sync_deadlines(game.id, None, state)
    _outbox(game.id, None, events, state, first, at, links)


def advance_game(game: Game | LockedGame, state: GameState, seq: int) -> None:
    """The game row after its events up to ``seq`` (``state``): ``last_seq``, ``over`` at the
    end, the snapshot moved every ``SNAPSHOT_EVERY`` events (and when it is stale)."""
    game.last_seq = seq
    if state.phase == "game_over":
        game.status = "over"
    stale = game.snapshot is not None and not snapshot_is_current(game.snapshot)
    if stale or seq - game.snapshot_seq >= SNAPSHOT_EVERY or state.phase == "game_over":
        game.snapshot = state_to_json(state)
        game.snapshot_seq = seq


def _outbox(
    game_id: str,
    before: GameState | None,
    events: list[Event],
    state: GameState,
    first: int,
    at: datetime,
    links: list[str] | None = None,
) -> list[int]:
    """Write the notification rows of ``events`` appended at ``first`` (one statement); the
    seats notified."""
    notes = notifications_for(game_id, before, events, state, first, at, links)
    insert_rows("notifications", notes)
    for writer in current_app.extensions.get("imtheboss.outbox_writers", ()):
        writer(game_id, first, events, notes, at)
    return sorted({r["seat_index"] for r in notes})


def _deadline_windows(state: GameState | None) -> dict[str, Window]:
    """The windows of ``state`` that have a deadline row (none before a game, none once over)."""
    if state is None or state.phase == "game_over":
        return {}
    return {w.id: w for w in due_windows(state)}


@dataclass
class DeadlineChanges:
    """What a command changed of a game's deadline rows: the windows that ``ended`` (ids), the
    windows whose deadline ``moved`` (A1, a resume), the rows of the windows ``opened``."""

    ended: list[str]
    moved: list[Window]
    opened: list[dict[str, Any]]

    def __bool__(self) -> bool:
        return bool(self.ended or self.moved or self.opened)


def deadline_changes(
    game_id: str, before: GameState | None, state: GameState, opened_at: datetime
) -> DeadlineChanges:
    """The deadline rows to change from the windows ``before`` the command and after it
    (``state``), without reading a row: one ``open`` row per window with a deadline (its
    ``deadlines`` columns, opened at ``opened_at``, its reminder due at ``remind_time``), the
    windows that ended ``done``."""
    old, new = _deadline_windows(before), _deadline_windows(state)
    opened = [
        {
            "game_id": game_id,
            "window_id": w.id,
            "kind": w.kind,
            "due_at": w.deadline,
            "opened_at": opened_at,
            "remind_at": remind_time(opened_at, w.deadline),
        }
        for wid, w in new.items()
        if wid not in old
    ]
    return DeadlineChanges(
        [wid for wid in old if wid not in new],
        [w for wid, w in new.items() if wid in old and old[wid].deadline != w.deadline],
        opened,
    )


def _sync_deadlines(game_id: str, before: GameState | None, state: GameState) -> bool:
    """Write ``deadline_changes``. Returns whether a row changed."""
    changes = deadline_changes(game_id, before, state, now_utc())
    table = Deadline.__table__
    if changes.ended:
        db.session.execute(
            update(table)
            .where(table.c.game_id == game_id, table.c.window_id.in_(changes.ended))
            .where(table.c.state == "open")
            .values(state="done")
        )
    for window in changes.moved:  # A1, a resume
        db.session.execute(
            update(table)
            .where(table.c.game_id == game_id, table.c.window_id == window.id)
            .where(table.c.state == "open")
            .values(due_at=window.deadline, scheduled_at=None)
        )
    if changes.opened:
        statement = insert_new("deadlines", ("game_id", "window_id"))
        db.session.connection().execute(statement, changes.opened)
    return bool(changes)


# -- after commit ----------------------------------------------------------------------------

AfterCommit = Callable[[str], None]


def on_commit(app: Any, hook: AfterCommit) -> None:
    """Register ``hook(game_id)`` to run after each commit that wrote notification rows for a
    game (the worker delivers them). Hooks must not raise."""
    app.extensions.setdefault("imtheboss.after_commit", []).append(hook)


OutboxWriter = Callable[[str, int, list[Event], list[dict[str, Any]], datetime], None]


def on_outbox(app: Any, writer: OutboxWriter) -> None:
    """Register ``writer(game_id, first_seq, events, notification_rows, at)`` to write more
    outbox rows in the transaction of every append (webhooks and push:
    ``imtheboss.web.outbound.outbox``)."""
    app.extensions.setdefault("imtheboss.outbox_writers", []).append(writer)


def run_after_commit(game_id: str) -> None:
    """Run the registered after-commit hooks for ``game_id`` (the worker's delivery); a hook
    that fails is logged, never raised: the game's commit stands."""
    for hook in current_app.extensions.get("imtheboss.after_commit", []):
        try:
            hook(game_id)
        except Exception:  # a lost hook is recovered by the worker's sweep
            current_app.logger.exception("after-commit hook failed for game %s", game_id)


# -- seats and admin -------------------------------------------------------------------------


def seat_by_token(game_id: str, token: str) -> Seat:
    """The seat whose secret link token is ``token`` in game ``game_id``. Raises
    ``ServiceError`` 404 (unknown game) or 403 (a wrong token, or one of another game)."""
    get_game(game_id)
    if not isinstance(token, str) or not TOKEN.fullmatch(token):
        raise ServiceError(403, "bad_token", "this link is not valid for this game")
    seat = db.session.execute(
        select(Seat).where(Seat.token_hash == hash_token(token))
    ).scalar_one_or_none()
    if seat is None or seat.game_id != game_id:
        raise ServiceError(403, "bad_token", "this link is not valid for this game")
    return seat


def is_admin_token(game_id: str, token: str) -> bool:
    """True when ``token`` is the admin link token of ``game_id`` (constant-time compare)."""
    game = get_game(game_id)
    return (
        isinstance(token, str)
        and TOKEN.fullmatch(token) is not None
        and secrets.compare_digest(game.admin_token_hash, hash_token(token))
    )


def seats_of(game_id: str) -> list[Seat]:
    """The game's seats in seat order."""
    return list(
        db.session.execute(
            select(Seat).where(Seat.game_id == game_id).order_by(Seat.seat_index)
        ).scalars()
    )


def set_status(game_id: str, status: str) -> None:
    """Pause or resume a game (admin). While paused nothing is taken and no window times out;
    on resume every open deadline moves later by the time the game was paused (an ``extend``
    command in the log). The pause and the resume are events in the history (``game_paused``,
    ``game_resumed``, A13), written with the status in one transaction; the same status again
    changes nothing. Raises ``ServiceError`` 409 for a game that is over or not confirmed
    yet, 400 for a bad status."""
    game = get_game(game_id, lock=True)
    require_confirmed(game)
    if game.status == "over":
        db.session.rollback()
        raise ServiceError(409, "game_over", "the game is over")
    if status not in ("active", "paused"):
        db.session.rollback()
        raise ServiceError(400, "bad_status", "status is active or paused")
    if game.status == status:
        db.session.rollback()
        return
    now = now_utc()
    settings = dict(game.settings)
    paused_at = settings.pop("paused_at", None)
    if status == "paused":
        settings["paused_at"] = now.isoformat()
    game.settings = settings
    _organiser_act(game, "pause_game" if status == "paused" else "resume_game", {}, now)
    if status == "active" and paused_at:
        seconds = int((now - datetime.fromisoformat(paused_at)).total_seconds())
        if seconds >= 1:
            try:
                submit(
                    game_id, None, {"do": "extend", "seconds": seconds}, f"resume:{paused_at}", now
                )
            except ServiceError as exc:
                if exc.code != "not_due":  # no window open: nothing to move
                    raise


def _organiser_act(game: Game, do: str, args: dict[str, Any], now: datetime) -> None:
    """Commit what the caller changed for the organiser's act ``do`` (``args``: its command's
    arguments) with the act's event in the history (A13), in one transaction under the game's
    lock; a game that is over takes no more events: then the change alone. The act's key is
    its own (each call is a new act)."""
    if game.status == "over":
        db.session.commit()
        return
    db.session.flush()
    key = f"organiser:{do}:{secrets.token_hex(8)}"
    submit(game.id, None, {"do": do, **args}, key, now)


def mark_seen(game_id: str, seat: int, seq: int) -> None:
    """Remember that ``seat`` has looked at the game up to ``seq`` (batched mail skips what was
    seen)."""
    db.session.execute(
        update(Seat)
        .where(Seat.game_id == game_id, Seat.seat_index == seat, Seat.last_seen_seq < seq)
        .values(last_seen_seq=seq, last_seen_at=now_utc())
    )
    db.session.commit()


def resend_invitation(game_id: str, seat_index: int) -> str:
    """Admin: give the seat a new secret link (the old one stops working) and queue a new
    invitation holding it to the seat's email address, and to nobody else: the organiser never
    sees it. The table reads it in the history (``invitation_resent``, A13: never the link).
    Returns that address. Raises ``ServiceError`` 404, or 409 before the game is confirmed."""
    game = get_game(game_id, lock=True)
    require_confirmed(game)
    seat = _person_seat_of(game_id, seat_index)
    token = new_token()
    seat.token_hash = hash_token(token)
    link = f"{current_app.config['BASE_URL'].rstrip('/')}/g/{game_id}/s/{token}"
    now = now_utc()
    db.session.add(
        Notification(
            **invitation(
                game_id, seat_index, seat.name, link, seat.token_hash[:16], now, game.last_seq
            )
        )
    )
    email = seat.email
    _organiser_act(game, "resend_invitation", {"seat": seat_index}, now)
    run_after_commit(game_id)
    return email


def already_plays() -> str:
    """The refusal of a second seat for one address in a game (translated)."""
    return _("That address already plays another seat here.")


def _twice(emails: list[str]) -> bool:
    """Whether one player (``addresses.key``: any case) has two of ``emails``."""
    keys = [key(email) for email in emails]
    return len(set(keys)) != len(keys)


def plays_here(email: str, others: list[str]) -> bool:
    """Whether ``email``'s player (any case) is one of the addresses ``others`` (the game's
    other seats)."""
    return key(email) in {key(other) for other in others}


def set_seat_email(game_id: str, seat_index: int, email: str) -> None:
    """Admin: fix a seat's email address. The old address is told (in plain words: what changed,
    whom to ask), so a seat is never moved to another address unheard; the table reads that
    it changed in the history (``seat_email_changed``, A13: never the address). Raises
    ``ServiceError`` 400/404 (400 ``bad_email`` for an address that plays another seat of the
    game, in any case), or 409 before the game is confirmed."""
    try:
        email = normal_email(email or "")
    except ValueError as exc:
        raise ServiceError(400, "bad_email", str(exc)) from None
    game = get_game(game_id, lock=True)
    require_confirmed(game)
    seat = _person_seat_of(game_id, seat_index)
    old = seat.email
    if email == old:
        db.session.rollback()
        return
    others = [s.email for s in seats_of(game_id) if s.seat_index != seat_index]
    if plays_here(email, others):  # one address, one seat
        db.session.rollback()
        raise ServiceError(400, "bad_email", already_plays())
    seat.email = email
    now = now_utc()
    db.session.add(
        Notification(
            **email_changed(
                game_id, seat_index, seat.name, old, seat.locale or "en", now, game.last_seq
            )
        )
    )
    _organiser_act(game, "change_email", {"seat": seat_index}, now)  # the address stays out
    run_after_commit(game_id)


def _person_seat_of(game_id: str, seat_index: int) -> Seat:
    """``_seat_of`` for an act on a person's seat (its address, its invitation). Raises
    ``ServiceError`` 404, or 409 ``bot_seat`` for a bot seat (A13: it has no address; the
    transaction rolled back)."""
    seat = _seat_of(game_id, seat_index)
    if not seat.email:
        db.session.rollback()
        raise ServiceError(
            409,
            "bot_seat",
            _(
                "A bot plays this seat: it has no address. To give the seat to a person, pass it"
                " to a new player."
            ),
            "A13",
        )
    return seat


def _seat_of(game_id: str, seat_index: int) -> Seat:
    """The seat row (for a change). Raises ``ServiceError`` 404 (the transaction rolled back)."""
    seat = db.session.execute(
        select(Seat).where(Seat.game_id == game_id, Seat.seat_index == seat_index)
    ).scalar_one_or_none()
    if seat is None:
        db.session.rollback()
        raise ServiceError(404, "no_seat", "there is no such seat")
    return seat
