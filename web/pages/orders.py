"""A seat's standing orders (A10) and night (A12): the page that sets them, and the plain-words
summary the game page shows.

``GET /g/<gid>/orders`` shows the seat's orders as a short form of radio buttons and a few
numbers (a phone needs only taps); ``POST`` sends one ``orders`` command (and a ``night`` command
when the game has quiet hours and the night changed) through ``submit``. Orders are private to
the seat: this page, like the game page's summary, reads them from ``view(state, seat)["you"]``
only (A8).
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, Flask, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from imtheboss.engine.board import LETTERS
from imtheboss.engine.orders import MAX_PRICE, PACES, Orders, pace_of, pace_orders
from imtheboss.engine.views import view
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.load import load_state
from imtheboss.web.games.submit import submit
from imtheboss.web.models import Seat, db
from imtheboss.web.pages.common import frame, seat_only
from imtheboss.web.say import decisions, display
from imtheboss.web.say.forms import SelectChoice, SmallIntegerField, night_checked
from imtheboss.web.say.refusals import refusal
from werkzeug.wrappers import Response
from wtforms import BooleanField, RadioField, SelectField, StringField
from wtforms.validators import NumberRange, Optional, Regexp

bp = Blueprint("orders", __name__)

STOP = [
    SelectChoice("ask", _l("Ask me")),
    SelectChoice("unless_aimed", _l("Let it happen, unless it is aimed at me")),
    SelectChoice("allow", _l("Always let it happen")),
]
LAST_CALL = [
    SelectChoice("ask", _l("Ask me")),
    SelectChoice(
        "unless_involved",
        _l("Pass, unless my investor card or an agreement of mine is in the deal"),
    ),
    SelectChoice("pass", _l("Always pass")),
]
WHEN = [
    SelectChoice("never", _l("never")),
    SelectChoice("always", _l("always")),
    SelectChoice("needs_mine", _l("when the space needs one of my investor cards")),
    *(
        SelectChoice(f"fill{k}", _l("when I can fill %(k)d of its letters myself", k=k))
        for k in range(1, 6)
    ),
]
TURN = [
    SelectChoice("ask", _l("Ask me")),
    SelectChoice("premove", _l("Play it for me, as follows")),
]
CLOCK = r"^([01]\d|2[0-3]):[0-5]\d$"


def _price_field(letter: str) -> SmallIntegerField:
    return SmallIntegerField(
        letter,
        validators=[Optional(), NumberRange(min=0, max=MAX_PRICE)],
        render_kw={"inputmode": "numeric", "min": 0, "max": MAX_PRICE},
    )


class OrdersForm(FlaskForm):
    """The standing orders of one seat (A10) and its night (A12)."""

    stop = RadioField(_l("When someone plays a travel, recruit or boss card"), choices=STOP)
    last_call = RadioField(_l("When the boss calls the last call"), choices=LAST_CALL)
    price_C = _price_field("C")  # noqa: N815 (one field per investor letter)
    price_D = _price_field("D")  # noqa: N815
    price_G = _price_field("G")  # noqa: N815
    price_L = _price_field("L")  # noqa: N815
    price_S = _price_field("S")  # noqa: N815
    price_W = _price_field("W")  # noqa: N815
    limit = SmallIntegerField(
        _l("As boss, accept at once any offer up to (M) for a letter the deal still needs"),
        validators=[Optional(), NumberRange(min=0, max=MAX_PRICE)],
        render_kw={"inputmode": "numeric", "min": 0, "max": MAX_PRICE},
    )
    close = BooleanField(_l("As boss, close at once when the requirements are met"))
    turn = RadioField(_l("My turn"), choices=TURN)
    in_place = SelectField(_l("Open a deal where the marker stands"), choices=WHEN)
    after_roll = SelectField(_l("Otherwise roll; then open a deal on the new space"), choices=WHEN)
    night_start = StringField(_l("My night starts at"), [Optional(), Regexp(CLOCK)])
    night_end = StringField(_l("and ends at"), [Optional(), Regexp(CLOCK)])

    def validate(self, extra_validators: Any = None) -> bool:
        """The fields, and a night given whole or not at all (A12)."""
        ok = super().validate(extra_validators)
        return night_checked(ok, self.night_start, self.night_end)

    def load(self, orders: dict[str, Any], night: dict[str, str] | None) -> None:
        """Fill the form from the seat's orders (``Orders.to_json`` form) and night."""
        self.stop.data = orders["stop"]
        self.last_call.data = orders["last_call"]
        for letter in LETTERS:
            price = orders["prices"].get(letter)
            getattr(self, f"price_{letter}").data = price.get("cash") if price else None
        limit = orders["boss"]["limits"].get("*")
        self.limit.data = limit if isinstance(limit, int) else None
        self.close.data = orders["boss"]["close"]
        turn = orders["turn"]
        self.turn.data = "ask" if turn is None else "premove"
        self.in_place.data = _when_choice(turn["in_place"] if turn else {"when": "never"})
        self.after_roll.data = _when_choice(turn["after_roll"] if turn else {"when": "never"})
        self.night_start.data = night["start"] if night else ""
        self.night_end.data = night["end"] if night else ""

    def orders_json(self, before: dict[str, Any]) -> dict[str, Any]:
        """The orders the form says, in the ``orders`` command's form, keeping from ``before``
        (the seat's orders now) what the form cannot show: a price in shares where no cash
        price was typed, and boss limits for single letters."""
        prices = {
            x: {"cash": getattr(self, f"price_{x}").data}
            for x in LETTERS
            if getattr(self, f"price_{x}").data is not None
        }
        for letter, price in before["prices"].items():
            if "cash" not in price and letter not in prices:
                prices[letter] = price
        turn = None
        if self.turn.data == "premove":
            turn = {
                "in_place": _condition(self.in_place.data),
                "after_roll": _condition(self.after_roll.data),
            }
        limits = {
            x: m for x, m in before["boss"]["limits"].items() if x != "*" or isinstance(m, dict)
        }
        if self.limit.data is not None:
            limits["*"] = self.limit.data
        return {
            "stop": self.stop.data,
            "last_call": self.last_call.data,
            "prices": prices,
            "boss": {"limits": limits, "close": bool(self.close.data)},
            "turn": turn,
        }


