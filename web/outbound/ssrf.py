"""Posting to addresses other people chose (webhooks, push services) without letting them aim
the server at itself or its network (SSRF).

``check_url(url)`` takes ``https`` only, resolves the name and refuses it unless every address
it resolves to is public (not private, loopback, link-local, multicast, reserved, unspecified,
shared, site-local, documentation or otherwise not global; an IPv4 address inside an IPv6 one,
IPv4-mapped, 6to4, Teredo or NAT64, is checked as IPv4). ``post(url, body, headers)`` checks the
URL again, then connects to one of the checked addresses itself (never resolving the name a
second time, so a DNS answer that changes between the check and the connection cannot move it),
sends the name as SNI and ``Host``, verifies the certificate for the name, and never follows a
redirect (a 3xx is an answer like any other). ``timeout`` is the deadline of the whole post
(connecting, the TLS handshake, sending, every read of the answer): at the deadline the
socket is shut, so a receiver that drips its answer a byte at a time cannot hold the post (and
the worker running it) longer. ``WEBHOOK_ALLOW_LOOPBACK`` lets loopback addresses through, for
tests only.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import idna
import urllib3
from urllib3.connection import HTTPSConnection
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ReadTimeoutError,
    SSLError,
)

MAX_URL = 2000
MAX_REPLY = 64 * 1024  # bytes of an answer read, at most
NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Not public, though Python 3.11's ``is_global`` takes them: deprecated site-local (RFC 3879),
# documentation (RFC 9637).
NOT_GLOBAL = tuple(ipaddress.ip_network(n) for n in ("fec0::/10", "3fff::/20"))

IP = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """The URL is not one the server posts to. ``code``: ``bad_url`` (not a URL, user info,
    too long), ``not_https``, ``no_address`` (the name does not resolve), ``not_public`` (an
    address is private, loopback...)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class Unreachable(Exception):
    """The post did not get an answer. ``code``: ``refused`` (no connection), ``timeout``,
    ``tls`` (the certificate did not verify for the name), ``connection`` (anything else)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class Target:
    """A checked URL: the name (for SNI, ``Host`` and the certificate), the port, the path
    with its query, the ``Host`` header, and the public addresses it resolved to, in order."""

    host: str
    port: int
    path: str
    host_header: str
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class Reply:
    """An answer: the status, the headers (lower-case names), the first ``MAX_REPLY`` bytes."""

    status: int
    headers: dict[str, str]
    body: bytes


def _embedded_v4(ip: IP) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(ip: IP, allow_loopback: bool = False) -> bool:
    """Whether the server may connect to ``ip``: a global unicast address (and, inside an IPv6
    one, its IPv4 address too); loopback as well when ``allow_loopback`` (tests)."""
    inner = _embedded_v4(ip)
    if inner is not None and not is_public(inner, allow_loopback):
        return False
    if allow_loopback and ip.is_loopback:
        return True
    bad = (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or any(ip in network for network in NOT_GLOBAL if network.version == ip.version)
    )
    return not bad and ip.is_global


def _split(url: str) -> tuple[str, int, str, str]:
    """``(host, port, path, host header)`` of an ``https`` URL. Raises ``Refused``."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise Refused("bad_url", "a web address of at most 2000 characters")
    try:
        parts = urlsplit(url.strip())
        port = parts.port or 443
    except ValueError as exc:
        raise Refused("bad_url", str(exc)) from None
    if parts.scheme.lower() != "https":
        raise Refused("not_https", "only https addresses are posted to")
    if parts.username is not None or parts.password is not None or not parts.hostname:
        raise Refused("bad_url", "an address with a host name and no user name")
    host = parts.hostname.rstrip(".")
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode()
        except idna.IDNAError as exc:
            raise Refused("bad_url", str(exc)) from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    shown = f"[{host}]" if ":" in host else host
    return host, port, path, shown if port == 443 else f"{shown}:{port}"


def check_url(url: str, allow_loopback: bool = False) -> Target:
    """``url`` checked: ``https``, and every address its name resolves to public (see
    ``is_public``). Raises ``Refused``."""
    host, port, path, host_header = _split(url)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Refused("no_address", f"{host}: {exc}") from None
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in found:
        text = str(sockaddr[0]).split("%")[0]
        if not is_public(ipaddress.ip_address(text), allow_loopback):
            raise Refused("not_public", f"{host} resolves to {text}, which is not public")
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise Refused("no_address", f"{host} has no address")
    return Target(host, port, path, host_header, tuple(addresses))


class _Deadline:
    """The end of one post: ``watch(sock)`` shuts ``sock`` when the end comes (at once if it
    has come), which ends any read or write blocked on it; ``expired`` tells it happened."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def left(self) -> float:
        """Seconds left (a little more than 0 at least, for a socket timeout)."""
        return max(0.01, self.end - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already
        sock.shutdown(socket.SHUT_RDWR)


def _connection_class(deadline: _Deadline) -> type[HTTPSConnection]:
    """An HTTPS connection whose socket ``deadline`` watches from its creation on (before the
    TLS handshake)."""

    class Watched(HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            deadline.watch(sock)
            return sock

    return Watched


def _context(ca_file: str) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    return context


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    allow_loopback: bool = False,
    ca_file: str = "",
) -> Reply:
    """POST ``body`` to ``url`` (checked by ``check_url``) over a connection to a checked
    address, the certificate verified for the URL's name (``ca_file``: extra CAs), no redirect
    followed; ``timeout`` seconds for the whole post, however the receiver drips its answer.
    Raises ``Refused`` (the URL) or ``Unreachable`` (no answer; ``timeout`` at the deadline)."""
    target = check_url(url, allow_loopback)
    context = _context(ca_file)
    deadline = _Deadline(timeout)
    try:
        return _post(target, body, headers, context, deadline)
    except Unreachable as exc:
        if deadline.expired:
            raise Unreachable("timeout", f"{target.host}: no answer within {timeout} s") from None
        raise exc
    finally:
        deadline.cancel()


def _post(
    target: Target,
    body: bytes,
    headers: dict[str, str],
    context: ssl.SSLContext,
    deadline: _Deadline,
) -> Reply:
    """``post`` to each of ``target``'s addresses until one answers."""
    failure = Unreachable("refused", f"{target.host}: no address answered")
    for address in target.addresses:
        pool = urllib3.HTTPSConnectionPool(
            address,
            target.port,
            server_hostname=target.host,
            assert_hostname=target.host,
            ssl_context=context,
            timeout=urllib3.Timeout(connect=deadline.left(), read=deadline.left()),
            retries=False,
            maxsize=1,
        )
        pool.ConnectionCls = _connection_class(deadline)
        try:
            answer = pool.urlopen(
                "POST",
                target.path,
                body=body,
                headers={**headers, "Host": target.host_header},
                redirect=False,
                retries=False,
                assert_same_host=False,
                preload_content=False,
            )
            data = answer.read(MAX_REPLY, decode_content=False)
            reply = {k.lower(): v for k, v in answer.headers.items()}
            return Reply(answer.status, reply, data)
        except (NewConnectionError, ConnectTimeoutError) as exc:
            failure = Unreachable("refused", f"{target.host} ({address}): {exc}")
        except SSLError as exc:
            raise Unreachable("tls", f"{target.host}: {exc}") from None
        except ReadTimeoutError as exc:
            raise Unreachable("timeout", f"{target.host}: {exc}") from None
        except (HTTPError, OSError) as exc:
            raise Unreachable("connection", f"{target.host}: {exc}") from None
        finally:
            pool.close()
        if deadline.expired:
            break
    raise failure
