"""Mail speaks the seat's language (its settings, or the language it last picked in a page's
header): subject, greeting, buttons, and every line of what happened
(``imtheboss.web.say.messages``)."""

from __future__ import annotations

from imtheboss.web.games.create import create_game
from imtheboss.web.games.load import get_game
from imtheboss.web.mail.compose import compose
from imtheboss.web.models import Notification, Seat, db
from sqlalchemy import select

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


def _invitation(app, locale: str, title: str = "Friday"):
    with app.app_context():
        created = create_game(title, PLAYERS)
        seat = db.session.execute(select(Seat).where(Seat.seat_index == 1)).scalar_one()
        seat.locale = locale
        db.session.commit()
        row = db.session.execute(
            select(Notification).where(Notification.seat_index == 1, Notification.kind == "invited")
        ).scalar_one()
        return compose(get_game(created.game_id), seat, [row])


def test_mail_in_simplified_chinese(app) -> None:
    msg = _invitation(app, "zh_Hans")
    assert str(msg["Subject"]) == "[我是大老板] Friday：邀请你加入"
    text = msg.get_body(("plain",)).get_content()
    assert "Bill，你好：" in text and "打开游戏：" in text and "退订这局游戏的邮件：" in text
    assert "你受邀以 Bill 的身份玩" in text and "invited" not in text


def test_mail_in_traditional_chinese(app) -> None:
    assert str(_invitation(app, "zh_Hant")["Subject"]) == "[我是大老闆] Friday：邀請你加入"


def test_mail_defaults_to_english(app) -> None:
    msg = _invitation(app, "")
    assert str(msg["Subject"]) == "[I'm the Boss!] Friday: you are invited"
    assert "Hello Bill," in msg.get_body(("plain",)).get_content()


def test_a_game_with_no_title_is_not_named_twice_in_a_subject(app) -> None:
    assert str(_invitation(app, "", "")["Subject"]) == "[I'm the Boss!] you are invited"


def test_the_header_language_is_the_seats_mail_language(app) -> None:
    """A seat that picks 繁體中文 in a page's header gets its mail in it; a visitor who is no
    seat of the game changes nothing."""
    with app.app_context():
        created = create_game("Friday", PLAYERS)
    gid = created.game_id
    bill = app.test_client()
    assert bill.get(f"/g/{gid}/s/{created.seat_tokens[1]}").status_code == 303
    crossing = {"Sec-Fetch-Site": "cross-site"}  # a link on another site: shown, not stored
    assert bill.get(f"/g/{gid}?lang=zh_Hans", headers=crossing).status_code == 200
    assert bill.get(f"/g/{gid}?lang=zh_Hant").status_code == 200
    assert app.test_client().get(f"/g/{gid}?lang=zh_Hans").status_code in (200, 403)
    with app.app_context():
        seats = db.session.execute(select(Seat).order_by(Seat.seat_index)).scalars().all()
        assert [s.locale for s in seats] == ["", "zh_Hant", ""]
        row = db.session.execute(
            select(Notification).where(Notification.seat_index == 1, Notification.kind == "invited")
        ).scalar_one()
        msg = compose(get_game(gid), seats[1], [row])
    assert str(msg["Subject"]).startswith("[我是大老闆]")


def _created_on_the_page(app, lang: str, **chosen: str):
    """A game made on ``/new`` read in ``lang`` (``chosen``: the form's language fields, such
    as ``players-1-language``), confirmed by its organiser: each seat's invitation, by seat."""
    from support.organiser import confirm, confirm_link, mail_text, new_game_form

    seats = [(n, f"{n.lower()}@players.imtheboss.net") for n in ("Mei", "Jun", "Hao")]
    browser = app.test_client()
    browser.get(f"/?lang={lang}")  # the organiser reads the site in ``lang``
    form = new_game_form(browser, seats, creator_email="boss@players.imtheboss.net", **chosen)
    assert browser.post("/new", data=form).status_code == 303
    with app.app_context():
        (mail,) = db.session.execute(select(Notification)).scalars()
        gid = mail.game_id
        confirm(browser, confirm_link(mail_text(compose(get_game(gid), None, [mail])), gid))
    out = {}
    for index in range(len(seats)):
        with app.app_context():  # one mail a context, as the worker sends them
            row = db.session.execute(
                select(Notification).where(
                    Notification.kind == "invited", Notification.seat_index == index
                )
            ).scalar_one()
            seat = db.session.execute(
                select(Seat).where(Seat.game_id == gid, Seat.seat_index == index)
            ).scalar_one()
            out[index] = str(compose(get_game(gid), seat, [row])["Subject"])
    return out


