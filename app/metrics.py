"""Prometheus metrics: poll outcomes and durations, scheduled jobs' outcomes and the scheduler's
state (process metrics) plus store-derived gauges."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from sqlalchemy import func, select, tuple_

from app.store.db import Store
from app.store.models import Recommendation
from app.store.recommendations import SUPPRESSED, Status
from app.store.suppressions import active_for
from app.store.targets import statuses

POLLS = Counter("tierwise_polls_total", "Target polls by outcome", ["engine", "outcome"])
POLL_SECONDS = Histogram(
    "tierwise_poll_duration_seconds", "Time to read and store one target's counters", ["engine"],
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)  # fmt: skip


JOB_LAST_SUCCESS = Gauge(
    "tierwise_job_last_success_timestamp_seconds",
    "When a scheduled job last succeeded (Unix time); target is set for poll jobs",
    ["job", "target"],
)
JOB_FAILURES = Counter(
    "tierwise_job_failures_total",
    "Failed tries of a scheduled job since the process started (each retry counts)",
    ["job", "target"],
)
JOB_CONSECUTIVE_FAILURES = Gauge(
    "tierwise_job_consecutive_failures", "Failed tries of a scheduled job since its last success",
    ["job", "target"],
)  # fmt: skip
SCHEDULER_STATES = ("running", "degraded", "stopped")
SCHEDULER_STATE = Gauge(
    "tierwise_scheduler_state",
    "1 for the scheduler's current state: running, degraded (a job is late) or stopped (its thread "
    "ended); all 0 when this process runs no scheduler",
    ["state"],
)
SCHEDULER_STALE_JOBS = Gauge(
    "tierwise_scheduler_stale_jobs", "Scheduled jobs that have not succeeded for 3 of their intervals"
)
_consecutive: dict[tuple[str, str], int] = {}


def record_job(job: str, target: str, *, ok: bool, at: datetime | None = None) -> None:
    """One try of a scheduled job (called by app.job_health.JobMonitor)."""
    key = (job, target)
    if ok:
        JOB_LAST_SUCCESS.labels(job=job, target=target).set((at or datetime.now(UTC)).timestamp())
        _consecutive[key] = 0
    else:
        JOB_FAILURES.labels(job=job, target=target).inc()
        _consecutive[key] = _consecutive.get(key, 0) + 1
    JOB_CONSECUTIVE_FAILURES.labels(job=job, target=target).set(_consecutive[key])


def forget_job(job: str, target: str) -> None:
    """A removed target's poll job: drop its series."""
    _consecutive.pop((job, target), None)
    for metric in (JOB_LAST_SUCCESS, JOB_FAILURES, JOB_CONSECUTIVE_FAILURES):
        with contextlib.suppress(KeyError):
            metric.remove(job, target)


def watch_scheduler(status: Callable[[], Any] | None) -> None:
    """Read the scheduler's state at scrape time (a dead thread sends no event); None: no scheduler."""

    def is_state(state: str) -> Callable[[], float]:
        return lambda: 1.0 if status is not None and status().state == state else 0.0

    for state in SCHEDULER_STATES:
        SCHEDULER_STATE.labels(state=state).set_function(is_state(state))
    SCHEDULER_STALE_JOBS.set_function(lambda: float(len(status().stale)) if status is not None else 0.0)


def record_poll(engine: str, ok: bool, seconds: float) -> None:
    POLLS.labels(engine=engine, outcome="ok" if ok else "failed").inc()
    POLL_SECONDS.labels(engine=engine).observe(seconds)


def render(store: Store) -> bytes:
    """The process counters, then gauges read from the store at scrape time."""
    registry = CollectorRegistry()
    recs = Gauge("tierwise_recommendations", "Recommendations by status", ["status"], registry=registry)
    targets = Gauge("tierwise_targets", "Targets by poll state", ["state"], registry=registry)
    failing = Gauge(
        "tierwise_target_consecutive_failures", "Failed polls in a row", ["target"], registry=registry
    )
    now = datetime.now(UTC)
    with store.session() as s:
        counts: dict[str, int] = {
            status: n
            for status, n in s.execute(
                select(Recommendation.status, func.count()).group_by(Recommendation.status)
            )
        }
        # a suppressed open recommendation is not waiting for anyone: count it on its own
        suppressed = active_for(s, now)
        if suppressed:
            n_suppressed = s.scalar(
                select(func.count()).where(
                    Recommendation.status == Status.OPEN,
                    tuple_(Recommendation.target_id, Recommendation.key).in_(list(suppressed)),
                )
            )
            if n_suppressed:
                counts[Status.OPEN] = counts.get(Status.OPEN, 0) - n_suppressed
                counts[SUPPRESSED] = n_suppressed
        for status, n in counts.items():
            recs.labels(status=status).set(n)
        for t in statuses(s):
            targets.labels(state=t.state(now)).inc()
            if t.consecutive_failures:
                failing.labels(target=t.name).set(t.consecutive_failures)
    return generate_latest(REGISTRY) + generate_latest(registry)
