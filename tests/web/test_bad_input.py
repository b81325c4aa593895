"""Bad input on PostgreSQL: unknown game, wrong token, another game's token,
malformed JSON, negative or huge prices, commands illegal now, a missing idempotency key, ``GET``
and ``HEAD`` on an action URL... Each gets a 4xx JSON error with a message, never a 5xx, and
changes nothing: the events, commands, notifications and games stay as they were."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import imtheboss.engine
import pytest
from support.api_client import World, signed_in, stored
from support.deal import PLAYERS

Case = Callable[[World], Any]
HUGE = "9" * 5000  # more digits than Python parses from JSON (ValueError, not a crash)

CASES: dict[str, tuple[int, str, Case]] = {
    # unknown game, tokens
    "unknown game": (404, "no_game", lambda w: w.client.get("/api/games/nosuchgame")),
    "unknown game, valid token elsewhere": (
        404,
        "no_game",
        lambda w: w.client.get("/api/games/nosuchgame", headers=w.headers(w.tokens[0])),
    ),
    "unknown game, overlong id": (
        404,
        "no_game",
        lambda w: w.client.get("/api/games/" + "x" * 300, headers=w.headers(w.tokens[0])),
    ),
    "unknown game, command": (
        404,
        "no_game",
        lambda w: w.client.post(
            "/api/games/nosuchgame/commands",
            json={"command": {"do": "roll"}, "idempotency_key": "k"},
            headers=w.headers(w.tokens[0]),
        ),
    ),
    "unknown game, events": (
        404,
        "no_game",
        lambda w: w.client.get("/api/games/nosuchgame/events", headers=w.headers(w.tokens[0])),
    ),
    "unknown API path": (404, "not_found", lambda w: w.client.get("/api/nothing/here")),
    "no token": (401, "unauthorized", lambda w: w.client.get(f"/api/games/{w.gid}")),
    "no token, command": (
        401,
        "unauthorized",
        lambda w: w.client.post(
            f"/api/games/{w.gid}/commands",
            json={"command": {"do": "chat", "text": "x"}, "idempotency_key": "k"},
        ),
    ),
    "basic auth instead of bearer": (
        401,
        "unauthorized",
        lambda w: w.client.get(f"/api/games/{w.gid}", headers={"Authorization": "Basic YTpi"}),
    ),
    "token in the query string": (
        401,
        "unauthorized",
        lambda w: w.client.get(f"/api/games/{w.gid}?token={w.tokens[0]}"),
    ),
    "wrong token": (
        403,
        "bad_token",
        lambda w: w.client.get(f"/api/games/{w.gid}", headers=w.headers("x" * 32)),
    ),
    "short garbage token": (
        403,
        "bad_token",
        lambda w: w.client.get(f"/api/games/{w.gid}/events", headers=w.headers("x")),
    ),
    "other game's token": (
        403,
        "bad_token",
        lambda w: w.client.get(f"/api/games/{w.gid}", headers=w.headers(w.other_tokens[0])),
    ),
    "other game's token, command": (
        403,
        "bad_token",
        lambda w: w.client.post(
            f"/api/games/{w.gid}/commands",
            json={"command": {"do": "chat", "text": "x"}, "idempotency_key": "k"},
            headers=w.headers(w.other_tokens[w.other]),
        ),
    ),
    "other game's token, join": (
        403,
        "bad_token",
        lambda w: w.client.post(f"/api/games/{w.gid}/join", headers=w.headers(w.other_tokens[1])),
    ),
    "admin token cannot play": (
        403,
        "not_a_seat",
        lambda w: w.client.post(
            f"/api/games/{w.gid}/commands",
            json={"command": {"do": "chat", "text": "x"}, "idempotency_key": "k"},
            headers=w.headers(w.admin),
        ),
    ),
    # malformed bodies
    "malformed JSON": (400, "bad_json", lambda w: w.post('{"command": {"do": "roll"')),
    "JSON array": (400, "bad_json", lambda w: w.post("[1, 2]")),
    "empty body": (400, "bad_json", lambda w: w.post(b"")),
    "invalid UTF-8": (400, "bad_json", lambda w: w.post(b'{"command": "\xff\xfe"}')),
    "NaN": (400, "bad_json", lambda w: w.post('{"command": NaN, "idempotency_key": "k"}')),
    "deep nesting": (400, "bad_json", lambda w: w.post("[" * 100_000 + "]" * 100_000)),
    "form instead of JSON": (
        400,
        "bad_json",
        lambda w: w.client.post(
            f"/api/games/{w.gid}/commands",
            data={"command": "roll", "idempotency_key": "k"},
            headers=w.headers(w.tokens[0]),
        ),
    ),
    "JSON as text/plain": (
        400,
        "bad_json",
        lambda w: w.post(
            json.dumps({"command": {"do": "chat", "text": "x"}, "idempotency_key": "k"}),
            headers={"Content-Type": "text/plain"},
        ),
    ),
    "body too large": (413, "request_entity_too_large", lambda w: w.post(" " * (2 << 20))),
    "unknown field": (
        400,
        "bad_request",
        lambda w: w.post({"command": {"do": "roll"}, "idempotency_key": "k", "seat": 0}),
    ),
    "no command": (400, "bad_command", lambda w: w.post({"idempotency_key": "k"})),
    "command is text": (400, "bad_command", lambda w: w.cmd("roll")),
    "command without do": (400, "bad_command", lambda w: w.cmd({"card": "family:W"})),
    "do is a number": (400, "bad_command", lambda w: w.cmd({"do": 7})),
    "unknown do": (400, "bad_command", lambda w: w.cmd({"do": "fly"})),
    "missing argument": (400, "bad_command", lambda w: w.cmd({"do": "offer", "card": "x"})),
    "extra argument": (400, "bad_command", lambda w: w.cmd({"do": "roll", "dice": 6})),
    "legal command sent with its needs": (
        400,
        "bad_command",
        lambda w: w.cmd({"do": "chat", "needs": ["text"]}),
    ),
    "timeout from a seat": (400, "bad_command", lambda w: w.cmd({"do": "timeout"})),
    "chat text not a string": (400, "bad_command", lambda w: w.cmd({"do": "chat", "text": 5})),
    "chat text too long": (400, "bad_command", lambda w: w.cmd({"do": "chat", "text": "x" * 2001})),
    # prices
    "negative price": (400, "bad_command", lambda w: w.offer({"cash": -1})),
    "huge price": (400, "bad_command", lambda w: w.offer({"cash": 10**12})),
    "too many digits": (
        400,
        "bad_json",
        lambda w: w.post(_offer_text(w, HUGE)),
    ),
    "infinite price": (
        400,
        "bad_input",
        lambda w: w.post(_offer_text(w, "1e400")),
    ),
    "price beyond what JSON carries exactly": (
        400,
        "bad_input",
        lambda w: w.post(_offer_text(w, str(2**53))),
    ),
    "fractional price": (400, "bad_command", lambda w: w.offer({"cash": 2.5})),
    "price as text": (400, "bad_command", lambda w: w.offer({"cash": "3"})),
    "price as boolean": (400, "bad_command", lambda w: w.offer({"cash": True})),
    "price in two currencies": (400, "bad_command", lambda w: w.offer({"cash": 1, "shares": 1})),
    "price not an object": (400, "bad_command", lambda w: w.offer(3)),
    # illegal now
    "roll during a negotiation": (409, "wrong_phase", lambda w: w.cmd({"do": "roll"}, w.boss)),
    "place the marker again": (
        409,
        "wrong_phase",
        lambda w: w.cmd({"do": "place_marker", "space": 1}, w.boss),
    ),
    "stop with nothing pending": (409, "nothing_to_stop", lambda w: w.cmd({"do": "stop"})),
    "allow naming a window that never was": (
        409,
        "window_closed",
        lambda w: w.cmd({"do": "allow", "window": "w99"}),
    ),
    "close by a seat that is not the boss": (409, "not_boss", lambda w: w.cmd({"do": "close"})),
    "accept with nothing offered": (
        409,
        "no_terms",
        lambda w: w.cmd({"do": "accept", "with": w.boss, "price": {"cash": 1}}),
    ),
    # characters no text may hold: NUL, lone surrogates, control characters
    "lone surrogate in a chat": (400, "bad_input", lambda w: w.cmd(_chat("a\ud800b"))),
    "NUL in a chat": (400, "bad_input", lambda w: w.cmd(_chat("a\x00b"))),
    "terminal escape in a chat": (400, "bad_input", lambda w: w.cmd(_chat("\x1b[2Jhi"))),
    "C1 control in a chat": (400, "bad_input", lambda w: w.cmd(_chat("a\x85b"))),
    "right-to-left override in a chat": (400, "bad_input", lambda w: w.cmd(_chat("a\u202eb"))),
    "bidi isolate in a chat": (400, "bad_input", lambda w: w.cmd(_chat("\u2067hi\u2069"))),
    "lone surrogate in a command name": (400, "bad_input", lambda w: w.cmd({"do": "\udc00"})),
    "NUL in a field name": (400, "bad_input", lambda w: w.cmd({"do": "chat", "te\x00xt": "x"})),
    "NUL in an idempotency key": (400, "bad_input", lambda w: w.cmd(_chat("x"), key="k\x00")),
    "lone surrogate in an idempotency key": (
        400,
        "bad_input",
        lambda w: w.cmd(_chat("x"), key="k\ud800"),
    ),
    "new line in an idempotency key": (400, "bad_input", lambda w: w.cmd(_chat("x"), key="k\n")),
    "control character in the Idempotency-Key header": (
        400,
        "bad_input",
        lambda w: w.post({"command": _chat("x")}, headers={"Idempotency-Key": "k\x01"}),
    ),
    "NUL in the game id": (
        400,
        "bad_input",
        lambda w: w.client.get("/api/games/%00", headers=w.headers(w.tokens[0])),
    ),
    "NUL in the game id, command": (
        400,
        "bad_input",
        lambda w: w.client.post(
            "/api/games/%00/commands",
            json={"command": _chat("x"), "idempotency_key": "k"},
            headers=w.headers(w.tokens[0]),
        ),
    ),
    "a game id no game can have": (
        404,
        "no_game",
        lambda w: w.client.get("/api/games/a.b%20c", headers=w.headers(w.tokens[0])),
    ),
    "NUL in a query string": (400, "bad_input", lambda w: _events(w, after="1\x00")),
    "a digit that is not 0-9": (400, "bad_request", lambda w: _events(w, after="\u00b2")),
    "nesting deeper than any field": (
        400,
        "bad_input",
        lambda w: w.post(
            '{"command": {"do": "chat", "text": '
            + "[" * 500
            + "]" * 500
            + '}, "idempotency_key": "k"}'
        ),
    ),
    # idempotency keys
    "missing idempotency key": (
        400,
        "bad_key",
        lambda w: w.post({"command": {"do": "chat", "text": "x"}}),
    ),
    "empty idempotency key": (400, "bad_key", lambda w: w.cmd({"do": "chat", "text": "x"}, key="")),
    "overlong idempotency key": (
        400,
        "bad_key",
        lambda w: w.cmd({"do": "chat", "text": "x"}, key="k" * 101),
    ),
    "idempotency key not a string": (
        400,
        "bad_key",
        lambda w: w.cmd({"do": "chat", "text": "x"}, key=12),
    ),
    "header and body keys differ": (
        400,
        "bad_key",
        lambda w: w.post(
            {"command": {"do": "chat", "text": "x"}, "idempotency_key": "a"},
            headers={"Idempotency-Key": "b"},
        ),
    ),
    # methods
    "GET on the command URL": (
        405,
        "method_not_allowed",
        lambda w: w.client.get(f"/api/games/{w.gid}/commands", headers=w.headers(w.tokens[0])),
    ),
    "HEAD on the command URL": (
        405,
        "method_not_allowed",
        lambda w: w.client.head(f"/api/games/{w.gid}/commands", headers=w.headers(w.tokens[0])),
    ),
    "PUT on the command URL": (
        405,
        "method_not_allowed",
        lambda w: w.client.put(f"/api/games/{w.gid}/commands", json={}),
    ),
    "GET on the join URL": (
        405,
        "method_not_allowed",
        lambda w: w.client.get(f"/api/games/{w.gid}/join", headers=w.headers(w.tokens[0])),
    ),
    "GET on the create URL": (405, "method_not_allowed", lambda w: w.client.get("/api/games")),
    "HEAD on the create URL": (405, "method_not_allowed", lambda w: w.client.head("/api/games")),
    # event paging
    "negative after": (400, "bad_request", lambda w: _events(w, after="-1")),
    "after not a number": (400, "bad_request", lambda w: _events(w, after="abc")),
    "limit zero": (400, "bad_request", lambda w: _events(w, limit="0")),
    "limit too large": (400, "bad_request", lambda w: _events(w, limit="5000")),
    "after with a thousand digits": (400, "bad_request", lambda w: _events(w, after="9" * 1000)),
    # creating games
    "create without players": (400, "bad_settings", lambda w: _create(w, players=None)),
    "create with one player": (400, "bad_settings", lambda w: _create(w, players=_p(1))),
    "create with seven players": (400, "bad_settings", lambda w: _create(w, players=_p(7))),
    "create with a bad email": (
        400,
        "bad_settings",
        lambda w: _create(w, players=[{"name": "A", "email": "nope"}] + _p(2)[1:]),
    ),
    "create with a player not an object": (
        400,
        "bad_settings",
        lambda w: _create(w, players=["Amy", "Bill", "Carla"]),
    ),
    "create with an overlong name": (
        400,
        "bad_settings",
        lambda w: _create(w, players=[{"name": "A" * 41, "email": "a@x.org"}] + _p(2)[1:]),
    ),
    "create with an unknown option": (
        400,
        "bad_settings",
        lambda w: _create(w, options={"cheat": True}),
    ),
    "create with options not an object": (400, "bad_settings", lambda w: _create(w, options=[])),
    "create with a broken board": (400, "bad_settings", lambda w: _create(w, board=[1, 2])),
    "create with a board object lacking spaces": (
        400,
        "bad_settings",
        lambda w: _create(w, board={"spaces": "x"}),
    ),
    "create with a board path (no file reading)": (
        400,
        "bad_settings",
        lambda w: _create(w, board="engine/data/default_board.json"),
    ),
    "create with a seed (hidden information)": (400, "bad_request", lambda w: _create(w, seed=1)),
    "create with a title not text": (400, "bad_settings", lambda w: _create(w, title=5)),
    "create with NUL in a player's email": (
        400,
        "bad_input",
        lambda w: _create(w, players=[{"name": "A", "email": "a\x00@x.org"}] + _p(3)[1:]),
    ),
    "create with a lone surrogate in a player's email": (
        400,
        "bad_input",
        lambda w: _create(w, players=[{"name": "A", "email": "a\ud800@x.org"}] + _p(3)[1:]),
    ),
    "create with NUL in a name": (
        400,
        "bad_input",
        lambda w: _create(w, players=[{"name": "A\x00", "email": "a@x.org"}] + _p(3)[1:]),
    ),
    "create with a lone surrogate in a name": (
        400,
        "bad_input",
        lambda w: _create(w, players=[{"name": "\udbff", "email": "a@x.org"}] + _p(3)[1:]),
    ),
    "create with NUL in the title": (400, "bad_input", lambda w: _create(w, title="t\x00")),
    "create with an overlong board name": (
        400,
        "bad_settings",
        lambda w: _create(w, board={"name": "B" * 121, "spaces": _default_spaces()}),
    ),
    "create with an overlong board provenance": (
        400,
        "bad_settings",
        lambda w: _create(w, board={"provenance": "p" * 2001, "spaces": _default_spaces()}),
    ),
    "create with an overlong title": (400, "bad_settings", lambda w: _create(w, title="T" * 121)),
    "create with an overlong title after spaces": (
        400,
        "bad_settings",
        lambda w: _create(w, title=" " + "T" * 300),
    ),
    "create with names alike but for a zero-width space": (
        400,
        "bad_settings",
        lambda w: _create(
            w, players=[{"name": "Amy", "email": "a@example.org"}, *_named("Amy\u200b")]
        ),
    ),
    "create with names alike but for the case": (
        400,
        "bad_settings",
        lambda w: _create(w, players=[{"name": "Amy", "email": "a@example.org"}, *_named("AMY")]),
    ),
    "create with a name that mixes look-alike alphabets": (
        400,
        "bad_settings",
        lambda w: _create(
            w, players=[{"name": "Bob", "email": "a@example.org"}, *_named("\u0412\u043eb")]
        ),
    ),
    "create with names alike after NFKC": (
        400,
        "bad_settings",
        lambda w: _create(
            w, players=[{"name": "Amy", "email": "a@example.org"}, *_named("\uff21my ")]
        ),
    ),
    "create with a bidi control in a name": (
        400,
        "bad_input",
        lambda w: _create(
            w, players=[{"name": "\u2066Bo", "email": "a@example.org"}, *_named("Cy")]
        ),
    ),
    "create with a lone surrogate in the title": (
        400,
        "bad_input",
        lambda w: _create(w, title="t\ud800"),
    ),
    "create with a new line in the title": (
        400,
        "bad_input",
        lambda w: _create(w, title="Hi\r\nBcc: evil@example.org"),
    ),
    "create with NUL in creator_email": (
        400,
        "bad_input",
        lambda w: _create(w, creator_email="org\x00@example.org"),
    ),
    "create with a lone surrogate in creator_email": (
        400,
        "bad_input",
        lambda w: _create(w, creator_email="org\udfff@example.org"),
    ),
    "create with a creator_email that is no address": (
        400,
        "bad_settings",
        lambda w: _create(w, creator_email="nope"),
    ),
    "create with two addresses as creator_email": (
        400,
        "bad_settings",
        lambda w: _create(w, creator_email="a@example.org, b@example.org"),
    ),
    "create with an international address and no SMTPUTF8": (
        400,
        "bad_settings",
        lambda w: _create(w, players=[{"name": "A", "email": "用户@例子.中国"}] + _p(3)[1:]),
    ),
    "create with an infinite window (1e999)": (
        400,
        "bad_input",
        lambda w: _create_text(w, '"options": {"windows": {"turn": 1e999}}'),
    ),
    "create with a window of 10**30 seconds": (
        400,
        "bad_input",
        lambda w: _create(w, options={"windows": {"turn": 10**30}}),
    ),
    "create with malformed JSON": (
        400,
        "bad_json",
        lambda w: w.client.post(
            "/api/games", data="{", headers={"Content-Type": "application/json"}
        ),
    ),
}


def _offer_text(w: World, amount: str) -> str:
    """An offer's JSON text with ``amount`` written verbatim as its price in M."""
    body = {"command": {"do": "offer", "card": w.offer_card, "price": {"cash": 0}}}
    text = json.dumps({**body, "idempotency_key": "k"})
    return text.replace('"cash": 0', f'"cash": {amount}')


