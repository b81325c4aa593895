"""A TLS-terminating proxy for the HTTPS tests (tests/e2e/test_https.py): a self-signed
certificate made with ``openssl`` and Debian's ``nginx`` run as the test's own process, with its
configuration, pid file, logs and temporary files in a folder of the test's own (no global
configuration is read or written). ``.ci/run`` installs nginx when it is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from helpers_e2e import Process, free_port, wait_for

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

# What an operator's site configuration says (the README's example): the proxy tells the app
# the scheme, the client's address and the host the browser asked for (with its port).
PROXY_CONF = """\
{user}
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log notice;
events {{ worker_connections 64; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {dir}/cert.pem;
        ssl_certificate_key {dir}/key.pem;
        location / {{
            proxy_pass {upstream};
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Host $http_host;
        }}
    }}
}}
"""


def self_signed_certificate(folder: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A certificate for ``host`` (an IP address) and its key, valid for two days, written to
    ``folder/cert.pem`` and ``folder/key.pem``."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + ["-nodes", "-days", "2", "-subj", f"/CN={host}", "-addext", f"subjectAltName=IP:{host}"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


@dataclass
class TlsProxy:
    """nginx on ``https://127.0.0.1:port`` in front of ``upstream`` (``http://host:port``)."""

    folder: Path
    port: int
    process: Process | None = None

    @classmethod
    def prepare(cls, folder: Path) -> TlsProxy:
        """Choose the port and make the certificate (before the app starts: its ``BASE_URL``
        is the proxy's address)."""
        folder.mkdir(parents=True, exist_ok=True)
        self_signed_certificate(folder)
        return cls(folder, free_port())

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self, upstream: str) -> None:
        """Write the configuration and run nginx in the foreground (its own process group)."""
        # As root, nginx's workers would switch to an unprivileged user that cannot read the
        # test's private temporary folder.
        user = "user root;" if os.geteuid() == 0 else ""
        conf = self.folder / "nginx.conf"
        conf.write_text(
            PROXY_CONF.format(user=user, dir=self.folder, port=self.port, upstream=upstream)
        )
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

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None
