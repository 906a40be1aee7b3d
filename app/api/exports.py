"""/api/recommendations.csv and .xlsx: what the Recommendations page's filter shows, every page of it."""

from __future__ import annotations

import csv
import io
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from openpyxl import Workbook

from app.api.routes import recommendation_filter, recommendation_json
from app.http.auth import CurrentUser, api_user
from app.http.state import AppState, app_state
from app.store.recommendations import RecommendationFilter, list_recommendations

router = APIRouter(prefix="/api")

EXPORT_COLUMNS = (
    "id", "status", "engine", "server", "database", "kind", "name", "from_tier", "to_tier", "profile", "rule",
    "size_bytes", "io_ms_per_s_now", "io_ms_per_s_after", "reviewed_by", "reviewed_at", "review_comment",
)  # fmt: skip


def _export_rows(state: AppState, f: RecommendationFilter) -> list[dict[str, Any]]:
    with state.store.session() as s:
        rows, _ = list_recommendations(s, f, limit=100_000)
        return [recommendation_json(r) for r in rows]


def _cell(v: Any) -> Any:
    # a leading = + - @ would make a spreadsheet evaluate a name taken from a monitored server
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v


@router.get("/recommendations.csv")
def export_csv(
    f: RecommendationFilter = Depends(recommendation_filter),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> Response:
    """Every recommendation the Recommendations page's filter shows (all pages), in its order."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(EXPORT_COLUMNS)
    for r in _export_rows(state, f):
        writer.writerow([_cell(r[c]) for c in EXPORT_COLUMNS])
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="recommendations.csv"'})  # fmt: skip


@router.get("/recommendations.xlsx")
def export_xlsx(
    f: RecommendationFilter = Depends(recommendation_filter),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> Response:
    """As recommendations.csv, as a spreadsheet."""
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "recommendations"
    ws.append(list(EXPORT_COLUMNS))
    for r in _export_rows(state, f):
        ws.append([_cell(r[c]) for c in EXPORT_COLUMNS])
    buf = io.BytesIO()
    wb.save(buf)
    return Response(buf.getvalue(),
                    media_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                    headers={"Content-Disposition": 'attachment; filename="recommendations.xlsx"'})  # fmt: skip
