"""Mail speaks the seat's language (its settings): subject, greeting, buttons. The engine's
event lines inside stay English (documented)."""

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


def test_mail_in_traditional_chinese(app) -> None:
    assert str(_invitation(app, "zh_Hant")["Subject"]) == "[我是大老闆] Friday：邀請你加入"


def test_mail_defaults_to_english(app) -> None:
    msg = _invitation(app, "")
    assert str(msg["Subject"]) == "[I'm the Boss!] Friday: you are invited"
    assert "Hello Bill," in msg.get_body(("plain",)).get_content()
