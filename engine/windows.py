"""Windows running out (A4, A5, A6), the server moving deadlines (A1) and away seats (A6)."""

from __future__ import annotations

from datetime import datetime, timedelta

from imtheboss.engine.closing import (
    close_deal,
    fail_deal,
    finish_expired,
    last_call_eligible,
    maybe_close,
)
from imtheboss.engine.context import (
    Ctx,
)
from imtheboss.engine.errors import RuleError
from imtheboss.engine.influence import maybe_resolve_stop, stop_eligible, take_effect
from imtheboss.engine.state import GameState, Window, parse_time
from imtheboss.engine.turn import discard_done, do_draw, do_open_deal, roll_die

MAX_EXTEND = 365 * 86400  # seconds
PRESENCE_REFRESH = 0.25  # A11: a seat's presence is recorded again after this share of the hours


def due_windows(s: GameState) -> list[Window]:
    """The open windows with deadlines, earliest first."""
    out = []
    if s.pending is not None:
        out.append(s.pending.window)
    if s.last_call is not None:
        out.append(s.last_call)
    if s.deal is not None and not s.deal.expired:
        out.append(s.deal.window)
    if s.turn is not None and s.phase in ("place_marker", "turn_start", "after_roll", "discard"):
        out.append(s.turn)
    out += s.proxy_windows.values()  # A11: when the server starts playing for an away seat
    return sorted(out, key=lambda w: (w.deadline, w.id))


def _timeout(ctx: Ctx) -> None:
    s = ctx.s
    windows = due_windows(s)
    if not windows or windows[0].deadline > ctx.at:
        raise RuleError("not_due", "no deadline has passed", "A4")
    for _ in range(64):  # each pass ends one window; new windows lie in the future
        windows = [w for w in due_windows(s) if w.deadline <= ctx.at]
        if not windows or s.phase == "game_over":
            return
        _expire(ctx, windows[0])


def _expire(ctx: Ctx, w: Window) -> None:
    s = ctx.s
    if w.kind == "proxy":  # A11: the seat has been away long enough
        seat = next(seat for seat, pw in s.proxy_windows.items() if pw is w)
        ctx.emit("proxy_started", {"seat": seat})
    elif s.pending is not None and w is s.pending.window:
        late = sorted(stop_eligible(s) - w.answered)
        ctx.emit("timed_out", {"window": w.id, "kind": "stop", "missed": late})
        take_effect(ctx, None)
    elif w is s.last_call:
        late = sorted(last_call_eligible(s) - w.answered)
        ctx.emit("timed_out", {"window": w.id, "kind": "last_call", "missed": late})
        close_deal(ctx, None)
    elif s.deal is not None and w is s.deal.window:
        ctx.emit("timed_out", {"window": w.id, "kind": "negotiation", "missed": []})
        ctx.emit("negotiation_expired", {"window": w.id}, None)
        finish_expired(ctx, None)
    elif w.kind == "discard":
        late = sorted(s.discard_owed)
        ctx.emit("timed_out", {"window": w.id, "kind": "discard", "missed": late})
        for seat in late:  # A5: the newest cards above the limit go
            count = s.discard_owed[seat]
            ctx.emit("cards_discarded", {"seat": seat, "cards": s.hands[seat][-count:]}, None)
        discard_done(ctx, None)
    else:  # the turn window (A5)
        seat = s.active
        ctx.emit("timed_out", {"window": w.id, "kind": "turn", "missed": [seat]})
        if s.phase == "place_marker":
            first = min(x for x in range(16) if x not in s.covered)
            ctx.emit("marker_placed", {"seat": seat, "space": first}, None)
        if s.phase == "turn_start":  # A5: the server rolls first, even under V2/V3
            roll_die(ctx, "move", seat, None)
        if s.must_deal:  # V2/V3: a deal is opened for them and fails at once
            do_open_deal(ctx, seat, None)
            fail_deal(ctx, None, "turn_deadline")
        else:
            do_draw(ctx, seat, None, auto_discard=True)


def _extend(ctx: Ctx) -> None:
    """A1: the server moves every open deadline by ``seconds`` (a game resumed after a pause:
    the paused time does not count against anyone's window)."""
    seconds = ctx.cmd.args["seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not 1 <= seconds <= MAX_EXTEND:
        raise RuleError("bad_command", f"seconds is a whole number from 1 to {MAX_EXTEND}", "A1")
    if not due_windows(ctx.s):
        raise RuleError("not_due", "no window is open", "A1")
    ctx.emit("deadlines_extended", {"seconds": seconds}, None)


def _away(ctx: Ctx) -> None:
    """A6: a seat says it is away (on holiday): windows stop waiting for it, as for a seat
    marked away after two timeouts; it counts as answering "let it happen"/"pass". Any later
    command of the seat clears it. ``away: false`` clears it at once. Saying what is already
    so is refused (``bad_command``): it would only add a line to the history."""
    away = ctx.cmd.args["away"]
    if not isinstance(away, bool):
        raise RuleError("bad_command", "away is true or false", "A6")
    if away == ctx.s.away[ctx.by]:
        said = "you are already marked away" if away else "you are not marked away"
        raise RuleError("bad_command", said, "A6")
    ctx.emit("seat_away", {"seat": ctx.by, "away": away}, ctx.by)
    if away:  # what follows is not the seat's act (it would clear away again)
        maybe_resolve_stop(ctx, None)
        if ctx.s.deal is not None:
            maybe_close(ctx, None)


def presence_matters(state: GameState, seat: int, at: datetime) -> bool:
    """A6, A11: whether ``seat`` showing up at ``at`` (aware UTC) changes what the engine does:
    the seat is away, proxied or has a proxy window, or (in a game with the away proxy) its last
    recorded presence is older than ``PRESENCE_REFRESH`` of the proxy hours. Only then is its
    presence worth an event (``present``); a page view in between stays out of the log."""
    if state.away[seat] or state.proxied[seat] or seat in state.proxy_windows:
        return True
    hours = state.options.proxy_hours
    last = state.last_act[seat]
    if not hours or last is None:
        return bool(hours)
    return at - parse_time(last) >= timedelta(hours=hours) * PRESENCE_REFRESH


def _present(ctx: Ctx) -> None:
    """A6, A11: the seat showed up (its game page, a mail link, a reply; sent by the server,
    never a move): it is not away nor proxied any more, and the proxy's count starts again from
    now. Refused (``bad_command``) when it would change nothing (``presence_matters``)."""
    if not presence_matters(ctx.s, ctx.by, ctx.at):
        raise RuleError("bad_command", "your presence is already recorded", "A11")
    ctx.emit("seat_present", {"seat": ctx.by}, ctx.by)


HANDLERS = {
    "present": _present,
    "timeout": _timeout,
    "extend": _extend,
    "away": _away,
}
