"""A fuzz test (hypothesis) over every route of the app (``app.url_map``, so routes added later
are fuzzed too) and every API endpoint: as every seat (a signed-in browser and a bearer token),
the organiser, another game's seat and nobody; with random path parameters, query strings, form
bodies, JSON bodies and raw bodies, nasty text included (NUL, lone surrogates, control
characters, huge and non-finite numbers, deep nesting, wrong types), and legal commands now and
then so the games move on. Every answer is below 500, and a refused request (4xx) wrote nothing
(``support.api_client.stored``: sequence numbers, row counts, seat emails and tokens...). At the end
every game page still opens for everyone.

Bounded for the suite (``EXAMPLES`` per route, derandomized); ``IMTHEBOSS_FUZZ_EXAMPLES=200``
runs it longer (that many per route), with fresh random choices, by hand.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Any
from urllib.parse import quote, urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imtheboss.engine.game import COMMANDS
from imtheboss.web.games.load import get_game
from imtheboss.web.models import Game, Notification, Seat, db
from imtheboss.web.players.links import confirm_link, seat_link, unsubscribe_link
from sqlalchemy import select
from support.api_client import World, fill, signed_in, stored, with_csrf
from werkzeug.routing import Rule

EXAMPLES = int(os.environ.get("IMTHEBOSS_FUZZ_EXAMPLES") or 0) or 6  # per route
RANDOM = bool(os.environ.get("IMTHEBOSS_FUZZ_EXAMPLES"))

NASTY = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "a\ud800b",
    "\udfff",
    "\x1b[2J",
    "\x85",
    "\u202e",
    "\u2028",
    "\n",
    "\r\n",
    "\t",
    "\ufeff",
    "²",
    "٣",
    "1e999",
    "nan",
    "inf",
    "-1",
    "0",
    "9" * 30,
    "x" * 3000,
    "../../etc/passwd",
    "%00",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "用户@例子.中国",
    "bill@例子.中国",
    "a@example.org",
    "Amy <a@example.org>",
    "a@example.org, b@example.org",
    "w0",
    "w1",
    "family:W",
    "investor:S",
    "cash",
    "shares",
    "default",
    "upload",
    "UTC",
    "Europe/Berlin",
    "zh_Hans",
    "every",
    "off",
    "y",
]
# Plausible form fields (each is sent as is, left out, or replaced by nasty text).
FORM: dict[str, str] = {
    "key": "k-1",
    "text": "hello",
    "price": "2",
    "price_kind": "cash",
    "email": "new@example.org",
    "title": "Friday",
    "creator_email": "org@example.org",
    **{f"players-{i}-name": n for i, n in enumerate(["Amy", "Bill", "Carla"])},
    **{f"players-{i}-email": f"p{i}@example.org" for i in range(3)},
    "turn_hours": "24",
    "stop_hours": "6",
    "last_call_hours": "12",
    "negotiation_hours": "0.5",
    "variants": "V4",
    "board_choice": "default",
    "away": "y",
    "notify": "digest",
    "timezone": "Europe/Berlin",
    "language": "zh_Hans",
    "pace": "standard",
    "premove": "fill2",
    "tap": "limit",
}
RATES = [0, 2, 5, 10, 30, 100]  # percent
# Routes plausible requests rarely get through (a fresh signed link each time...).
# The operator's outbox opens only with the operator's token (tests/web/test_operator.py); a
# game's record only once it is over, which the fuzzed games never are (tests/web/test_replay.py).
# A webhook needs a public https address, a phone a browser's keys and the CSRF header
# (tests/web/test_webhooks.py, tests/web/test_push_pages.py).
UNREACHED: set[str] = {"links.operator_mail", "api.export", "replay.export_page"}
UNREACHED |= {"webhooks.admin_add_hook", "push.subscribe", "push.unsubscribe"}
# A browser signed in by email (a mailed link, then its page's POST: tests/web/test_signin.py,
# test_me.py, test_player_defaults.py), a finished game for a rematch and its join links, a
# running one's organiser tools with a window and a reason, in the pages and in the API with
# the admin token (tests/web/test_rematch.py, test_organiser_tools.py,
# test_organiser_record.py), and the outbox's reply form (its operator's token:
# tests/web/test_operator_replies.py), and a seat passed to a bot (tests/web/test_server_bots.py)
# are each tried by their own tests; here they are only held to "no 5xx, and a refusal writes
# nothing".
UNREACHED |= {"signin.confirm", "signin.mailed_link", "me.api_me", "me.open_seat"}
UNREACHED |= {"defaults.defaults", "defaults.make_token"}
UNREACHED |= {"organiser.extend", "organiser.join", "organiser.make_rematch"}
UNREACHED |= {"organiser.rematch_sign_in", "organiser.replace", "organiser.start"}
UNREACHED |= {"operator_replies.reply"}
UNREACHED |= {"api.organiser_extend", "api.organiser_replace", "api.organiser_pause"}
UNREACHED |= {"api.organiser_resume", "api.organiser_bot", "organiser.to_bot"}
SLOTS = 27  # at most this many fields in a plausible form or body
ADMIN = 3  # the organiser's browser, after the three seats' ones
WRITES = {"api.command", "api.create", "pages.act", "pages.new_game", "pages.settings"}
QUERY = {"after": "0", "limit": "5", "page": "2", "lang": "zh_Hant"}
CONVERTER = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


def texts() -> st.SearchStrategy[str]:
    """Strings a hostile client might send: known nasty ones, any text, control characters
    and lone surrogates (which ``st.text()`` leaves out by default)."""
    return st.one_of(
        st.sampled_from(NASTY),
        st.text(max_size=20),
        st.text(st.characters(categories=["Cs", "Cc", "Zl", "Zp", "Cf"]), min_size=1, max_size=5),
    )


def numbers() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(-5, 20),
        st.integers(-(10**40), 10**40),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([2**53, 2**53 - 1, 2**63, 10**30, 1e308, -0.0, 0.5]),
    )


def json_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.none(), st.booleans(), numbers(), texts())
    keys = st.one_of(st.sampled_from(["do", "text", "price", "cash", "card", "window"]), texts())
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=12,
    )


RAW_BODIES = [
    b"",
    b"{",
    b"1e999",
    b'{"idempotency_key": "k", "command": {"do": "chat", "text": "\\u0000"}}',
    b'{"idempotency_key": "k", "command": {"do": "chat", "text": "\\ud800"}}',
    b'{"title": "t", "players": [], "options": {"windows": {"turn": 1e999}}}',
    b'{"a": NaN}',
    b"\xff\xfe",
    b"[" * 3000 + b"]" * 3000,
    b'{"a":' * 200 + b"1" + b"}" * 200,
]


def _raw(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate as the (invalid) bytes a client could send for it."""
    return text.encode("utf-8", "surrogatepass")


