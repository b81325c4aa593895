"""Applying a reply: the move is made once, by mail, and answered in a thread; every other
reply changes nothing (a window ended, another sender, a tampered token, a forged sender, a
mail delivered twice, an out-of-office notice, a bounce, an unclear line, a From header that
is not one unambiguous address of the seat)."""

from __future__ import annotations

from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default

import pytest
from imtheboss.web.games.load import get_game, load_events, load_state
from imtheboss.web.games.seats import seats_of
from imtheboss.web.games.submit import submit
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import CommandRecord, Game, db
from imtheboss.web.replies.apply import apply_reply
from imtheboss.web.say import messages
from sqlalchemy import func, select
from support.page_forms import act
from support.reply_game import REPLY_CONFIG, answers, asked
from support.reply_mails import quoted, raw_mail


@pytest.fixture
def app_config():
    return {**REPLY_CONFIG, "MAIL_REPLY_AUTH_SERVID": "mx.boss.example.org"}


def _reply(a, body: str, **kw) -> bytes:
    kw.setdefault("sender", a.email)
    kw.setdefault("in_reply_to", str(a.mail["Message-ID"]))
    kw.setdefault("to", a.address)
    return raw_mail(body + "\n\n" + quoted(), **kw)


def _last_seq(app, gid: str) -> int:
    with app.app_context():
        return get_game(gid).last_seq


def _commands(app) -> int:
    with app.app_context():
        return db.session.execute(select(func.count()).select_from(CommandRecord)).scalar_one()


def _answer_mail(app, row) -> EmailMessage:
    with app.app_context():
        return compose(db.session.get(Game, row.game_id), None, [row])


def test_a_reply_is_the_move_made_by_mail_and_answered_in_its_thread(app) -> None:
    a = asked(app)
    before = _last_seq(app, a.game_id)
    with app.app_context():
        assert apply_reply(_reply(a, "Place 3", message_id="<r1@client>")).status == "done"
    with app.app_context():
        events = load_events(a.game_id, before)
        players = [s.name for s in seats_of(a.game_id)]
        # "Place 3" is space 3 as players read it: index 2
        assert events[0].type == "marker_placed" and events[0].data["space"] == 2
        assert events[0].data["via"] == "mail"
        assert messages.line(events[0], players, a.seat).endswith("· by mail")
    [row] = answers(app)
    assert row.to_email == a.email
    mail = _answer_mail(app, row)
    assert mail["In-Reply-To"] == "<r1@client>" and "<r1@client>" in mail["References"]
    assert mail["Auto-Submitted"] == "auto-replied"
    assert str(mail["Subject"]).startswith("Re: ")
    text = mail.get_body(("plain",)).get_content()
    assert "Your reply was your move. Done:" in text and "· by mail" in text
    assert "roll" in text  # what works next, with the next step's reply address
    assert str(mail["Reply-To"]).startswith("play+")


def test_a_mail_delivered_twice_acts_once_and_is_answered_once(app) -> None:
    a = asked(app)
    raw = _reply(a, "place 3", message_id="<twice@client>")
    with app.app_context():
        assert apply_reply(raw).status == "done"
    seq = _last_seq(app, a.game_id)
    with app.app_context():
        assert apply_reply(raw).status == "duplicate"
    assert _last_seq(app, a.game_id) == seq and _commands(app) == 1 and len(answers(app)) == 1


def test_a_reply_after_its_window_ended_changes_nothing(app, clock) -> None:
    a = asked(app)
    clock.advance(days=30)
    with app.app_context():
        submit(a.game_id, None, {"do": "timeout"}, "t1")
    seq = _last_seq(app, a.game_id)
    with app.app_context():
        assert apply_reply(_reply(a, "place 3")).reason == "window_ended"
    assert _last_seq(app, a.game_id) == seq
    [row] = answers(app)
    assert "That window ended" in _answer_mail(app, row).get_body(("plain",)).get_content()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"sender": "mallory@example.org"}, "other_address"),
        ({"to": "play+forged.1.abc.-.xyz@boss.example.org"}, "bad_token"),
        ({"to": "someone@elsewhere.example.org"}, "not_ours"),
        (
            {"headers": {"Authentication-Results": "mx.boss.example.org; dkim=fail; spf=pass"}},
            "auth_failed",
        ),
    ],
)
def test_refused_replies_change_nothing_and_are_not_answered(app, change, reason) -> None:
    a = asked(app)
    seq = _last_seq(app, a.game_id)
    with app.app_context():
        assert apply_reply(_reply(a, "place 3", **change)).reason == reason
    assert _last_seq(app, a.game_id) == seq and answers(app) == []


MALLORY = "mallory@players.imtheboss.net"


@pytest.mark.parametrize(
    "header",
    [
        '"Amy Li" <{me}>',
        "Amy <{upper}>",
        "=?utf-8?b?5p2O6Iqz?= <{me}>",
        "=?utf-8?q?Amy_Li?= <{me}>",
        "{me}",
    ],
)
def test_the_seat_s_address_with_any_display_name_is_the_seat(app, header) -> None:
    a = asked(app)
    frm = header.format(me=a.email, upper=a.email.upper())
    with app.app_context():
        assert apply_reply(_reply(a, "place 3", sender=frm)).status == "done"


