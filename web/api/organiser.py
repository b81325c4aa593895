"""The organiser's acts in the JSON API (documented in ``docs/api.md``), on the API's blueprint:
``POST /api/games/<gid>/organiser/extend``, ``.../replace``, ``.../pause``, ``.../resume``.

Each is authenticated by the game's admin token (``Authorization: Bearer <admin token>``), the
token of the admin link the pages sign the organiser in with: no seat's token acts here (403
``not_admin``). They call the same service functions as the admin page (``web.organiser``,
``seats.set_status``), so each act is an event in the game's history (A13), a refusal changes
nothing and answers ``{"error": {"code", "message", "rule"}}`` with a 4xx status.
"""

from __future__ import annotations

from typing import Any

from flask import jsonify, request
from flask.typing import ResponseReturnValue
from imtheboss.engine.organiser import MAX_MINUTES
from imtheboss.web.api.seat import (
    bad_input,
    bearer_token,
    bp,
    event_json,
    event_times,
    only_fields,
    request_body,
)
from imtheboss.web.app.limits import client_address, spending
from imtheboss.web.games import organiser
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import get_game, require_confirmed
from imtheboss.web.games.seats import is_admin_token, seats_of, set_status


def _organiser(game_id: str) -> None:
    """The request carries the game's admin token. Raises ``ServiceError`` 404 (no such game),
    401 (no token), 403 (another token: a seat's, or another game's), 409 (not confirmed)."""
    game = get_game(game_id)
    token = bearer_token("the game's admin token (the last part of the admin link)")
    if not is_admin_token(game_id, token):
        raise ServiceError(
            403, "not_admin", "only the organiser's admin token can do this (a seat's cannot)"
        )
    require_confirmed(game)


def _whole(body: dict[str, Any], name: str, low: int, high: int) -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise bad_input("bad_request", f"{name} is a whole number from {low} to {high}")
    return value


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise bad_input("bad_request", f"{name} is a string")
    return value


def _key(body: dict[str, Any]) -> str:
    """The body's ``idempotency_key``, checked as the admin page's (``organiser.checked_key``).
    Raises ``ServiceError`` 400 ``bad_key`` with the API's own message."""
    key = _text(body, "idempotency_key")
    try:
        organiser.checked_key(key)
    except ServiceError:
        most = organiser.MAX_KEY_CHARS
        raise bad_input(
            "bad_key", f"idempotency_key is 1 to {most} characters, with no control character"
        ) from None
    return key


def _seat(game_id: str, body: dict[str, Any]) -> int:
    """The body's ``seat``: 0 to 5, else 400 ``bad_request``; one the game has, else 404
    ``no_seat``."""
    seat = _whole(body, "seat", 0, 5)
    if seat >= len(seats_of(game_id)):
        raise ServiceError(404, "no_seat", "there is no such seat in this game")
    return seat


@bp.post("/games/<game_id>/organiser/extend")
def organiser_extend(game_id: str) -> ResponseReturnValue:
    """More time (A13): ``{"minutes": 1..10080, "reason": text, "window": id}`` or ``{...,
    "seat": n}`` (every open window that waits for seat ``n``), ``"idempotency_key"``. 201
    with the ``window_extended`` event; 200 with ``duplicate: true`` for a repeated key; 409
    ``window_closed`` (no such open window), ``paused``, ``game_over``."""
    _organiser(game_id)
    body = request_body()
    only_fields(body, {"minutes", "reason", "window", "seat", "idempotency_key"})
    minutes = _whole(body, "minutes", 1, MAX_MINUTES)
    if ("window" in body) == ("seat" in body):
        raise bad_input("bad_request", "name one window or one seat")
    target: dict[str, Any] = {}
    if "seat" in body:
        target["seat"] = _seat(game_id, body)
    else:
        target["window"] = _text(body, "window")
    key = _key(body)
    try:
        result = organiser.extend(game_id, key, minutes, _text(body, "reason"), **target)
    except ServiceError as exc:
        if exc.code == "bad_command":  # malformed rather than against the rules
            raise ServiceError(400, exc.code, exc.message, exc.rule) from None
        raise
    times = event_times(game_id, [seq for seq, _event in result.events])
    out = [event_json(event, None, seq, times[seq]) for seq, event in result.events]
    return jsonify({"events": out, "duplicate": result.duplicate}), (
        200 if result.duplicate else 201
    )


@bp.post("/games/<game_id>/organiser/replace")
def organiser_replace(game_id: str) -> ResponseReturnValue:
    """The seat passes to a new player (A13): ``{"seat": n, "name": text, "email": address,
    "idempotency_key"}``. The new address gets an invitation with a fresh secret link (the old
    link dies), the old player a notice, the table the ``seat_replaced`` event (which holds no
    address). 201 ``{"seat", "name", "duplicate": false}``; 200 with ``duplicate: true`` for a
    repeat of the same key, seat, name and address; 409 ``key_reused`` for the key of another
    act. Counted as an invitation by the abuse limits."""
    _organiser(game_id)
    body = request_body()
    only_fields(body, {"seat", "name", "email", "idempotency_key"})
    seat = _seat(game_id, body)
    name, email = _text(body, "name"), _text(body, "email")
    key = _key(body)
    with spending("invitations", client_address()):
        made = organiser.replace_player(game_id, seat, name, email, key)
    answer = {"seat": seat, "name": name.strip(), "duplicate": not made}
    return jsonify(answer), 201 if made else 200


@bp.post("/games/<game_id>/organiser/bot")
def organiser_bot(game_id: str) -> ResponseReturnValue:
    """The seat passes to the server's bot (A13): ``{"seat": n, "idempotency_key"}``. The
    seat's link dies, the old player gets a notice, the table the ``seat_to_bot`` event; the
    bot plays at once. 201 ``{"seat", "duplicate": false}``; 200 with ``duplicate: true`` for a
    repeat of the same key and seat; 409 ``bots_only`` for the last seat of a person,
    ``bad_command`` for a seat a bot plays already, ``key_reused`` for the key of another act.
    Back to a person: ``organiser/replace``."""
    _organiser(game_id)
    body = request_body()
    only_fields(body, {"seat", "idempotency_key"})
    seat = _seat(game_id, body)
    made = organiser.pass_to_bot(game_id, seat, _key(body))
    return jsonify({"seat": seat, "duplicate": not made}), 201 if made else 200


@bp.post("/games/<game_id>/organiser/pause")
def organiser_pause(game_id: str) -> ResponseReturnValue:
    """Pause the game: every command is refused (409 ``paused``) and no window runs out until
    it is resumed; a ``game_paused`` event. A paused game stays paused (200, nothing new)."""
    return _set(game_id, "paused")


@bp.post("/games/<game_id>/organiser/resume")
def organiser_resume(game_id: str) -> ResponseReturnValue:
    """Resume a paused game: a ``game_resumed`` event, and every open deadline moves later by
    the time it was paused (``deadlines_extended``). A running game stays so (200)."""
    return _set(game_id, "active")


def _set(game_id: str, status: str) -> ResponseReturnValue:
    """Pause or resume; the body is empty or ``{}`` (anything else: 400 ``bad_json`` or
    ``bad_request``)."""
    _organiser(game_id)
    if request.get_data(cache=True):
        only_fields(request_body(), set())
    set_status(game_id, status)
    game = get_game(game_id)
    return jsonify({"status": game.status, "last_seq": game.last_seq})