def _when_choice(condition: dict[str, Any]) -> str:
    if condition["when"] == "fill":
        return f"fill{condition.get('k', 1)}"
    return condition["when"]


def _condition(choice: str) -> dict[str, Any]:
    if choice.startswith("fill"):
        return {"when": "fill", "k": int(choice[4:])}
    return {"when": choice if choice in ("never", "always", "needs_mine") else "never"}


def orders_summary(orders: dict[str, Any], investors: list[str], away: bool = False) -> list[str]:
    """The seat's orders in plain words, one line each, for the game page: which decisions the
    orders take and which wait for the seat (``investors``: the letters it controls now;
    ``away``: the seat is away, A6, so windows do not wait for it at all)."""
    if away:
        lines = [_("While you are away, stop windows and last calls do not wait for you.")]
        return lines + _offers_and_turns(orders, investors)
    lines = [
        {
            "ask": _("Stop windows wait for you."),
            "unless_aimed": _("Your orders let cards happen, unless they are aimed at you."),
            "allow": _("Your orders let every card happen."),
        }[orders["stop"]],
        {
            "ask": _("Last calls wait for you."),
            "unless_involved": _(
                "Your orders pass last calls, unless your investor card or an agreement of yours "
                "is in the deal."
            ),
            "pass": _("Your orders pass every last call."),
        }[orders["last_call"]],
    ]
    return lines + _offers_and_turns(orders, investors)


def _offers_and_turns(orders: dict[str, Any], investors: list[str]) -> list[str]:
    lines = []
    for letter, price in sorted(orders["prices"].items()):
        line = _(
            "Your orders offer %(investor)s for %(price)s in every deal that needs it.",
            investor=display.investor_words(letter),
            price=display.price_text(price),
        )
        lines.append(line if letter in investors else line + " " + _("(when you control it)"))
    limit = orders["boss"]["limits"].get("*")
    if isinstance(limit, int):
        lines.append(_("As boss, your orders accept offers up to %(num)d M at once.", num=limit))
    elif limit is not None:
        lines.append(
            _(
                "As boss, your orders accept offers up to %(price)s at once.",
                price=display.price_text(limit),
            )
        )
    if orders["boss"]["close"]:
        lines.append(_("As boss, your orders close as soon as the requirements are met."))
    lines.append(
        _("Your turns wait for you.")
        if orders["turn"] is None
        else _("Your orders play your turns for you.")
    )
    return lines


