"""APScheduler jobs: poll each target at its own interval, roll up, apply retention, advise.

Jobs are kept in a persistent SQLAlchemy job store in the same database as the store, and are
thin wrappers around one service function each. Exactly one scheduler runs per deployment: it
takes a PostgreSQL advisory lock (or, on SQLite, a lock file beside the database) and a second
process that cannot get the lock runs without a scheduler.

The store can refuse writes for a while (a large import holds SQLite's write lock, PostgreSQL
fails over): every job retries a store error a few times with doubling back-off and is then left
to its next scheduled run; the scheduler's own loop survives job-store errors; and each job's
last start, success and error are kept (`JobMonitor`, app/job_health.py) so /api/health and
/metrics say when the scheduler is dead or its jobs have stopped succeeding.

Advice runs every hour, at start, and after imports: files imported while the service runs
(`tierwise import` in another shell) are advised once their chunks have stopped arriving for a
quiet period (`after-import` job, `ImportWatch`), not once per chunk nor while an import commits.

The advice is evaluated per storage pool, and only for the pools whose data (or the policy)
changed since their last evaluation (`request_changed_pools`): in this process on SQLite or when
the scheduler polls, by the collector workers when they poll (app/workers.py). The first run of a
process and then one run a day evaluate the whole fleet at once (`FULL_EVERY_S`): that run also
re-plans the partition lifecycles, which need every pool's advice. With workers, a due pool that no
worker has taken for TIERWISE_POOL_TAKEOVER_MINUTES (none runs, or all are busy polling) is
evaluated here (`pool-takeover` job, every `POOL_TAKEOVER_CHECK_S`), leased as a worker leases it
and on the store's clock, as the workers' leases are: a pool a live worker holds is never taken.
"""

from __future__ import annotations

import fcntl
import logging
import math
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import IO, TYPE_CHECKING, Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import text

from app import metrics
from app.collect import poll_target
from app.job_health import JobMonitor, SchedulerStatus, describe, scheduler_status
from app.mail.send import MailStop
from app.secrets import Vault, redact
from app.settings import Settings
from app.store.db import Store, retryable
from app.store.rollup import apply_retention, roll_up_in_batches
from app.store.targets import pollable
from app.store.watermarks import import_pending, request_changed_pools
from policies.model import Policy

if TYPE_CHECKING:
    from app.evaluate import PoolRun

log = logging.getLogger("tierwise.jobs")

SCHEDULER_LOCK_ID = 0x7469657277697365  # "tierwise"
REPORTS_STALE_S = 900  # a report delivery may retry SMTP for minutes: don't call that a stall
SYNC_MINUTES = 5  # how often poll jobs are matched to the targets (besides after a change)
LOOP = "scheduler"  # the monitor's name for the scheduler's own loop (job-store reads and writes)
AFTER_IMPORT = "after-import"  # the job that advises imported data once the imports are still
IMPORT_QUIET_S = 60.0  # no import chunk for this long: the import is done, advise it
IMPORT_CHECK_S = 10.0  # how often the after-import job reads the import watermarks
HURRY_S = 120.0  # after a policy change, how long the next pending state is advised without waiting
AFTER_IMPORT_STALE_S = 900  # it may wait for, then run, an evaluation of a large fleet
FULL_EVERY_S = 20 * 3600  # a whole-fleet evaluation (and the ILM re-plan) at most this often
POOL_LEASE_S = 600  # a pool evaluated in this process; a worker uses its own lease
POOL_TAKEOVER = "pool-takeover"  # the job evaluating due pools no collector worker took
POOL_TAKEOVER_CHECK_S = 60  # how often it looks (one small read of pool_watermark)
POOL_TAKEOVER_STALE_S = 3600  # it may wait for the hourly run, then evaluate several pools


