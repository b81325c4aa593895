"""A form refused because the proxy rewrote the host says so (``web.security.csrf_refusal``).

Behind a TLS proxy every POST is a secure request, and Flask-WTF then wants the ``Referer`` to
name the host the request arrived for. nginx's textbook ``proxy_set_header Host $host`` drops a
port other than 443, so a page at ``https://boss.example.org:8443`` posts to an app that sees the
host ``boss.example.org``: every form of the site is refused. The player reads that the server
is set up wrongly (not "the form has expired"), and the log names both hosts and the fix.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from support.logs import written
from support.organiser import csrf_of

PUBLIC = "https://boss.example.org:8443"  # BASE_URL: the proxy listens on a port of its own
SEEN = "https://boss.example.org"  # what the app sees behind ``Host $host``
WRONG_SETUP = "This server is set up wrongly"


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {"BASE_URL": PUBLIC}


def _post_new(client, referer: str) -> Any:
    page = client.get("/new", base_url=SEEN)
    assert page.status_code == 200
    data = {"csrf_token": csrf_of(page.text), "title": "Host test"}
    return client.post("/new", base_url=SEEN, data=data, headers={"Referer": referer})


def test_a_proxy_that_drops_the_port_is_named_as_the_cause(client) -> None:
    with written(logging.INFO) as log:
        answer = _post_new(client, f"{PUBLIC}/new")
    assert answer.status_code == 400
    assert WRONG_SETUP in answer.text and "The form has expired" not in answer.text
    said = log.getvalue()
    assert "'boss.example.org:8443'" in said and "'boss.example.org'" in said
    assert "proxy_set_header Host $http_host" in said


def test_the_chinese_page_says_it_too(client) -> None:
    client.get("/?lang=zh_Hans", base_url=SEEN)
    answer = _post_new(client, f"{PUBLIC}/new")
    assert answer.status_code == 400 and "设置有误" in answer.text


def test_another_site_still_reads_as_an_expired_form(client) -> None:
    with written(logging.INFO) as log:
        answer = _post_new(client, "https://evil.example/new")
    assert answer.status_code == 400
    assert "The form has expired" in answer.text and WRONG_SETUP not in answer.text
    assert "The referrer does not match the host." in log.getvalue()


def test_the_api_answers_the_code(client) -> None:
    page = client.get("/new", base_url=SEEN)
    answer = client.post(
        "/new",
        base_url=SEEN,
        data={"csrf_token": csrf_of(page.text)},
        headers={"Referer": f"{PUBLIC}/new", "Accept": "application/json"},
    )
    assert answer.status_code == 400 and answer.json["error"]["code"] == "csrf_host"