def _chat(text: str) -> dict[str, str]:
    return {"do": "chat", "text": text}


def _create_text(w: World, extra: str) -> Any:
    """POST ``/api/games`` with a JSON text holding ``extra`` verbatim (numbers ``json.dumps``
    cannot write)."""
    body = json.dumps({"title": "t", "players": _p(3)})[:-1] + ", " + extra + "}"
    return w.client.post("/api/games", data=body, headers={"Content-Type": "application/json"})


def _events(w: World, **query: str) -> Any:
    return w.client.get(
        f"/api/games/{w.gid}/events", query_string=query, headers=w.headers(w.tokens[0])
    )


def _p(n: int) -> list[dict[str, str]]:
    return [{"name": f"P{i}", "email": f"p{i}@example.org"} for i in range(n)]


def _default_spaces() -> list:
    """The default board's 16 spaces, as a board file holds them."""
    path = Path(imtheboss.engine.__file__).parent / "data/default_board.json"
    return json.loads(path.read_text())["spaces"]


def _named(name: str) -> list[dict[str, str]]:
    """Two more players, the first named ``name``."""
    return [{"name": name, "email": "n@example.org"}, {"name": "Zed", "email": "z@example.org"}]


def _create(w: World, **fields: Any) -> Any:
    body = {"title": "t", "players": _p(3), "creator_email": "org@example.org", **fields}
    return w.client.post("/api/games", json={k: v for k, v in body.items() if v is not None})


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_gets_a_4xx_json_error_and_changes_nothing(app, world, name) -> None:
    status, code, make = CASES[name]
    before = stored(app)
    response = make(world)
    assert response.status_code == status, (response.status_code, response.get_data()[:300])
    assert response.mimetype == "application/json"
    if response.request.method != "HEAD":
        error = response.get_json()["error"]
        assert error["code"] == code
        assert isinstance(error["message"], str) and error["message"].strip()
    if status == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert stored(app) == before