# --- retries ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """How a job retries a store error within one run; after the last try the job waits for its
    next scheduled run. The scheduler's loop retries a job-store error after `loop_retry_s`."""

    attempts: int = 4
    first_delay_s: float = 2.0
    max_delay_s: float = 30.0
    loop_retry_s: float = 5.0

    def delay(self, attempt: int) -> float:
        """The wait after failed try number `attempt` (1-based): doubling, capped."""
        return float(min(self.first_delay_s * 2 ** (attempt - 1), self.max_delay_s))


@dataclass
class Runtime:
    store: Store
    vault: Vault
    settings: Settings
    monitor: JobMonitor = field(default_factory=JobMonitor)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], None] = time.sleep
    import_quiet_s: float = IMPORT_QUIET_S
    import_check_s: float = IMPORT_CHECK_S
    import_watch: ImportWatch = field(default_factory=lambda: ImportWatch())
    full_evaluation_at: float | None = None  # monotonic time of this process's last whole-fleet run
    mail_stop: MailStop = field(default_factory=MailStop)  # set at shutdown: unsent reports stay queued


class ImportWatch:
    """Debounces imports: due once the targets an import wrote since the last advice (with the
    version each import chunk left) have been the same for `quiet_s` by this process's monotonic
    clock, and only once for that state (an evaluation that fails is left to the hourly run, not
    repeated every check). The pending state itself is in the store (app/store/watermarks.py):
    after a restart, imports not advised yet are advised after one quiet period."""

    def __init__(self) -> None:
        self._state: tuple[tuple[int, int], ...] = ()
        self._still_since = 0.0
        self._advised: tuple[tuple[int, int], ...] = ()
        self._hurry_until = -math.inf
        self.hurried = False  # the last due state was hurried (a policy change), not waited out

    def hurry(self, now_s: float, within_s: float = HURRY_S) -> None:
        """The next pending state seen within `within_s` is due at once: a policy change (a location
        mapped to a tier) is one deliberate write, not a stream of chunks to wait out."""
        self._hurry_until = now_s + within_s

    def due(self, pending: dict[int, int], now_s: float, quiet_s: float) -> bool:
        state = tuple(sorted(pending.items()))
        hurried = now_s <= self._hurry_until
        if state != self._state:
            self._state, self._still_since = state, now_s
            if not hurried:
                return False
        waiting = bool(state) and state != self._advised
        self.hurried = waiting and hurried
        if self.hurried:
            self._hurry_until = -math.inf
            return True
        return waiting and now_s - self._still_since >= quiet_s

    def advised(self) -> None:
        """The evaluation for the current state has been started."""
        self._advised = self._state


_runtime: Runtime | None = None
_scheduler: Scheduler | None = None


def _rt() -> Runtime:
    if _runtime is None:
        raise RuntimeError("scheduler runtime not initialised")
    return _runtime


def _guard(job_id: str, body: Callable[[Runtime], object]) -> None:
    """Run one job: record its start and outcome, retry store errors with back-off, and never let
    an exception out (APScheduler would only log it; the next run is scheduled either way)."""
    rt = _rt()
    monitor, policy = rt.monitor, rt.retry
    monitor.started(job_id)
    for attempt in range(1, max(policy.attempts, 1) + 1):
        try:
            body(rt)
        except Exception as exc:
            monitor.failed(job_id, exc)
            message = describe(exc)
            if not retryable(exc):
                trace = redact("".join(traceback.format_exception(exc)))
                log.error("job %s failed; its next run is scheduled: %s\n%s", job_id, message, trace)
                return
            if attempt >= policy.attempts:
                log.error(
                    "job %s: store error on try %d, giving up until its next run: %s",
                    job_id,
                    attempt,
                    message,
                )
                return
            delay = policy.delay(attempt)
            log.warning(
                "job %s: store error on try %d, retrying in %.1f s: %s", job_id, attempt, delay, message
            )
            rt.sleep(delay)
        else:
            monitor.succeeded(job_id)
            return


def poll_job(target_id: int) -> None:
    """A target that cannot be read is recorded and backed off by poll_target (the job succeeds);
    only a store error is retried here."""
    _guard(f"poll:{target_id}", lambda rt: poll_target(rt.store, rt.vault, rt.settings, target_id))