def test_the_organisers_language_is_each_invitations_by_default(app) -> None:
    page = app.test_client().get("/new?lang=zh_Hans").text
    assert page.count('<option selected value="zh_Hans">') == 6  # every row: the page's own
    subjects = _created_on_the_page(app, "zh_Hans")
    assert all(s.startswith("[我是大老板]") for s in subjects.values()), subjects


def test_the_organiser_chooses_each_players_language(app) -> None:
    subjects = _created_on_the_page(
        app, "zh_Hans", **{"players-1-language": "en", "players-2-language": "zh_Hant"}
    )
    assert subjects[0].startswith("[我是大老板]")
    assert subjects[1].startswith("[I'm the Boss!]")
    assert subjects[2].startswith("[我是大老闆]")


def test_a_language_the_form_does_not_offer_is_refused(app) -> None:
    from support.organiser import new_game_form

    browser = app.test_client()
    seats = [(n, f"{n.lower()}@players.imtheboss.net") for n in ("Mei", "Jun")]
    form = new_game_form(browser, seats, creator_email="boss@players.imtheboss.net")
    response = browser.post("/new", data={**form, "players-0-language": "klingon"})
    assert response.status_code == 400 and "language" in response.text
    with app.app_context():
        assert db.session.execute(select(Notification)).first() is None


def _unsubscribe(app, locale: str) -> tuple[str, str]:
    from urllib.parse import urlsplit

    from imtheboss.web.players.links import unsubscribe_link

    with app.app_context():
        created = create_game("Friday", PLAYERS)
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == created.game_id, Seat.seat_index == 1)
        ).scalar_one()
        seat.locale = locale
        db.session.commit()
        return created.game_id, urlsplit(unsubscribe_link(created.game_id, seat)).path


def test_the_unsubscribe_page_is_in_the_seat_s_language_with_the_site_s_layout(app) -> None:
    """The "退订这局游戏的邮件" link of a Chinese mail opens a Chinese page in the site's layout
    (header, language switch), whatever the browser's language; stopping says so in Chinese."""
    gid, path = _unsubscribe(app, "zh_Hans")
    client = app.test_client()
    english = {"Accept-Language": "en"}
    page = client.get(path, headers=english).text
    assert '<html lang="zh-Hans">' in page and 'class="top"' in page and "Friday" in page
    assert "不再给 Bill 发送这局游戏的任何邮件吗？" in page and "不再接收邮件" in page
    assert "Stop" not in page and "email" not in page.split("<main ")[1], page
    done = client.post(path, headers=english).text
    assert "Bill：你将不再收到这局游戏的邮件。" in done and "no more email" not in done
    with app.app_context():
        seat = db.session.execute(
            select(Seat).where(Seat.game_id == gid, Seat.seat_index == 1)
        ).scalar_one()
        assert seat.notify == "off"


def test_the_unsubscribe_page_of_a_seat_without_a_language_is_the_browser_s(app) -> None:
    _gid, path = _unsubscribe(app, "")
    page = app.test_client().get(path, headers={"Accept-Language": "zh-TW"}).text
    assert '<html lang="zh-Hant">' in page and "不再給 Bill 寄送這局遊戲的任何郵件嗎？" in page
    page = app.test_client().get(path + "?lang=en", headers={"Accept-Language": "zh-TW"}).text
    assert "Stop all email about this game for Bill?" in page
