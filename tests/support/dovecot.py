"""A real IMAP server for the tests: Debian's dovecot (``dovecot-imapd``, installed by
``.ci/run``) as a non-system instance with its own config, directories, log and port in a temp
folder, one user in a passwd-file. ``Dovecot.append`` delivers a mail into the user's INBOX
(as the world's mail would), over IMAP itself."""

from __future__ import annotations

import imaplib
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from support.wait import free_port, wait_for

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"
USER, PASSWORD = "play", "imap-password-of-the-tests"

CONFIG = """\
base_dir = {root}/run
state_dir = {root}/state
instance_name = imtheboss-{port}
log_path = {root}/dovecot.log
info_log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = {internal}
default_internal_group = {internal_group}
default_login_user = {login}
first_valid_uid = {uid}
last_valid_uid = {uid}
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
"""


class Dovecot:
    """A running dovecot instance on ``127.0.0.1:port`` (user ``USER``, ``PASSWORD``)."""

    def __init__(self) -> None:
        if not os.path.exists(DOVECOT):
            pytest.fail("dovecot is not installed (.ci/run installs dovecot-imapd)")
        # a folder of its own under /tmp: dovecot's unprivileged processes must reach it
        # (pytest's temp folders are private to the user running the tests)
        root = self.root = Path(tempfile.mkdtemp(prefix="imtheboss-dovecot-"))
        root.chmod(0o755)
        self.port = free_port()
        if os.getuid() == 0:  # as root: the package's own unprivileged users
            internal, login = pwd.getpwnam("dovecot"), pwd.getpwnam("dovenull")
        else:
            internal = login = pwd.getpwuid(os.getuid())
        for sub in ("run", "state", "mail", "home"):
            (root / sub).mkdir(parents=True, exist_ok=True)
            os.chown(root / sub, internal.pw_uid, internal.pw_gid) if os.getuid() == 0 else None
        if os.getuid() == 0:
            os.chown(root, internal.pw_uid, internal.pw_gid)
        (root / "passwd").write_text(f"{USER}:{{PLAIN}}{PASSWORD}::::::\n")
        self.config = root / "dovecot.conf"
        self.config.write_text(
            CONFIG.format(
                root=root,
                port=self.port,
                internal=internal.pw_name,
                internal_group=_group(internal.pw_gid),
                login=login.pw_name,
                uid=internal.pw_uid,
                gid=internal.pw_gid,
            )
        )
        # dovecot forks into the background keeping its output open: no pipes to wait on
        out = subprocess.DEVNULL
        subprocess.run([DOVECOT, "-c", str(self.config)], check=True, stdout=out, stderr=out)
        try:
            wait_for(self._answers, what="dovecot")
        except BaseException:
            self.stop()
            raise

    def _answers(self) -> bool:
        try:
            with imaplib.IMAP4("127.0.0.1", self.port, timeout=5) as imap:
                imap.login(USER, PASSWORD)
            return True
        except (OSError, imaplib.IMAP4.error):
            return False

    def append(self, raw: bytes) -> None:
        """Deliver ``raw`` into the INBOX, unseen."""
        with imaplib.IMAP4("127.0.0.1", self.port, timeout=10) as imap:
            imap.login(USER, PASSWORD)
            status, _ = imap.append("INBOX", None, None, raw)
            assert status == "OK"

    def unseen(self) -> int:
        """How many mails of the INBOX are not seen."""
        with imaplib.IMAP4("127.0.0.1", self.port, timeout=10) as imap:
            imap.login(USER, PASSWORD)
            imap.select("INBOX")
            _status, data = imap.search(None, "UNSEEN")
            return len(data[0].split())

    def stop(self) -> None:
        out = subprocess.DEVNULL
        subprocess.run([DOVECOT, "-c", str(self.config), "stop"], stdout=out, stderr=out)
        shutil.rmtree(self.root, ignore_errors=True)

    def settings(self) -> dict[str, object]:
        """The app settings that poll this mailbox (plain IMAP on loopback)."""
        return {
            "IMAP_HOST": "127.0.0.1",
            "IMAP_PORT": self.port,
            "IMAP_SSL": False,
            "IMAP_STARTTLS": False,
            "IMAP_USER": USER,
            "IMAP_PASSWORD": PASSWORD,
            "IMAP_FOLDER": "INBOX",
            "IMAP_POLL_SECONDS": 30,
        }


def _group(gid: int) -> str:
    import grp

    return grp.getgrgid(gid).gr_name
