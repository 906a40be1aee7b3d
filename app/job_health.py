"""What each scheduled job did last: start, success, error; from those, the scheduler's state.

Kept apart from the jobs themselves (app/jobs.py) because the web process reads it on every
/api/health and /metrics request, from other threads than the ones that run the jobs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy.exc import DBAPIError

from app import metrics
from app.secrets import redact
from app.timefmt import iso

STALE_FACTOR = 3  # a job is late when it has not succeeded for this many of its intervals
# A job whose last this-many runs each ended in failure makes the scheduler degraded at once,
# however long its allowance: a job that fails every minute is not "late" for a quarter hour.
FAILED_RUNS_DEGRADED = 3


def describe(exc: BaseException) -> str:
    """A short, redacted line for logs and /api/health: a driver error without the SQL statement
    and its parameters (which can be long, and hold stored values)."""
    if isinstance(exc, DBAPIError) and exc.orig is not None:
        text_ = f"{type(exc).__name__}: {exc.orig}"
    else:
        text_ = f"{type(exc).__name__}: {exc}"
    return redact(text_)[:500]


@dataclass
class JobHealth:
    job_id: str
    kind: str  # poll, rollup, reports, evaluate, after-import, verify, retention, sync, scheduler
    target: str  # the target's name for a poll job, else ""
    stale_after_s: float | None  # None: never late by itself (the loop)
    registered_at: datetime
    last_start: datetime | None = None
    last_success: datetime | None = None
    last_error: str | None = None  # redacted
    last_error_at: datetime | None = None
    consecutive_failures: int = 0  # tries (a run retries store errors) since the last success
    failures: int = 0
    successes: int = 0  # runs that succeeded since the process started
    failed_runs: int = 0  # runs in a row that ended in failure (each counted once, retries or not)
    runs: int = 0  # runs started (JobMonitor.started)
    failed_run: int = -1  # the run `failed_runs` last counted

    def failing_repeatedly(self) -> bool:
        return self.failed_runs >= FAILED_RUNS_DEGRADED

    def stale(self, now: datetime) -> bool:
        if self.stale_after_s is None:
            return False
        since = self.last_success or self.registered_at
        return (now - since).total_seconds() > self.stale_after_s

    def as_dict(self) -> dict[str, object]:
        return {
            "job": self.job_id,
            "target": self.target or None,
            "last_start": iso(self.last_start),
            "last_success": iso(self.last_success),
            "last_error": self.last_error,
            "last_error_at": iso(self.last_error_at),
            "consecutive_failures": self.consecutive_failures,
            "failed_runs": self.failed_runs,
        }


SchedulerState = Literal["running", "degraded", "stopped"]


@dataclass(frozen=True)
class SchedulerStatus:
    state: SchedulerState
    stale: list[str]  # jobs that have not succeeded within their allowance
    failing: list[str]  # jobs whose last try failed
    jobs: list[JobHealth] = field(default_factory=list)
    failed_repeatedly: list[str] = field(default_factory=list)  # their last FAILED_RUNS_DEGRADED runs failed


def scheduler_status(jobs: list[JobHealth], *, alive: bool, now: datetime) -> SchedulerStatus:
    """running: the thread is alive, every job succeeded within its allowance (STALE_FACTOR x its
    interval) and none failed its last FAILED_RUNS_DEGRADED runs; degraded: alive, but some job is
    late or keeps failing; stopped: the thread has ended."""
    stale = [j.job_id for j in jobs if j.stale(now)]
    failing = [j.job_id for j in jobs if j.consecutive_failures]
    repeated = [j.job_id for j in jobs if j.failing_repeatedly()]
    state: SchedulerState = "stopped" if not alive else "degraded" if stale or repeated else "running"
    return SchedulerStatus(state, stale, failing, jobs, repeated)


class JobMonitor:
    """Per-job start, success and error, shared by the job threads and the request threads."""

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        self.clock = clock or (lambda: datetime.now(UTC))
        self._jobs: dict[str, JobHealth] = {}
        self._lock = threading.Lock()

    def register(
        self, job_id: str, *, interval_s: float | None, stale_after_s: float | None = None, target: str = ""
    ) -> None:
        """Expect `job_id` to succeed at least every STALE_FACTOR x interval (or `stale_after_s`)."""
        allowance = (
            stale_after_s
            if stale_after_s is not None
            else (None if interval_s is None else STALE_FACTOR * interval_s)
        )
        kind = job_id.split(":", 1)[0]
        with self._lock:
            old = self._jobs.get(job_id)
            if old is not None:
                self._jobs[job_id] = replace(old, stale_after_s=allowance, target=target)
            else:
                self._jobs[job_id] = JobHealth(job_id, kind, target, allowance, self.clock())

    def forget(self, job_id: str) -> None:
        with self._lock:
            gone = self._jobs.pop(job_id, None)
        if gone is not None:
            metrics.forget_job(gone.kind, gone.target)

    def _get(self, job_id: str) -> JobHealth:
        job = self._jobs.get(job_id)
        if job is None:  # a job run before it was registered (a test, a leftover in the job store)
            kind = job_id.split(":", 1)[0]
            job = self._jobs[job_id] = JobHealth(job_id, kind, "", None, self.clock())
        return job

    def started(self, job_id: str) -> None:
        with self._lock:
            job = self._get(job_id)
            job.last_start = self.clock()
            job.runs += 1

    def succeeded(self, job_id: str) -> None:
        with self._lock:
            job = self._get(job_id)
            job.last_success = self.clock()
            job.consecutive_failures = 0
            job.failed_runs = 0
            job.successes += 1
        metrics.record_job(job.kind, job.target, ok=True, at=job.last_success)

    def failed(self, job_id: str, exc: BaseException) -> None:
        with self._lock:
            job = self._get(job_id)
            job.last_error = describe(exc)
            job.last_error_at = self.clock()
            job.consecutive_failures += 1
            job.failures += 1
            # a run's retries count once; a job never `started` (the loop, a pool) counts each failure
            if job.runs == 0 or job.failed_run != job.runs:
                job.failed_runs += 1
                job.failed_run = job.runs
        metrics.record_job(job.kind, job.target, ok=False)

    def get(self, job_id: str) -> JobHealth | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return None if job is None else replace(job)

    def snapshot(self) -> list[JobHealth]:
        with self._lock:
            return [replace(j) for j in sorted(self._jobs.values(), key=lambda j: j.job_id)]