def _seat_of(gid: str) -> tuple[Any, int, Seat]:
    game, seat, _admin = seat_only(gid)
    row = db.session.execute(
        db.select(Seat).where(Seat.game_id == gid, Seat.seat_index == seat)
    ).scalar_one()
    return game, seat, row


@bp.route("/g/<gid>/orders", methods=["GET", "POST"])
def orders_page(gid: str) -> Any:
    """The seat's standing orders (A10) and, under quiet hours, its night (A12)."""
    game, seat, row = _seat_of(gid)
    state = load_state(game)
    mine = view(state, seat)["you"]
    form = OrdersForm()
    if request.method == "GET":
        form.load(mine["orders"], state.nights[seat])
    elif form.validate_on_submit():
        return _save(gid, game, seat, row, form, mine["orders"], state)
    return render_template(
        "orders.html",
        **_context(game, seat, form, state),
    ), 400 if request.method == "POST" else 200


def _save(gid: str, game: Any, seat: int, row: Seat, form: OrdersForm, before, state) -> Response:
    if game.status != "active" or state.phase == "game_over":
        raise ServiceError(409, "not_active", _("The game is not running: nothing was changed."))
    wanted = form.orders_json(before)
    if wanted != before:
        submit(gid, seat, {"do": "orders", "orders": wanted}, f"orders:{uuid.uuid4().hex}")
    if state.options.quiet_hours:
        try:
            _save_night(gid, seat, row, form, state)
        except ServiceError as exc:  # the orders went in: say so, and why the night did not
            flash(_("Your standing orders are saved; your night is not:"))
            flash(refusal(exc.code, exc.message))
            return redirect(url_for("pages.game_page", gid=gid), 303)
    flash(_("Your standing orders are saved."))
    return redirect(url_for("pages.game_page", gid=gid), 303)


def _save_night(gid: str, seat: int, row: Seat, form: OrdersForm, state: Any) -> None:
    """Send the night the form names (A12, in the seat's zone), if it changed."""
    start, end = form.night_start.data, form.night_end.data
    night = None
    if start and end and start != end:
        night = {"start": start, "end": end, "zone": row.timezone or "UTC"}
    if night != state.nights[seat]:
        submit(gid, seat, {"do": "night", "night": night}, f"night:{uuid.uuid4().hex}")


def _context(game: Any, seat: int, form: OrdersForm, state: Any) -> dict[str, Any]:
    ctx = frame(game, seat, False, state)
    ctx.update(
        form=form,
        quiet=state.options.quiet_hours,
        mine=state.seat_investors(seat),
        letters=[(x, display.investor_words(x)) for x in LETTERS],
        in_shares={
            x: p for x, p in state.orders[seat].to_json()["prices"].items() if "cash" not in p
        },
        notices=[],
    )
    return ctx


PACE_NAMES = {"relaxed": _l("relaxed"), "standard": _l("standard"), "brisk": _l("brisk")}
PACE_WORDS = {
    "relaxed": _l("every question waits for you"),
    "standard": _l("cards not aimed at you happen and last calls pass without waiting for you"),
    "brisk": _l(
        "cards not aimed at you happen, last calls pass, your investors are offered at the fair"
        " price, and as boss you accept offers up to the fair price plus 2 M and close when the"
        " deal is complete; your turns always wait for you"
    ),
}


def pace_sentence(orders: dict[str, Any]) -> str:
    """One sentence saying which pace's standing orders the seat has (``Orders.to_json`` form;
    its turn pre-move aside), or that it chose its own; for the invitation and the game page."""
    pace = pace_of(Orders.from_json({**orders, "turn": None}))
    if pace is None:
        return _("You chose your own standing orders.")
    return _(
        "Your standing orders follow the %(pace)s pace: %(words)s.",
        pace=PACE_NAMES[pace],
        words=PACE_WORDS[pace],
    )


