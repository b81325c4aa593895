"""What every answer carries for the browser's safety, HTTPS behind a proxy, and the session
cookie: ``init_security(app)`` (called by ``create_app``).

Headers on every answer (``security_headers``):

- ``Content-Security-Policy`` (``CSP``): scripts, styles, images, frames, forms and fetches of
  this server only; no inline script or style (the templates have none: ``static/app.js`` and
  ``static/style.css`` hold them; htmx is told not to inject its indicator style nor to ``eval``
  anything, see ``templates/base.html``); no page may be framed (``frame-ancestors 'none'``, and
  ``X-Frame-Options: DENY`` for older browsers). ``X-Content-Type-Options: nosniff``.
- ``Strict-Transport-Security`` when the request came over HTTPS (``HSTS``, one year).
- ``Cache-Control: no-store`` on game pages, the new-game form, unsubscribe pages and the
  operator's outbox (one seat's information, secret links).
- ``Referrer-Policy``, chosen as follows.

Why ``same-origin`` and not ``no-referrer``: Flask-WTF's CSRF check, in its strict mode for
secure requests (``WTF_CSRF_SSL_STRICT``, kept on), refuses a POST whose ``Referer`` does not
name this very origin (scheme, host and port), beside checking the token. Behind a proxy that
terminates TLS the requests are secure (gunicorn believes ``X-Forwarded-Proto`` from 127.0.0.1;
``TRUSTED_PROXIES`` makes the app believe it too), so a page that forbids the browser to send a
``Referer`` makes every form post fail. ``same-origin`` sends the page's URL to this server only
and nothing to any other site; ``strict-origin`` would send this server's name to every site a
player follows a link to. A page's URL that reaches this server leaks nowhere new: the server
saw it when it served the page.

Why ``no-referrer`` stays on answers whose URL holds a secret (``url_holds_secret``): the seat
and admin sign-in links ``/g/<gid>/s/<token>`` and ``/g/<gid>/admin/<token>``, the mailed links
``/g/<gid>/m/<signed>``, the unsubscribe page ``/u/<gid>/<signed>`` and anything given a
``token`` in the query string. A ``Referer`` would copy the secret into the next request's
headers (and from there into access logs' referrer field and anything else that records it).
No form loses its ``Referer`` by this: the sign-in links answer a 303 redirect (no document, so
nothing is ever sent with that URL as referrer; the page they lead to has no secret in its URL)
and the unsubscribe page's one form is exempt from CSRF (one-click unsubscribe, RFC 8058).
Error pages at such URLs carry only links, no forms.

For the check to pass behind a proxy, the proxy must pass on the ``Host`` the browser asked for,
port included (nginx: ``proxy_set_header Host $http_host``; or ``X-Forwarded-Host`` with
``TRUSTED_PROXIES``). When it does not (nginx's textbook ``Host $host`` drops a port other than
443), every form of our own pages fails that check: ``csrf_refusal`` says so, to the player
(code ``csrf_host``: the server is set up wrongly) and in the log (the two hosts, what to fix),
instead of the usual "the form has expired".

The session cookie is ``Secure`` when ``BASE_URL`` is an ``https://`` address, and a cookie set
in answer to a secure request is always ``Secure`` (``SecureSessionInterface``); it stays
``HttpOnly`` and ``SameSite=Lax``.

``TRUSTED_PROXIES`` (a count, default 0): with ``n > 0`` the WSGI app is wrapped in werkzeug's
``ProxyFix`` trusting the last ``n`` values of ``X-Forwarded-For``/``-Proto``/``-Host``, so
``request.remote_addr`` is the client's address (limits per address depend on it) and
``request.is_secure`` follows the proxy. Only set it when every request comes through those
proxies: a client reaching the app directly could claim any address.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, current_app, has_request_context, request
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFProtect
from imtheboss.web.app.logs import holds_secret
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wrappers import Response

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
csrf = CSRFProtect()  # Flask-WTF: every form POST carries its token (``create_app`` inits it)

HSTS = "max-age=31536000"  # one year, in seconds; this host only (not its subdomains)


class SecureSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, ``Secure`` whenever it is set over a secure request (and
    always when ``SESSION_COOKIE_SECURE`` is on)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        """True when the cookie must only travel over HTTPS."""
        if super().get_cookie_secure(app):
            return True
        return has_request_context() and request.is_secure


def url_holds_secret() -> bool:
    """True when the request's URL carries a secret (a sign-in token, a signed mail link, an
    unsubscribe link, a ``token`` parameter): its answer must not pass it on as a Referer."""
    return holds_secret(request.path, request.args)


def security_headers(response: Response) -> Response:
    """Add the headers of the module docstring to ``response`` (a view's own win)."""
    headers = response.headers
    headers.setdefault("Content-Security-Policy", CSP)
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "no-referrer" if url_holds_secret() else "same-origin")
    if request.is_secure:
        headers.setdefault("Strict-Transport-Security", HSTS)
    if request.path.startswith(("/g/", "/new", "/u/", "/operator/", "/sign-in", "/me", "/api/me")):
        headers.setdefault("Cache-Control", "no-store")
    return response


def local_path(path: str) -> str:
    """``path`` as a link that stays on this site: one leading ``/`` (a path that starts with
    ``//`` or ``/\\`` would be read by a browser as another site's address)."""
    return "/" + path.lstrip("/\\")


def init_security(app: Flask) -> None:
    """Trust ``TRUSTED_PROXIES`` proxies (``ProxyFix``), make the session cookie ``Secure`` over
    HTTPS, and add ``security_headers`` to every answer of ``app``."""
    proxies = int(app.config.get("TRUSTED_PROXIES") or 0)
    if proxies > 0:
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies
        )
    if str(app.config.get("BASE_URL") or "").startswith("https://"):
        app.config["SESSION_COOKIE_SECURE"] = True
    app.session_interface = SecureSessionInterface()
    app.after_request(security_headers)
    app.jinja_env.globals["local_path"] = local_path


REFERRER_MISMATCH = "The referrer does not match the host."  # Flask-WTF's reason for it


def csrf_refusal(reason: str) -> tuple[str, str]:
    """The refusal ``(code, message)`` for a POST whose CSRF check failed with Flask-WTF's
    ``reason``, logged with the cause. A ``Referer`` naming this server's public address
    (``BASE_URL``'s host and port) while the request arrived for another ``Host`` is our own
    page posted through a proxy that rewrote the host: ``csrf_host``, and a warning naming both
    hosts and the fix. Anything else: ``csrf`` (an expired or missing token, another site)."""
    referer = urlsplit(request.referrer or "").netloc
    public = urlsplit(current_app.config.get("BASE_URL") or "").netloc
    if reason == REFERRER_MISMATCH and referer and referer == public != request.host:
        current_app.logger.warning(
            "form refused: the page was at host %r but the request reached the app for host "
            "%r: the proxy must pass on the Host the browser sent, port included "
            "(nginx: proxy_set_header Host $http_host)",
            referer,
            request.host,
        )
        return "csrf_host", (
            "this server's proxy changes the address of the site (its Host header), so no "
            "form can be sent; whoever runs the server must fix it"
        )
    current_app.logger.info(
        "form refused (CSRF): %s (referrer host %r, request host %r)",
        reason,
        referer,
        request.host,
    )
    return "csrf", "the form has expired or lacks its security token; reload the page and try again"
