"""Scripts page: approved moves with their forward and rollback scripts (preview, download),
what fits in the coming change windows, and "mark as executed" (who, when), audited."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import SqlLexer, TransactSqlLexer
from sqlalchemy import select

from app.change_windows import plan, schedule_json
from app.review import RecommendationNotFound, ReviewError, executable, mark_executed, refusal
from app.scripts import ensure_scripts
from app.store.models import Recommendation, ScriptRecord
from app.store.policies import current_policy
from app.store.recommendations import Status
from app.web.auth import CurrentUser, api_user, form_user, page_user
from app.web.pages import _back
from app.web.state import AppState, app_state
from app.web.templating import render

router = APIRouter()
_formatter = HtmlFormatter(cssclass="highlight", nowrap=False)  # colours in /static/highlight.css (CSP)


def _highlighted(row: ScriptRecord) -> Markup:
    lexer = TransactSqlLexer() if row.dialect == "tsql" else SqlLexer()
    return Markup(highlight(row.text, lexer, _formatter))  # pygments escapes the script text


@router.get("/scripts", response_class=HTMLResponse)
def scripts_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    now = datetime.now(UTC)
    with state.store.session() as s:
        policy = current_policy(s, state.settings.policy_file)
        recs = list(s.scalars(select(Recommendation)
                              .where(Recommendation.status.in_((Status.APPROVED, Status.EXECUTED)))
                              .order_by(Recommendation.status, Recommendation.updated_at.desc())))  # fmt: skip
        rows: list[dict[str, Any]] = []
        for rec in recs:
            scripts = ensure_scripts(s, rec, policy, now=now) if rec.status == Status.APPROVED else list(
                s.scalars(select(ScriptRecord).where(ScriptRecord.recommendation_id == rec.id)))  # fmt: skip
            rows.append(
                {"rec": rec, "scripts": scripts, "refused": refusal(rec), "executable": executable(rec)}
            )
        windows = plan([r for r in recs if r.status == Status.APPROVED], policy, now=now)
        refused = [r for r in rows if r["refused"]]
    return render(request, "scripts.html", user, rows=rows, can_execute=user.role in ("approver", "admin"),
                  message=request.query_params.get("message"), today=now.strftime("%Y-%m-%dT%H:%M"),
                  windows=windows, refused=refused)  # fmt: skip


@router.get("/scripts/{script_id}", response_class=HTMLResponse)
def script_preview(script_id: int, request: Request, user: CurrentUser = Depends(page_user),
                   state: AppState = Depends(app_state)) -> HTMLResponse:  # fmt: skip
    with state.store.session() as s:
        row = s.get(ScriptRecord, script_id)
        if row is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no script #{script_id}")
        rec = s.get(Recommendation, row.recommendation_id)
    return render(request, "script.html", user, row=row, rec=rec, code=_highlighted(row))


@router.get("/scripts/{script_id}/download")
def script_download(
    script_id: int, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> Response:
    with state.store.session() as s:
        row = s.get(ScriptRecord, script_id)
        if row is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no script #{script_id}")
        return Response(row.text.encode("utf-8"), media_type="application/sql; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{row.filename}"',
                                 "X-Content-SHA256": row.sha256})  # fmt: skip


@router.post("/recommendations/{rec_id}/executed")
def executed_form(
    rec_id: int,
    executed_at: str = Form(""),
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    now = datetime.now(UTC)
    try:
        when = datetime.fromisoformat(executed_at) if executed_at else now
    except ValueError:
        return _back("/scripts", f"not a date and time: {executed_at!r}")
    # an offset given is kept (converted to UTC); a time without one is UTC, as the form says
    when = (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)
    if when > now:
        return _back("/scripts", "the execution time is in the future")
    try:
        with state.store.session() as s:
            mark_executed(s, rec_id, username=user.username, when=when, now=now,
                          policy=current_policy(s, state.settings.policy_file))  # fmt: skip
    except RecommendationNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    except ReviewError as exc:  # not approved, or its scripts were refused: a 409 page that says why
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return _back("/scripts", f"#{rec_id} marked executed by {user.username}")


@router.get("/api/recommendations/{rec_id}/scripts")
def scripts_api(
    rec_id: int, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    with state.store.session() as s:
        rec = s.get(Recommendation, rec_id)
        if rec is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no recommendation #{rec_id}")
        if rec.status not in (Status.APPROVED, Status.EXECUTED):
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"recommendation #{rec_id} is {rec.status}: scripts are for approved moves",
            )
        rows = ensure_scripts(s, rec, current_policy(s, state.settings.policy_file), now=datetime.now(UTC))
        return {"recommendation": rec_id, "error": rec.script_error,
                "scripts": [{"id": r.id, "direction": r.direction, "dialect": r.dialect, "filename": r.filename,
                             "sha256": r.sha256, "manual_step": r.manual_step, "restart_required": r.restart_required,
                             "download": f"/scripts/{r.id}/download"} for r in rows]}  # fmt: skip


@router.get("/api/change-windows")
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
