"""/api/health: liveness, the scheduler's state and when data last arrived (no login needed)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from sqlalchemy import func, select

from app.http.auth import api_user
from app.http.state import AppState, app_state
from app.store.models import IngestWatermark, Target
from app.timefmt import iso

router = APIRouter(prefix="/api")


@router.get("/health")
def health(request: Request, state: AppState = Depends(app_state)) -> JSONResponse:
    """Liveness, the scheduler's state, how many targets and when data last arrived (no login:
    nothing sensitive). The scheduler is running (thread alive, every job succeeded within 3 of its
    intervals), degraded (some job late: named in `stale`; or some job failed its last 3 runs:
    named in `failed_repeatedly`; `failing` names jobs whose last try failed) or stopped (its thread ended: answered with 503, restart the service); off when this
    process schedules nothing. The late or failing jobs' details (target names, last errors)
    only for a logged-in caller or an API token."""
    # cheap state only: a health check runs every 30 s, and counting samples or intervals reads
    # the two biggest tables each time; one row per target says when data last arrived
    with state.store.session() as s:
        changed = s.scalar(select(func.max(IngestWatermark.changed_at)))
        counts = {
            "targets": s.scalar(select(func.count()).select_from(Target)),
            "data_changed_at": iso(changed),
        }
    body: dict[str, object] = {
        "status": "ok",
        "store": state.store.engine.dialect.name,
        "scheduler": "off",
    }
    if state.scheduler is not None:
        sched = state.scheduler.status()
        body["scheduler"] = sched.state
        body["status"] = "ok" if sched.state == "running" else "degraded"
        body["stale"], body["failing"] = sched.stale, sched.failing
        body["failed_repeatedly"] = sched.failed_repeatedly
        if _signed_in(request):
            named = {*sched.stale, *sched.failing, *sched.failed_repeatedly}
            body["jobs"] = [j.as_dict() for j in sched.jobs if j.job_id in named]
    body.update({"demo": state.settings.demo, **counts})
    return JSONResponse(body, status_code=503 if body["scheduler"] == "stopped" else 200)


def _signed_in(request: Request) -> bool:
    """A session or a valid API token (as api_user accepts), without answering 401."""
    try:
        api_user(request)
    except HTTPException:
        return False
    return True
