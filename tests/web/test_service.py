"""The game service on PostgreSQL: create, submit, idempotency (A7), refusals that
change nothing, snapshot + tail loading, deadlines and the outbox."""

from __future__ import annotations

from datetime import timedelta

import pytest
from imtheboss.engine.state import replay
from imtheboss.web.games.basics import ServiceError
from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import SNAPSHOT_EVERY, get_game, load_events, load_state
from imtheboss.web.games.seats import resend_invitation, seat_by_token, seats_of, set_seat_email
from imtheboss.web.games.submit import submit
from imtheboss.web.models import CommandRecord, Deadline, EventRecord, Game, Notification, Seat, db
from sqlalchemy import func, select

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


def _count(model) -> int:
    return db.session.execute(select(func.count()).select_from(model)).scalar_one()


def test_create_game_stores_seats_with_hashed_tokens(app) -> None:
    with app.app_context():
        created = create_game("Friday", PLAYERS, {"variants": ["V4"]})
        seats = db.session.execute(select(Seat).order_by(Seat.seat_index)).scalars().all()
        assert [s.name for s in seats] == ["Amy", "Bill", "Carla"]
        for seat, token in zip(seats, created.seat_tokens, strict=True):
            assert token not in seat.token_hash and len(seat.token_hash) == 64
            assert seat_by_token(created.game_id, token).seat_index == seat.seat_index
        game = get_game(created.game_id)
        assert game.last_seq == 1 and game.settings["options"]["variants"] == ["V4"]
        kinds = sorted(n.kind for n in db.session.execute(select(Notification)).scalars())
        assert kinds == ["invited", "invited", "invited", "place_marker"]


def test_tokens_of_one_game_never_work_in_another(app) -> None:
    with app.app_context():
        one = create_game("one", PLAYERS)
        two = create_game("two", PLAYERS)
        with pytest.raises(ServiceError) as err:
            seat_by_token(two.game_id, one.seat_tokens[0])
        assert err.value.status == 403
        with pytest.raises(ServiceError) as err:
            seat_by_token("nosuchgame", one.seat_tokens[0])
        assert err.value.status == 404


def test_submit_appends_in_sequence_and_repeated_key_appends_nothing(app) -> None:
    """A7: a repeated idempotency key returns the first result and appends nothing."""
    with app.app_context():
        created = create_game("t", PLAYERS)
        first = load_state(get_game(created.game_id)).active
        result = submit(created.game_id, first, {"do": "place_marker", "space": 2}, "key-1")
        assert [seq for seq, _ in result.events] == [2] and not result.duplicate
        again = submit(created.game_id, first, {"do": "place_marker", "space": 2}, "key-1")
        assert again.duplicate and [seq for seq, _ in again.events] == [2]
        assert again.events[0][1] == result.events[0][1]
        assert _count(EventRecord) == 2 and _count(CommandRecord) == 1


def test_refused_command_changes_nothing(app) -> None:
    with app.app_context():
        created = create_game("t", PLAYERS)
        state = load_state(get_game(created.game_id))
        other = (state.active + 1) % 3
        before = (_count(EventRecord), _count(Notification), _count(CommandRecord))
        with pytest.raises(ServiceError) as err:
            submit(created.game_id, other, {"do": "place_marker", "space": 2}, "k")
        assert (err.value.status, err.value.code, err.value.rule) == (409, "not_your_turn", "R2.4")
        with pytest.raises(ServiceError) as err:
            submit(created.game_id, state.active, {"do": "fly"}, "k2")
        assert err.value.status == 400
        assert (_count(EventRecord), _count(Notification), _count(CommandRecord)) == before


def test_state_loads_from_snapshot_plus_tail(app, clock) -> None:
    """Loading reads the snapshot and at most SNAPSHOT_EVERY events after it."""
    with app.app_context():
        created = create_game("t", PLAYERS)
        gid = created.game_id
        n = 0
        while get_game(gid).last_seq < 3 * SNAPSHOT_EVERY:
            state = load_state(get_game(gid))
            if state.phase == "game_over":
                break
            clock.advance(days=2)
            submit(gid, None, {"do": "timeout"}, f"t{n}")
            n += 1
        game = get_game(gid)
        assert game.snapshot is not None
        assert game.last_seq - game.snapshot_seq < SNAPSHOT_EVERY
        assert load_state(game) == replay(load_events(gid))


