"""The server's settings: one object, read once from the environment when a process starts.

Every setting is an environment variable of the same name in capitals (``DATABASE_URL``,
``SMTP_HOST``...); the README lists them. ``Settings.load()`` reads and checks them
(pydantic-settings), ``Settings.flask_config()`` turns them into the Flask app's config, and
nothing else in the server reads ``os.environ``: the web app reads ``current_app.config``, the
worker's Celery app the same object.

Outside the embedded default (``IMTHEBOSS_EMBEDDED=1``, set by ``imtheboss.web.serve``), a
missing ``SECRET_KEY`` or ``BASE_URL`` stops the start with a clear message (``SettingsError``):
web and worker on two hosts must sign links with the same key, and mail must link to the public
address, not to localhost.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsError(RuntimeError):
    """The settings cannot run a server; the message says which one and what to do."""


class Settings(BaseSettings):
    """All settings with their defaults. Times in seconds, money not involved."""

    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", populate_by_name=True)

    # -- where things are
    database_url: str = ""
    redis_url: str = ""
    secret_key: str = ""
    base_url: str = ""
    embedded: bool = Field(False, validation_alias="IMTHEBOSS_EMBEDDED")
    instance: str = Field("", validation_alias="IMTHEBOSS_INSTANCE")
    broker_dir: str = Field("", validation_alias="IMTHEBOSS_BROKER_DIR")
    beat_schedule_file: str = ""
    port: int = Field(5000, ge=1, le=65535)  # the embedded default's port (``serve``)
    # Proxies in front of the app that may set X-Forwarded-For/-Proto/-Host (nginx on the same
    # host: 1). 0 trusts none (gunicorn itself trusts X-Forwarded-Proto from 127.0.0.1).
    trusted_proxies: int = Field(0, ge=0, le=5)

    # -- mail
    smtp_host: str = ""
    smtp_port: int = Field(0, ge=0, le=65535)  # 0: 465 with SMTP_SSL, else 25
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_starttls: bool = False
    smtp_ssl: bool = False  # implicit TLS (port 465)
    smtp_ca_file: str = ""  # extra CA bundle to verify the SMTP server with (a private CA)
    smtp_timeout: float = Field(20.0, gt=0, le=300)
    mail_from: str = "I'm the Boss! <boss@localhost>"
    mail_domain: str = "imtheboss.local"
    # The SMTP server accepts SMTPUTF8 (RFC 6531): addresses whose local part goes beyond ASCII
    # (用户@例子.中国) may be given to players; off, they are refused when a game is created.
    mail_smtputf8: bool = False
    # DKIM signing of every mail sent by SMTP (docs/deliverability.md): a selector and the file
    # of its private key (PEM, RSA); the domain defaults to MAIL_FROM's. Unset: mail goes out
    # unsigned, for a relay that signs it.
    dkim_selector: str = Field("", pattern=r"^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)*$")
    dkim_key_file: str = ""
    dkim_domain: str = ""
    mail_max_attempts: int = Field(8, ge=1, le=100)
    mail_retry_max_seconds: int = Field(300, ge=1)
    batch_delay_seconds: float = Field(180.0, ge=0)
    # A seat whose live game page polled within this many seconds is looking at the game: no
    # mail of what the page shows it (imtheboss.web.games.presence).
    presence_seconds: float = Field(40.0, ge=0, le=3600)

    # -- signing in by email (imtheboss.web.players.signin)
    sign_in_link_seconds: int = Field(900, ge=60, le=86400)  # a sign-in link lasts this long
    sign_in_grace_seconds: int = Field(60, ge=0, le=600)  # a double click of a used link

    # -- replies to mail (imtheboss.web.replies.address, docs/mail-replies.md)
    # Mail that asks something carries Reply-To: <MAIL_REPLY_LOCAL>+<token>@<MAIL_DOMAIN>;
    # None: on in the embedded default (replies are pasted on the outbox page), off elsewhere.
    mail_replies: bool | None = None
    mail_reply_local: str = Field("play", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$")
    # The authserv-id of the relay whose Authentication-Results are trusted: a DKIM, SPF or
    # DMARC "fail" in such a header refuses the reply. Empty: the header is not read.
    mail_reply_auth_servid: str = ""
    mail_inbound_host: str = "127.0.0.1"  # the inbound SMTP receiver (the Procfile's mail:)
    mail_inbound_port: int = Field(2525, ge=1, le=65535)
    mail_inbound_max_bytes: int = Field(10_000_000, ge=10_000)  # bigger mail is refused at DATA
    imap_host: str = ""  # a mailbox to poll for replies (hosted mail); empty: none
    imap_port: int = Field(0, ge=0, le=65535)  # 0: 993 with IMAP_SSL, else 143
    imap_user: str = ""
    imap_password: str = ""
    imap_ssl: bool = True
    imap_starttls: bool = False
    imap_folder: str = "INBOX"
    imap_poll_seconds: float = Field(60.0, gt=0)  # without IDLE, or between IDLE renewals

    # -- the worker
    sweep_seconds: float = Field(5.0, gt=0)
    deadline_stale_seconds: float = Field(30.0, gt=0)
    deadline_threads: int = Field(2, ge=0, le=32)  # firing threads per deadlines worker
    deadline_poll_seconds: float = Field(0.25, gt=0, le=10)
    deadline_batch: int = Field(50, ge=1, le=500)  # deadlines one claim takes

    # -- webhooks and push (imtheboss.web.outbound.webhooks, imtheboss.web.outbound.push)
    webhook_allow_loopback: bool = False  # tests only: posts may go to 127.0.0.1 and ::1
    webhook_ca_file: str = ""  # extra CAs for webhook and push endpoints (tests, a private CA)
    webhook_timeout: float = Field(10.0, gt=0, le=60)  # seconds to connect, and for each read
    webhook_max_attempts: int = Field(8, ge=1, le=100)
    webhook_retry_max_seconds: int = Field(600, ge=1)
    vapid_private_key: str = ""  # Web Push: the VAPID key (PEM, or its raw key in base64url)
    vapid_subject: str = ""  # Web Push: a contact for push services (mailto: or https:)

    # -- operator and abuse limits
    log_format: Literal["text", "json"] = "text"  # json: one JSON object a line (web/app/logs.py)
    operator_token: str = ""
    min_window_seconds: int = Field(60, ge=1)  # the shortest window (A1) a game may have
    ratelimit_enabled: bool = True
    # Limits in Flask-Limiter's notation ("10 per hour; 20 per day"), by client address unless
    # said otherwise (imtheboss.web.app.limits).
    ratelimit_new_games: str = "10 per hour; 20 per day"  # games made (/new, POST /api/games)
    ratelimit_invitations: str = "100 per day"  # invitations asked for: one per player
    ratelimit_commands: str = "60 per minute; 2000 per day"  # commands taken, per seat
    ratelimit_chat: str = "10 per minute; 300 per day"  # chat messages taken, per seat
    ratelimit_bad_secrets: str = "30 per hour; 100 per day"  # wrong links and tokens
    ratelimit_sign_in: str = "10 per hour; 30 per day"  # sign-in links asked for
    ratelimit_sign_in_address: str = "5 per hour; 10 per day"  # per address and client
    ratelimit_sign_in_mailbox: str = "20 per hour; 50 per day"  # per address, all clients
    ratelimit_mail_replies: str = "30 per hour; 200 per day"  # replies read, per sender address

    @field_validator(
        "ratelimit_new_games",
        "ratelimit_invitations",
        "ratelimit_commands",
        "ratelimit_chat",
        "ratelimit_bad_secrets",
        "ratelimit_sign_in",
        "ratelimit_sign_in_address",
        "ratelimit_sign_in_mailbox",
        "ratelimit_mail_replies",
    )
    @classmethod
    def _limit_notation(cls, value: str) -> str:
        from limits import parse_many

        try:
            if not parse_many(value):
                raise ValueError
        except ValueError:
            raise ValueError(
                f'{value!r} is not a limit such as "10 per hour; 20 per day"'
            ) from None
        return value

    @model_validator(mode="after")
    def _dkim_key(self) -> Settings:
        if self.dkim_selector and not self.dkim_key_file:
            raise ValueError("DKIM_SELECTOR needs DKIM_KEY_FILE, the file of its private key")
        if self.dkim_selector and not Path(self.dkim_key_file).is_file():
            raise ValueError(
                f"DKIM_KEY_FILE {self.dkim_key_file!r} is not a file this user can read"
            )
        return self

    @field_validator("base_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """The settings from the environment, with ``overrides`` (field names) on top. Raises
        ``SettingsError`` with a readable message for a malformed value."""
        try:
            return cls(**overrides)
        except ValidationError as exc:
            problems = "; ".join(_problem(e) for e in exc.errors())
            raise SettingsError(f"imtheboss: bad settings: {problems}") from None

    def instance_dir(self) -> Path:
        """Where local data lives (SQLite database, embedded broker, beat schedule, the
        embedded default's secret key): ``IMTHEBOSS_INSTANCE``, else ``instance/`` in the
        working directory (never inside the installed package)."""
        return Path(self.instance or Path.cwd() / "instance").resolve()

    def sqlalchemy_url(self) -> str:
        """``DATABASE_URL`` in SQLAlchemy's form (``postgres://`` and ``postgresql://`` use
        psycopg 3); SQLite in the instance folder when unset."""
        url = self.database_url
        for prefix in ("postgres://", "postgresql://"):
            if url.startswith(prefix):
                return "postgresql+psycopg://" + url[len(prefix) :]
        if url:
            return url
        instance = self.instance_dir()
        instance.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{instance / 'imtheboss.sqlite3'}"

    def require_production(self) -> None:
        """Outside the embedded default, ``SECRET_KEY`` and ``BASE_URL`` must be set. Raises
        ``SettingsError`` naming what is missing."""
        if self.embedded:
            return
        missing = [
            name
            for name, value in (("SECRET_KEY", self.secret_key), ("BASE_URL", self.base_url))
            if not value
        ]
        if missing:
            raise SettingsError(
                "imtheboss: set "
                + " and ".join(missing)
                + " (SECRET_KEY: one long random value shared by the web and worker processes;"
                " BASE_URL: the public address players open, e.g. https://boss.example.org)."
                " './dev serve' runs the embedded default, which needs neither."
            )

    def embedded_secret_key(self) -> str:
        """The embedded default's key: made once and kept in the instance folder (mode 600)."""
        instance = self.instance_dir()
        path = instance / "secret_key"
        if not path.exists():
            instance.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(48))
            path.chmod(0o600)
        return path.read_text().strip()

    def flask_config(self, database: bool = True) -> dict[str, Any]:
        """The Flask config these settings make (upper-case keys, as Flask wants them);
        ``database=False`` leaves out ``SQLALCHEMY_DATABASE_URI`` (the caller has its own)."""
        config = {name.upper(): value for name, value in self.model_dump().items()}
        if database:
            config["SQLALCHEMY_DATABASE_URI"] = self.sqlalchemy_url()
        config["INSTANCE_DIR"] = str(self.instance_dir())
        config["SMTP_PORT"] = self.smtp_port or (465 if self.smtp_ssl else 25)
        config["RATELIMIT_STORAGE_URI"] = self.redis_url or "memory://"
        config["RATELIMIT_ENABLED"] = self.ratelimit_enabled
        config["MAIL_REPLIES"] = self.embedded if self.mail_replies is None else self.mail_replies
        config["IMAP_PORT"] = self.imap_port or (993 if self.imap_ssl else 143)
        return config


def _problem(error: Any) -> str:
    """One of pydantic's errors as a line: ``NAME: what is wrong`` (a check of several settings
    together has no name: just what is wrong, without pydantic's "Value error, ")."""
    where = ".".join(str(p) for p in error["loc"]).upper()
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
