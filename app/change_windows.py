"""Approved recommendations -> the change-window schedule (advisors/change_windows.py), as the
Scripts page, `GET /api/change-windows` and the report email show it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.change_windows import Move, Placed, PlannedWindow, Schedule, duration_text, schedule
from app.scripts import offline_together
from app.store.models import Recommendation, Target
from app.store.recommendations import Status, saving_ms_per_s
from app.timefmt import iso, iso_local
from policies.model import Policy


def move_of(rec: Recommendation, *, together: str = "") -> Move:
    return Move(
        id=rec.id,
        name=rec.name,
        engine=rec.engine,
        kind=rec.kind,
        size_bytes=rec.size_bytes,
        from_tier=rec.from_tier,
        to_tier=rec.to_tier,
        approved_at=rec.reviewed_at or rec.updated_at,
        priority=saving_ms_per_s(rec),
        label=f"{rec.server} · {rec.database} · {rec.kind} {rec.name}",
        together=together,
    )


def approved(
    session: Session, *, target: str | None = None, database: str | None = None
) -> list[Recommendation]:
    q = select(Recommendation).where(
        Recommendation.status == Status.APPROVED, Recommendation.script_error.is_(None)
    )
    if target:
        q = q.join(Target, Target.id == Recommendation.target_id).where(Target.name == target)
    if database:
        q = q.where(Recommendation.database == database)
    return list(session.scalars(q.order_by(Recommendation.id)))


def plan(recs: Iterable[Recommendation], policy: Policy, *, now: datetime) -> Schedule:
    """Approved moves into the policy's coming change windows. A move whose scripts were refused
    (no safe script could be written: `script_error`) is never planned: there is nothing to run."""
    runnable = [r for r in recs if r.status == Status.APPROVED and not r.script_error]
    moves = [move_of(r, together=offline_together(r, policy)) for r in runnable]
    return schedule(moves, policy.change_windows, now=now)


def _placed_json(p: Placed) -> dict[str, Any]:
    return {
        "recommendation": p.move.id,
        "name": p.move.name,
        "label": p.move.label,
        "action": p.estimate.action,
        "gb": round(p.estimate.gb, 1),
        "minutes": round(p.estimate.total_s / 60, 1),
        "duration": duration_text(p.estimate.total_s),
        "restart_needed": p.estimate.restart,
        "starts_at": iso(p.starts_at),
        "reason": p.reason,
    }


def _window_json(w: PlannedWindow) -> dict[str, Any]:
    return {
        "name": w.name,
        "label": w.label,
        "start": iso_local(w.start),
        "end": iso_local(w.end),
        "opens_at": iso(w.opens_at),
        "length_minutes": round(w.length_s / 60, 1),
        "used_minutes": round(w.used_s / 60, 1),
        "cap_gb": w.cap_gb,
        "used_gb": round(w.used_gb, 1),
        "moves": [_placed_json(p) for p in w.moves],
    }


def schedule_json(s: Schedule) -> dict[str, Any]:
    return {
        "now": iso(s.now),
        "next_window": _window_json(s.windows[0]) if s.windows else None,
        "later_windows": [_window_json(w) for w in s.windows[1:] if w.moves],
        "cannot_fit": [_placed_json(p) for p in s.unfit],
        "waiting": [_placed_json(p) for p in s.waiting],
    }
