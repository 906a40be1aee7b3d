"""What a poll leaves on its target row is written by one function (app/collect.record_poll_outcome)
for both pollers: the scheduler's poll job (collect.poll_target) and a collector worker
(workers.Worker). The same poll through either path leaves the same rows; only the next due time
differs by design (the scheduler keeps its own cadence, a worker stores the next slot)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from app.collect import poll_target, simulator_connection
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import COUNTER_COLUMNS, DbObject, Sample, Target
from app.store.targets import add_target

pytestmark = pytest.mark.postgres

BOOKKEEPING = ("consecutive_failures", "last_error")


def _add(store: Store, vault: Vault, name: str, instance: str, origin: datetime) -> int:
    with store.session() as s:
        return add_target(s, name=name, engine="sqlserver", source="simulator", password_env=None,
                          connection_encrypted=vault.encrypt(simulator_connection(instance, origin)),
                          poll_interval_s=60, now=origin).id  # fmt: skip


def _row(store: Store, tid: int) -> Target:
    with store.session() as s:
        t = s.get(Target, tid)
        assert t is not None
        s.expunge(t)
        return t


def _samples(store: Store, tid: int) -> list[tuple[Any, ...]]:
    with store.session() as s:
        rows = s.execute(
            select(DbObject.key, Sample.sample_time, *[getattr(Sample, c) for c in COUNTER_COLUMNS])
            .join(DbObject, DbObject.id == Sample.object_id)
            .where(DbObject.target_id == tid)
            .order_by(DbObject.key)
        )
        return [tuple(r) for r in rows]


def test_the_scheduler_and_a_worker_leave_the_same_rows(
    postgres_url: str, tmp_path: Path, vault: Vault
) -> None:
    from app.workers import Worker

    store = Store(postgres_url)
    settings = Settings(database_url=postgres_url, secret_key_file=tmp_path / "k", polling="workers")
    origin = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    ids = {name: _add(store, vault, name, instance, origin) for name, instance in
           [("worker-ok", "SQLPROD01"), ("worker-bad", "NOSUCH"), ("sched-ok", "SQLPROD01"),
            ("sched-bad", "NOSUCH")]}  # fmt: skip
    try:
        with store.session() as s:  # the worker polls only its two
            s.execute(update(Target).where(Target.name.like("sched-%")).values(enabled=False))
        stats = Worker(store, vault, settings).run_once()
        assert (stats.polled, stats.failed) == (1, 1)
        w_ok, w_bad = _row(store, ids["worker-ok"]), _row(store, ids["worker-bad"])
        assert w_ok.last_poll_at is not None and w_bad.last_poll_at is not None

        # the same polls by the scheduler's path, at the same instants
        assert poll_target(store, vault, settings, ids["sched-ok"], now=w_ok.last_poll_at).ok
        assert not poll_target(store, vault, settings, ids["sched-bad"], now=w_bad.last_poll_at).ok
        s_ok, s_bad = _row(store, ids["sched-ok"]), _row(store, ids["sched-bad"])

        for w, sch in ((w_ok, s_ok), (w_bad, s_bad)):
            assert [getattr(w, f) for f in BOOKKEEPING] == [getattr(sch, f) for f in BOOKKEEPING]
            assert (w.last_poll_at, w.last_success_at, w.last_error_at) == (
                sch.last_poll_at,
                sch.last_success_at,
                sch.last_error_at,
            )
            assert (w.lease_owner, w.lease_until) == (None, None)
        assert s_ok.last_success_at == s_ok.last_poll_at and s_ok.consecutive_failures == 0
        assert s_bad.last_success_at is None and s_bad.consecutive_failures == 1
        assert s_bad.last_error and "NOSUCH" in s_bad.last_error
        # a failure backs off the same way on both paths: one interval after the first failure
        assert w_bad.next_attempt_at - w_bad.last_poll_at == s_bad.next_attempt_at - s_bad.last_poll_at  # type: ignore[operator]
        assert s_bad.next_attempt_at - s_bad.last_poll_at == timedelta(seconds=60)  # type: ignore[operator]
        # a success: the scheduler keeps its own cadence, the worker stores the next slot
        assert s_ok.next_attempt_at is None and w_ok.next_attempt_at is not None
        assert w_ok.next_attempt_at > w_ok.last_poll_at
        # and the same samples
        stored = _samples(store, ids["worker-ok"])
        assert stored and stored == _samples(store, ids["sched-ok"])
    finally:
        store.dispose()
