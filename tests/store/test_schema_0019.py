"""Schema 0019 (issue #33 item 1), on SQLite and PostgreSQL: a live target's last error recorded
by an earlier version, which could hold a connection-string secret in clear, is withheld; the
failure count and times stay; import targets and error-free targets are untouched."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import select

from app.store.db import Store, alembic_config
from app.store.models import Target
from app.store.targets import add_target, statuses

T0 = datetime(2026, 11, 1, tzinfo=UTC)
# what an earlier version stored after the repro: unixODBC's echo, masked by keyword only
OLD_ERROR = (
    "cannot connect to SQL Server at (no SERVER): driver error ([01000] [unixODBC][Driver Manager]Can't open "
    "lib 'FreeTDS;SERVER=127.0.0.1;PORT=1;KeyStoreSecret=KSLeak11;TrustStorePassword=TSLeak12;UID=***;PWD=***' "
    ": file not found (0) (SQLDriverConnect))"
)


@pytest.mark.empty_store  # migrates for real, from an empty database
def test_upgrade_withholds_errors_an_earlier_version_stored(store_url: str) -> None:
    command.upgrade(alembic_config(store_url), "0018")
    old = Store(store_url, migrate=False)
    with old.session() as s:
        for name, source in (("OLD", "live"), ("QUIET", "live"), ("import:sqlserver:X", "import")):
            t = add_target(s, name=name, engine="sqlserver", source=source, connection_encrypted=None,
                           password_env=None, poll_interval_s=300, now=T0)  # fmt: skip
            if name == "OLD":
                t.last_error, t.last_error_at, t.consecutive_failures = OLD_ERROR, T0, 7
    old.dispose()

    store = Store(store_url)  # upgrades to the newest schema
    try:
        with store.session() as s:
            rows = {t.name: t for t in s.scalars(select(Target))}
            assert "KSLeak11" not in (rows["OLD"].last_error or "")
            assert (rows["OLD"].last_error or "").startswith(
                "(the error recorded by an earlier version was withheld"
            )
            assert rows["OLD"].consecutive_failures == 7 and rows["OLD"].last_error_at == T0
            assert rows["QUIET"].last_error is None and rows["import:sqlserver:X"].last_error is None
            assert {r.name: r.state(T0) for r in statuses(s)}["OLD"] == "failing"
    finally:
        store.dispose()