def test_the_same_game_still_plays_after_the_sweep(app, world) -> None:
    """The sweep's game is intact: every bad request above left it playable."""
    for name in ("negative price", "malformed JSON", "roll during a negotiation"):
        assert CASES[name][2](world).status_code < 500
    response = world.offer({"cash": 2})
    assert response.status_code == 201, response.get_json()
    assert [e["type"] for e in response.get_json()["events"]][-1] == "terms_set"


PAGES = importlib.util.find_spec("imtheboss.web.pages.common") is not None
needs_pages = pytest.mark.skipif(not PAGES, reason="imtheboss.web.pages.common not written yet")
JSON = {"Accept": "application/json"}


def _form(csrf: str | None, cmd: Any, **fields: str) -> dict[str, str]:
    data = {"cmd": cmd if isinstance(cmd, str) else json.dumps(cmd), "key": "page-key", **fields}
    if csrf is not None:
        data["csrf_token"] = csrf
    return data


CHAT = {"do": "chat", "needs": ["text"]}
PAGE_CASES: dict[str, tuple[int, str | None, Callable[[World, Any, str], Any]]] = {
    "no CSRF token": (400, "csrf", lambda w, b, t: _act(w, b, _form(None, CHAT, text="x"))),
    "wrong CSRF token": (400, "csrf", lambda w, b, t: _act(w, b, _form("forged", CHAT, text="x"))),
    "malformed form": (400, "bad_form", lambda w, b, t: _act(w, b, _form(t, "{not json"))),
    "no command": (400, "bad_form", lambda w, b, t: _act(w, b, {"csrf_token": t, "key": "k"})),
    "negative price": (
        400,
        "bad_price",
        lambda w, b, t: _act(w, b, _form(t, {"do": "offer", "card": w.offer_card}, price="-1")),
    ),
    "huge price": (
        400,
        "bad_price",
        lambda w, b, t: _act(
            w, b, _form(t, {"do": "offer", "card": w.offer_card}, price="99999999999")
        ),
    ),
    "unknown price kind": (
        400,
        "bad_price",
        lambda w, b, t: _act(
            w, b, _form(t, {"do": "offer", "card": w.offer_card}, price="2", price_kind="gold")
        ),
    ),
    "a turn command from a seat whose turn it is not": (
        409,
        "not_your_turn",
        lambda w, b, t: _act(w, b, _form(t, {"do": "roll"})),
    ),
    "missing key": (
        400,
        "bad_key",
        lambda w, b, t: _act(w, b, {"csrf_token": t, "cmd": json.dumps(CHAT), "text": "x"}),
    ),
    "unknown game": (
        404,
        "no_game",
        lambda w, b, t: b.post("/g/nosuchgame/act", data=_form(t, CHAT, text="x"), headers=JSON),
    ),
    "signed in to another game only": (
        403,
        "not_a_seat",
        lambda w, b, t: _act(w, _elsewhere(w, b), _form(t, CHAT, text="x")),
    ),
    "not signed in": (400, None, lambda w, b, t: _act(w, w.client, _form(t, CHAT, text="x"))),
    "GET on the action URL": (
        405,
        "method_not_allowed",
        lambda w, b, t: b.get(f"/g/{w.gid}/act", headers=JSON),
    ),
    "HEAD on the action URL": (
        405,
        "method_not_allowed",
        lambda w, b, t: b.head(f"/g/{w.gid}/act", headers=JSON),
    ),
    "NUL in a chat": (400, "bad_input", lambda w, b, t: _act(w, b, _form(t, CHAT, text="a\x00b"))),
    "right-to-left override in a chat": (
        400,
        "bad_input",
        lambda w, b, t: _act(w, b, _form(t, CHAT, text="1 \u202egnirts")),
    ),
    "terminal escape in a chat": (
        400,
        "bad_input",
        lambda w, b, t: _act(w, b, _form(t, CHAT, text="\x1b[2Jhi")),
    ),
    "NUL in the key": (
        400,
        "bad_input",
        lambda w, b, t: _act(w, b, _form(t, CHAT, text="x", key="k\x00")),
    ),
    "NUL in the game id": (400, "bad_input", lambda w, b, t: b.get("/g/%00", headers=JSON)),
    "NUL in the game id, fragment": (
        400,
        "bad_input",
        lambda w, b, t: b.get("/g/%00/fragment", headers=JSON),
    ),
    "NUL in the game id, action": (
        400,
        "bad_input",
        lambda w, b, t: b.post("/g/%00/act", data=_form(t, CHAT, text="x"), headers=JSON),
    ),
    "a game id no game can have": (404, "no_game", lambda w, b, t: b.get("/g/..", headers=JSON)),
    "NUL in a seat link": (
        400,
        "bad_input",
        lambda w, b, t: w.client.get(f"/g/{w.gid}/s/{'x' * 16}%00", headers=JSON),
    ),
    "a seat link no token can be": (
        403,
        "bad_token",
        lambda w, b, t: w.client.get(f"/g/{w.gid}/s/{'x' * 16}%C3%A9", headers=JSON),
    ),
    "a digit that is not 0-9 in the discard count": (
        400,
        "bad_form",
        lambda w, b, t: _act(w, b, _form(t, {"do": "discard"}, cards="x", count="\u00b2")),
    ),
    "admin: NUL in a seat's new email": (
        400,
        "bad_input",
        lambda w, b, t: _fix_email(w, b, t, "amy\x00@example.org"),
    ),
    "admin: a seat's new email is no address": (
        400,
        "bad_email",
        lambda w, b, t: _fix_email(w, b, t, "Friend <evil@example.org>"),
    ),
    "admin: an international address and no SMTPUTF8": (
        400,
        "bad_email",
        lambda w, b, t: _fix_email(w, b, t, "用户@例子.中国"),
    ),
    "wrong seat link": (
        403,
        "bad_token",
        lambda w, b, t: w.client.get(f"/g/{w.gid}/s/{'x' * 32}", headers=JSON),
    ),
    "broken UTF-8 in a chat form (kept as %FF text before)": (
        400,
        "bad_input",
        lambda w, b, t: _raw_act(w, b, t, "hello%20%FF%20world"),
    ),
    "a surrogate encoded as UTF-8 bytes in a chat form": (
        400,
        "bad_input",
        lambda w, b, t: _raw_act(w, b, t, "hi%20%ED%A0%80"),
    ),
    "an overlong encoding in a chat form": (
        400,
        "bad_input",
        lambda w, b, t: _raw_act(w, b, t, "x%C0%AFy"),
    ),
    "broken UTF-8 in the query string": (
        400,
        "bad_input",
        lambda w, b, t: b.get(f"/g/{w.gid}/history?page=%FF", headers=JSON),
    ),
    "admin: a seat number no database integer holds": (
        404,
        None,
        lambda w, b, t: _fix_email(w, b, t, "amy@example.org", "99999999999999999999"),
    ),
    "admin: a seat number just past 2**63": (
        404,
        None,
        lambda w, b, t: _fix_email(w, b, t, "amy@example.org", str(2**63)),
    ),
    "other game's seat link": (
        403,
        "bad_token",
        lambda w, b, t: w.client.get(f"/g/{w.gid}/s/{w.other_tokens[0]}", headers=JSON),
    ),
}