class Fuzzer:
    """The identities and a way to pick and send one request, for ``world``."""

    def __init__(self, app: Any, world: World) -> None:
        self.app = app
        self.world = world
        self.tokens = list(world.tokens)  # the seats' current tokens (a resend replaces one)
        self.browsers = [signed_in(app, world.gid, t) for t in world.tokens]
        self.browsers.append(signed_in(app, world.gid, world.admin, admin=True))  # ADMIN
        self.browsers.append(signed_in(app, world.other_gid, world.other_tokens[0]))
        nobody = app.test_client()
        self.browsers.append((nobody, with_csrf(app, nobody)))
        self.bearers: list[str | None] = []
        self.signed: dict[str, list[str]] = {}
        self.refresh()
        self.rules = list(app.url_map.iter_rules())
        self.endpoint = ""  # of the last request
        self.rate = 0  # how often a plausible value is replaced by a nasty one (percent)
        self.seen: Counter[tuple[str, str, int]] = Counter()  # (method, endpoint, status)

    def refresh(self) -> None:
        """Follow the organiser's resends: each seat's current token (from its newest
        invitation in the outbox), its browser signed in again with it, and its mail links."""
        gid = self.world.gid
        with self.app.app_context():
            invited = db.session.execute(
                select(Notification.seat_index, Notification.body)
                .where(Notification.game_id == gid, Notification.kind == "invited")
                .order_by(Notification.id)
            ).all()
            newest = {seat: body.get("link", "").rsplit("/", 1)[-1] for seat, body in invited}
            for seat, token in newest.items():
                if token and token != self.tokens[seat]:
                    self.tokens[seat] = token
                    browser, _csrf = self.browsers[seat]
                    assert browser.get(f"/g/{gid}/s/{token}").status_code == 303
            seats = db.session.execute(
                select(Seat).where(Seat.game_id == gid).order_by(Seat.seat_index)
            ).scalars()
            links = [(seat_link(gid, s), unsubscribe_link(gid, s)) for s in seats]
            sign_in = [a.rsplit("/", 1)[1] for a, _b in links]
            unsubscribe = [b.rsplit("/", 1)[1] for _a, b in links]
            confirm = confirm_link(get_game(gid)).rsplit("/", 1)[1]
            self.signed = {
                "links.mail_sign_in": sign_in + unsubscribe,
                "links.unsubscribe": unsubscribe + sign_in,
                "links.confirm": [confirm, *sign_in],
            }
            db.session.rollback()
        w = self.world
        self.bearers = [*self.tokens, w.admin, w.other_tokens[1], "x" * 32, None]

    def or_nasty(self, data: Any, plausible: Any, nasty: Any = None) -> Any:
        """A value of ``plausible``, or (as often as this request's ``rate`` says) one of
        ``nasty`` (default: any nasty JSON)."""
        if data.draw(st.integers(0, 99)) >= self.rate:
            return data.draw(plausible)
        return data.draw(nasty if nasty is not None else json_values())

    def fields(self, data: Any, plausible: dict[str, Any]) -> dict[str, Any]:
        """``plausible`` with fields left out, replaced by nasty values, or added (as often as
        this request's ``rate`` says). The draws do not depend on how many fields there are
        (``SLOTS`` of them), so a request replays whatever the game's state made of it."""
        assert len(plausible) <= SLOTS
        out = {}
        names = list(plausible)
        for slot in range(SLOTS):
            draw = data.draw(st.integers(0, 199))
            nasty = data.draw(json_values()) if draw < 2 * self.rate else None
            if slot >= len(names) or draw < self.rate:
                continue
            out[names[slot]] = nasty if draw < 2 * self.rate else plausible[names[slot]]
        if data.draw(st.integers(0, 99)) < self.rate:
            out[data.draw(texts())] = data.draw(json_values())
        return out

    def path_value(self, data: Any, converter: str | None, name: str) -> str:
        w = self.world
        if converter in ("int", "float"):
            return str(self.or_nasty(data, st.integers(1, 3), st.integers(0, 10**25)))
        tokens = [*self.tokens, *w.other_tokens, "x" * 32]
        known = {
            "gid": [w.gid, w.gid, w.other_gid, "nosuchgame"],
            "game_id": [w.gid, w.gid, w.other_gid, "nosuchgame"],
            "token": [w.admin, *tokens] if "admin" in self.endpoint else [*tokens, w.admin],
            "signed": self.signed.get(self.endpoint, self.signed["links.mail_sign_in"]),
            "filename": ["style.css", "app.js", "../pyproject.toml"],
        }.get(name)
        value = (
            self.or_nasty(data, st.sampled_from(known), texts()) if known else data.draw(texts())
        )
        return quote(_raw(value), safe="")

    def path(self, data: Any, rule: Rule | None) -> tuple[str, list[str]]:
        """A URL path of ``rule`` (``None``: a path no route may have), and its methods."""
        if rule is None:
            self.endpoint = "no route"
            return "/" + quote(_raw(data.draw(texts()))), ["GET", "POST"]
        self.endpoint = rule.endpoint
        path = CONVERTER.sub(lambda m: self.path_value(data, m.group(1), m.group(2)), rule.rule)
        return path, sorted(rule.methods - {"OPTIONS"})

    def command(self, data: Any, bearer: str | None) -> dict[str, Any]:
        """Mostly a legal command of the seat now (its needs filled with drawn values), else any
        command with drawn arguments. The draws are the same whatever the game's state (the
        legal list only picks among them), as hypothesis needs to replay a request."""
        legal_first = data.draw(st.integers(0, 3)) < 3
        pick = data.draw(st.integers(0, 999))
        kind = data.draw(st.sampled_from(["cash", "shares"]))
        price = {kind: self.or_nasty(data, st.integers(0, 5), numbers())}
        text = self.or_nasty(data, st.just("hi"), texts())
        do = data.draw(st.sampled_from(sorted(COMMANDS)) | texts())
        required, optional = COMMANDS.get(do, (frozenset(), frozenset()))
        names = sorted(required | optional)
        args = {n: data.draw(json_values()) for n in names if data.draw(st.integers(0, 4))}
        if legal_first and bearer in self.tokens:
            seen = self.world.client.get(
                f"/api/games/{self.world.gid}", headers={"Authorization": f"Bearer {bearer}"}
            ).get_json()
            legal = (seen or {}).get("legal") or []
            if legal:
                return fill(legal[pick % len(legal)], price=price, text=text)
        return {"do": do, **args}

    def json_body(self, data: Any, bearer: str | None) -> Any:
        """A body for the endpoint drawn: a command, a new game, or any JSON at all."""
        if data.draw(st.integers(0, 99)) < self.rate // 2:
            return data.draw(json_values())
        if self.endpoint != "api.create":
            key = f"k-{data.draw(st.integers(0, 10**6))}"
            return self.fields(
                data,
                {"command": self.command(data, bearer), "idempotency_key": key},
            )
        players = [
            self.fields(data, {"name": f"P{i}", "email": f"p{i}@example.org"})
            for i in range(self.or_nasty(data, st.just(3), st.integers(0, 7)))
        ]
        options = {"windows": {"turn": 3600, "stop": 60}, "variants": ["V4"], "open_money": True}
        body = {
            "title": "Fuzzed",
            "players": players,
            "options": self.fields(data, options),
            "creator_email": "org@example.org",
            "board": "default",
        }
        return self.fields(data, body)

    def form(self, data: Any, csrf: str, bearer: str | None) -> dict[str, Any]:
        """A form for the endpoint drawn: plausible fields, some nasty, and the CSRF token
        (mostly). The game page's forms post a command as its ``cmd`` JSON, with a field for
        each input it needs (price, text, cards)."""
        plausible = dict(FORM, key=f"k-{data.draw(st.integers(0, 10**6))}")
        if self.endpoint == "pages.act":
            cmd = self.command(data, bearer)
            plausible = {"key": plausible["key"], "cmd": cmd}
            if isinstance(cmd.get("price"), dict) and len(cmd["price"]) == 1:
                ((kind, amount),) = cmd.pop("price").items()
                plausible.update(price=amount, price_kind=kind)
            if "text" in cmd:
                plausible["text"] = cmd.pop("text")
            if isinstance(cmd.get("cards"), list):
                plausible.update(cards=cmd.pop("cards")[:1], count="1")
            plausible["cmd"] = json.dumps(cmd)
        form = self.fields(data, plausible)
        if data.draw(st.integers(0, 99)) >= self.rate // 2:
            form["csrf_token"] = csrf
        return form

    def send(self, data: Any, rule: Rule | None) -> Any:
        """Draw one request to ``rule`` and send it: first how nasty it is (``rate``, in
        percent: some requests are all plausible, some all nasty)."""
        self.rate = data.draw(st.sampled_from(RATES))
        path, methods = self.path(data, rule)
        browsers = self.browsers  # the organiser first for the organiser's pages
        if "admin" in self.endpoint or self.endpoint == "pages.created_page":
            browsers = [browsers[ADMIN], *browsers[:ADMIN], *browsers[ADMIN + 1 :]]
        browser, csrf = data.draw(st.sampled_from(browsers))
        index = next(i for i, (b, _c) in enumerate(self.browsers) if b is browser)
        self.index = index
        bearer = data.draw(st.sampled_from(self.bearers))
        if not self.endpoint.startswith("api.") and data.draw(st.integers(0, 99)) >= self.rate:
            bearer = None  # a browser sends no token, mostly (the pages take one too)
        method = self.or_nasty(data, st.sampled_from(methods), st.sampled_from(["PUT", "DELETE"]))
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        if data.draw(st.integers(0, 99)) < self.rate:
            key = data.draw(st.text(st.characters(max_codepoint=255), max_size=20))
            headers["Idempotency-Key"] = re.sub(r"[\r\n]", "", key)
        if data.draw(st.booleans()):
            headers["HX-Request"] = "true"
        if data.draw(st.integers(0, 3)) == 0:
            query = self.fields(data, dict(QUERY))
            path = f"{path}?{urlencode({_raw(k): _raw(str(v)) for k, v in query.items()})}"
        kwargs: dict[str, Any] = {"headers": headers}
        # whom the request acts as: its bearer token, else the seat its browser signed in as
        actor = bearer or (self.tokens[index] if index < len(self.tokens) else None)
        if method in ("POST", "PUT"):
            api = self.endpoint.startswith("api.")
            if data.draw(st.integers(0, 99)) < self.rate // 3:
                kwargs["data"] = data.draw(st.sampled_from(RAW_BODIES))
                headers["Content-Type"] = "application/json"
            elif api != (data.draw(st.integers(0, 99)) < self.rate // 3):
                kwargs["data"] = json.dumps(self.json_body(data, actor)).encode()
                headers["Content-Type"] = "application/json"
            else:  # urlencoded by hand: a lone surrogate goes as the bytes a client would send
                form = self.form(data, csrf, actor)
                pairs = [
                    (_raw(k), _raw(str(item)))
                    for k, v in form.items()
                    for item in (v if isinstance(v, list) else [v])
                ]
                kwargs["data"] = urlencode(pairs)
                headers["Content-Type"] = "application/x-www-form-urlencoded"
        return browser.open(path, method=method, **kwargs)


def _every_page_opens(app: Any, fuzzer: Fuzzer) -> None:
    """Every game page, fragment, history and deal list opens for every seat of every game
    (signed in from the seat's current token fingerprint) and for the organiser; a game made
    by the fuzzer that waits for its organiser's confirmation may answer so (409)."""
    with app.app_context():
        seats = db.session.execute(select(Seat.game_id, Seat.seat_index, Seat.token_hash)).all()
        games = db.session.execute(select(Game.id)).scalars().all()
        waiting = set(
            db.session.execute(select(Game.id).where(Game.status == "unconfirmed")).scalars()
        )
    browser = app.test_client()
    with browser.session_transaction() as session:
        session["admin"] = list(games)
    for game_id, index, token_hash in seats:
        with browser.session_transaction() as session:
            session["seats"] = {game_id: [index, token_hash[:16]]}
        for page in ("", "/fragment", "/history", "/deals", "/inbox", "/settings"):
            response = browser.get(f"/g/{game_id}{page}")
            expected = (200, 409) if game_id in waiting else (200,)
            assert response.status_code in expected, (game_id, index, page, response.status_code)


def test_fuzz_every_route_no_5xx_and_refusals_write_nothing(app, world) -> None:
    """``EXAMPLES`` requests to each route (three times as many to those that play or create
    games), and to paths no route has."""
    fuzzer = Fuzzer(app, world)

    def fuzz(rule: Rule | None) -> None:
        @settings(
            max_examples=EXAMPLES * (3 if rule is not None and rule.endpoint in WRITES else 1),
            deadline=None,
            derandomize=not RANDOM,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.data())
        def one_request(data: Any) -> None:
            before = stored(app)
            response = fuzzer.send(data, rule)
            status = response.status_code
            request = response.request
            fuzzer.seen[(request.method, fuzzer.endpoint, status)] += 1
            assert status < 500, (request.method, request.path, response.get_data()[:500])
            if 400 <= status < 500:
                assert stored(app) == before, (request.method, request.path, status)
            if fuzzer.endpoint == "pages.admin_resend" and status < 400:
                fuzzer.refresh()

        one_request()

    for rule in [*fuzzer.rules, None]:
        fuzz(rule)
    _every_page_opens(app, fuzzer)
    print("\n".join(f"{n:4} {m} {e}: {s}" for (m, e, s), n in sorted(fuzzer.seen.items())))
    reached = {e for (_m, e, s), _n in fuzzer.seen.items() if s < 400}
    missed = {r.endpoint for r in fuzzer.rules} - reached - UNREACHED
    assert not missed, f"no request got past the checks of {sorted(missed)}"