@pytest.mark.parametrize(
    "header",
    [
        MALLORY,
        '"{me}" <{evil}>',
        "{me} <{evil}>",  # unquoted: one parser reads the seat's address, another Mallory's
        "{evil} <{me}>",
        "{me}, {evil}",
        "{me} ({evil})",
        "Amy <{me}> {evil}",
        "=?utf-8?q?{evil}?= <{me}>",
    ],
)
def test_a_from_that_is_not_one_unambiguous_address_of_the_seat_is_refused(app, header) -> None:
    a = asked(app)
    seq = _last_seq(app, a.game_id)
    frm = header.format(me=a.email, evil=MALLORY)
    with app.app_context():
        assert apply_reply(_reply(a, "place 3", sender=frm)).reason == "other_address"
    assert _last_seq(app, a.game_id) == seq and answers(app) == []


def test_two_from_headers_are_refused(app) -> None:
    a = asked(app)
    with app.app_context():
        raw = _reply(a, "place 3", headers={"From": MALLORY})
        assert apply_reply(raw).reason == "other_address"


def test_a_tampered_token_is_refused(app) -> None:
    a = asked(app)
    local, _at, domain = a.address.partition("@")
    tampered = local[:-2] + ("xx" if not local.endswith("xx") else "yy") + "@" + domain
    with app.app_context():
        assert apply_reply(_reply(a, "place 3", to=tampered)).reason == "bad_token"
    assert answers(app) == []


def test_an_untrusted_relays_results_are_not_read(app) -> None:
    a = asked(app)
    forged = {"Authentication-Results": "evil.example.org; dkim=fail"}
    with app.app_context():
        assert apply_reply(_reply(a, "place 3", headers=forged)).status == "done"


BOUNCE = (
    "From: MAILER-DAEMON@mx.example.org\r\nTo: {to}\r\nSubject: Undelivered Mail\r\n"
    "Message-ID: <bounce@mx>\r\nMIME-Version: 1.0\r\n"
    'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n'
    "--b\r\nContent-Type: text/plain\r\n\r\nplace 3\r\n"
    "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx\r\n\r\n"
    "Final-Recipient: rfc822; amy@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n--b--\r\n"
)


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Precedence": "bulk"},
        {"X-Autoreply": "yes"},
        {"X-Autorespond": "Out of office"},
    ],
)
def test_out_of_office_replies_are_ignored_and_not_answered(app, headers) -> None:
    a = asked(app)
    seq = _last_seq(app, a.game_id)
    with app.app_context():
        outcome = apply_reply(_reply(a, "place 3", headers=headers))
    assert (outcome.status, outcome.reason) == ("ignored", "automatic")
    assert _last_seq(app, a.game_id) == seq and answers(app) == []


def test_a_bounce_is_ignored_and_not_answered(app) -> None:
    a = asked(app)
    with app.app_context():
        assert apply_reply(BOUNCE.format(to=a.address).encode()).reason == "automatic"
        assert apply_reply(_reply(a, "place 3"), envelope_from="<>").reason == "automatic"
    assert answers(app) == []


def test_an_unclear_reply_is_answered_with_what_was_read_and_what_works(app) -> None:
    a = asked(app, "zh_Hans")
    seq = _last_seq(app, a.game_id)
    with app.app_context():
        assert apply_reply(_reply(a, "maybe later")).reason == "unclear"
        assert apply_reply(_reply(a, "roll")).reason == "not_now"
    assert _last_seq(app, a.game_id) == seq
    first, second = answers(app)
    text = _answer_mail(app, first).get_body(("plain",)).get_content()
    assert "maybe later" in text and f"放置 {a.first_space}" in text
    assert str(a.mail["Message-ID"]) in _answer_mail(app, second)["References"]


def test_the_answer_parses_as_a_threaded_mail(app) -> None:
    a = asked(app)
    with app.app_context():
        apply_reply(_reply(a, "place 3", message_id="<p@client>"))
    [row] = answers(app)
    parsed = BytesParser(policy=default).parsebytes(bytes(_answer_mail(app, row)))
    assert parsed["In-Reply-To"] == "<p@client>"


def test_by_mail_marks_only_the_replying_seat_s_own_act(app, game) -> None:
    """The last answer by mail to a stop window lets the travel card take effect: the history
    says "by mail" of that answer only, not of the card that took effect (another seat's)."""
    created, s, clients = game
    gid = created.game_id
    act(clients[s.boss], gid, {"do": "place_marker", "space": s.space})
    act(clients[s.boss], gid, {"do": "open_deal"})
    target = f"investor:{s.letter}"
    act(clients[s.traveller], gid, {"do": "travel", "card": s.travel_card, "target": target})
    with app.app_context():
        window = load_state(get_game(gid)).pending.window.id
        submit(gid, s.stopper, {"do": "allow", "window": window}, "page-allow")
        before = _last_seq(app, gid)
        submit(gid, s.provider, {"do": "allow", "window": window}, "mail-allow", via="mail")
        events = load_events(gid, before)
        players = [x.name for x in seats_of(gid)]
        lines = {e.type: messages.line(e, players, s.provider) for e in events}
    assert "card_took_effect" in lines and lines["window_answered"].endswith("· by mail")
    assert not lines["card_took_effect"].endswith("· by mail"), lines
    page = clients[s.provider].get(f"/g/{gid}/history").text
    assert page.count("by mail") == 1, page
