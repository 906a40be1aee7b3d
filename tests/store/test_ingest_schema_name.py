"""A partition's schema is stored on its own (object.schema_name), names with "." included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import DbObject, Target
from app.store.targets import add_target
from connectors.records import LOCATION_FIELDS, Engine, ObjectKind, ObjectRef, ObjectSample, Snapshot

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
BOOT = datetime(2026, 10, 31, 6, 0, tzinfo=UTC)
SCHEMA, TABLE = 'sales.eu]"x', "Orders.2024]"


def _snap(minutes: int, schema: str | None) -> Snapshot:
    ref = ObjectRef(
        Engine.SQLSERVER,
        "SQL1",
        "Sales",
        ObjectKind.PARTITION,
        f"Sales/partition/{SCHEMA}.{TABLE}/1/3",
        f"{SCHEMA}.{TABLE} p3",
        filegroup="FG_2024",
        table_name=f"{SCHEMA}.{TABLE}",
        schema_name=schema,
        partition_number=3,
    )
    sample = ObjectSample(ref, dict.fromkeys(("reads", "writes")), {"singleton_lookup_count": minutes})
    return Snapshot(Engine.SQLSERVER, "SQL1", T0 + timedelta(minutes=minutes), BOOT, (sample,))


def _target(store: Store) -> int:
    with store.session() as s:
        return add_target(
            s, name="SQL1", engine="sqlserver", source="live", connection_encrypted=None,
            password_env=None, poll_interval_s=300, now=T0,
        ).id  # fmt: skip


def test_schema_name_is_stored_and_read_back_for_the_advisors(store: Store) -> None:
    tid = _target(store)
    with store.session() as s:
        ingest_snapshots(s, s.get(Target, tid), [_snap(0, SCHEMA), _snap(5, SCHEMA)])  # type: ignore[arg-type]
    with store.session() as s:
        obj = s.scalars(select(DbObject)).one()
        assert (obj.schema_name, obj.table_name) == (SCHEMA, f"{SCHEMA}.{TABLE}")
        # what app.evaluate hands the advisors (ObjectInfo fields from the stored object)
        info = {f: getattr(obj, f) for f in LOCATION_FIELDS}
        assert info["schema_name"] == SCHEMA


def test_objects_from_before_the_column_keep_it_empty_until_a_sample_says(store: Store) -> None:
    tid = _target(store)
    with store.session() as s:
        ingest_snapshots(s, s.get(Target, tid), [_snap(0, None)])  # type: ignore[arg-type]
    with store.session() as s:
        assert s.scalars(select(DbObject.schema_name)).one() is None
    with store.session() as s:
        ingest_snapshots(s, s.get(Target, tid), [_snap(5, SCHEMA)])  # type: ignore[arg-type]
    with store.session() as s:
        assert s.scalars(select(DbObject.schema_name)).one() == SCHEMA
