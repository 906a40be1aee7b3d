"""Prometheus metrics: poll outcomes and durations (process counters) plus store-derived gauges."""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from sqlalchemy import func, select, tuple_

from app.store.db import Store
from app.store.models import Recommendation
from app.store.suppressions import active_for
from app.store.targets import statuses

POLLS = Counter("tierwise_polls_total", "Target polls by outcome", ["engine", "outcome"])
POLL_SECONDS = Histogram(
    "tierwise_poll_duration_seconds", "Time to read and store one target's counters", ["engine"],
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)  # fmt: skip


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
                    Recommendation.status == "open",
                    tuple_(Recommendation.target_id, Recommendation.key).in_(list(suppressed)),
                )
            )
            if n_suppressed:
                counts["open"] = counts.get("open", 0) - n_suppressed
                counts["suppressed"] = n_suppressed
        for status, n in counts.items():
            recs.labels(status=status).set(n)
        for t in statuses(s):
            targets.labels(state=t.state(now)).inc()
            if t.consecutive_failures:
                failing.labels(target=t.name).set(t.consecutive_failures)
    return generate_latest(REGISTRY) + generate_latest(registry)
