"""The Alembic schema versions and the models agree, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from app.store.db import Store, include_object
from app.store.models import Base


@pytest.mark.empty_store  # migrates for real, from an empty database
def test_migrations_match_models(store: Store) -> None:
    with store.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"include_object": include_object})
        diff = compare_metadata(ctx, Base.metadata)
    assert diff == []


def test_upgrade_is_idempotent(store_url: str) -> None:
    again = Store(store_url)  # the fixture already upgraded this database once
    again.dispose()
