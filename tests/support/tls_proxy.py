"""A TLS-terminating proxy for the HTTPS tests (tests/e2e/test_https.py, test_nginx.py): the
shipped example ``deploy/nginx.conf`` with the test's ports, certificate and folders, a
certificate from a CA of the test's own (trustme), and Debian's ``nginx`` run as the test's own
process, with its configuration, pid file, logs and temporary files in a folder of the test's
own (no global configuration is read or written). ``.ci/run`` installs nginx when it is missing.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import trustme

from support.e2e import Process, free_port, wait_for

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "nginx.conf"  # the shipped one

# The test's own frame around the shipped example (which is read in nginx's ``http`` block):
# every file of nginx in the test's folder.
MAIN_CONF = """\
{user}
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log notice;
events {{ worker_connections 64; }}
http {{
    access_log {dir}/default-access.log;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    include {dir}/imtheboss.conf;
}}
"""


def site_conf(
    folder: Path, port: int, http_port: int, upstream: str, edits: tuple[tuple[str, str], ...] = ()
) -> str:
    """``deploy/nginx.conf`` with what an operator changes changed for this test: the ports
    (TLS on ``port``, plain http on ``http_port``, both on 127.0.0.1), the certificate, the log
    folder and the app's address (``upstream``); then ``edits`` (``(old, new)`` pairs)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in [
        ("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("/etc/letsencrypt/live/boss.example.org/fullchain.pem", str(folder / "cert.pem")),
        ("/etc/letsencrypt/live/boss.example.org/privkey.pem", str(folder / "key.pem")),
        ("/var/log/nginx/", f"{folder}/"),
        ("http://127.0.0.1:8000", upstream),
        *edits,
    ]:
        assert old in text, f"deploy/nginx.conf no longer says {old!r}"
        text = text.replace(old, new)
    return text


def issue_certificate(folder: Path, host: str = "127.0.0.1") -> Path:
    """A certificate for ``host`` (an IP address) from a CA of the test's own (trustme), written
    to ``folder/cert.pem`` with its key in ``folder/key.pem``; returns the CA's certificate
    (``folder/ca.pem``), for a client to verify the proxy with."""
    ca = trustme.CA()
    issued = ca.issue_cert(host)
    for blob in issued.cert_chain_pems:
        blob.write_to_path(str(folder / "cert.pem"), append=True)
    issued.private_key_pem.write_to_path(str(folder / "key.pem"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    return folder / "ca.pem"


@dataclass
class TlsProxy:
    """nginx on ``https://127.0.0.1:port`` in front of ``upstream`` (``http://host:port``)."""

    folder: Path
    port: int
    http_port: int
    process: Process | None = None

    @classmethod
    def prepare(cls, folder: Path) -> TlsProxy:
        """Choose the port and make the certificate (before the app starts: its ``BASE_URL``
        is the proxy's address)."""
        folder.mkdir(parents=True, exist_ok=True)
        issue_certificate(folder)
        return cls(folder, free_port(), free_port())

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self, upstream: str, edits: tuple[tuple[str, str], ...] = ()) -> None:
        """Write the configuration (the shipped example in the test's frame) and run nginx in the
        foreground (its own process group)."""
        # As root, nginx's workers would switch to an unprivileged user that cannot read the
        # test's private temporary folder.
        user = "user root;" if os.geteuid() == 0 else ""
        (self.folder / "imtheboss.conf").write_text(
            site_conf(self.folder, self.port, self.http_port, upstream, edits)
        )
        conf = self.folder / "nginx.conf"
        conf.write_text(MAIN_CONF.format(user=user, dir=self.folder))
        argv = [NGINX, "-p", str(self.folder), "-e", str(self.folder / "error.log")]
        argv += ["-c", str(conf), "-g", "daemon off;"]
        self.process = Process("nginx", argv, dict(os.environ), self.folder, self.folder / "out")
        self.process.start()
        wait_for(self._listening, 30, what="nginx to listen")

    def _listening(self) -> bool:
        assert self.process is not None
        if not self.process.running:
            raise AssertionError(f"nginx exited:\n{self.process.tail()}\n{self.error_log()}")
        return "start worker process" in self.error_log()

    def error_log(self) -> str:
        path = self.folder / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def access_log(self) -> str:
        """Every access log line nginx wrote (the example's log and nginx's default one)."""
        paths = [self.folder / "imtheboss.access.log", self.folder / "default-access.log"]
        return "".join(p.read_text(errors="replace") for p in paths if p.exists())

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None