def _act(w: World, browser: Any, data: dict[str, str]) -> Any:
    return browser.post(f"/g/{w.gid}/act", data=data, headers=JSON)


def _raw_act(w: World, browser: Any, csrf: str, text: str) -> Any:
    """A chat form posted as raw urlencoded bytes, ``text`` percent-encoded as given."""
    cmd = quote(json.dumps({"do": "chat"}))
    body = f"csrf_token={quote(csrf)}&key=raw-key&cmd={cmd}&text={text}"
    return browser.post(
        f"/g/{w.gid}/act",
        data=body.encode("ascii"),
        content_type="application/x-www-form-urlencoded",
        headers=JSON,
    )


def _fix_email(w: World, browser: Any, csrf: str, email: str, seat: str = "0") -> Any:
    """The organiser's form that fixes seat ``seat``'s email, posted by ``browser`` signed in as
    the organiser too."""
    assert browser.get(f"/g/{w.gid}/admin/{w.admin}").status_code == 303
    return browser.post(
        f"/g/{w.gid}/admin/seat/{seat}/email",
        data={"csrf_token": csrf, "email": email},
        headers=JSON,
    )


def _elsewhere(w: World, browser: Any) -> Any:
    """The same browser (same CSRF token), signed in to the other game only."""
    with browser.session_transaction() as session:
        session["seats"] = {}
    assert browser.get(f"/g/{w.other_gid}/s/{w.other_tokens[w.other]}").status_code == 303
    return browser


