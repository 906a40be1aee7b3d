"""Server-rendered pages: login, fleet, recommendations with review actions, audit log."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy import select

from app.scripts import ensure_scripts
from app.store.models import Recommendation
from app.store.policies import current_policy
from app.store.recommendations import (
    REVIEW_ACTIONS,
    RecommendationFilter,
    ReviewError,
    audit,
    list_recommendations,
    open_counts,
    recent_audit,
    review,
)
from app.store.suppressions import SuppressionError, active_for, describe, lift, suppress
from app.store.targets import statuses
from app.store.users import authenticate
from app.web.auth import (
    CurrentUser,
    check_csrf,
    csrf_token,
    form_user,
    log_in,
    log_out,
    page_user,
)
from app.web.state import AppState, app_state

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
router = APIRouter()
PAGE_SIZE = 50


def _bytes(n: int | None) -> str:
    if n is None:
        return "–"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n = n / 1024  # type: ignore[assignment]
    return str(n)


def _when(t: datetime | None) -> str:
    return "never" if t is None else t.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


templates.env.filters["bytes"] = _bytes
templates.env.filters["when"] = _when


def render(
    request: Request, name: str, user: CurrentUser | None, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    state = app_state(request)
    return templates.TemplateResponse(
        request,
        name,
        {"user": user, "csrf": csrf_token(request), "demo": state.settings.demo, **context},
        status_code=status_code,
    )


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, error: str | None = None) -> HTMLResponse:
    return render(request, "login.html", None, error=error)


@router.post("/login")
def login(
    request: Request,
    username: str = Form(...),
    password: str = Form(...),
    csrf_token_field: str = Form(..., alias="csrf_token"),
    state: AppState = Depends(app_state),
) -> Response:
    check_csrf(request, csrf_token_field)
    client = request.client.host if request.client else "?"
    if state.limiter.blocked(username, client):
        return render(request, "login.html", None, status_code=status.HTTP_429_TOO_MANY_REQUESTS,
                      error="Too many failed logins: wait five minutes.")  # fmt: skip
    now = datetime.now(UTC)
    with state.store.session() as s:
        user = authenticate(s, username, password)
        if user is None:
            state.limiter.failed(username, client)
            return render(request, "login.html", None, error="Wrong user name or password.")
        audit(s, at=now, username=user.username, action="login", subject_type="user", subject_id=user.username,
              summary=f"logged in from {client}")  # fmt: skip
        user_id, name, role = user.id, user.username, user.role
    state.limiter.succeeded(username, client)
    log_in(request, user_id=user_id, username=name, role=role, now=now)  # a fresh session and CSRF token
    return RedirectResponse("/", status_code=status.HTTP_303_SEE_OTHER)


@router.post("/logout")
def logout(request: Request, csrf_token_field: str = Form(..., alias="csrf_token")) -> Response:
    check_csrf(request, csrf_token_field)
    log_out(request)  # ends the session in the store: a copy of the cookie stops working too
    return RedirectResponse("/login", status_code=status.HTTP_303_SEE_OTHER)


@router.get("/", response_class=HTMLResponse)
def fleet(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    now = datetime.now(UTC)
    with state.store.session() as s:
        rows = statuses(s)
        counts = open_counts(s, now=now)
    targets = [{"status": r, "state": r.state(now), "open": counts.get(r.id, 0)} for r in rows]
    return render(request, "fleet.html", user, targets=targets, now=now)


@router.get("/recommendations", response_class=HTMLResponse)
def recommendations(
    request: Request,
    engine: str | None = None,
    server: str | None = None,
    status_filter: str | None = None,
    to_tier: str | None = None,
    target: str | None = None,
    page: int = 1,
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    status_filter = status_filter or request.query_params.get("status") or None
    f = RecommendationFilter(engine or None, server or None, status_filter, to_tier or None, target or None)
    page = max(page, 1)
    with state.store.session() as s:
        rows, total = list_recommendations(s, f, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        active = active_for(s, datetime.now(UTC))
        suppressed = {r.id: (active[(r.target_id, r.key)], describe(active[(r.target_id, r.key)]))
                      for r in rows if (r.target_id, r.key) in active}  # fmt: skip
        events = recent_audit(s, limit=30)
        servers = list(s.scalars(select(Recommendation.server).distinct().order_by(Recommendation.server)))
        from app.verify import page_context  # verify after change: each executed move and the track record

        verification = page_context(s, rows, current_policy(s, state.settings.policy_file).verification)
    query = {
        k: v
        for k, v in {
            "engine": engine,
            "server": server,
            "status": status_filter,
            "to_tier": to_tier,
            "target": target,
        }.items()
        if v
    }
    return render(
        request,
        "recommendations.html",
        user,
        rows=rows,
        total=total,
        page=page,
        pages=max(1, -(-total // PAGE_SIZE)),
        filters=f,
        query=urlencode(query),
        servers=servers,
        events=events,
        actions=list(REVIEW_ACTIONS),
        # executed, superseded and withdrawn recommendations can no longer be reviewed: no controls
        can_review=user.role in ("approver", "admin")
        and f.status not in ("executed", "superseded", "withdrawn"),
        message=request.query_params.get("message"),
        suppressed=suppressed,
        verification=verification,
    )


@router.get("/recommendations/{rec_id}", response_class=HTMLResponse)
def recommendation_detail(
    rec_id: int,
    request: Request,
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    with state.store.session() as s:
        rec = s.get(Recommendation, rec_id)
        if rec is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no recommendation #{rec_id}")
        events = [
            e
            for e in recent_audit(s, limit=500)
            if e.subject_type == "recommendation" and e.subject_id == str(rec_id)
        ]
        from app.verify import add_verifications  # verify after change, once executed

        found: dict[str, Any] = {"id": rec_id}
        add_verifications(s, [found])
    return render(request, "recommendation.html", user, rec=rec, events=events,
                  can_review=user.role in ("approver", "admin"), actions=list(REVIEW_ACTIONS),
                  message=request.query_params.get("message"), verification=found["verification"])  # fmt: skip


@router.post("/recommendations/review")
async def review_form(
    request: Request,
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    form = await request.form()
    action = str(form.get("action") or "")
    comment = str(form.get("comment") or "").strip() or None
    ids = [int(str(v)) for v in form.getlist("ids") if str(v).isascii() and str(v).isdigit()]
    back = str(form.get("back") or "/recommendations")
    if not back.startswith("/"):  # never redirect off-site
        back = "/recommendations"
    if not ids:
        return _back(back, "Select at least one recommendation.")
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            policy = current_policy(s, state.settings.policy_file)
            for rec_id in ids:
                rec = review(s, rec_id, action=action, username=user.username, comment=comment, now=now)
                if rec.status == "approved":
                    ensure_scripts(s, rec, policy, now=now)  # frozen now: what ops run is what was approved
    except ReviewError as exc:
        return _back(back, str(exc))
    return _back(back, f"{action}: {len(ids)} recommendation(s) by {user.username}")


@router.post("/recommendations/suppress")
def suppress_form(
    ids: list[str] = Form(default=[]),
    reason: str = Form(""),
    expires: str = Form("", description="expiry date (YYYY-MM-DD, 00:00 UTC) or date and time"),
    back: str = Form("/recommendations"),
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    """Suppress the selected recommendations' objects until `expires`, with a reason (audited)."""
    back = back if back.startswith("/") else "/recommendations"  # never redirect off-site
    rec_ids = [int(v) for v in ids if v.isascii() and v.isdigit()]
    if not rec_ids:
        return _back(back, "Select at least one recommendation to suppress.")
    try:
        until = datetime.fromisoformat(expires.strip())
    except ValueError:
        return _back(back, f"Give the expiry as a date (YYYY-MM-DD), not {expires!r}.")
    until = until if until.tzinfo else until.replace(tzinfo=UTC)
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            for rec_id in rec_ids:
                suppress(s, rec_id, reason=reason, expires_at=until, username=user.username, now=now)
    except SuppressionError as exc:
        return _back(back, str(exc))
    return _back(back, f"suppressed {len(rec_ids)} recommendation(s) until {until:%Y-%m-%d %H:%M} UTC")


@router.post("/suppressions/{sup_id}/lift")
def lift_form(
    sup_id: int,
    back: str = Form("/recommendations"),
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    back = back if back.startswith("/") else "/recommendations"
    try:
        with state.store.session() as s:
            name = lift(s, sup_id, username=user.username, now=datetime.now(UTC)).name
    except SuppressionError as exc:
        return _back(back, str(exc))
    return _back(back, f"lifted the suppression of {name}; its advice shows again")


def _back(url: str, message: str) -> RedirectResponse:
    sep = "&" if "?" in url else "?"
    return RedirectResponse(
        f"{url}{sep}{urlencode({'message': message})}", status_code=status.HTTP_303_SEE_OTHER
    )
