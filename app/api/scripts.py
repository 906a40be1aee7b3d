"""Scripts as JSON: an approved move's forward and rollback scripts, and the coming change windows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends
from sqlalchemy import select

from app.change_windows import plan, schedule_json
from app.errors import Conflict, NotFound
from app.http.auth import CurrentUser, api_user
from app.http.state import AppState, app_state
from app.scripts import ensure_scripts
from app.store.models import Recommendation
from app.store.policies import current_policy
from app.store.recommendations import Status

router = APIRouter(prefix="/api")


@router.get("/recommendations/{rec_id}/scripts")
def scripts_api(
    rec_id: int, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    with state.store.session() as s:
        rec = s.get(Recommendation, rec_id)
        if rec is None:
            raise NotFound(f"no recommendation #{rec_id}")
        if rec.status not in (Status.APPROVED, Status.EXECUTED):
            raise Conflict(f"recommendation #{rec_id} is {rec.status}: scripts are for approved moves")
        rows = ensure_scripts(s, rec, current_policy(s, state.settings.policy_file), now=datetime.now(UTC))
        return {"recommendation": rec_id, "error": rec.script_error,
                "scripts": [{"id": r.id, "direction": r.direction, "dialect": r.dialect, "filename": r.filename,
                             "sha256": r.sha256, "manual_step": r.manual_step, "restart_required": r.restart_required,
                             "download": f"/scripts/{r.id}/download"} for r in rows]}  # fmt: skip


@router.get("/change-windows")
def change_windows_api(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    """Approved moves in the coming change windows: the next window's moves in the order they run,
    the later windows that have moves, and the moves that cannot fit (with the reason)."""
    now = datetime.now(UTC)
    with state.store.session() as s:
        policy = current_policy(s, state.settings.policy_file)
        recs = list(s.scalars(select(Recommendation).where(Recommendation.status == Status.APPROVED)))
        return schedule_json(plan(recs, policy, now=now))
