"""/api/ilm: the latest partition lifecycle plan, as the ILM page shows it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from app.http.auth import CurrentUser, api_user
from app.http.state import AppState, app_state
from app.store.ilm_plans import latest_plan
from app.timefmt import iso

router = APIRouter(prefix="/api")


@router.get("/ilm")
def ilm_api(user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)) -> dict[str, Any]:
    with state.store.session() as s:
        rec = latest_plan(s)
        if rec is None:
            return {"created_at": None, "plan": None, "changes": []}
        return {"created_at": iso(rec.created_at), "plan": rec.plan, "changes": rec.changes}
