"""Service settings: every setting has a TIERWISE_* environment variable and may come from a file."""

from __future__ import annotations

import ipaddress
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError


def _config_file() -> str | None:
    # TIERWISE_CONFIG names an optional env-style file (KEY=value lines) read before the environment.
    return os.environ.get("TIERWISE_CONFIG") or None


def data_dir() -> Path:
    """Where the store and the key live unless set: the user's data directory, so that every
    command run by one user sees one store whatever its working directory (Linux
    ~/.local/share/tierwise or $XDG_DATA_HOME/tierwise; macOS ~/Library/Application Support/tierwise;
    Windows %LOCALAPPDATA%\\tierwise)."""
    return platformdirs.user_data_path("tierwise", appauthor=False)


def default_database_url(demo: bool = False) -> str:
    """The SQLite store in the data directory. The demo fleet has a store of its own (demo.db), so
    its simulated targets and its documented admin login never enter the DBA's own store."""
    return f"sqlite:///{(data_dir() / ('demo.db' if demo else 'tierwise.db')).as_posix()}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TIERWISE_", extra="ignore")

    demo: bool = Field(default=False, description="run on the built-in simulated fleet")
    database_url: str = Field(
        default_factory=lambda data: default_database_url(bool(data.get("demo"))),
        description="SQLAlchemy URL of the store: postgresql+psycopg://… or a SQLite file; unset, "
        "tierwise.db (demo.db for the demo) in the user's data directory",
    )
    secret_key: str | None = Field(
        default=None, description="Fernet key for credentials at rest; else read from secret_key_file"
    )
    secret_key_file: Path = Field(
        default_factory=lambda: data_dir() / "tierwise.key",
        description="key file, created with mode 0600 if missing; unset, tierwise.key in the user's "
        "data directory",
    )
    host: str = "127.0.0.1"
    port: int = 8080
    scheduler_enabled: bool = Field(
        default=True, description="run the poll/roll-up/retention scheduler in this process"
    )
    polling: Literal["scheduler", "workers"] = Field(
        default="scheduler",
        description="who polls targets: the one scheduler, or `tierwise collect --worker` processes "
        "(PostgreSQL only; the scheduler then keeps roll-ups, retention, advice and reports)",
    )
    worker_batch: int = Field(default=50, description="targets a collector worker claims at a time")
    worker_lease_s: int = Field(default=120, description="how long a worker's claim on a target lasts")
    pool_takeover_minutes: int = Field(
        default=15,
        ge=0,
        description="with polling=workers, a due storage pool that no collector worker has taken for "
        "this long (none runs, or all are busy polling) is evaluated by the service, leased as a "
        "worker leases it",
    )
    default_poll_interval_s: int = 300
    poll_timeout_s: int = 30
    poll_jitter_s: int = 15
    max_backoff_s: int = 3600
    sample_retention_days: int = 14
    rollup_retention_days: int = 400
    demo_history_hours: int = 36
    demo_step_s: int = 900
    demo_poll_interval_s: int = 60
    log_level: str = "INFO"
    policy_file: Path | None = Field(default=None, description="policy YAML; the shipped default when unset")
    evaluate_interval_minutes: int = Field(default=60, description="how often the service re-runs the advice")
    import_quiet_s: float = Field(
        default=60.0,
        gt=0,
        description="seconds without a new import chunk before the service advises an import",
    )
    trusted_proxies: str = Field(
        default="",
        description="comma-separated addresses or networks (10.0.0.5, 10.1.0.0/16) of the reverse proxies "
        "whose X-Forwarded-For names the client; unset, no header is trusted and the client is the "
        "connection's own address (what the login throttle and the audit log record)",
    )
    secure_cookies: bool = Field(default=False, description="send the session cookie over HTTPS only")
    session_hours: int = Field(default=12, description="how long a login lasts")
    session_idle_minutes: int = Field(
        default=30, ge=0, description="a login unused this long ends (0: only session_hours ends it)"
    )
    smtp_host: str = Field(default="localhost", description="SMTP server for report emails")
    smtp_port: int = 25
    smtp_starttls: bool = Field(default=False, description="upgrade the connection with STARTTLS")
    smtp_ssl: bool = Field(default=False, description="connect with implicit TLS (usually port 465)")
    smtp_ca_file: Path | None = Field(
        default=None,
        description="PEM file of the CA(s) that sign the SMTP server's certificate (an internal CA); "
        "the system's trusted CAs when unset. The certificate and host name are always verified",
    )
    smtp_username: str | None = None
    smtp_password: str | None = Field(default=None, repr=False)
    smtp_from: str = "tierwise@localhost"
    smtp_timeout_s: float = 30.0
    smtp_attempts: int = Field(default=4, description="tries per message before it is recorded as failed")
    smtp_backoff_s: float = Field(default=30.0, description="first retry delay; doubles each try")
    base_url: str = Field(default="http://127.0.0.1:8080", description="link target in report emails")

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_addresses(cls, value: str) -> str:
        for item in _items(value):
            if item == "*":  # uvicorn would then take the left-most address, which a client writes
                raise ValueError("'*' would trust any sender's X-Forwarded-For: name the proxies' network")
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(
                    f"{item!r} is not an IP address or network (e.g. 10.0.0.5 or 10.1.0.0/16)"
                ) from None
        return value

    @property
    def trusted_proxy_list(self) -> list[str]:
        """`trusted_proxies` as uvicorn's `forwarded_allow_ips` takes it (empty: trust none)."""
        return _items(self.trusted_proxies)


def _items(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def with_demo(settings: Settings) -> Settings:
    """The settings of `serve --demo`: the demo's own store unless a store was set."""
    if settings.demo:
        return settings
    update: dict[str, Any] = {"demo": True}
    if "database_url" not in settings.model_fields_set:
        update["database_url"] = default_database_url(demo=True)
    return settings.model_copy(update=update)


def sqlite_file(database_url: str) -> Path | None:
    """The file of a SQLite store (None for PostgreSQL or an in-memory SQLite)."""
    try:
        url = make_url(database_url)
    except ArgumentError:  # not a URL: the store says so when it opens it
        return None
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def ensure_data_dir(settings: Settings) -> None:
    """Create the data directory, readable by its owner only (0700: it holds the store and the
    key), when the store or the key file lives in it. An explicit location is left as set."""
    home = data_dir()
    db = sqlite_file(settings.database_url)
    key = None if settings.secret_key else settings.secret_key_file
    if not any(p is not None and p.parent.absolute() == home.absolute() for p in (db, key)):
        return
    if not home.is_dir():
        home.parent.mkdir(parents=True, exist_ok=True)
        home.mkdir(mode=0o700, exist_ok=True)
        home.chmod(0o700)  # whatever the umask


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """This process's settings (the config file, then the environment), with the data directory
    ready when the defaults use it."""
    path = _config_file()
    settings = Settings(_env_file=path) if path else Settings()  # type: ignore[call-arg]
    ensure_data_dir(settings)
    return settings
