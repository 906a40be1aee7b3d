"""The current recommendation of each placement unit of a target, as the object pages show it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import Recommendation
from app.store.recommendations import CURRENT


@dataclass(frozen=True)
class RecSummary:
    id: int
    key: str
    kind: str
    name: str
    from_tier: str | None
    to_tier: str
    profile: str
    rule: str
    status: str
    io_ms_per_s_now: float | None
    io_ms_per_s_after: float | None
    reasons: tuple[str, ...] = ()
    metrics: dict[str, Any] = field(default_factory=dict)


REC_COLUMNS = (
    Recommendation.id,
    Recommendation.key,
    Recommendation.kind,
    Recommendation.name,
    Recommendation.from_tier,
    Recommendation.to_tier,
    Recommendation.profile,
    Recommendation.rule,
    Recommendation.status,
    Recommendation.io_ms_per_s_now,
    Recommendation.io_ms_per_s_after,
)


def current_recs(
    session: Session, target_id: int, keys: Sequence[str] | None = None, *, full: bool = False
) -> dict[str, RecSummary]:
    """The current recommendation per placement-unit key of a target (the newest wins); with
    `full`, its reasons and measured numbers too."""
    cols = (*REC_COLUMNS, Recommendation.evidence) if full else REC_COLUMNS
    q = select(*cols).where(Recommendation.target_id == target_id, Recommendation.status.in_(CURRENT))
    if keys is not None:
        q = q.where(Recommendation.key.in_(list(keys)))
    newest: dict[str, Any] = {}
    for r in session.execute(q.order_by(Recommendation.updated_at, Recommendation.id)):
        newest[r.key] = r
    out: dict[str, RecSummary] = {}
    for key, r in newest.items():
        ev = (r.evidence or {}) if full else {}
        metrics = {k: v for k, v in ev.get("metrics", {}).items() if k != "io_per_s_by_hour_of_day"}
        out[key] = RecSummary(
            r.id, r.key, r.kind, r.name, r.from_tier, r.to_tier, r.profile, r.rule, r.status,
            r.io_ms_per_s_now, r.io_ms_per_s_after, tuple(ev.get("reasons", [])), metrics,
        )  # fmt: skip
    return out