def test_deadlines_follow_the_open_windows(app, clock) -> None:
    with app.app_context():
        created = create_game("t", PLAYERS, {"windows": {"turn": 3600}})
        gid = created.game_id
        rows = db.session.execute(select(Deadline)).scalars().all()
        assert [(r.window_id, r.kind, r.state) for r in rows] == [("w0", "turn", "open")]
        assert rows[0].due_at == clock.now + timedelta(hours=1)  # A1: from the command's time
        clock.advance(hours=2)
        submit(gid, None, {"do": "timeout"}, "t1")
        states = {r.window_id: r.state for r in db.session.execute(select(Deadline)).scalars()}
        assert states["w0"] == "done" and list(states.values()).count("open") == 1


def test_paused_game_refuses_commands(app) -> None:
    from imtheboss.web.games.seats import set_status

    with app.app_context():
        created = create_game("t", PLAYERS)
        set_status(created.game_id, "paused")
        state = load_state(get_game(created.game_id))
        with pytest.raises(ServiceError) as err:
            submit(created.game_id, state.active, {"do": "place_marker", "space": 1}, "k")
        assert err.value.code == "paused"
        set_status(created.game_id, "active")
        submit(created.game_id, state.active, {"do": "place_marker", "space": 1}, "k")
        assert get_game(created.game_id).status == "active"
        assert db.session.get(Game, created.game_id).last_seq == 4
        types = [e.type for e in load_events(created.game_id)]  # the pause is in the history
        assert types == ["game_started", "game_paused", "game_resumed", "marker_placed"]


def test_resume_moves_deadlines_by_the_paused_time(app, clock) -> None:
    """Pausing stops the clock for the players: on resume every open deadline (and its row)
    moves later by the paused time, as an ``extend`` in the log (A1)."""
    from imtheboss.web.games.seats import set_status

    with app.app_context():
        created = create_game("t", PLAYERS, {"windows": {"turn": 3600}})
        gid = created.game_id
        due = db.session.execute(select(Deadline.due_at)).scalar_one()
        clock.advance(minutes=30)
        set_status(gid, "paused")
        clock.advance(hours=10)
        with pytest.raises(ServiceError) as err:  # nothing is taken while paused
            submit(gid, None, {"do": "timeout"}, "t-paused")
        assert err.value.code == "paused"
        set_status(gid, "active")
        moved = db.session.execute(select(Deadline.due_at)).scalar_one()
        assert moved == due + timedelta(hours=10)
        assert load_events(gid)[-1].type == "deadlines_extended"
        with pytest.raises(ServiceError) as err:  # the old deadline has not come again
            submit(gid, None, {"do": "timeout"}, "t-after")
        assert err.value.code == "not_due"
        clock.advance(minutes=31)
        assert submit(gid, None, {"do": "timeout"}, "t-late").events[0][1].type == "timed_out"


@pytest.mark.parametrize("board", ["/etc/passwd", "engine/data/default_board.json", 42, "default "])
def test_a_board_is_never_read_from_a_path(app, board) -> None:
    """A board is "default" or a board file's JSON: a string is never opened as a file."""
    with app.app_context():
        with pytest.raises(ServiceError) as err:
            create_game("t", PLAYERS, board=board)
        assert err.value.status == 400 and "passwd" not in err.value.message
        assert _count(Game) == 0