@needs_pages
@pytest.mark.parametrize("name", list(PAGE_CASES))
def test_page_action_refuses_bad_requests(app, world, name) -> None:
    """The page part of the sweep (``POST /g/<gid>/act`` and the seat link): a 4xx with a
    message (JSON when asked for) and nothing changes."""
    status, code, make = PAGE_CASES[name]
    browser, csrf = signed_in(app, world.gid, world.tokens[world.other])
    before = stored(app)
    response = make(world, browser, csrf)
    assert response.status_code == status, (response.status_code, response.get_data()[:300])
    if response.request.method != "HEAD":
        error = response.get_json()["error"]
        assert code is None or error["code"] == code
        assert error["message"].strip()
    assert stored(app) == before


@needs_pages
def test_page_errors_are_pages_for_browsers(app, world) -> None:
    """Without asking for JSON, a refusal is a 4xx HTML page that says what went wrong."""
    browser, csrf = signed_in(app, world.gid, world.tokens[world.other])
    before = stored(app)
    response = browser.post(
        f"/g/{world.gid}/act",
        data=_form(csrf, {"do": "offer", "card": world.offer_card}, price="-5"),
    )
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "-5" in response.get_data(as_text=True)
    assert stored(app) == before
    good = browser.post(f"/g/{world.gid}/act", data=_form(csrf, CHAT, text="hello"))
    assert good.status_code == 303 and stored(app)[2][0] == before[2][0] + 1  # one more event


