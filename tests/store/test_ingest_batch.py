"""ingest_batch (several targets, one COPY each of samples and intervals) stores exactly what the
per-target ingest stores: same samples, same intervals, same last_seen, duplicates counted; on
PostgreSQL with the deltas computed in the database (its default there)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from app.store.db import Store
from app.store.ingest import ingest_batch, ingest_snapshots
from app.store.models import COUNTER_COLUMNS, DbObject, IoInterval, Sample, Target
from app.store.targets import add_target
from connectors.simulator import SimulatedFleet


def _targets(store: Store, prefix: str, names: list[str], now: datetime) -> list[int]:
    with store.session() as s:
        return [
            add_target(
                s,
                name=f"{prefix}{n}",
                engine="sqlserver",
                source="simulator",
                connection_encrypted=None,
                password_env=None,
                poll_interval_s=300,
                now=now,
            ).id
            for n in names
        ]


def _stored(
    store: Store, target_id: int
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], list[object]]:
    with store.session() as s:
        samples = s.execute(
            select(DbObject.key, Sample.sample_time, *[getattr(Sample, c) for c in COUNTER_COLUMNS])
            .join(DbObject, DbObject.id == Sample.object_id)
            .where(DbObject.target_id == target_id)
            .order_by(DbObject.key, Sample.sample_time)
        ).all()
        intervals = s.execute(
            select(DbObject.key, IoInterval.end_time, IoInterval.seconds, IoInterval.reads, IoInterval.writes)
            .join(DbObject, DbObject.id == IoInterval.object_id)
            .where(DbObject.target_id == target_id)
            .order_by(DbObject.key, IoInterval.end_time)
        ).all()
        seen: list[object] = list(
            s.scalars(
                select(DbObject.last_seen).where(DbObject.target_id == target_id).order_by(DbObject.key)
            )
        )
    return [tuple(r) for r in samples], [tuple(r) for r in intervals], seen


def test_batch_ingest_matches_the_per_target_ingest(store: Store) -> None:
    origin = datetime(2026, 3, 2, tzinfo=UTC)
    fleet = SimulatedFleet(seed=5, origin=origin, instances=3, files_per_instance=4)
    names = [i.name for i in fleet.instances]
    batched = _targets(store, "batch:", names, origin)
    single = _targets(store, "single:", names, origin)
    times = [origin + timedelta(minutes=5 * k) for k in range(1, 4)]
    totals = {"samples": 0, "intervals": 0, "duplicates": 0}
    for k, at in enumerate(times):
        with store.session() as s:
            targets = [s.get(Target, tid) for tid in batched]
            snaps = [[inst.snapshot(at)] for inst in fleet.instances]
            if k == 2:  # a repeated poll in the same batch: counted, not stored twice
                snaps[0].append(fleet.instances[0].snapshot(times[1]))
            results = ingest_batch(
                s, [(t, sn) for t, sn in zip(targets, snaps, strict=True) if t is not None]
            )
            for r in results.values():
                totals["samples"] += r.samples
                totals["intervals"] += r.intervals
                totals["duplicates"] += r.duplicates
        for tid, inst in zip(single, fleet.instances, strict=True):
            with store.session() as s:
                t = s.get(Target, tid)
                assert t is not None
                ingest_snapshots(s, t, [inst.snapshot(at)])
    assert totals == {"samples": 3 * 3 * 4, "intervals": 2 * 3 * 4, "duplicates": 4}
    for b, o in zip(batched, single, strict=True):
        assert _stored(store, b) == _stored(store, o)
    assert _stored(store, batched[0])[2] == [times[-1]] * 4


def test_deltas_in_the_database_are_refused_on_sqlite(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'tierwise.db'}")
    origin = datetime(2026, 3, 2, tzinfo=UTC)
    fleet = SimulatedFleet(seed=5, origin=origin, instances=1, files_per_instance=2)
    (tid,) = _targets(store, "x:", [fleet.instances[0].name], origin)
    with store.session() as s:
        target = s.get(Target, tid)
        assert target is not None
        with pytest.raises(ValueError, match="PostgreSQL only"):
            ingest_batch(s, [(target, [fleet.instances[0].snapshot(origin)])], in_database=True)
        # the default on SQLite judges the deltas in Python
        assert ingest_batch(s, [(target, [fleet.instances[0].snapshot(origin)])])[tid].samples == 2
    store.dispose()
