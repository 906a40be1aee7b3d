"""ILM plans: the latest stored plan as a timeline per table, the capacity forecast, and changes
(the same plan as JSON: app/api/ilm.py)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from app.http.auth import CurrentUser, page_user
from app.http.state import AppState, app_state
from app.store.ilm_plans import latest_plan
from app.web.templating import render

router = APIRouter()


def timeline(table: dict[str, Any], months: list[str]) -> list[dict[str, Any]]:
    """Per partition, its tier in each month of the horizon (for the grid on the page)."""
    rows = []
    for p in table["partitions"]:
        moves = sorted(p["moves"], key=lambda m: m["date"])
        cells = []
        for month in months:
            tier = p["current_tier"]
            for m in moves:
                if m["date"][:7] <= month:
                    tier = m["to_tier"]
            exists = not p["new"] or (p["range_start"] or "")[:7] <= month
            cells.append(tier if exists else None)
        rows.append({"partition": p, "cells": cells})
    return rows


@router.get("/ilm", response_class=HTMLResponse)
def ilm_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    tables: list[dict[str, Any]] = []
    months: list[str] = []
    with state.store.session() as s:
        rec = latest_plan(s)
        if rec is not None:
            months = [m["month"] for m in next(iter(rec.plan["forecast"].values()), [])]
            tables = [{"table": t, "rows": timeline(t, months)} for t in rec.plan["tables"]]
    return render(request, "ilm.html", user, rec=rec, tables=tables, months=months)
