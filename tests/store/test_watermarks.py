"""The "data changed since the advice last read it" marker (app/store/watermarks.py), on both
stores: every write of samples moves it, imports are told apart, an evaluation records what it
read and never more."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import event, select

from app.evaluate import evaluate
from app.importer import import_file
from app.store.db import Store
from app.store.ingest import ingest_batch, ingest_snapshots
from app.store.models import IngestWatermark, Target
from app.store.targets import add_target
from app.store.watermarks import (
    changed_since_advice,
    data_versions,
    import_pending,
    mark_advised,
    mark_ingested,
)
from connectors.simulator import SimulatedFleet
from policies.loader import load_policy
from tests.conftest import FIXTURES

FILE_STATS = FIXTURES / "import" / "sqlserver_file_stats.csv"
ORIGIN = datetime(2026, 3, 2, tzinfo=UTC)


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
                now=ORIGIN,
            ).id
            for i in fleet.instances
        ]


def _marks(store: Store) -> dict[int, tuple[int, int, int]]:
    with store.session() as s:
        rows = s.scalars(select(IngestWatermark))
        return {m.target_id: (m.version, m.imported_version, m.advised_version) for m in rows}


def test_polls_move_the_version_and_imports_the_imported_version(store: Store) -> None:
    fleet = SimulatedFleet(seed=5, origin=ORIGIN, instances=2, files_per_instance=3)
    first, second = _targets(store, fleet)
    at = ORIGIN + timedelta(minutes=5)
    with store.session() as s:  # a poll of one target
        ingest_snapshots(s, s.get(Target, first), [fleet.instances[0].snapshot(at)])  # type: ignore[arg-type]
    with store.session() as s:  # a collector batch of both, then the same poll again (duplicates)
        targets = [s.get(Target, first), s.get(Target, second)]
        ingest_batch(s, [(t, [i.snapshot(at + timedelta(minutes=5))]) for t, i in zip(targets, fleet.instances,
                                                                                        strict=True) if t])  # fmt: skip
    with store.session() as s:
        r = ingest_snapshots(s, s.get(Target, first), [fleet.instances[0].snapshot(at)])  # type: ignore[arg-type]
        assert r.samples == 0  # stored nothing: the data did not change
    assert _marks(store) == {first: (2, 0, 0), second: (1, 0, 0)}
    with store.session() as s:
        assert changed_since_advice(s) == {first, second}
        assert import_pending(s) == {}  # polled data does not call for advice before the hour

    out = import_file(store, FILE_STATS, chunk_rows=6)  # several chunks, each a write
    with store.session() as s:
        pending = import_pending(s)
        imported = set(s.scalars(select(Target.id).where(Target.source == "import")))
    assert set(pending) == imported and len(imported) == 2 and out.recorded
    marks = _marks(store)
    assert all(marks[t][1] == marks[t][0] >= 1 for t in imported)
    assert sum(marks[t][0] for t in imported) >= 3  # one per chunk that stored samples of the target

    again = import_file(store, FILE_STATS)  # the same file: nothing stored, nothing to advise again
    assert again.already_imported and _marks(store) == marks


def test_an_evaluation_records_what_it_read_and_no_more(store: Store) -> None:
    import_file(store, FILE_STATS)
    with store.session() as s:
        assert import_pending(s)
    result = evaluate(store, load_policy(), now=datetime.now(UTC))
    assert len(result.data_ends) == 2  # it read both imported targets (old data: its own window)
    with store.session() as s:
        assert import_pending(s) == {} and changed_since_advice(s) == set()
        seen = data_versions(s)
        advised_at = s.scalars(select(IngestWatermark.advised_at)).all()
    assert all(m[2] == m[0] for m in _marks(store).values())
    assert all(a is not None for a in advised_at)

    # data written while an evaluation runs (after it read the versions) is advised next time
    fleet = SimulatedFleet(seed=5, origin=ORIGIN, instances=1, files_per_instance=2)
    [tid] = _targets(store, fleet)
    with store.session() as s:
        before = data_versions(s)
        ingest_snapshots(s, s.get(Target, tid), [fleet.instances[0].snapshot(ORIGIN)])  # type: ignore[arg-type]
    with store.session() as s:
        mark_advised(s, before, datetime.now(UTC))
    with store.session() as s:
        assert changed_since_advice(s) == {tid}
        mark_advised(s, seen, datetime.now(UTC))  # an older evaluation finishing late moves nothing back
    assert all(m[2] == m[0] for t, m in _marks(store).items() if t != tid)


def test_removing_a_target_removes_its_mark(store: Store) -> None:
    import_file(store, FILE_STATS)
    with store.session() as s:
        gone = s.scalars(select(Target).where(Target.source == "import")).first()
        assert gone is not None
        gone_id = gone.id
        s.delete(gone)
    assert gone_id not in _marks(store) and len(_marks(store)) == 1


def test_marking_many_targets_is_one_statement_whatever_their_number(store: Store) -> None:
    """mark_ingested sends the same statement text for 1 target and for 40 (on PostgreSQL the ids
    go as one array, so the driver parses it once); every target is moved once per call, an
    import's imported_version follows, and an id with no target is left out, not an error."""
    fleet = SimulatedFleet(seed=5, origin=ORIGIN, instances=40, files_per_instance=1)
    ids = _targets(store, fleet)
    sent: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if "ingest_watermark" in statement:
            sent.append(statement)

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        with store.session() as s:
            mark_ingested(s, ids[:1])
        with store.session() as s:
            mark_ingested(s, [*ids, max(ids) + 1000], imported=True)  # the last: no such target
        with store.session() as s:
            mark_ingested(s, reversed(ids[:2]))
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    marks = _marks(store)
    assert set(marks) == set(ids)
    assert marks[ids[0]] == (3, 2, 0) and marks[ids[1]] == (2, 1, 0)
    assert all(marks[t] == (1, 1, 0) for t in ids[2:])
    if store.engine.dialect.name == "postgresql":
        assert len(sent) == 3 and len(set(sent)) == 1, sent
