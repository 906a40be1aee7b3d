"""The monitor-only kinds (SQL Server Buffer Manager, DB2 buffer pools and containers) go through
the unchanged store: objects, raw samples and interval deltas, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import DbObject, IoInterval, Sample
from app.store.targets import import_target
from connectors.files import read_import_file
from connectors.records import MONITOR_ONLY_KINDS, ObjectKind
from connectors.simulator import demo_fleet

ORIGIN = datetime(2025, 6, 12, 8, 30, tzinfo=UTC)
IMPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "import"
NOW = datetime(2025, 6, 13, tzinfo=UTC)


def test_demo_monitor_objects_are_stored_with_their_deltas(store: Store) -> None:
    fleet = demo_fleet(ORIGIN)
    times = [ORIGIN + timedelta(minutes=15 * i) for i in range(5)]
    expected: dict[str, dict[str, int]] = {}
    with store.session() as s:
        for instance in fleet.instances:
            target = import_target(s, server=instance.name, engine=str(instance.engine), now=NOW)
            snaps = [instance.snapshot(t) for t in times]
            result = ingest_snapshots(s, target, snaps)
            assert result.notes == [] and result.out_of_order == 0
            first, last = ({x.ref.key: x for x in snap.samples} for snap in (snaps[0], snaps[-1]))
            for key, sample in last.items():
                if sample.ref.kind in MONITOR_ONLY_KINDS:
                    expected[f"{instance.name}|{key}"] = {
                        k: v - first[key].extra[k] for k, v in sample.extra.items()
                    }
    with store.session() as s:
        objects = {f"{o.server}|{o.key}": o for o in s.scalars(select(DbObject))}
        kinds = {o.kind for o in objects.values()}
        assert {"instance", "buffer_pool", "container"} <= kinds
        assert (
            len(expected) == 1 + 3 + 17
        )  # an instance, 3 buffer pools, a container per storage path of each table space
        for name, delta in expected.items():
            obj = objects[name]
            intervals = list(s.scalars(select(IoInterval).where(IoInterval.object_id == obj.id)))
            assert len(intervals) == len(times) - 1
            summed: dict[str, int] = {}
            for iv in intervals:
                assert iv.reads is None and iv.bytes_read is None  # core counters stay absent
                for k, v in iv.extra.items():
                    summed[k] = summed.get(k, 0) + v
            assert summed == delta, name
        pool = objects["DB2PROD01|ORDERS/bufferpool/BP16K"]
        assert pool.size_bytes == 24 * 2**30
        samples = list(s.scalars(select(Sample).where(Sample.object_id == pool.id)))
        assert {x.size_bytes for x in samples} == {24 * 2**30}  # the pool size is kept per sample
        bm = objects["SQLPROD01|instance/buffer_manager"]
        assert (bm.database, bm.kind, bm.name) == ("", "instance", "Buffer Manager")
        container = next(o for o in objects.values() if o.kind == ObjectKind.CONTAINER)
        assert container.physical_name and container.tablespace


def test_imported_buffer_manager_restart_starts_a_new_series(store: Store) -> None:
    snaps = [s for s in read_import_file(IMPORTS / "sqlserver_buffer_manager.csv") if s.server == "SQLPROD01"]
    with store.session() as s:
        target = import_target(s, server="SQLPROD01", engine="sqlserver", now=NOW)
        result = ingest_snapshots(s, target, snaps)
    assert (result.samples, result.intervals, result.new_series) == (3, 1, 2)  # first + restart
    with store.session() as s:
        (iv,) = s.scalars(select(IoInterval))
        assert iv.extra["page_reads"] == 41_000 and iv.extra["page_lookups"] == 2_050_000