@pytest.mark.parametrize(
    "email",
    [
        "a5@example.org, evil@example.org",
        "Friend <evil@example.org>",
        "a@example.org\r\nBcc: e@x.org",
        "a b@example.org",
        "nobody",
        "a\x00@example.org",
        "a@example.org\x00",
        "a\ud800@example.org",
        '"quoted"@example.org',
        "a@[127.0.0.1]",
        "a@example.invalid",
        "a@localhost",
        "a@" + "x" * 250 + ".org",
    ],
)
def test_player_emails_are_one_plain_address(app, email) -> None:
    """What cannot go in a mail header, or reach anyone, is refused at creation (no invitation
    may go astray); the organiser's address likewise."""
    players = [*PLAYERS[:2], ("Carla", email)]
    with app.app_context():
        with pytest.raises(ServiceError) as err:
            create_game("t", players)
        assert err.value.status == 400 and _count(Game) == 0
        assert "plain email address" in err.value.message
        with pytest.raises(ServiceError) as err:
            create_game("t", PLAYERS, creator_email=email)
        assert err.value.status == 400 and _count(Game) == 0


def test_addresses_are_stored_normalised(app) -> None:
    """The domain is kept in IDNA ASCII and lower case (an international domain needs nothing
    of the mail server), the local part as written; the organiser's address too, and it stays
    optional."""
    players = [("Amy", " Amy@EXAMPLE.org "), ("Bill", "bill@例子.中国"), PLAYERS[2]]
    with app.app_context():
        created = create_game("t", players, creator_email="Org@Bücher.example")
        emails = [s.email for s in seats_of(created.game_id)]
        assert emails == ["Amy@example.org", "bill@xn--fsqu00a.xn--fiqs8s", "carla@example.org"]
        assert get_game(created.game_id).creator_email == "Org@xn--bcher-kva.example"
        assert get_game(create_game("t", PLAYERS).game_id).creator_email == ""
        set_seat_email(created.game_id, 1, "BILL@例子.中国")
        assert seats_of(created.game_id)[1].email == "BILL@xn--fsqu00a.xn--fiqs8s"


def test_international_local_parts_need_a_server_that_takes_them(app) -> None:
    """``用户@例子.中国`` can only be mailed through a server that accepts SMTPUTF8: without
    ``MAIL_SMTPUTF8`` it is refused at creation (and by the organiser's fix) with a message that
    says so; with it, it is stored with its domain in IDNA ASCII."""
    players = [*PLAYERS[:2], ("Chen", "用户@例子.中国")]
    with app.app_context():
        for attempt in (
            lambda: create_game("t", players),
            lambda: create_game("t", PLAYERS, creator_email="用户@例子.中国"),
        ):
            with pytest.raises(ServiceError) as err:
                attempt()
            assert err.value.status == 400
            assert "mail server that accepts international addresses" in err.value.message
        gid = create_game("t", PLAYERS).game_id
        with pytest.raises(ServiceError) as err:
            set_seat_email(gid, 2, "用户@例子.中国")
        assert err.value.code == "bad_email" and "international" in err.value.message
        app.config["MAIL_SMTPUTF8"] = True
        created = create_game("t", players, creator_email="组织者@例子.中国")
        assert seats_of(created.game_id)[2].email == "用户@xn--fsqu00a.xn--fiqs8s"
        assert get_game(created.game_id).creator_email == "组织者@xn--fsqu00a.xn--fiqs8s"


def test_titles_lose_control_characters_and_names_may_not_have_them(app) -> None:
    with app.app_context():
        created = create_game("Hi\r\nBcc: evil@example.org", PLAYERS)
        assert get_game(created.game_id).title == "Hi  Bcc: evil@example.org"
        with pytest.raises(ServiceError):
            create_game("t", [("Amy\u202e", "amy@example.org"), *PLAYERS[1:]])


def test_two_resends_at_one_moment_queue_two_invitations(app) -> None:
    """Each resend makes its own invitation row, even at the same instant (the fuzz test found
    the second one refused by the outbox's dedupe key, a 500)."""
    with app.app_context():
        gid = create_game("t", PLAYERS).game_id
        for _ in range(2):  # the test clock stands still
            resend_invitation(gid, 1)
        invited = db.session.execute(
            select(Notification.body).where(
                Notification.kind == "invited", Notification.seat_index == 1
            )
        ).scalars()
        links = [body["link"] for body in invited]
        assert len(links) == 3 and len(set(links)) == 3  # the first invitation and two resends
