"""The two ingest paths of ingest_batch store the same thing: deltas judged in Python
(advisors/deltas.py) and deltas computed in PostgreSQL (a staging table and one INSERT … SELECT
with window functions). The fault matrix runs through both on PostgreSQL: restarts, a clock
shift, counter resets (core and extra counters), duplicates (in one batch, against the stored
series, a re-import of an older stored sample), out-of-order samples, two writers' polls of one
target, a new object mid-stream, a dropped object that comes back, a move, None counters."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import select

from app.store.db import Store
from app.store.ingest import IngestResult, ingest_batch
from app.store.models import COUNTER_COLUMNS, DbObject, IngestWatermark, IoInterval, Sample, Target
from app.store.targets import add_target
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, Snapshot

T0 = datetime(2026, 11, 1, tzinfo=UTC)
BOOT = datetime(2026, 10, 31, 6, 0, tzinfo=UTC)

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Store]:
    s = Store(postgres_url)
    yield s
    s.dispose()


def _file(key: int, path: str = r"F:\fc\Sales\f.ndf", *, filegroup: str = "FG1") -> ObjectRef:
    return ObjectRef(
        Engine.SQLSERVER, "SQL1", "Sales", ObjectKind.DATA_FILE, f"Sales/file/{key}", f"f{key}",
        size_bytes=2**30 * key, logical_name=f"f{key}", physical_name=path.replace("f.ndf", f"f{key}.ndf"),
        file_id=key, filegroup=filegroup,
    )  # fmt: skip


def _partition(n: int) -> ObjectRef:
    return ObjectRef(
        Engine.SQLSERVER, "SQL1", "Sales", ObjectKind.PARTITION, f"Sales/partition/dbo.T/{n}", f"T p{n}",
        filegroup="FG1", table_name="dbo.T", schema_name="dbo", partition_number=n, rows=1000 * n,
    )  # fmt: skip


def _item(ref: ObjectRef, reads: int, extra: dict[str, int] | None = None) -> ObjectSample:
    bytes_ok = ref.kind is not ObjectKind.PARTITION  # partitions have no byte counts: None
    counters: dict[str, int | None] = {
        "reads": reads,
        "bytes_read": reads * 8192 if bytes_ok else None,
        "read_time_ms": reads * 3,
        "writes": reads // 3,
        "bytes_written": reads * 4096 if bytes_ok else None,
        "write_time_ms": reads // 2,
    }
    return ObjectSample(ref, counters, extra or {})


def _snap(minutes: float, items: list[ObjectSample], *, boot: datetime = BOOT) -> Snapshot:
    return Snapshot(Engine.SQLSERVER, "SQL1", T0 + timedelta(minutes=minutes), boot, tuple(items))


def _matrix() -> list[list[list[Snapshot]]]:
    """Batches; each a list of per-target snapshot lists (target 0 and target 1)."""
    f1, f2, f3, p1 = _file(1), _file(2), _file(3), _partition(1)
    moved = _file(1, r"G:\flash\Sales\f.ndf", filegroup="FG1")
    ext = {"page_reads": 10, "readahead": 5}
    after = BOOT + timedelta(minutes=14)  # target 0 restarts at minute 15
    return [
        # first samples: every object starts a series
        [[_snap(0, [_item(f1, 100), _item(f2, 50, ext), _item(p1, 7)])], [_snap(0, [_item(f1, 9)])]],
        # steady intervals; a repeated poll in the same batch (another writer's copy) is a duplicate
        [
            [
                _snap(
                    5,
                    [
                        _item(f1, 200),
                        _item(f2, 80, {"page_reads": 15, "readahead": 9}),
                        _item(p1, 9, {"x": 1}),
                    ],
                ),
                _snap(5, [_item(f1, 999), _item(f2, 999, ext), _item(p1, 999)]),
            ],
            [_snap(5, [_item(f1, 19)]), _snap(6, [_item(f1, 23)])],
        ],
        # core reset on f1, extra reset on f2 (one key down), a new object mid-stream, an extra key
        # that only the new sample has
        [
            [
                _snap(
                    10,
                    [
                        _item(f1, 20),
                        _item(f2, 90, {"page_reads": 3, "readahead": 12, "new": 1}),
                        _item(p1, 12, {"x": 4}),
                        _item(f3, 1),
                    ],
                ),
            ],
            [_snap(10, [_item(f1, 30)])],
        ],
        # f2 dropped from the snapshot; a restart on target 0; a clock shift (one hour) on target 1
        [
            [_snap(15, [_item(f1, 5), _item(p1, 1), _item(f3, 4)], boot=after)],
            [_snap(15, [_item(f1, 40)], boot=BOOT + timedelta(hours=1))],
        ],
        # out of order (never stored: ignored), a re-import of a stored sample (duplicate), the
        # stored newest again (duplicate), and a new sample, in one batch; f1 moves to flash
        [
            [
                _snap(7, [_item(f1, 150)]),
                _snap(10, [_item(f1, 20)]),
                _snap(15, [_item(f1, 5)], boot=after),
                _snap(20, [_item(moved, 60), _item(p1, 3), _item(f3, 9)], boot=after),
            ],
            # clock shift while a counter went down: a restart, not a reset
            [_snap(20, [_item(f1, 1)], boot=BOOT + timedelta(hours=2))],
        ],
        # the dropped object comes back after the restart it missed (a new series); two writers: the
        # same poll arrives in two batches (the second is a duplicate of the stored newest)
        [
            [
                _snap(
                    25,
                    [
                        _item(moved, 70),
                        _item(f2, 120, {"page_reads": 20, "readahead": 30, "new": 4}),
                        _item(p1, 4),
                        _item(f3, 9),
                    ],
                    boot=after,
                )
            ],
            [_snap(25, [_item(f1, 2)])],
        ],
        [
            [
                _snap(25, [_item(moved, 70)], boot=after),
                _snap(30, [_item(moved, 75), _item(f3, 10)], boot=after),
            ],
            [],
        ],
    ]


def _targets(store: Store, prefix: str) -> list[int]:
    with store.session() as s:
        return [
            add_target(
                s, name=f"{prefix}{n}", engine="sqlserver", source="live", connection_encrypted=None,
                password_env=None, poll_interval_s=300, now=T0,
            ).id
            for n in range(2)
        ]  # fmt: skip


def _run(store: Store, ids: list[int], *, in_database: bool) -> list[dict[int, Any]]:
    outcomes: list[dict[int, Any]] = []
    for batch in _matrix():
        with store.session() as s:
            targets = [s.get(Target, tid) for tid in ids]
            part = [(t, snaps) for t, snaps in zip(targets, batch, strict=True) if t is not None and snaps]
            results = ingest_batch(s, part, in_database=in_database)
            outcomes.append({ids.index(tid): _described(r) for tid, r in results.items()})
    return outcomes


def _described(r: IngestResult) -> dict[str, Any]:
    return {
        "snapshots": r.snapshots, "samples": r.samples, "intervals": r.intervals, "duplicates": r.duplicates,
        "out_of_order": r.out_of_order, "overlapping": r.overlapping, "new_series": r.new_series,
        "notes": r.notes, "ignored": [(i.key, i.sample_time, i.reason) for i in r.ignored],
    }  # fmt: skip


def _stored(store: Store, ids: list[int]) -> dict[str, Any]:
    obj_cols = [c for c in DbObject.__table__.columns if c.name not in ("id", "target_id")]
    out: dict[str, Any] = {}
    with store.session() as s:
        for n, tid in enumerate(ids):
            objects = s.execute(
                select(*obj_cols).where(DbObject.target_id == tid).order_by(DbObject.key)
            ).all()
            samples = s.execute(
                select(DbObject.key, Sample.sample_time, Sample.instance_start, Sample.size_bytes, Sample.extra,
                       *[getattr(Sample, c) for c in COUNTER_COLUMNS])
                .join(DbObject, DbObject.id == Sample.object_id)
                .where(DbObject.target_id == tid)
                .order_by(DbObject.key, Sample.sample_time)
            ).all()  # fmt: skip
            intervals = s.execute(
                select(DbObject.key, IoInterval.start_time, IoInterval.end_time, IoInterval.seconds,
                       IoInterval.extra, *[getattr(IoInterval, c) for c in COUNTER_COLUMNS])
                .join(DbObject, DbObject.id == IoInterval.object_id)
                .where(DbObject.target_id == tid)
                .order_by(DbObject.key, IoInterval.end_time)
            ).all()  # fmt: skip
            version = s.scalar(select(IngestWatermark.version).where(IngestWatermark.target_id == tid))
            out[f"target {n}"] = {
                "objects": [dict(r._mapping) for r in objects],
                "samples": [tuple(r) for r in samples],
                "intervals": [tuple(r) for r in intervals],
                "watermark": version,
            }
    return out


def test_the_fault_matrix_stores_the_same_rows_through_both_paths(pg: Store) -> None:
    in_db, in_python = _targets(pg, "db:"), _targets(pg, "py:")
    db_outcomes = _run(pg, in_db, in_database=True)
    py_outcomes = _run(pg, in_python, in_database=False)
    assert db_outcomes == py_outcomes
    db_rows, py_rows = _stored(pg, in_db), _stored(pg, in_python)
    assert db_rows == py_rows
    # the matrix did exercise every rule (else the equality above proves little)
    total = {
        k: sum(o[t][k] for o in py_outcomes for t in o) for k in ("duplicates", "out_of_order", "new_series")
    }
    assert total == {"duplicates": 6, "out_of_order": 1, "new_series": 12}
    notes = [n for o in py_outcomes for t in o for n in o[t]["notes"]]
    assert notes == [
        "Sales/file/1: counters reset (reads went down from 200 to 20)",
        "Sales/file/2: counters reset (page_reads went down from 15 to 3)",
    ]
    t0 = db_rows["target 0"]
    f1 = next(o for o in t0["objects"] if o["key"] == "Sales/file/1")
    assert f1["physical_name"] == r"G:\flash\Sales\f1.ndf" and f1["previous_location"] == {
        "physical_name": r"F:\fc\Sales\f1.ndf", "filegroup": "FG1", "tablespace": None, "storage_group": None,
    }  # fmt: skip
    # the clock shift on target 1 kept its series: the interval 10 -> 15 is there
    assert [(r[1].minute, r[2].minute) for r in db_rows["target 1"]["intervals"]][3] == (10, 15)
    # the extra counters' deltas: only keys both samples have
    extras = {
        key: [r[4] for r in t0["intervals"] if r[0] == key]
        for key in ("Sales/file/2", "Sales/partition/dbo.T/1")
    }
    assert extras == {
        "Sales/file/2": [{"page_reads": 5, "readahead": 4}],
        "Sales/partition/dbo.T/1": [{}, {"x": 3}, {}, {}],
    }
    # None counters stay None in the deltas
    assert {r[6] for r in t0["intervals"] if r[0] == "Sales/partition/dbo.T/1"} == {None}
    assert t0["watermark"] == len(_matrix())


def test_a_failing_batch_stores_nothing_and_the_next_one_works(pg: Store) -> None:
    (tid, other) = _targets(pg, "db:")
    f1 = _file(1)
    with pg.session() as s:
        target = s.get(Target, tid)
        assert target is not None
        ingest_batch(s, [(target, [_snap(0, [_item(f1, 100)])])], in_database=True)
    bad = _snap(5, [_item(f1, 200), _item(_file(2), 2**63)])  # beyond bigint: the COPY fails
    with pytest.raises(psycopg.errors.NumericValueOutOfRange), pg.session() as s:
        targets = [s.get(Target, tid), s.get(Target, other)]
        assert targets[0] is not None and targets[1] is not None
        ingest_batch(s, [(targets[0], [bad]), (targets[1], [_snap(5, [_item(f1, 1)])])], in_database=True)
    with pg.session() as s:
        assert s.scalar(select(IngestWatermark.version).where(IngestWatermark.target_id == tid)) == 1
        assert s.scalar(select(IngestWatermark.version).where(IngestWatermark.target_id == other)) is None
        assert list(s.scalars(select(DbObject.key))) == ["Sales/file/1"]  # no object of the failed batch
        assert len(s.scalars(select(Sample.id)).all()) == 1
    with pg.session() as s:
        target = s.get(Target, tid)
        assert target is not None
        result = ingest_batch(s, [(target, [_snap(5, [_item(f1, 200)])])], in_database=True)[tid]
    assert (result.samples, result.intervals) == (1, 1)
    with pg.session() as s:
        assert s.scalar(select(IoInterval.reads)) == 100
