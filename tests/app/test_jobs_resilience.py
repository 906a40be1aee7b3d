"""The scheduler while another writer holds the store (a large import): jobs fail, are retried and
succeed once the lock is released; the scheduler's thread survives; /api/health and /metrics say
running, degraded or stopped; a GET with an API token never waits for the lock.

The "other writer" is real: on SQLite a second connection holding `BEGIN IMMEDIATE`, on PostgreSQL a
transaction holding EXCLUSIVE locks on the tables the jobs write (reads go on, writes wait). So the
tests need not hold it for the store's full 10 s busy timeout, the store's connections are given a
short wait (SQLite busy_timeout, PostgreSQL lock_timeout) where the test says so.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, event, func, select, text, update

from app.collect import simulator_connection
from app.demo import DEMO_USER, ensure_demo_fleet
from app.jobs import LOOP, RetryPolicy, Runtime, Scheduler, rollup_job, sync_job
from app.main import create_app
from app.secrets import Vault, load_key
from app.settings import Settings
from app.store.db import Store
from app.store.models import ApiToken, DbObject, Sample, Target, User
from app.store.targets import add_target
from app.store.tokens import create_token
from app.store.users import add_user

FAST = RetryPolicy(attempts=30, first_delay_s=0.2, max_delay_s=0.5, loop_retry_s=0.3)
WRITTEN_TABLES = (
    "target",
    "object",
    "sample",
    "io_interval",
    "rollup_progress",
    "scheduler_job",
    "api_token",
)


def short_lock_waits(store: Store, ms: int = 200) -> None:
    """New connections of `store` give up on a held lock after `ms` instead of the default 10 s."""

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        if store.is_postgres:
            dbapi_conn.execute(f"SET lock_timeout = '{ms}ms'")
            dbapi_conn.commit()
        else:
            dbapi_conn.execute(f"PRAGMA busy_timeout={ms}")

    event.listen(store.engine, "connect", on_connect)  # after the store's own pragmas
    store.engine.dispose()


@contextmanager
def write_lock(url: str) -> Iterator[None]:
    """Another writer holds the store: readers go on, every writer waits (and times out)."""
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None, timeout=5)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    engine = create_engine(url)
    with engine.connect() as pg:
        tables = [
            t for t in WRITTEN_TABLES if pg.scalar(text("SELECT to_regclass(:t)"), {"t": t}) is not None
        ]
        pg.execute(text(f"LOCK TABLE {', '.join(tables)} IN EXCLUSIVE MODE"))
        try:
            yield
        finally:
            pg.rollback()
    engine.dispose()


def wait_for(condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def samples(store: Store) -> int:
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(Sample)) or 0)


def fleet_settings(url: str, tmp_path: Path, **kw: Any) -> Settings:
    return Settings(database_url=url, secret_key_file=tmp_path / "tierwise.key", demo_history_hours=2,
                    demo_step_s=900, poll_jitter_s=0, poll_timeout_s=3, **kw)  # fmt: skip


def demo_fleet(settings: Settings, interval_s: int = 1) -> Vault:
    """The simulated demo fleet, polled every second by default (below the 10 s a user may set, to
    keep the test short: a job is late after 3 of its intervals)."""
    vault = Vault(load_key(settings))
    store = Store(settings.database_url)
    ensure_demo_fleet(store, vault, settings)
    with store.session() as s:
        s.execute(update(Target).values(poll_interval_s=interval_s))
    store.dispose()
    return vault


def test_jobs_fail_retry_and_recover_while_another_writer_holds_the_store(
    store_url: str, tmp_path: Path
) -> None:
    settings = fleet_settings(store_url, tmp_path)
    vault = demo_fleet(settings)
    store = Store(store_url)
    short_lock_waits(store)
    scheduler = Scheduler(Runtime(store, vault, settings, retry=FAST))
    assert scheduler.start()
    try:
        polls = [j.job_id for j in scheduler.monitor.snapshot() if j.kind == "poll"]
        assert len(polls) >= 2
        # the first polls, and the advice the scheduler runs at start, before the lock is taken
        wait_for(lambda: scheduler.status().state == "running"
                 and all(scheduler.monitor.get(p).last_success for p in [*polls, "evaluate"]),  # type: ignore[union-attr]
                 what="first polls and advice")  # fmt: skip
        rollup = threading.Thread(target=rollup_job)  # the 10-minute job, run now under the lock
        with write_lock(store_url):
            before = samples(store)  # counted under the lock: a poll may commit just before it is taken
            rollup.start()
            # the polls cannot write: after 3 of their intervals without success they are late
            wait_for(lambda: set(polls) <= set(scheduler.status().stale), timeout=10, what="late polls")
            status = scheduler.status()
            assert status.state == "degraded", status
            assert "rollup" in status.failing and set(polls) <= set(status.failing), status
            assert samples(store) == before
            time.sleep(0.5)
            released = datetime.now(UTC)
        rollup.join(timeout=30)
        assert not rollup.is_alive()
        done = scheduler.monitor.get("rollup")
        assert done is not None and done.last_success is not None and done.last_success >= released
        assert done.failures >= 2 and done.consecutive_failures == 0
        assert done.last_error is not None and re.search("locked|lock timeout", done.last_error)
        # polls go on: new samples, every poll job has succeeded again, the scheduler is running
        # (the scheduler's own job-store writes recover at its next write: wait for that too)
        wait_for(lambda: samples(store) > before and scheduler.status().state == "running"
                 and not scheduler.status().failing, what="recovery")  # fmt: skip
        for p in polls:
            job = scheduler.monitor.get(p)
            assert job is not None and job.failures >= 1 and job.last_success is not None
            assert job.last_success >= released and job.consecutive_failures == 0
        # the scheduler's own job-store writes failed too, and its thread went on
        loop = scheduler.monitor.get(LOOP)
        assert loop is not None and loop.failures >= 1
        assert scheduler.scheduler is not None and scheduler.scheduler.thread_alive
        assert scheduler.status().failing == []
    finally:
        scheduler.shutdown()
        store.dispose()


def test_a_job_that_raises_is_recorded_and_runs_again(store_url: str, tmp_path: Path, vault: Vault) -> None:
    """Not a store error: no retry within the run, the failure is recorded and the next run goes."""
    settings = fleet_settings(store_url, tmp_path, policy_file=tmp_path / "missing-policy.yaml")
    store = Store(store_url)
    scheduler = Scheduler(Runtime(store, vault, settings, retry=FAST))
    assert scheduler.start()
    try:
        from app.jobs import evaluate_job

        # the scheduler runs evaluate once at start (non-demo); count from after that run
        wait_for(lambda: (j := scheduler.monitor.get("evaluate")) is not None and j.failures >= 1,
                 what="the start-up evaluate run")  # fmt: skip
        before = scheduler.monitor.get("evaluate")
        assert before is not None and before.failures == 1
        evaluate_job()
        evaluate_job()
        job = scheduler.monitor.get("evaluate")
        assert job is not None and job.failures == 3 and job.consecutive_failures == 3
        assert job.last_success is None and job.last_error and "missing-policy" in job.last_error
        assert "evaluate" in scheduler.status().failing
        assert scheduler.scheduler is not None and scheduler.scheduler.thread_alive
    finally:
        scheduler.shutdown()
        store.dispose()


def metric(text_: str, name: str, **labels: str) -> float | None:
    """One sample's value from a Prometheus text exposition."""
    for line in text_.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            got = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) if "{" in line else {}
            if all(got.get(k) == v for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return None


def test_health_and_metrics_say_running_degraded_and_stopped(store_url: str, tmp_path: Path) -> None:
    settings = fleet_settings(store_url, tmp_path, demo=True, scheduler_enabled=True)
    demo_fleet(settings)
    with TestClient(create_app(settings)) as client:
        state = client.app.state.tierwise  # type: ignore[attr-defined]
        assert state.scheduler is not None
        state.scheduler.runtime.retry = FAST
        short_lock_waits(state.store)
        with state.store.session() as s:
            demo = s.scalar(select(User).where(User.username == DEMO_USER))
            token = create_token(s, user=demo, name="prometheus", now=datetime.now(UTC))
        auth = {"Authorization": f"Bearer {token}"}

        wait_for(lambda: client.get("/api/health").json()["scheduler"] == "running", what="running")
        r = client.get("/api/health")
        assert r.status_code == 200 and r.json()["status"] == "ok" and r.json()["stale"] == []
        m = client.get("/metrics", headers=auth).text
        assert metric(m, "tierwise_scheduler_state", state="running") == 1.0
        assert metric(m, "tierwise_scheduler_state", state="degraded") == 0.0
        targets = [j.target for j in state.scheduler.monitor.snapshot() if j.kind == "poll"]
        assert len(targets) >= 2
        failures_before = {}  # process counters: earlier tests may have counted some already
        for target in targets:
            ok_at = metric(m, "tierwise_job_last_success_timestamp_seconds", job="poll", target=target)
            assert ok_at is not None and abs(ok_at - time.time()) < 30
            failures_before[target] = metric(m, "tierwise_job_failures_total", job="poll", target=target) or 0

        with write_lock(store_url):

            def degraded() -> bool:
                body = client.get("/api/health").json()
                return body["scheduler"] == "degraded" and any(j.startswith("poll:") for j in body["failing"])

            wait_for(degraded, timeout=15, what="degraded")
            r = client.get("/api/health")
            body = r.json()
            assert r.status_code == 200 and body["status"] == "degraded"
            assert any(j.startswith("poll:") for j in body["stale"])
            assert "jobs" not in body  # target names and errors only for a signed-in caller
            body = client.get("/api/health", headers=auth).json()
            late = [j for j in body["jobs"] if j["job"].startswith("poll:") and j["consecutive_failures"]]
            assert late and all(re.search("locked|lock timeout", j["last_error"]) for j in late), late
            assert all("INSERT" not in j["last_error"] for j in late)  # the driver's message, not the SQL
            m = client.get("/metrics", headers=auth)  # an authenticated read under the lock
            assert m.status_code == 200
            assert metric(m.text, "tierwise_scheduler_state", state="degraded") == 1.0
            assert (metric(m.text, "tierwise_scheduler_stale_jobs") or 0) >= 1
            target = late[0]["target"]
            assert (
                metric(m.text, "tierwise_job_failures_total", job="poll", target=target) or 0
            ) > failures_before[target]
            assert (metric(m.text, "tierwise_job_consecutive_failures", job="poll", target=target) or 0) >= 1

        wait_for(lambda: client.get("/api/health").json()["scheduler"] == "running", what="recovery")
        m = client.get("/metrics", headers=auth).text
        for target in targets:
            assert metric(m, "tierwise_job_consecutive_failures", job="poll", target=target) == 0.0

        # the scheduler's thread ends (as when an error escaped APScheduler's loop): stopped, 503
        state.scheduler.scheduler.shutdown(wait=False)
        wait_for(lambda: not state.scheduler.scheduler.thread_alive, what="thread end")
        r = client.get("/api/health")
        assert (
            r.status_code == 503 and r.json()["scheduler"] == "stopped" and r.json()["status"] == "degraded"
        )
        m = client.get("/metrics", headers=auth).text
        assert metric(m, "tierwise_scheduler_state", state="stopped") == 1.0
        assert metric(m, "tierwise_scheduler_state", state="running") == 0.0


def test_health_says_off_without_a_scheduler(store_url: str, tmp_path: Path) -> None:
    settings = fleet_settings(store_url, tmp_path, scheduler_enabled=False)
    with TestClient(create_app(settings)) as client:
        r = client.get("/api/health")
        assert r.status_code == 200 and r.json()["scheduler"] == "off" and r.json()["status"] == "ok"


def test_a_token_get_answers_while_another_writer_holds_the_store(store_url: str, tmp_path: Path) -> None:
    """The store's real lock waits (no shortening): before, the request waited 10 s for the lock to
    write last_used_at, then failed with 500."""
    settings = fleet_settings(store_url, tmp_path, scheduler_enabled=False)
    with TestClient(create_app(settings)) as client:
        store: Store = client.app.state.tierwise.store  # type: ignore[attr-defined]
        with store.session() as s:
            user = add_user(s, username="prom", password="a long enough password", role="viewer",
                            now=datetime.now(UTC))  # fmt: skip
            first = create_token(s, user=user, name="first", now=datetime.now(UTC))
            second = create_token(s, user=user, name="second", now=datetime.now(UTC))

        def used(name: str) -> datetime | None:
            with store.session() as s:
                return s.scalar(select(ApiToken.last_used_at).where(ApiToken.name == name))

        with write_lock(store_url):
            started = time.monotonic()
            r = client.get("/api/targets", headers={"Authorization": f"Bearer {first}"})
            assert r.status_code == 200, r.text
            assert time.monotonic() - started < 3
        assert used("first") is None  # skipped, and not tried again within the minute
        r = client.get("/api/targets", headers={"Authorization": f"Bearer {first}"})
        assert r.status_code == 200 and used("first") is None

        r = client.get("/api/targets", headers={"Authorization": f"Bearer {second}"})
        assert r.status_code == 200
        stamped = used("second")
        assert stamped is not None and abs((datetime.now(UTC) - stamped).total_seconds()) < 30
        r = client.get("/api/targets", headers={"Authorization": f"Bearer {second}"})
        assert r.status_code == 200 and used("second") == stamped  # at most once a minute
        assert client.get("/api/targets", headers={"Authorization": "Bearer tw_nope"}).status_code == 401


def test_poll_jobs_follow_targets_added_outside_the_service(store_url: str, tmp_path: Path) -> None:
    """A target added with the CLI (another process), or whose sync met a locked store, gets its
    poll job from the periodic sync; the other targets keep their place in the schedule."""
    settings = fleet_settings(store_url, tmp_path)
    vault = demo_fleet(settings, interval_s=600)
    store = Store(store_url)
    scheduler = Scheduler(Runtime(store, vault, settings, retry=RetryPolicy(attempts=1, loop_retry_s=0.3)))
    assert scheduler.start() and scheduler.scheduler is not None
    try:
        wait_for(lambda: all(scheduler.monitor.get(j.id).last_success  # type: ignore[union-attr]
                             for j in scheduler.scheduler.get_jobs() if j.id.startswith("poll:")),  # type: ignore[union-attr]
                 what="first polls")  # fmt: skip
        # short lock waits only now: the first polls write at once, and on a loaded host one of them
        # could wait longer than 200 ms and give up until its next run, 10 minutes away
        short_lock_waits(store)
        planned = {j.id: j.next_run_time for j in scheduler.scheduler.get_jobs() if j.id.startswith("poll:")}
        assert len(planned) >= 2 and all(t > datetime.now(UTC) for t in planned.values())

        def add(name: str) -> int:
            with store.session() as s:
                conn = simulator_connection("SQLPROD01", datetime.now(UTC))
                return add_target(s, name=name, engine="sqlserver", source="simulator", now=datetime.now(UTC),
                                  connection_encrypted=vault.encrypt(conn), password_env=None,
                                  poll_interval_s=600).id  # fmt: skip

        late = add("added-by-cli")
        with write_lock(store_url):
            assert scheduler.sync_targets() == []  # the web UI's sync after a change: no 500
        assert "sync" in scheduler.status().failing
        assert scheduler.scheduler.get_job(f"poll:{late}") is None
        sync_job()  # what the scheduler runs every SYNC_MINUTES
        assert scheduler.scheduler.get_job(f"poll:{late}") is not None
        assert "sync" not in scheduler.status().failing
        after = {j.id: j.next_run_time for j in scheduler.scheduler.get_jobs() if j.id.startswith("poll:")}
        assert {k: after[k] for k in planned} == planned  # not reset to "now"
        wait_for(lambda: bool(scheduler.monitor.get(f"poll:{late}").last_success), what="new poll")  # type: ignore[union-attr]
    finally:
        scheduler.shutdown()
        store.dispose()


def test_a_long_import_leaves_the_scheduler_polling(tmp_path: Path) -> None:
    """The failure this guards against: a 211 MB import into SQLite held the write lock for
    minutes and killed the scheduler. Imports now commit in chunks: while one runs, polls of the
    live targets land between its chunks and the scheduler never stops."""
    from app.importer import import_file
    from bench.import_file import generate

    url = f"sqlite:///{tmp_path / 'tierwise.db'}"
    settings = fleet_settings(url, tmp_path)
    vault = demo_fleet(settings)
    store = Store(url)
    scheduler = Scheduler(Runtime(store, vault, settings, retry=FAST))
    assert scheduler.start()
    importer = Store(url)
    try:
        polls = [j.job_id for j in scheduler.monitor.snapshot() if j.kind == "poll"]
        wait_for(lambda: all(scheduler.monitor.get(p).last_success for p in polls), what="first polls")  # type: ignore[union-attr]
        path = tmp_path / "big.csv"
        rows = generate(path, 3)
        marks: list[int] = []
        result: list[Any] = []

        def live_samples() -> int:
            with store.session() as s:
                q = (
                    select(func.count())
                    .select_from(Sample)
                    .join(DbObject, DbObject.id == Sample.object_id)
                    .join(Target, Target.id == DbObject.target_id)
                )
                return int(s.scalar(q.where(Target.source != "import")) or 0)

        def run() -> None:
            result.append(
                import_file(importer, path, chunk_rows=1000, committed=lambda _: marks.append(live_samples()))
            )

        worker = threading.Thread(target=run)
        worker.start()
        states: set[str] = set()
        while worker.is_alive():
            states.add(scheduler.status().state)
            time.sleep(0.2)
        worker.join()
        [out] = result
        assert out.result.samples == rows and out.recorded
        assert len(marks) >= 5, marks
        assert marks[-1] > marks[0], f"no poll landed while the import ran: {marks}"
        assert "stopped" not in states
        assert scheduler.scheduler is not None and scheduler.scheduler.thread_alive
        wait_for(lambda: scheduler.status().state == "running", what="running after the import")
    finally:
        scheduler.shutdown()
        importer.dispose()
        store.dispose()


def test_the_advice_runs_when_the_service_starts(tmp_path: Path, vault: Vault) -> None:
    """Imported files, then `tierwise serve`: the first advice must not wait an hour."""
    from app.importer import import_file
    from app.store.models import AdviceSnapshot
    from tests.app.test_import import FILE_STATS

    url = f"sqlite:///{tmp_path / 'tierwise.db'}"
    store = Store(url)
    import_file(store, FILE_STATS)
    settings = fleet_settings(url, tmp_path)
    scheduler = Scheduler(Runtime(store, vault, settings, retry=FAST))
    assert scheduler.start()
    try:

        def advised() -> bool:
            job = scheduler.monitor.get("evaluate")
            return job is not None and job.last_success is not None

        wait_for(advised, what="the first advice")
        with store.session() as s:
            assert s.scalar(select(func.count()).select_from(AdviceSnapshot)) == 2
    finally:
        scheduler.shutdown()
        store.dispose()