def test_a_refusal_names_the_field_as_the_player_sees_it(app, world) -> None:
    """A bad character or number names the chat message or the price, in the player's
    language, never an internal field name such as ``cmd.text``."""
    browser, csrf = signed_in(app, world.gid, world.tokens[world.other])
    offer = {"do": "offer", "card": world.offer_card}
    for data, said in (
        (_form(csrf, CHAT, text="a\x01b"), "Your chat message holds"),
        (_form(csrf, {**CHAT, "text": "a\x01b"}), "Your chat message holds"),
        (_form(csrf, {**offer, "price": {"cash": "\u202e1"}}), "The price holds"),
        (_form(csrf, json.dumps(offer)[:-1] + ', "price": {"cash": 1e999}}'), "The price holds"),
        (_form(csrf, {**offer, "card": "x\x02"}), "The form holds"),
    ):
        answer = _act(world, browser, data)
        message = answer.get_json()["error"]["message"]
        assert answer.status_code == 400 and message.startswith(said), message
        assert "cmd" not in message and "“" not in message
    chinese = browser.post(
        f"/g/{world.gid}/act?lang=zh_Hans", data=_form(csrf, CHAT, text="a\x01b"), headers=JSON
    )
    message = chinese.get_json()["error"]["message"]
    assert chinese.status_code == 400 and "text" not in message and "字段" not in message, message


