"""A player's defaults for new seats (``/me/settings``) and the address's API token.

The signed-in address (``imtheboss.web.players.people``) chooses its language, time zone (the page
fills in the browser's zone when none is set, ``static/app.js``), mail frequency, night (A12:
start and end in that zone) and standing orders (A10: the recommended set, none, or a copy of
the orders of one of its seats). They apply to seats made for the address from then on
(``create.create_game`` and ``confirm_game``: ``players.apply_defaults``, ``orders_for``,
``nights_for``); each seat can still differ on its own settings and orders pages, and seats
made before are left as they are.

``POST /me/token`` makes a new API token for ``/api/me`` (shown once; its sha256 is kept, and
the one before stops working).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, flash, get_flashed_messages, redirect, render_template, url_for
from flask_babel import force_locale, get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from imtheboss.engine.orders import RECOMMENDED
from imtheboss.web.games.basics import hash_token, new_token
from imtheboss.web.games.load import load_state
from imtheboss.web.models import Game, Seat, db
from imtheboss.web.players import people as players
from imtheboss.web.players.addresses import of_address
from imtheboss.web.players.me import signed_in_address
from imtheboss.web.say.forms import (
    LANGUAGE_CHOICES,
    NOTIFY_CHOICES,
    SelectChoice,
    check_timezone,
    night_checked,
)
from sqlalchemy import select
from wtforms import RadioField, SelectField, StringField
from wtforms.validators import Length, Optional, Regexp

bp = Blueprint("defaults", __name__)
CLOCK = r"^([01]\d|2[0-3]):[0-5]\d$"


class DefaultsForm(FlaskForm):
    """The defaults of an address's new seats; an empty choice keeps the game's own."""

    language = SelectField(_l("Language"), choices=LANGUAGE_CHOICES)
    timezone = StringField(_l("Time zone"), [Optional(), Length(max=64), check_timezone])
    notify = RadioField(
        _l("Email me"), choices=[SelectChoice("", _l("As each game starts it")), *NOTIFY_CHOICES]
    )
    night_start = StringField(_l("My night starts at"), [Optional(), Regexp(CLOCK)])
    night_end = StringField(_l("and ends at"), [Optional(), Regexp(CLOCK)])
    orders = SelectField(_l("Standing orders"), validate_choice=True)

    def validate(self, extra_validators: Any = None) -> bool:
        """The fields, and a night given whole (two different times, at most 12 hours apart)
        or not at all."""
        ok = super().validate(extra_validators)
        return night_checked(ok, self.night_start, self.night_end)


def _seats_of(email: str) -> list[tuple[Game, Seat]]:
    return list(
        db.session.execute(
            select(Game, Seat)
            .join(Seat, Seat.game_id == Game.id)
            .where(of_address(Seat.email, email), Game.status != "unconfirmed")
            .order_by(Game.created_at)
        ).all()
    )


def _order_choices(seats: list[tuple[Game, Seat]]) -> list[Any]:
    choices = [
        SelectChoice("", _("As each game starts them")),
        SelectChoice("recommended", _("The recommended orders")),
        SelectChoice("none", _("No standing orders")),
    ]
    for game, seat in seats:
        label = _("The orders of my seat %(name)s in “%(title)s”", name=seat.name, title=game.title)
        choices.append(SelectChoice(f"copy:{game.id}:{seat.seat_index}", label))
    return choices


def _orders_value(choice: str, seats: list[tuple[Game, Seat]]) -> dict[str, Any] | None:
    """What the ``players.orders`` column keeps for the form's choice."""
    if choice == "recommended":
        return {"kind": "orders", "orders": RECOMMENDED.to_json()}
    if choice == "none":
        return {"kind": "none"}
    for game, seat in seats:
        if choice == f"copy:{game.id}:{seat.seat_index}":
            orders = load_state(game).orders[seat.seat_index].to_json()
            return {"kind": "orders", "orders": orders, "from": choice}
    return None


def _orders_choice(kept: dict[str, Any] | None) -> str:
    if not kept:
        return ""
    if kept.get("kind") == "none":
        return "none"
    return str(kept.get("from") or "recommended")


@bp.route("/me/settings", methods=["GET", "POST"])
def defaults() -> Any:
    """The signed-in address's defaults: the form, and on ``POST`` (CSRF) saving it. Raises
    ``ServiceError`` 403 when no address is signed in; a bad form is a 400 that saves
    nothing."""
    email = signed_in_address()
    seats = _seats_of(email)
    row = players.player_row(email, create=True)
    form = DefaultsForm()
    form.orders.choices = _order_choices(seats)
    if form.is_submitted():
        if not form.validate():
            db.session.rollback()
            return _page(form, email, token=None), 400
        row.locale = form.language.data or ""
        row.timezone = (form.timezone.data or "").strip()
        row.notify = form.notify.data or ""
        start, end = (form.night_start.data or "").strip(), (form.night_end.data or "").strip()
        row.night = {"start": start, "end": end} if start else None
        row.orders = _orders_value(form.orders.data or "", seats)
        db.session.commit()
        with force_locale(row.locale or get_locale()):  # the language the next page speaks
            flash(_("Your defaults are saved: they apply to your new seats."))
        return redirect(url_for("defaults.defaults"), 303)
    form.language.data = row.locale
    form.timezone.data = row.timezone
    form.notify.data = row.notify
    form.night_start.data = (row.night or {}).get("start", "")
    form.night_end.data = (row.night or {}).get("end", "")
    form.orders.data = _orders_choice(row.orders)
    db.session.commit()
    return _page(form, email, token=None)


def _page(form: DefaultsForm, email: str, token: str | None) -> str:
    return render_template(
        "me_settings.html",
        form=form,
        email=email,
        token=token,
        notices=get_flashed_messages(),
    )


@bp.post("/me/token")
def make_token() -> str:
    """A new API token for ``/api/me`` (the one before stops working), shown on this answer
    only. Raises ``ServiceError`` 403 when no address is signed in."""
    email = signed_in_address()
    token = new_token()
    row = players.player_row(email, create=True)
    row.api_token_hash = hash_token(token)
    db.session.commit()
    form = DefaultsForm(formdata=None)
    form.orders.choices = _order_choices(_seats_of(email))
    form.language.data, form.timezone.data, form.notify.data = row.locale, row.timezone, row.notify
    form.night_start.data = (row.night or {}).get("start", "")
    form.night_end.data = (row.night or {}).get("end", "")
    form.orders.data = _orders_choice(row.orders)
    return _page(form, email, token=token)


def register(app: Flask) -> None:
    """Add the defaults page and the API token route to ``app``."""
    app.register_blueprint(bp)
