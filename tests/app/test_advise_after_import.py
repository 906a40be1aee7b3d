"""Advice after an import into a running service (#17): `tierwise import` in another shell while
the scheduler runs leads to one evaluation once the imports have been still for the quiet period;
two imports in quick succession lead to one evaluation, not two. On SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from app.importer import import_file
from app.jobs import AFTER_IMPORT, ImportWatch, Runtime, Scheduler
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import AdviceSnapshot, Target
from app.store.watermarks import import_pending
from tests.conftest import FIXTURES

IMPORTS = FIXTURES / "import"
QUIET_S = 2.0


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _evaluations(scheduler: Scheduler) -> int:
    job = scheduler.monitor.get("evaluate")
    return 0 if job is None else job.successes


def _start(store_url: str, tmp_path: Path, vault: Vault) -> tuple[Scheduler, Store]:
    settings = Settings(database_url=store_url, secret_key_file=tmp_path / "k", poll_jitter_s=0)
    store = Store(store_url)
    scheduler = Scheduler(Runtime(store, vault, settings, import_quiet_s=QUIET_S, import_check_s=0.2))
    assert scheduler.start()
    # the advice the scheduler runs at start (nothing stored yet)
    wait_for(lambda: _evaluations(scheduler) == 1, what="the start-up evaluation")
    return scheduler, store


def _import(url: str, name: str, commits: list[datetime]) -> None:
    """An import as `tierwise import` runs it: another connection, chunks committed one by one."""
    other = Store(url)
    try:
        out = import_file(
            other, IMPORTS / name, chunk_rows=6, committed=lambda _: commits.append(datetime.now(UTC))
        )
        assert out.result.samples > 0 and out.recorded
    finally:
        other.dispose()


def _snapshots(store: Store) -> dict[str, datetime]:
    with store.session() as s:
        rows = s.execute(select(Target.name, AdviceSnapshot.evaluated_at).join(AdviceSnapshot))
        return {name: at for name, at in rows}


def test_an_import_into_a_running_service_is_advised_once_after_the_quiet_period(
    store_url: str, tmp_path: Path, vault: Vault
) -> None:
    scheduler, store = _start(store_url, tmp_path, vault)
    try:
        commits: list[datetime] = []
        _import(store_url, "sqlserver_file_stats.csv", commits)
        assert len(commits) >= 3  # several chunks: one evaluation for all of them
        with store.session() as s:
            assert len(import_pending(s)) == 2  # two servers in the file

        wait_for(lambda: _evaluations(scheduler) == 2, what="the evaluation after the import")
        job = scheduler.monitor.get("evaluate")
        assert job is not None and job.last_start is not None
        # it waited for the quiet period after the last chunk
        assert job.last_start - commits[-1] >= timedelta(seconds=QUIET_S - 0.5)
        advised = _snapshots(store)
        assert set(advised) == {"import:sqlserver:SQLPROD01", "import:sqlserver:SQLPROD02\\OLTP"}
        assert all(at >= commits[-1] for at in advised.values())
        with store.session() as s:
            assert import_pending(s) == {}

        time.sleep(3 * QUIET_S)  # nothing new: no second evaluation
        assert _evaluations(scheduler) == 2
        watcher = scheduler.monitor.get(AFTER_IMPORT)
        assert watcher is not None and watcher.successes > 5 and watcher.failures == 0
    finally:
        scheduler.shutdown()
        store.dispose()


def test_two_imports_in_quick_succession_are_advised_once(
    store_url: str, tmp_path: Path, vault: Vault
) -> None:
    scheduler, store = _start(store_url, tmp_path, vault)
    try:
        commits: list[datetime] = []
        _import(store_url, "sqlserver_file_stats.csv", commits)
        first_done = datetime.now(UTC)
        _import(store_url, "db2_tablespaces.csv", commits)
        assert datetime.now(UTC) - first_done < timedelta(seconds=QUIET_S)  # within the quiet period

        wait_for(lambda: _evaluations(scheduler) == 2, what="the evaluation after the imports")
        advised = _snapshots(store)
        assert len(advised) == 3 and any(name.startswith("import:db2:") for name in advised)
        assert len(set(advised.values())) == 1  # one run advised both files
        job = scheduler.monitor.get("evaluate")
        assert job is not None and job.last_start is not None
        assert job.last_start - commits[-1] >= timedelta(seconds=QUIET_S - 0.5)

        time.sleep(3 * QUIET_S)
        assert _evaluations(scheduler) == 2
    finally:
        scheduler.shutdown()
        store.dispose()


def test_the_import_watch_waits_for_still_data_and_fires_once_per_state() -> None:
    watch = ImportWatch()
    assert not watch.due({}, 0.0, 60)
    assert not watch.due({7: 3}, 1.0, 60)  # first seen: the quiet period starts
    assert not watch.due({7: 3}, 60.0, 60)
    assert not watch.due({7: 4}, 61.0, 60)  # another chunk: it starts again
    assert not watch.due({7: 4}, 120.0, 60)
    assert watch.due({7: 4}, 121.0, 60)
    watch.advised()
    assert not watch.due({7: 4}, 500.0, 60)  # the evaluation failed: left to the hourly run
    assert not watch.due({7: 4, 9: 1}, 501.0, 60)  # a new import
    assert watch.due({7: 4, 9: 1}, 561.0, 60)
    watch.advised()
    assert not watch.due({}, 562.0, 60)  # advised
    assert not watch.due({7: 5}, 563.0, 60) and watch.due({7: 5}, 623.0, 60)
