"""Schema 0016 (sample / io_interval without a foreign key to object, object half full on
PostgreSQL), on SQLite and PostgreSQL: a 0015 store holding rows upgrades in place with every row
intact, and deleting a target still removes its objects' samples and intervals (the trigger that
replaces ON DELETE CASCADE), leaving no orphan and the other targets' rows untouched."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import delete, func, inspect, select, text

from app.store.db import Store, alembic_config
from app.store.ingest import ingest_batch, ingest_snapshots
from app.store.models import DbObject, IoInterval, Sample, Target
from app.store.targets import add_target
from connectors.simulator import SimulatedFleet

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)


def _targets(store: Store, fleet: SimulatedFleet) -> list[int]:
    with store.session() as s:
        return [
            add_target(
                s,
                name=i.name,
                engine="sqlserver",
                source="simulator",
                connection_encrypted=None,
                password_env=None,
                poll_interval_s=300,
                now=T0,
            ).id
            for i in fleet.instances
        ]


def _rows(store: Store) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with store.session() as s:
        samples = [tuple(r) for r in s.execute(select(Sample.__table__).order_by(Sample.id))]
        intervals = [tuple(r) for r in s.execute(select(IoInterval.__table__).order_by(IoInterval.id))]
    return samples, intervals


@pytest.mark.empty_store  # migrates for real, from an empty database
def test_upgrade_from_0015_keeps_every_row(store_url: str) -> None:
    command.upgrade(alembic_config(store_url), "0015")
    old = Store(store_url, migrate=False)
    fleet = SimulatedFleet(seed=3, origin=T0, instances=2, files_per_instance=3)
    ids = _targets(old, fleet)
    for k in range(1, 5):
        with old.session() as s:
            for tid, inst in zip(ids, fleet.instances, strict=True):
                ingest_snapshots(s, s.get(Target, tid), [inst.snapshot(T0 + timedelta(minutes=5 * k))])  # type: ignore[arg-type]
    with old.session() as s:  # the newest interval deleted: its id must never be given out again
        newest = int(s.scalar(select(func.max(IoInterval.id))) or 0)
        s.execute(delete(IoInterval).where(IoInterval.id == newest))
    samples, intervals = _rows(old)
    old.dispose()
    assert len(samples) == 2 * 3 * 4 and len(intervals) == 2 * 3 * 3 - 1

    store = Store(store_url)  # upgrades to head
    try:
        assert _rows(store) == (samples, intervals)
        insp = inspect(store.engine)
        assert insp.get_foreign_keys("sample") == []
        assert insp.get_foreign_keys("io_interval") == []
        if store.is_postgres:
            with store.session() as s:
                options = s.scalar(text("SELECT reloptions FROM pg_class WHERE relname = 'object'"))
            assert options == ["fillfactor=50"]
        with store.session() as s:  # and the store takes new polls as before
            targets = [s.get(Target, tid) for tid in ids]
            at = T0 + timedelta(minutes=25)
            ingest_batch(
                s, [(t, [i.snapshot(at)]) for t, i in zip(targets, fleet.instances, strict=True) if t]
            )
        with store.session() as s:
            new_ids = list(s.scalars(select(IoInterval.id).where(IoInterval.end_time == at)))
        assert len(new_ids) == 2 * 3 and min(new_ids) > newest
    finally:
        store.dispose()


def test_deleting_a_target_leaves_no_orphan_samples_or_intervals(store: Store) -> None:
    fleet = SimulatedFleet(seed=4, origin=T0, instances=2, files_per_instance=3)
    ids = _targets(store, fleet)
    for k in range(1, 4):
        with store.session() as s:
            targets = [s.get(Target, tid) for tid in ids]
            at = T0 + timedelta(minutes=5 * k)
            ingest_batch(
                s, [(t, [i.snapshot(at)]) for t, i in zip(targets, fleet.instances, strict=True) if t]
            )
    with store.session() as s:
        kept = set(s.scalars(select(DbObject.id).where(DbObject.target_id == ids[1])))
        assert s.scalar(select(func.count()).select_from(Sample)) == 2 * 3 * 3

    with store.session() as s:  # as `tierwise targets remove` and the admin page do
        s.delete(s.get(Target, ids[0]))

    with store.session() as s:
        live = select(DbObject.id)
        orphans = [
            s.scalar(select(func.count()).select_from(Sample).where(Sample.object_id.not_in(live))),
            s.scalar(select(func.count()).select_from(IoInterval).where(IoInterval.object_id.not_in(live))),
        ]
        assert orphans == [0, 0]
        assert set(s.scalars(select(Sample.object_id).distinct())) == kept
        assert set(s.scalars(select(IoInterval.object_id).distinct())) == kept
        assert s.scalar(select(func.count()).select_from(Sample)) == 3 * 3
        assert s.scalar(select(func.count()).select_from(IoInterval)) == 3 * 2


def test_extra_counter_names_needing_copy_escapes_are_stored_intact(store: Store) -> None:
    """A backslash, tab or newline in an extra counter's name reaches the store unchanged, through
    the PostgreSQL staging COPY and JSON functions as through the Python path on SQLite."""
    from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, Snapshot

    ref = ObjectRef(Engine.SQLSERVER, "SQL1", "D", ObjectKind.DATA_FILE, "D/file/1", "f1", size_bytes=2**30)
    names = ["plain", "back\\slash", "tab\there", "new\nline", "cr\rhere", 'quote"d']

    def snap(minutes: int, value: int) -> Snapshot:
        counters: dict[str, int | None] = {"reads": value, "writes": value}
        item = ObjectSample(ref, counters, {n: value * (i + 1) for i, n in enumerate(names)})
        return Snapshot(Engine.SQLSERVER, "SQL1", T0 + timedelta(minutes=minutes), T0, (item,))

    fleet = SimulatedFleet(seed=4, origin=T0, instances=1, files_per_instance=1)
    (tid,) = _targets(store, fleet)
    for k, value in ((5, 100), (10, 130)):
        with store.session() as s:
            ingest_batch(s, [(s.get(Target, tid), [snap(k, value)])])  # type: ignore[list-item]
    with store.session() as s:
        extras = list(s.scalars(select(Sample.extra).order_by(Sample.sample_time)))
        (delta,) = s.scalars(select(IoInterval.extra))
    assert extras == [{n: v * (i + 1) for i, n in enumerate(names)} for v in (100, 130)]
    assert delta == {n: 30 * (i + 1) for i, n in enumerate(names)}