def _rollup(rt: Runtime) -> None:
    n = roll_up_in_batches(rt.store)  # short transactions: a login waits for one batch at most
    log.info("rolled up %d intervals", n)


def rollup_job() -> None:
    _guard("rollup", _rollup)


def _retention(rt: Runtime) -> None:
    with rt.store.session() as s:
        r = apply_retention(
            s,
            now=datetime.now(UTC),
            sample_days=rt.settings.sample_retention_days,
            rollup_days=rt.settings.rollup_retention_days,
        )
    log.info("retention removed %d samples, %d intervals, %d roll-ups", r.samples, r.intervals, r.rollups)


def retention_job() -> None:
    _guard("retention", _retention)


def _reports(rt: Runtime) -> None:
    from app.mail.service import run_due

    run_due(rt.store, rt.settings, now=datetime.now(UTC), stop=rt.mail_stop)


def reports_job() -> None:
    _guard("reports", _reports)


_EVALUATING = threading.Lock()  # one evaluation at a time: the hourly run or one after imports


def _evaluate(rt: Runtime) -> None:
    """The whole fleet once a day (and at a process's first run), else the changed pools: here,
    or left to the collector workers when they poll."""
    from app.evaluate import evaluate
    from app.store.policies import current_policy
    from app.workers import run_due_pools, store_clock

    with _EVALUATING:
        with rt.store.session() as s:
            policy = current_policy(s, rt.settings.policy_file)
        full = rt.full_evaluation_at is None or time.monotonic() - rt.full_evaluation_at >= FULL_EVERY_S
        if full:
            evaluate(rt.store, policy, now=datetime.now(UTC))
            rt.full_evaluation_at = time.monotonic()
            return
        workers = _workers_evaluate(rt)
        now = store_clock(rt.store).now() if workers else datetime.now(UTC)  # as the takeover judges
        with rt.store.session() as s:
            due = request_changed_pools(s, policy, now)
        if not due:
            return
        if workers:
            log.info("%d pools changed: left to the collector workers for %d min", len(due),
                     rt.settings.pool_takeover_minutes)  # fmt: skip
            return
        runs = run_due_pools(rt.store, _policy_reader(rt), owner=f"scheduler:{os.getpid()}",
                             clock=lambda: datetime.now(UTC), lease_s=POOL_LEASE_S)  # fmt: skip
        _record_pool_runs(rt, runs)


def _workers_evaluate(rt: Runtime) -> bool:
    """Whether collector workers evaluate the changed pools (PostgreSQL, TIERWISE_POLLING=workers)."""
    return rt.store.is_postgres and rt.settings.polling == "workers"


def _policy_reader(rt: Runtime) -> Callable[[], Policy]:
    from app.store.policies import current_policy

    def read_policy() -> Policy:
        with rt.store.session() as s:
            return current_policy(s, rt.settings.policy_file)

    return read_policy


def _record_pool_runs(rt: Runtime, runs: list[PoolRun]) -> None:
    for r in runs:
        job_id = f"evaluate:{r.pool}"
        if rt.monitor.get(job_id) is None:
            rt.monitor.register(job_id, interval_s=None, target=r.pool)
        if r.error is None:
            rt.monitor.succeeded(job_id)
        else:
            rt.monitor.failed(job_id, RuntimeError(r.error))


