"""APScheduler jobs: poll each target at its own interval, roll up, apply retention.

Jobs are kept in a persistent SQLAlchemy job store in the same database as the store, and are
thin wrappers around one service function each. Exactly one scheduler runs per deployment: it
takes a PostgreSQL advisory lock (or, on SQLite, a lock file beside the database) and a second
process that cannot get the lock runs without a scheduler.
"""

from __future__ import annotations

import fcntl
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import text

from app.collect import poll_target
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.rollup import apply_retention, roll_up
from app.store.targets import pollable

log = logging.getLogger("tierwise.jobs")

SCHEDULER_LOCK_ID = 0x7469657277697365  # "tierwise"


@dataclass
class Runtime:
    store: Store
    vault: Vault
    settings: Settings


_runtime: Runtime | None = None


def _rt() -> Runtime:
    if _runtime is None:
        raise RuntimeError("scheduler runtime not initialised")
    return _runtime


def poll_job(target_id: int) -> None:
    rt = _rt()
    try:
        poll_target(rt.store, rt.vault, rt.settings, target_id)
    except Exception:  # the store itself failed; the next run tries again
        log.exception("poll job for target %s could not record its outcome", target_id)


def rollup_job() -> None:
    rt = _rt()
    with rt.store.session() as s:
        n = roll_up(s)
    log.info("rolled up %d intervals", n)


def retention_job() -> None:
    rt = _rt()
    with rt.store.session() as s:
        r = apply_retention(
            s,
            now=datetime.now(UTC),
            sample_days=rt.settings.sample_retention_days,
            rollup_days=rt.settings.rollup_retention_days,
        )
    log.info("retention removed %d samples, %d intervals, %d roll-ups", r.samples, r.intervals, r.rollups)


def reports_job() -> None:
    from app.mail.service import run_due

    rt = _rt()
    run_due(rt.store, rt.settings, now=datetime.now(UTC))


def evaluate_job() -> None:
    from app.evaluate import evaluate
    from app.store.policies import current_policy

    rt = _rt()
    with rt.store.session() as s:
        policy = current_policy(s, rt.settings.policy_file)
    evaluate(rt.store, policy, now=datetime.now(UTC))


def verify_job() -> None:
    """Verify after change: open verifications for seen relocations, judge those whose window passed."""
    from app.store.policies import current_policy
    from app.verify import run_verification

    rt = _rt()
    with rt.store.session() as s:
        policy = current_policy(s, rt.settings.policy_file)
    run_verification(rt.store, policy, now=datetime.now(UTC))


class SchedulerLock:
    """Held for the scheduler's life; released when the process exits."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._conn: Any = None
        self._file: IO[str] | None = None

    def acquire(self) -> bool:
        if self.store.is_postgres:
            self._conn = self.store.engine.connect()
            got = bool(
                self._conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": SCHEDULER_LOCK_ID}).scalar()
            )
            if not got:
                self._conn.close()
                self._conn = None
            return got
        database = self.store.engine.url.database or "tierwise"
        path = f"{database}.scheduler.lock" if database != ":memory:" else f"/tmp/tierwise-{os.getpid()}.lock"
        self._file = open(path, "w")  # noqa: SIM115 - held open for the lock's life
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.close()
            self._file = None
            return False
        return True

    def release(self) -> None:
        if self._conn is not None:
            self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": SCHEDULER_LOCK_ID})
            self._conn.close()
            self._conn = None
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


class Scheduler:
    def __init__(self, runtime: Runtime) -> None:
        global _runtime
        _runtime = runtime
        self.runtime = runtime
        self.lock = SchedulerLock(runtime.store)
        self.scheduler: BackgroundScheduler | None = None

    def start(self) -> bool:
        if not self.lock.acquire():
            log.warning("another tierwise scheduler holds the lock; this process will not schedule jobs")
            return False
        jobstore = SQLAlchemyJobStore(engine=self.runtime.store.engine, tablename="scheduler_job")
        self.scheduler = BackgroundScheduler(
            jobstores={"default": jobstore},
            executors={"default": ThreadPoolExecutor(max_workers=8)},
            job_defaults={"coalesce": True, "max_instances": 1},
            timezone=UTC,
        )
        self.scheduler.start(paused=True)
        self.sync_targets()
        s = self.runtime.settings
        self.scheduler.add_job(
            rollup_job,
            IntervalTrigger(minutes=10),
            id="rollup",
            replace_existing=True,
            misfire_grace_time=600,
        )
        # every minute; a run missed while the service was down is due at once, and sent once
        self.scheduler.add_job(
            reports_job,
            IntervalTrigger(minutes=1),
            id="reports",
            replace_existing=True,
            misfire_grace_time=60,
            next_run_time=datetime.now(UTC),
        )
        self.scheduler.add_job(
            evaluate_job,
            IntervalTrigger(minutes=s.evaluate_interval_minutes),
            id="evaluate",
            replace_existing=True,
            misfire_grace_time=3600,
        )
        self.scheduler.add_job(
            verify_job,
            IntervalTrigger(hours=1),
            id="verify",
            replace_existing=True,
            misfire_grace_time=3600,
        )
        self.scheduler.add_job(
            retention_job,
            IntervalTrigger(hours=6),
            id="retention",
            replace_existing=True,
            misfire_grace_time=3600,
        )
        log.info(
            "scheduler started (retention: samples %d days, roll-ups %d days)",
            s.sample_retention_days,
            s.rollup_retention_days,
        )
        self.scheduler.resume()
        return True

    def sync_targets(self) -> list[str]:
        """One poll job per enabled target; jobs of removed or disabled targets are dropped.

        With TIERWISE_POLLING=workers the collector workers poll (app/workers.py): no poll jobs."""
        assert self.scheduler is not None
        s = self.runtime.settings
        with self.runtime.store.session() as session:
            targets = (
                []
                if s.polling == "workers"
                else [(t.id, t.name, t.poll_interval_s) for t in pollable(session)]
            )
        wanted = {f"poll:{tid}" for tid, _, _ in targets}
        for job in self.scheduler.get_jobs():
            if job.id.startswith("poll:") and job.id not in wanted:
                job.remove()
        for tid, name, interval in targets:
            self.scheduler.add_job(
                poll_job,
                IntervalTrigger(seconds=interval, jitter=min(s.poll_jitter_s, interval // 4)),
                args=[tid],
                id=f"poll:{tid}",
                name=f"poll {name}",
                replace_existing=True,
                misfire_grace_time=interval,
                next_run_time=datetime.now(UTC),
            )
        return sorted(wanted)

    def shutdown(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=True)
            self.scheduler = None
        self.lock.release()
