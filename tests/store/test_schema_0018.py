"""Schema 0018 (one verification per recommendation), on SQLite and PostgreSQL: a 0017 store with
the duplicates parallel "executed" calls left (issue #33, item 3) keeps the first of each, every
relocation-only verification (no recommendation) stays, and the store refuses a second one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.store.db import Store, alembic_config
from app.store.models import Recommendation, Verification
from app.store.targets import add_target

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _verification(target_id: int, rec_id: int | None, minutes: int) -> Verification:
    return Verification(target_id=target_id, recommendation_id=rec_id, key="Sales/filegroup/FG", name="FG",
                        trigger="executed" if rec_id else "location_change", changed_at=T0 + timedelta(minutes=minutes),
                        window_days=7, status="waiting", before={}, after={}, reasons=[], created_at=T0)  # fmt: skip


@pytest.mark.empty_store  # migrates for real, from an empty database
def test_upgrade_keeps_the_first_verification_of_each_recommendation(store_url: str) -> None:
    command.upgrade(alembic_config(store_url), "0017")
    old = Store(store_url, migrate=False)
    with old.session() as s:
        target = add_target(s, name="SQL1", engine="sqlserver", source="live", connection_encrypted=None,
                            password_env=None, poll_interval_s=300, now=T0)  # fmt: skip
        recs = []
        for name in ("FG_A", "FG_B"):
            rec = Recommendation(target_id=target.id, key=f"Sales/filegroup/{name}", engine="sqlserver", server="SQL1",
                                 database="Sales", kind="filegroup", name=name, from_tier="fc", to_tier="flash",
                                 profile="random_read", rule="TW701", size_bytes=2**30, evidence={},
                                 status="executed", created_at=T0, updated_at=T0)  # fmt: skip
            s.add(rec)
            s.flush()
            recs.append(rec.id)
        rows = [(recs[0], 1), (None, 2), (recs[0], 3), (recs[1], 4), (recs[0], 5), (None, 6), (recs[1], 7)]
        for rec_id, minutes in rows:
            s.add(_verification(target.id, rec_id, minutes))
        s.flush()
        ids = [v.id for v in s.scalars(select(Verification).order_by(Verification.id))]
    old.dispose()

    store = Store(store_url)  # upgrades to the newest schema
    try:
        with store.session() as s:
            kept = [
                (v.id, v.recommendation_id) for v in s.scalars(select(Verification).order_by(Verification.id))
            ]
        assert kept == [(ids[0], recs[0]), (ids[1], None), (ids[3], recs[1]), (ids[5], None)]
        with pytest.raises(IntegrityError), store.session() as s:
            s.add(_verification(target.id, recs[0], 9))
    finally:
        store.dispose()
