"""Scripts page: approved moves with their forward and rollback scripts (preview, download),
what fits in the coming change windows, and "mark as executed" (who, when), audited. The same as
JSON: app/api/scripts.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import SqlLexer, TransactSqlLexer
from sqlalchemy import select

from app.change_windows import plan
from app.errors import NotFound
from app.http.auth import CurrentUser, api_user, form_user, page_user
from app.http.flash import take as take_flash
from app.http.state import AppState, app_state
from app.review import executable, mark_executed, refusal
from app.scripts import ensure_scripts
from app.store.models import Recommendation, ScriptRecord
from app.store.policies import current_policy
from app.store.recommendations import Status
from app.web.pages import _back
from app.web.templating import render
from migrations.plan import run_order
from migrations.tsql_frame import sqlcmd_command

router = APIRouter()
_formatter = HtmlFormatter(cssclass="highlight", nowrap=False)  # colours in /static/highlight.css (CSP)


def first_steps(rec: Recommendation, scripts: list[ScriptRecord]) -> dict[str, str] | None:
    """The check-only run as the first step, with the exact command (issue #30): T-SQL runs the
    forward script itself with TW_CHECK_ONLY=1, then 0 in the window; DB2 runs its stored
    `.check.db2` (the CLP command its header gives), then the forward script."""
    forward = next((sc for sc in scripts if sc.direction == "forward"), None)
    check = next((sc for sc in scripts if sc.direction == "check"), None)
    if forward is None:
        return None
    if forward.dialect == "tsql":
        return {
            "check": sqlcmd_command(rec.server, forward.filename, check_only=True),
            "run": sqlcmd_command(rec.server, forward.filename, check_only=False),
        }
    if check is not None:
        return {"check": f"db2 -td@ -vsf {check.filename}", "run": f"db2 -td@ -vsf {forward.filename}"}
    return None


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
            scripts.sort(key=lambda sc: run_order(sc.direction))
            rows.append(
                {"rec": rec, "scripts": scripts, "refused": refusal(rec), "executable": executable(rec),
                 "steps": first_steps(rec, scripts)}
            )  # fmt: skip
        windows = plan([r for r in recs if r.status == Status.APPROVED], policy, now=now)
        refused = [r for r in rows if r["refused"]]
    return render(request, "scripts.html", user, rows=rows, can_execute=user.role in ("approver", "admin"),
                  message=take_flash(request), today=now.strftime("%Y-%m-%dT%H:%M"),
                  windows=windows, refused=refused)  # fmt: skip


@router.get("/scripts/{script_id}", response_class=HTMLResponse)
def script_preview(script_id: int, request: Request, user: CurrentUser = Depends(page_user),
                   state: AppState = Depends(app_state)) -> HTMLResponse:  # fmt: skip
    with state.store.session() as s:
        row = s.get(ScriptRecord, script_id)
        if row is None:
            raise NotFound(f"no script #{script_id}")
        rec = s.get(Recommendation, row.recommendation_id)
        siblings = list(
            s.scalars(select(ScriptRecord).where(ScriptRecord.recommendation_id == row.recommendation_id))
        )
        steps = (
            first_steps(rec, siblings) if rec is not None and row.direction in ("forward", "check") else None
        )
    return render(request, "script.html", user, row=row, rec=rec, code=_highlighted(row), steps=steps)


@router.get("/scripts/{script_id}/download")
def script_download(
    script_id: int, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> Response:
    with state.store.session() as s:
        row = s.get(ScriptRecord, script_id)
        if row is None:
            raise NotFound(f"no script #{script_id}")
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
    # not found: a 404 page; not approved, or its scripts were refused: a 409 page that says why
    with state.store.session() as s:
        mark_executed(s, rec_id, username=user.username, when=when, now=now,
                      policy=current_policy(s, state.settings.policy_file))  # fmt: skip
    return _back("/scripts", f"#{rec_id} marked executed by {user.username}")
