"""Mail that cannot go out: a permanent refusal fails at once, a temporary one is retried after
a backoff (never shorter than a send may take) until ``MAIL_MAX_ATTEMPTS``; the organiser sees
what did not go out, and why, on the admin page.
"""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from support.worker import (
    act,
    admin_page,
    deliver_here,
    find_opening,
    invitation,
    open_deal_on,
    players,
    rows_of,
    settled,
    undelivered_block,
    uninvolved,
    wait_for,
)

SLOW = {"windows": {"turn": 3600, "stop": 3600, "last_call": 3600, "negotiation": 7200}}


def test_a_refused_address_fails_at_once_and_the_organiser_sees_why(app, smtp, worker):
    """A 550 to RCPT: the seat's invitation and news are marked ``failed`` after one try, with
    the server's reason; the admin page lists them in plain words."""
    seed, space = find_opening(3, lambda state, space: len(uninvolved(state, space)) >= 1)
    with app.app_context():
        created = create_game("Refused", players("refused"), SLOW, seed=seed)
        gid = created.game_id
        active = open_deal_on(gid, space, 3)
        # The seat that hears only news of this deal: its address is refused from now on.
        refused_seat = next(r.seat_index for r in rows_of(gid) if not r.urgent)
        address = players("refused")[refused_seat][1]
        smtp.refuse[address] = "550 5.1.1 <" + address + ">: mailbox unavailable"
        act(gid, active, {"do": "fail"}, "k3")

        def refused_seat_settled() -> list:
            rows = rows_of(gid, refused_seat)
            return rows if settled(rows) else []

        rows = wait_for(refused_seat_settled, 30, what="the refused seat's mail to be settled")
        page = admin_page(app, gid, created.admin_token)
    refused = [r for r in rows if r.kind != "invited"]
    assert refused and {r.email_state for r in refused} == {"failed"}
    assert {r.attempts for r in refused} == {1}
    assert {r.email_error for r in refused} == {"refused"}
    assert all("550" in r.email_error_detail for r in refused)
    assert len(smtp.to(address)) == len([r for r in rows if r.email_state == "sent"])
    block = undelivered_block(page)
    assert f"P{refused_seat}" in block
    assert "a deal was opened" in block or "a deal failed" in block
    assert "The mail server refused this address" in block
    assert "mailbox unavailable" in block
    for seat in set(range(3)) - {refused_seat}:
        assert f"P{seat}" not in block


def test_a_temporary_refusal_is_retried_after_a_backoff_until_the_cap(local_app, smtp):
    """A 451 to RCPT: retried, never sooner than ``SMTP_TIMEOUT`` after the last try, and
    marked ``failed`` after ``MAIL_MAX_ATTEMPTS`` tries."""
    app = local_app(
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=smtp.port,
        SMTP_TIMEOUT=10,
        MAIL_RETRY_MAX_SECONDS=3,
        MAIL_MAX_ATTEMPTS=3,
    )
    clock = app.config["CLOCK"]
    address = players("deferred")[0][1]
    smtp.refuse[address] = "451 4.3.0 try again later"
    with app.app_context():
        gid = create_game("Deferred", players("deferred"), SLOW, seed=7).game_id
        row_id = invitation(gid, 0).id
        assert deliver_here(row_id) == "retry"
        assert invitation(gid, 0).attempts == 1
        clock.advance(seconds=9)  # past MAIL_RETRY_MAX_SECONDS, not past SMTP_TIMEOUT
        assert deliver_here(row_id) == "backoff"
        assert invitation(gid, 0).attempts == 1
        clock.advance(seconds=2)
        assert deliver_here(row_id) == "retry"
        clock.advance(seconds=11)
        assert deliver_here(row_id) == "failed"
        row = invitation(gid, 0)
        assert (row.email_state, row.attempts, row.email_error) == ("failed", 3, "deferred")
        assert "try again later" in row.email_error_detail
        clock.advance(days=1)
        assert deliver_here(row_id) == "done"
        assert invitation(gid, 0).attempts == 3
    assert not smtp.to(address)
