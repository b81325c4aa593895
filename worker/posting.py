"""One post of the outbox (a webhook's or a phone's, ``imtheboss.worker.outbound``): the
``Request`` web/ makes of a row (``imtheboss.web.outbound.requests``), sent
through the SSRF guard with the app's settings (``send``), and what its answer means
(``classify``, ``post``: an ``Outcome``).
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app
from imtheboss.web.outbound.requests import Request, ssrf


@dataclass(frozen=True)
class Outcome:
    """How a post went: ``state`` ``sent``, ``retry`` or ``failed``; ``code`` why (``redirect``,
    ``rejected``, ``server``, ``refused``, ``timeout``, ``tls``, ``not_public``, ``gone``...)."""

    state: str
    code: str = ""
    detail: str = ""


def send(request: Request) -> ssrf.Reply:
    """Post ``request`` through the SSRF guard with the app's settings. Raises
    ``ssrf.Refused`` or ``ssrf.Unreachable``."""
    config = current_app.config
    return ssrf.post(
        request.url,
        request.body,
        request.headers,
        timeout=float(config["WEBHOOK_TIMEOUT"]),
        allow_loopback=bool(config["WEBHOOK_ALLOW_LOOPBACK"]),
        ca_file=config["WEBHOOK_CA_FILE"],
    )


def classify(reply: ssrf.Reply) -> Outcome:
    """What an answer means for a post: 2xx sent; a redirect (never followed) and other 4xx
    failed; 408, 425, 429 and 5xx tried again."""
    status = reply.status
    detail = f"{status} {reply.body[:120].decode(errors='replace')}".strip()
    if 200 <= status < 300:
        return Outcome("sent")
    if 300 <= status < 400:
        return Outcome("failed", "redirect", detail)
    if status in (408, 425, 429) or status >= 500:
        return Outcome("retry", "server", detail)
    return Outcome("failed", "rejected", detail)


def post(request: Request, gone: tuple[int, ...] = ()) -> Outcome:
    """Post ``request`` and say how it went (``classify``; the statuses ``gone`` are failed
    with the code ``gone``; the guard's refusal is failed for good, no answer is tried
    again)."""
    try:
        reply = send(request)
    except ssrf.Refused as exc:
        return Outcome("failed", exc.code, exc.detail)
    except ssrf.Unreachable as exc:
        return Outcome("retry", exc.code, exc.detail)
    if reply.status in gone:
        return Outcome("failed", "gone", str(reply.status))
    return classify(reply)
