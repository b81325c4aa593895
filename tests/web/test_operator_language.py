"""The operator's mail outbox speaks the page's language (English, 简体中文, 繁體中文) like
every other page."""

from __future__ import annotations

import pytest
from imtheboss.web.models import OutboxMail, db
from support.app import client_at

TOKEN = "operator-token-of-the-tests-0123456789"


@pytest.mark.parametrize("app_config", [{"OPERATOR_TOKEN": TOKEN}])
@pytest.mark.parametrize(
    ("lang", "title", "said"),
    [
        ("en", "Mail outbox", "No SMTP server is configured"),
        ("zh_Hans", "邮件发件箱", "没有配置 SMTP 服务器"),
        ("zh_Hant", "郵件寄件匣", "沒有設定 SMTP 伺服器"),
    ],
)
def test_the_outbox_page_is_translated(app, lang: str, title: str, said: str) -> None:
    with app.app_context():
        db.session.add(
            OutboxMail(
                to="amy@example.org",
                subject="hello",
                message="Subject: hello\n\nhello\n",
                created_at=app.config["CLOCK"](),
            )
        )
        db.session.commit()
    page = client_at(app, "127.0.0.1").get(
        "/operator/mail",
        query_string={"lang": lang},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert page.status_code == 200
    assert f"<title>{title}</title>" in page.text and said in page.text
    assert f'<html lang="{lang.replace("_", "-")}">' in page.text


@pytest.mark.parametrize("app_config", [{"OPERATOR_TOKEN": TOKEN, "SMTP_HOST": "smtp.example.org"}])
def test_with_an_smtp_server_the_outbox_says_mail_goes_out_there(app) -> None:
    page = client_at(app, "127.0.0.1").get(
        "/operator/mail", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert page.status_code == 200
    assert "Mail goes out through the SMTP server smtp.example.org" in page.text
    assert "No SMTP server is configured" not in page.text
