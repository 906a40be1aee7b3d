"""New objects are created in bulk (one multi-row INSERT … RETURNING per snapshot), on SQLite and
PostgreSQL, and end up exactly as the one-at-a-time path (object_for) created them."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, select

from app.store.db import Store
from app.store.ingest import SeriesCache, ingest_batch, ingest_snapshots
from app.store.models import COUNTER_COLUMNS, DbObject, IoInterval, Sample, Target
from app.store.targets import add_target
from connectors.records import Snapshot
from connectors.simulator import SimulatedFleet

ORIGIN = datetime(2026, 5, 4, tzinfo=UTC)
SKIP = {"id", "target_id"}


def _target(store: Store, name: str) -> int:
    with store.session() as s:
        return add_target(
            s,
            name=name,
            engine="sqlserver",
            source="simulator",
            connection_encrypted=None,
            password_env=None,
            poll_interval_s=300,
            now=ORIGIN,
        ).id


def _objects(store: Store, tid: int) -> dict[str, dict[str, Any]]:
    with store.session() as s:
        return {
            o.key: {c.name: getattr(o, c.key) for c in DbObject.__table__.columns if c.name not in SKIP}
            for o in s.scalars(select(DbObject).where(DbObject.target_id == tid))
        }


def _series(store: Store, tid: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with store.session() as s:
        samples = s.execute(
            select(DbObject.key, Sample.sample_time, *[getattr(Sample, c) for c in COUNTER_COLUMNS])
            .join(DbObject, DbObject.id == Sample.object_id)
            .where(DbObject.target_id == tid)
            .order_by(DbObject.key, Sample.sample_time)
        ).all()
        intervals = s.execute(
            select(DbObject.key, IoInterval.end_time, *[getattr(IoInterval, c) for c in COUNTER_COLUMNS])
            .join(DbObject, DbObject.id == IoInterval.object_id)
            .where(DbObject.target_id == tid)
            .order_by(DbObject.key, IoInterval.end_time)
        ).all()
    return [tuple(r) for r in samples], [tuple(r) for r in intervals]


def _snapshots() -> list[Snapshot]:
    """The demo fleet's two instances (SQL Server files, filegroups, partitions, logs, tempdb; DB2
    table spaces, containers, buffer pools) over three polls; the second poll repeats one object
    with another location, the third brings an object never seen before."""
    fleet = SimulatedFleet(seed=7, origin=ORIGIN)
    snaps: list[Snapshot] = []
    for k in range(3):
        at = ORIGIN + timedelta(minutes=5 * k)
        for snap in fleet.snapshots(at):
            items = list(snap.samples)
            if k == 1:
                first = items[0]
                moved = dataclasses.replace(first.ref, physical_name="Z:\\moved\\" + str(first.ref.name))
                items.append(dataclasses.replace(first, ref=moved))
            if k >= 1:
                last = items[-1]
                items.append(
                    dataclasses.replace(last, ref=dataclasses.replace(last.ref, key=last.ref.key + "#new"))
                )
            snaps.append(dataclasses.replace(snap, samples=tuple(items)))
    return snaps


def _by_server(snaps: list[Snapshot], server: str) -> list[Snapshot]:
    return [s for s in snaps if s.server == server]


def test_bulk_created_objects_match_one_at_a_time(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    snaps = _snapshots()
    servers = sorted({s.server for s in snaps})
    bulk = {srv: _target(store, f"bulk:{srv}") for srv in servers}
    single = {srv: _target(store, f"single:{srv}") for srv in servers}
    inserts: list[int] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().lower().startswith("insert into object"):
            inserts.append(1)

    event.listen(store.engine, "before_cursor_execute", count)
    for srv in servers:
        with store.session() as s:
            ingest_snapshots(s, s.get(Target, bulk[srv]), _by_server(snaps, srv))  # type: ignore[arg-type]
    bulk_inserts = len(inserts)
    inserts.clear()
    with monkeypatch.context() as m:  # the object_for path alone: an INSERT per object
        m.setattr(SeriesCache, "add_new_objects", lambda self, refs, seen: 0)
        for srv in servers:
            with store.session() as s:
                ingest_snapshots(s, s.get(Target, single[srv]), _by_server(snaps, srv))  # type: ignore[arg-type]
    event.remove(store.engine, "before_cursor_execute", count)
    created = sum(len(_objects(store, single[srv])) for srv in servers)
    assert created > 50
    assert len(inserts) == created  # one at a time
    # one INSERT per snapshot that brings objects not seen before (the first poll: all of them)
    bringing = 0
    for srv in servers:
        known: set[str] = set()
        for sn in _by_server(snaps, srv):
            keys = {i.ref.key for i in sn.samples}
            bringing += bool(keys - known)
            known |= keys
    assert bringing >= 2 * len(servers)
    assert bulk_inserts == bringing
    for srv in servers:
        assert _objects(store, bulk[srv]) == _objects(store, single[srv])
        assert _series(store, bulk[srv]) == _series(store, single[srv])
    moved = [o for o in _objects(store, bulk[servers[0]]).values() if o["location_since"] is not None]
    assert len(moved) == 1  # the object given twice in one poll: its location changes (and back)


def test_batch_ingest_creates_objects_in_bulk(store: Store) -> None:
    snaps = _snapshots()
    servers = sorted({s.server for s in snaps})
    batched = {srv: _target(store, f"batch:{srv}") for srv in servers}
    single = {srv: _target(store, f"single:{srv}") for srv in servers}
    for k in range(3):
        with store.session() as s:
            ingest_batch(
                s,
                [(s.get(Target, batched[srv]), [_by_server(snaps, srv)[k]]) for srv in servers],  # type: ignore[misc]
            )
    for srv in servers:
        with store.session() as s:
            ingest_snapshots(s, s.get(Target, single[srv]), _by_server(snaps, srv))  # type: ignore[arg-type]
    for srv in servers:
        objects = _objects(store, batched[srv])
        assert objects == _objects(store, single[srv])
        assert {o["key"] for o in objects.values()} == {
            i.ref.key for sn in _by_server(snaps, srv) for i in sn.samples
        }
        assert _series(store, batched[srv]) == _series(store, single[srv])
