"""Service settings: every setting has a TIERWISE_* environment variable and may come from a file."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _config_file() -> str | None:
    # TIERWISE_CONFIG names an optional env-style file (KEY=value lines) read before the environment.
    return os.environ.get("TIERWISE_CONFIG") or None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TIERWISE_", extra="ignore")

    database_url: str = Field(
        default="sqlite:///./tierwise.db",
        description="SQLAlchemy URL of the store: SQLite file (default) or postgresql+psycopg://…",
    )
    secret_key: str | None = Field(
        default=None, description="Fernet key for credentials at rest; else read from secret_key_file"
    )
    secret_key_file: Path = Field(
        default=Path("./tierwise.key"), description="key file, created with mode 0600 if missing"
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
    demo: bool = Field(default=False, description="run on the built-in simulated fleet")
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


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    path = _config_file()
    if path:
        return Settings(_env_file=path)  # type: ignore[call-arg]
    return Settings()