def test_a_chat_no_page_could_show_is_refused_and_every_page_still_opens(app, world) -> None:
    """A lone surrogate in a chat could be stored but never shown: the game page, its fragment
    and the history would fail for every seat. It is refused, and every page opens."""
    sent = world.cmd(_chat("a\ud800b"), world.other, "k-surrogate")
    for token in world.tokens:
        browser, _csrf = signed_in(app, world.gid, token)
        for page in ("", "/fragment", "/history", "/deals", "/deals/1"):
            response = browser.get(f"/g/{world.gid}{page}")
            assert response.status_code == 200, (page, response.status_code)
    assert sent.status_code == 400 and sent.get_json()["error"]["code"] == "bad_input"


NEW_GAME = {
    "title": "Friday",
    "creator_email": "org@example.org",
    "turn_hours": "24",
    "stop_hours": "6",
    "last_call_hours": "12",
    "negotiation_hours": "48",
    "board_choice": "default",
    **{
        f"players-{i}-{k}": v
        for i, (n, e) in enumerate(PLAYERS)
        for k, v in (("name", n), ("email", e))
    },
}


@needs_pages
@pytest.mark.parametrize(
    "field, value",
    [
        ("turn_hours", "nan"),
        ("stop_hours", "NaN"),
        ("last_call_hours", "inf"),
        ("negotiation_hours", "-Infinity"),
        ("turn_hours", "sNaN"),
        ("turn_hours", "1e999"),
        ("proxy_hours", "9" * 400),
        ("players-0-name", "Amy\x00"),
        ("players-1-email", "bill\x00@example.org"),
        ("players-1-email", "Bill <bill@example.org>"),
        ("title", "t\x00"),
        ("title", "two\nlines"),
        ("creator_email", "org\x00@example.org"),
        ("creator_email", "nope"),
        ("creator_email", "用户@例子.中国"),
    ],
)
def test_new_game_form_refuses_bad_text_and_numbers(app, world, field, value) -> None:
    """The create form: NUL and control characters, non-finite numbers and addresses that
    cannot be mailed get a 400 with a message, and no game is made."""
    browser, csrf = signed_in(app, world.gid, world.tokens[0])
    before = stored(app)
    response = browser.post("/new", data={**NEW_GAME, "csrf_token": csrf, field: value})
    assert response.status_code == 400, (response.status_code, response.get_data()[:300])
    assert stored(app) == before
    good = browser.post("/new", data={**NEW_GAME, "csrf_token": csrf})
    assert good.status_code == 303 and len(stored(app)[0]) == len(before[0]) + 1  # a game