@bp.post("/g/<gid>/pace")
def pace_tap(gid: str) -> Response:
    """One tap: the seat's standing orders become those of the pace ``pace`` (``PACES``), its
    turn pre-move kept (A10). A bad pace is a 400 and changes nothing."""
    game, seat, _row = _seat_of(gid)  # (CSRF: checked for every POST by the app)
    pace = request.form.get("pace", "")
    if pace not in PACES:
        raise ServiceError(400, "bad_settings", _('the pace is "brisk", "standard" or "relaxed"'))
    state = load_state(game)
    if game.status != "active" or state.phase == "game_over":
        raise ServiceError(409, "not_active", _("The game is not running: nothing was changed."))
    before = view(state, seat)["you"]["orders"]
    wanted = {**pace_orders(pace).to_json(), "turn": before["turn"]}
    if wanted != before:
        submit(gid, seat, {"do": "orders", "orders": wanted}, f"orders:{uuid.uuid4().hex}")
    flash(_("Your standing orders are saved."))
    return redirect(url_for("pages.game_page", gid=gid), 303)


# One-tap turn pre-moves (A10's conditions in plain words); "off": my turns wait for me.
PREMOVES: dict[str, dict[str, Any] | None] = {
    "fill2": {"in_place": {"when": "fill", "k": 2}, "after_roll": {"when": "fill", "k": 2}},
    "needs_mine": {"in_place": {"when": "needs_mine"}, "after_roll": {"when": "needs_mine"}},
    "off": None,
}
PREMOVE_WORDS = {
    "fill2": _l(
        "Plan my turns: open a deal when I can fill at least 2 of the space's letters myself,"
        " before or after the roll; else draw"
    ),
    "needs_mine": _l(
        "Plan my turns: open a deal when the space needs one of my investor cards, before or"
        " after the roll; else draw"
    ),
    "off": _l("My turns wait for me"),
}


@bp.post("/g/<gid>/premove")
def premove_tap(gid: str) -> Response:
    """One tap: the seat's turn pre-move becomes ``PREMOVES[premove]`` (A10), its other orders
    kept. A bad choice is a 400 and changes nothing."""
    game, seat, _row = _seat_of(gid)  # (CSRF: checked for every POST by the app)
    choice = request.form.get("premove", "")
    if choice not in PREMOVES:
        raise ServiceError(400, "bad_settings", _("Choose one of the turn pre-moves shown."))
    state = load_state(game)
    if game.status != "active" or state.phase == "game_over":
        raise ServiceError(409, "not_active", _("The game is not running: nothing was changed."))
    before = view(state, seat)["you"]["orders"]
    wanted = {**before, "turn": PREMOVES[choice]}
    if wanted != before:
        submit(gid, seat, {"do": "orders", "orders": wanted}, f"orders:{uuid.uuid4().hex}")
    flash(_("Your standing orders are saved."))
    return redirect(url_for("pages.game_page", gid=gid), 303)


@bp.post("/g/<gid>/tap")
def window_tap(gid: str) -> Response:
    """One tap from ``decisions.window_taps``: ``price:X`` posts X at the fair price (A10,
    A11), ``limit`` sets a boss limit of the fair price plus 2 M for any letter; the other
    orders kept. A bad tap is a 400 and changes nothing."""
    game, seat, _row = _seat_of(gid)  # (CSRF: checked for every POST by the app)
    tap = request.form.get("tap", "")
    letter = tap.removeprefix("price:")
    if tap != "limit" and not (tap.startswith("price:") and letter in LETTERS):
        raise ServiceError(400, "bad_settings", _("Choose one of the choices shown."))
    state = load_state(game)
    if game.status != "active" or state.phase == "game_over":
        raise ServiceError(409, "not_active", _("The game is not running: nothing was changed."))
    before = view(state, seat)["you"]["orders"]
    if tap == "limit":
        boss = {**before["boss"], "limits": {**before["boss"]["limits"], "*": {"fair": 2}}}
        wanted = {**before, "boss": boss}
    else:
        wanted = {**before, "prices": {**before["prices"], letter: {"fair": 0}}}
    if wanted != before:
        submit(gid, seat, {"do": "orders", "orders": wanted}, f"orders:{uuid.uuid4().hex}")
    flash(_("Your standing orders are saved."))
    return redirect(url_for("pages.game_page", gid=gid), 303)


def register(app: Flask) -> None:
    """Add the orders page to ``app`` (called by ``imtheboss.web.create_app``)."""
    app.register_blueprint(bp)
    app.jinja_env.globals["orders_summary"] = orders_summary
    app.jinja_env.globals["pace_sentence"] = pace_sentence
    app.jinja_env.globals["pace_names"] = PACE_NAMES
    app.jinja_env.globals["premove_words"] = PREMOVE_WORDS
    app.jinja_env.globals["window_taps"] = decisions.window_taps
