"""The organiser's page: pause and resume, a seat's address, a new invitation, the mail that
did not go out. Only the organiser's browser (the admin link's session) reaches it."""

from __future__ import annotations

from datetime import datetime

from flask import (
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from imtheboss.web.app.limits import client_address, spending
from imtheboss.web.games.seats import resend_invitation, seats_of, set_seat_email, set_status
from imtheboss.web.mail.undelivered import undelivered_mail
from imtheboss.web.models import Seat
from imtheboss.web.pages.common import admin_only, bp, frame, seat_row
from imtheboss.web.players.auth import current_seat
from werkzeug.wrappers import Response


def last_look(seat: Seat) -> datetime | None:
    """When ``seat`` last looked at its game (aware UTC; ``None``: it has not opened it yet):
    the later of its page seen (``last_seen_at``) and its presence (``present_at``: the page
    it opened from its link updates itself, ``imtheboss.web.games.presence``)."""
    looks = [at for at in (seat.last_seen_at, seat.present_at) if at is not None]
    return max(looks, default=None)


@bp.get("/g/<gid>/admin")
def admin_page(gid: str) -> str:
    """The organiser's page: pause or resume, fix a seat's email, resend an invitation, see
    the mail that did not go out; when each seat last looked at the game (``last_look``)."""
    game = admin_only(gid)
    ctx = frame(game, current_seat(gid), True)
    ctx.update(seats=seats_of(gid), notices=get_flashed_messages(), last_look=last_look)
    ctx.update(undelivered=undelivered_mail(gid))
    return render_template("admin.html", **ctx)


@bp.post("/g/<gid>/admin/pause")
def admin_pause(gid: str) -> Response:
    """Pause the game: commands are refused (409) until it is resumed."""
    admin_only(gid)
    set_status(gid, "paused")
    flash(_("The game is paused."))
    return redirect(url_for("pages.admin_page", gid=gid), 303)


@bp.post("/g/<gid>/admin/resume")
def admin_resume(gid: str) -> Response:
    """Resume a paused game."""
    admin_only(gid)
    set_status(gid, "active")
    flash(_("The game is running again."))
    return redirect(url_for("pages.admin_page", gid=gid), 303)


@bp.post("/g/<gid>/admin/seat/<int:index>/email")
def admin_email(gid: str, index: int) -> Response:
    """Fix a seat's email address; the old address is told (a mail, counted as an
    invitation by the abuse limits)."""
    admin_only(gid)
    with spending("invitations", client_address()):
        set_seat_email(gid, index, request.form.get("email", ""))
    flash(_("Email address of seat %(n)d saved.", n=index + 1))
    return redirect(url_for("pages.admin_page", gid=gid), 303)


@bp.post("/g/<gid>/admin/seat/<int:index>/resend")
def admin_resend(gid: str, index: int) -> str:
    """Give the seat a new secret link (the old one stops working) and mail it in a new
    invitation to the seat's address; the page says where it went and never shows the link."""
    game = admin_only(gid)
    viewer = current_seat(gid)  # before the resend: the request may carry the replaced token
    with spending("invitations", client_address()):
        sent_to = resend_invitation(gid, index)
    seat = seat_row(gid, index)
    ctx = frame(game, viewer, True)
    ctx.update(sent_to=sent_to, target=seat)
    return render_template("admin_resend.html", **ctx)