def _take_over_pools(rt: Runtime) -> None:
    """With workers: evaluate the due pools that no worker has taken for the takeover bound. Each
    is claimed through app/store/watermarks.claim_pool on the store's clock, so a pool a live
    worker holds (its lease renewed by its heartbeat) is skipped, and one whose lease ran out is
    taken over as any worker would. Skipped while the hourly run evaluates in this process."""
    from app.workers import run_due_pools, store_clock

    if not _workers_evaluate(rt) or not _EVALUATING.acquire(blocking=False):
        return
    try:
        clock = store_clock(rt.store).now
        waited = clock() - timedelta(minutes=rt.settings.pool_takeover_minutes)
        runs = run_due_pools(rt.store, _policy_reader(rt), owner=f"scheduler:{os.getpid()}", clock=clock,
                             lease_s=POOL_LEASE_S, requested_before=waited)  # fmt: skip
    finally:
        _EVALUATING.release()
    if runs:
        log.warning("%d due pools no collector worker took for %d min were evaluated by the service: %s",
                    len(runs), rt.settings.pool_takeover_minutes, ", ".join(r.pool for r in runs))  # fmt: skip
    _record_pool_runs(rt, runs)


def pool_takeover_job() -> None:
    _guard(POOL_TAKEOVER, _take_over_pools)


def evaluate_job() -> None:
    _guard("evaluate", _evaluate)


def _after_import(rt: Runtime) -> None:
    with rt.store.session() as s:
        pending = import_pending(s)
    if not rt.import_watch.due(pending, time.monotonic(), rt.import_quiet_s):
        return
    rt.import_watch.advised()
    if rt.import_watch.hurried:
        log.info("a policy change asks for advice on %d targets: advising them now", len(pending))
    else:
        log.info("imports into %d targets have been still for %.0f s: advising them", len(pending),
                 rt.import_quiet_s)  # fmt: skip
    evaluate_job()  # recorded as a run of the evaluate job


def advise_soon() -> None:
    """Advise what is pending now (app/store/watermarks.request_advice marked it), without the
    import's quiet period: the after-import job runs at once in this process. A process without the
    scheduler does nothing here; the scheduler's process advises it after the quiet period."""
    if _runtime is None or _scheduler is None or not _scheduler.started or _scheduler.scheduler is None:
        return
    _runtime.import_watch.hurry(time.monotonic())
    try:
        _scheduler.scheduler.modify_job(AFTER_IMPORT, next_run_time=datetime.now(UTC))
    except Exception as exc:  # the job store is busy: the job's next check (seconds away) does it
        log.warning("could not run the after-import job now: %s", describe(exc))


def after_import_job() -> None:
    """Advise imported data once the imports have stopped (see ImportWatch)."""
    _guard(AFTER_IMPORT, _after_import)


def _verify(rt: Runtime) -> None:
    from app.store.policies import current_policy
    from app.verify import run_verification

    with rt.store.session() as s:
        policy = current_policy(s, rt.settings.policy_file)
    run_verification(rt.store, policy, now=datetime.now(UTC))


def sync_job() -> None:
    """Poll jobs follow the targets: those added with `tierwise targets add` while the service runs,
    or whose sync after a change met a locked store."""
    if _scheduler is not None:
        _guard("sync", lambda rt: _scheduler._sync_targets() if _scheduler is not None else None)


def verify_job() -> None:
    """Verify after change: open verifications for seen relocations, judge those whose window passed."""
    _guard("verify", _verify)


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


class _TolerantJobStore(SQLAlchemyJobStore):  # type: ignore[misc]
    """The persistent job store, whose write of a job's next run time may fail on a locked or
    unreachable store. APScheduler 3 writes it right after submitting a due job and lets an error
    escape its loop: that pass is abandoned (the jobs after it are not started) and the error ends
    the scheduler thread for good. Here the error is recorded and the pass goes on; the job stays
    due in the store and is started again (or skipped while it still runs) on a later pass."""

    def __init__(self, monitor: JobMonitor, **options: Any) -> None:
        self._monitor = monitor
        self.write_failed = False
        super().__init__(**options)

    def update_job(self, job: Any) -> None:
        try:
            super().update_job(job)
        except Exception as exc:
            if not retryable(exc):
                raise
            self.write_failed = True
            self._monitor.failed(LOOP, exc)
            log.warning("scheduler: could not store the next run of %s: %s", job.id, describe(exc))


