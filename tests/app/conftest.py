"""CLI tests: a fresh SQLite store and key file per test, through the environment as in use; and
the loopback SMTP server of tests/mail/test_reports.py for the verification tests' report emails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import get_settings
from tests.mail.test_reports import smtp  # noqa: F401


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TIERWISE_DATABASE_URL", f"sqlite:///{tmp_path / 'tw.db'}")
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()
