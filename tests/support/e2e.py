"""Helpers for the play-by-email test (tests/e2e/test_play_by_email.py): real processes (gunicorn,
a Celery worker, Celery beat) started as subprocesses, an aiosmtpd SMTP server in this process,
reading mail (parts, links), and reading the forms of a page the way a browser would.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import json
import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from support.wait import SmtpServer, free_port, wait_for  # noqa: F401  (re-exported)

# -- processes -------------------------------------------------------------------------------


class Process:
    """A subprocess in its own process group, its output in ``log``."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], cwd: Path, log: Path):
        self.name = name
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.text().splitlines()[-lines:])

    def wait_log(self, needles: list[str], timeout: float) -> None:
        """Wait until every string of ``needles`` is in the log (fail if the process exits)."""

        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.proc.returncode}:\n{self.tail()}")
            seen = self.text()
            return all(n in seen for n in needles)

        wait_for(ready, timeout, what=f"{self.name} to start")

    def stop(self) -> None:
        """``SIGTERM`` to the process group (a warm shutdown), ``SIGKILL`` after 15 s."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):  # children left behind
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None

    def problems(self) -> list[str]:
        """Log lines that say something went wrong (a failed task, an unhandled exception)."""
        return [
            line
            for line in self.text().splitlines()
            if "ERROR/" in line
            or "CRITICAL/" in line
            or "Traceback" in line
            or "[ERROR]" in line
            or "ERROR in " in line
        ]


# -- mail ------------------------------------------------------------------------------------


@dataclass
class Mail:
    """One received message, parsed once."""

    message: EmailMessage
    at: datetime
    to: str
    subject: str
    text: str
    html: str
    links: list[str] = field(default_factory=list)


LINK = re.compile(r"https?://[^\s\"'<>]+")


def parse_mail(raw: bytes, at: datetime) -> Mail:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    plain = message.get_body(("plain",))
    html = message.get_body(("html",))
    text = plain.get_content() if plain is not None else ""
    markup = html.get_content() if html is not None else ""
    found: list[str] = []
    for candidate in LINK.findall(text) + LINK.findall(markup):
        link = candidate.replace("&amp;", "&").rstrip(".,);")
        if link not in found:
            found.append(link)
    return Mail(message, at, str(message["To"]), str(message["Subject"]), text, markup, found)


class Mailbox(SmtpServer):
    """An aiosmtpd server on a free port that keeps every message (``mails``)."""

    def __init__(self) -> None:
        super().__init__()
        self.mails: list[Mail] = []

    def keep(self, content: bytes) -> None:
        self.mails.append(parse_mail(content, datetime.now(UTC)))

    def all(self) -> list[Mail]:
        with self.lock:
            return list(self.mails)

    def to(self, address: str) -> list[Mail]:
        """The messages for ``address``, in the order they arrived."""
        with self.lock:
            return [m for m in self.mails if m.to == address]


# -- pages -----------------------------------------------------------------------------------


@dataclass
class Form:
    """A ``<form>`` of a page: its action, hidden fields, and which inputs it asks for."""

    action: str
    method: str
    hidden: dict[str, str] = field(default_factory=dict)
    inputs: set[str] = field(default_factory=set)  # names of visible inputs, selects, textareas
    checkboxes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def cmd(self) -> dict[str, Any] | None:
        try:
            value = json.loads(self.hidden.get("cmd", ""))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class FormParser(HTMLParser):
    """Collects the forms of a page (nested forms do not exist in HTML)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self.current: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.current = Form(a.get("action", ""), a.get("method", "get").lower())
            self.forms.append(self.current)
            return
        if self.current is None or "name" not in a:
            return
        name = a["name"]
        if tag == "input":
            kind = a.get("type", "text").lower()
            if kind == "hidden":
                self.current.hidden[name] = a.get("value", "")
            elif kind == "checkbox":
                self.current.checkboxes.setdefault(name, []).append(a.get("value", ""))
            elif kind not in ("submit", "button"):
                self.current.inputs.add(name)
        elif tag in ("select", "textarea"):
            self.current.inputs.add(name)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.current = None


def page_forms(html: str) -> list[Form]:
    parser = FormParser()
    parser.feed(html)
    parser.close()
    return parser.forms