@needs_pages
def test_a_resend_carrying_the_replaced_token_still_answers_the_organiser(app, world) -> None:
    """The organiser's resend, sent with the bearer token it replaces: the page answers (the
    fuzz test found it refused with 403 after the resend was stored), saying where the new link
    went, never showing it."""
    browser, csrf = signed_in(app, world.gid, world.admin, admin=True)
    response = browser.post(
        f"/g/{world.gid}/admin/seat/1/resend",
        data={"csrf_token": csrf},
        headers={"Authorization": f"Bearer {world.tokens[1]}"},
    )
    assert response.status_code == 200, response.status_code
    page = response.get_data(as_text=True)
    from imtheboss.web.games.seats import seats_of

    with app.app_context():
        address = seats_of(world.gid)[1].email
    assert f"/g/{world.gid}/s/" not in page and address in page


def test_text_written_on_several_lines_passes_the_edge_with_a_browser_s_line_breaks(app) -> None:
    """Browsers send a textarea's line breaks as CRLF: a chat (``text``) and a pasted reply
    (``body``) take them; a one-line field does not."""
    from imtheboss.web.app import inputs
    from imtheboss.web.games.basics import ServiceError

    for name in ("text", "body"):
        with app.test_request_context("/x", method="POST", data={name: "allow\r\n\r\n> quoted"}):
            inputs.check_request()
    one_line = app.test_request_context("/x", method="POST", data={"name": "Ann\r\nBo"})
    with one_line, pytest.raises(ServiceError):
        inputs.check_request()


def test_the_host_s_own_zone_is_no_time_zone() -> None:
    from imtheboss.web.say.display import valid_timezone

    assert valid_timezone("Europe/Berlin") and valid_timezone("UTC")
    assert not any(valid_timezone(z) for z in ("localtime", "Factory", "posixrules", "Nowhere/X"))
