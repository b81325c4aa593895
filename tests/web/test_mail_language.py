"""Mail speaks the seat's language (its settings, or the language it last picked in a page's
header): subject, greeting, buttons, and every line of what happened (``imtheboss.web.story``)."""

from __future__ import annotations

from imtheboss.web.models import Notification, Seat, db
from imtheboss.web.service import create_game, get_game
from imtheboss.worker.mail import compose
from sqlalchemy import select

PLAYERS = [("Amy", "amy@example.org"), ("Bill", "bill@example.org"), ("Carla", "carla@example.org")]


def _invitation(app, locale: str):
    with app.app_context():
        created = create_game("Friday", PLAYERS)
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
    assert "Bill，你好：" in text and "打开游戏：" in text and "不再接收这些邮件：" in text
    assert "你受邀以 Bill 的身份玩" in text and "invited" not in text


def test_mail_in_traditional_chinese(app) -> None:
    assert str(_invitation(app, "zh_Hant")["Subject"]) == "[我是大老闆] Friday：邀請你加入"


def test_mail_defaults_to_english(app) -> None:
    msg = _invitation(app, "")
    assert str(msg["Subject"]) == "[I'm the Boss!] Friday: you are invited"
    assert "Hello Bill," in msg.get_body(("plain",)).get_content()


def test_the_header_language_is_the_seats_mail_language(app) -> None:
    """A seat that picks 繁體中文 in a page's header gets its mail in it; a visitor who is no
    seat of the game changes nothing."""
    with app.app_context():
        created = create_game("Friday", PLAYERS)
    gid = created.game_id
    bill = app.test_client()
    assert bill.get(f"/g/{gid}/s/{created.seat_tokens[1]}").status_code == 303
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