class _ResilientScheduler(BackgroundScheduler):  # type: ignore[misc]
    """A loop pass that hits a store error is not the end of the thread: it is logged, recorded and
    the next pass comes after `loop_retry_s` (no busy loop on jobs that stay due meanwhile)."""

    def __init__(self, monitor: JobMonitor, jobstore: _TolerantJobStore, loop_retry_s: float,
                 **options: Any) -> None:  # fmt: skip
        self._monitor = monitor
        self._store = jobstore
        self._loop_retry_s = loop_retry_s
        super().__init__(jobstores={"default": jobstore}, **options)

    def _process_jobs(self) -> float | None:
        self._store.write_failed = False
        try:
            wait: float | None = super()._process_jobs()
        except Exception as exc:
            self._monitor.failed(LOOP, exc)
            log.warning("scheduler loop: %s; next pass in %.1f s", describe(exc), self._loop_retry_s)
            return self._loop_retry_s
        if self._store.write_failed:
            return self._loop_retry_s if wait is None else max(wait, self._loop_retry_s)
        self._monitor.succeeded(LOOP)
        return wait

    @property
    def thread_alive(self) -> bool:
        thread = getattr(self, "_thread", None)
        return thread is not None and thread.is_alive()


class Scheduler:
    def __init__(self, runtime: Runtime) -> None:
        global _runtime, _scheduler
        _runtime, _scheduler = runtime, self
        self.runtime = runtime
        self.monitor = runtime.monitor
        self.lock = SchedulerLock(runtime.store)
        self.scheduler: _ResilientScheduler | None = None
        self.started = False

    def start(self) -> bool:
        if not self.lock.acquire():
            log.warning("another tierwise scheduler holds the lock; this process will not schedule jobs")
            return False
        jobstore = _TolerantJobStore(
            self.monitor, engine=self.runtime.store.engine, tablename="scheduler_job"
        )
        self.monitor.register(LOOP, interval_s=None)
        self.scheduler = _ResilientScheduler(
            self.monitor,
            jobstore,
            self.runtime.retry.loop_retry_s,
            executors={"default": ThreadPoolExecutor(max_workers=8)},
            job_defaults={"coalesce": True, "max_instances": 1},
            jobstore_retry_interval=self.runtime.retry.loop_retry_s,
            timezone=UTC,
        )
        self.scheduler.start(paused=True)
        self.sync_targets()
        s = self.runtime.settings
        self._add(rollup_job, "rollup", minutes=10, misfire_grace_time=600)
        # every minute; a run missed while the service was down is due at once, and sent once
        self._add(
            reports_job,
            "reports",
            minutes=1,
            misfire_grace_time=60,
            next_run_time=datetime.now(UTC),
            stale_after_s=REPORTS_STALE_S,
        )
        # at start too: imported files or a restart must not wait an hour for advice (the demo is
        # advised synchronously before the scheduler starts)
        self._add(evaluate_job, "evaluate", minutes=s.evaluate_interval_minutes, misfire_grace_time=3600,
                  next_run_time=None if s.demo else datetime.now(UTC))  # fmt: skip
        rt = self.runtime
        self._add(after_import_job, AFTER_IMPORT, seconds=rt.import_check_s,
                  misfire_grace_time=max(int(rt.import_check_s), 1), stale_after_s=AFTER_IMPORT_STALE_S)  # fmt: skip
        if _workers_evaluate(rt):
            self._add(pool_takeover_job, POOL_TAKEOVER, seconds=POOL_TAKEOVER_CHECK_S,
                      misfire_grace_time=POOL_TAKEOVER_CHECK_S, stale_after_s=POOL_TAKEOVER_STALE_S)  # fmt: skip
        elif self.scheduler.get_job(POOL_TAKEOVER) is not None:  # kept by the job store from workers mode
            self.scheduler.remove_job(POOL_TAKEOVER)
        self._add(verify_job, "verify", hours=1, misfire_grace_time=3600)
        self._add(retention_job, "retention", hours=6, misfire_grace_time=3600)
        self._add(sync_job, "sync", minutes=SYNC_MINUTES, misfire_grace_time=SYNC_MINUTES * 60)
        log.info(
            "scheduler started (retention: samples %d days, roll-ups %d days)",
            s.sample_retention_days,
            s.rollup_retention_days,
        )
        self.scheduler.resume()
        self.started = True
        metrics.watch_scheduler(self.status)
        return True

    def _add(
        self,
        func: Callable[[], None],
        job_id: str,
        *,
        misfire_grace_time: int,
        next_run_time: datetime | None = None,
        stale_after_s: float | None = None,
        **interval: float,
    ) -> None:
        assert self.scheduler is not None
        trigger = IntervalTrigger(**interval)
        self.monitor.register(
            job_id, interval_s=trigger.interval.total_seconds(), stale_after_s=stale_after_s
        )
        extra: dict[str, Any] = {} if next_run_time is None else {"next_run_time": next_run_time}
        self.scheduler.add_job(
            func, trigger, id=job_id, replace_existing=True, misfire_grace_time=misfire_grace_time, **extra
        )

    def sync_targets(self) -> list[str]:
        """One poll job per enabled target; jobs of removed or disabled targets are dropped. Called
        after a change in the web UI and every SYNC_MINUTES (targets added with the CLI, or a sync
        that met a locked store): a store error is recorded and left to the next sync.

        With TIERWISE_POLLING=workers the collector workers poll (app/workers.py): no poll jobs."""
        try:
            return self._sync_targets()
        except Exception as exc:
            if not retryable(exc):
                raise
            self.monitor.failed("sync", exc)
            log.warning("could not sync the poll jobs with the targets (next try in %d min): %s",
                        SYNC_MINUTES, describe(exc))  # fmt: skip
            return []

    def _sync_targets(self) -> list[str]:
        assert self.scheduler is not None
        s = self.runtime.settings
        with self.runtime.store.session() as session:
            targets = (
                []
                if s.polling == "workers"
                else [(t.id, t.name, t.poll_interval_s) for t in pollable(session)]
            )
        wanted = {f"poll:{tid}" for tid, _, _ in targets}
        existing = {}
        for job in self.scheduler.get_jobs():
            if job.id.startswith("poll:") and job.id not in wanted:
                job.remove()
            existing[job.id] = job
        for known in self.monitor.snapshot():
            if known.kind == "poll" and known.job_id not in wanted:
                self.monitor.forget(known.job_id)
        for tid, name, interval in targets:
            job_id = f"poll:{tid}"
            self.monitor.register(job_id, interval_s=interval, target=name)
            job = existing.get(job_id)
            if (
                job is not None
                and job.name == f"poll {name}"
                and job.trigger.interval.total_seconds() == interval
            ):
                continue  # unchanged: keep its place in the schedule
            self.scheduler.add_job(
                poll_job,
                IntervalTrigger(seconds=interval, jitter=min(s.poll_jitter_s, interval // 4)),
                args=[tid],
                id=job_id,
                name=f"poll {name}",
                replace_existing=True,
                misfire_grace_time=interval,
                next_run_time=datetime.now(UTC),
            )
        self.monitor.succeeded("sync")
        return sorted(wanted)

    def status(self, now: datetime | None = None) -> SchedulerStatus:
        """running, degraded (some job late) or stopped (the thread has ended): scheduler_status."""
        alive = self.started and self.scheduler is not None and self.scheduler.thread_alive
        return scheduler_status(self.monitor.snapshot(), alive=alive, now=now or self.monitor.clock())

    def shutdown(self) -> None:
        """Stop the jobs, waiting for the running ones; a report being sent does not wait out its
        SMTP retries (MailStop): it stays queued as a pending delivery, sent at the next start."""
        self.started = False
        self.runtime.mail_stop.set()
        if self.scheduler is not None:
            if self.scheduler.running:  # else it was stopped already (its thread has ended)
                self.scheduler.shutdown(wait=True)
            self.scheduler = None
        self.lock.release()
