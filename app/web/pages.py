"""Server-rendered pages: login, fleet, recommendations with review actions, audit log."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from advisors import quantities as q
from app.errors import NotFound
from app.http.auth import (
    CurrentUser,
    SessionIdle,
    check_csrf,
    form_user,
    log_in,
    log_out,
    page_user,
)
from app.http.flash import flash
from app.http.flash import take as take_flash
from app.http.state import AppState, app_state
from app.move_impact import impacts, recommendation_impact
from app.review import (
    REVIEW_ACTIONS,
    ConcurrentChange,
    ReviewError,
    SuppressionError,
    actions_for,
    executable,
    lift,
    refusal,
    review_many,
    suppress,
)
from app.store.advice_run import advice_run
from app.store.models import Recommendation, ScriptRecord, Target, User
from app.store.policies import current_policy
from app.store.recommendations import (
    DEFAULT_SORT,
    SORTS,
    SUPPRESSED,
    RecommendationFilter,
    Status,
    audit,
    freed,
    list_recommendations,
    open_counts,
    recent_audit,
    saving_ms_per_s,
)
from app.store.suppressions import SUPPRESSIBLE, active_for, describe
from app.store.targets import statuses
from app.store.unit_objects import unit_objects
from app.store.users import authenticate
from app.store.workbench import start_here
from app.textfmt import fixed
from app.web.templating import render
from migrations.plan import run_order

router = APIRouter()
PAGE_SIZE = 50


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, ended: Literal["idle"] | None = None) -> HTMLResponse:
    """The login form; with no account in the store yet, it says how to create the first admin.
    `ended=idle` (from app.web.security) says why the last login ended; no URL text is shown."""
    state = app_state(request)
    error = SessionIdle(state.settings.session_idle_minutes).message if ended == "idle" else None
    with state.store.session() as s:
        return render(request, "login.html", None, error=error, no_users=_no_users(s))


def _no_users(s: Session) -> bool:
    return s.scalar(select(User.id).limit(1)) is None


@router.post("/login")
def login(
    request: Request,
    username: str = Form(...),
    password: str = Form(...),
    csrf_token_field: str = Form(..., alias="csrf_token"),
    state: AppState = Depends(app_state),
) -> Response:
    check_csrf(request, csrf_token_field)
    # the address uvicorn resolved: the socket's peer, or X-Forwarded-For from a trusted proxy only
    client = request.client.host if request.client else "?"
    if (wait := state.limiter.retry_after(username, client)) > 0:
        minutes = max(1, math.ceil(wait / 60))
        page = render(request, "login.html", None, status_code=status.HTTP_429_TOO_MANY_REQUESTS,
                      error=f"Too many failed logins: wait {minutes} minute{'s' if minutes > 1 else ''}.")  # fmt: skip
        page.headers["Retry-After"] = str(math.ceil(wait))
        return page
    now = datetime.now(UTC)
    with state.store.session() as s:
        user = authenticate(s, username, password)
        if user is None:
            state.limiter.failed(username, client)
            return render(
                request, "login.html", None, error="Wrong user name or password.", no_users=_no_users(s)
            )
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
        policy = current_policy(s, state.settings.policy_file)
        start = start_here(s, policy, now=now)
        run = advice_run(s)
    targets = [{"status": r, "state": r.state(now), "open": counts.get(r.id, 0)} for r in rows]
    return render(
        request, "fleet.html", user, targets=targets, start=start, run=run, currency=policy.currency
    )


STATUS_CHOICES = [*(str(x) for x in Status), SUPPRESSED]
COLUMNS = (  # the list's sortable headers: (sort key, heading, numeric)
    ("object", "Object", False), ("move", "Move", False), ("profile", "Profile", False),
    ("size", "Size", True), ("saving", "I/O wait now → after", True), ("status", "Status", False),
)  # fmt: skip


def _list_query(params: dict[str, str | None], **changes: str | None) -> str:
    """The list's query string with some parameters changed (None drops one); page 1 unless given."""
    merged = {**params, "page": None, **changes}
    return urlencode({k: v for k, v in merged.items() if v})


@router.get("/recommendations", response_class=HTMLResponse)
def recommendations(
    request: Request,
    engine: str | None = None,
    server: str | None = None,
    database: str | None = None,
    status_filter: str | None = Query(None, alias="status"),
    to_tier: str | None = None,
    target: str | None = None,
    q: str | None = Query(None, max_length=200, description="text to find in the object, database or server"),
    sort: str | None = None,
    direction: str | None = Query(None, alias="dir", pattern="^(asc|desc)$"),
    page: int = Query(1, ge=1, le=100_000),
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    """The workbench: filter, search, sort and review the advice; an unknown filter value is a 400
    that says so (the list then shows the current recommendations), never an empty list."""
    problems = []
    if status_filter and status_filter not in STATUS_CHOICES:
        problems.append(f"unknown status {status_filter!r} (use {', '.join(STATUS_CHOICES)})")
        status_filter = None
    if engine and engine not in ("sqlserver", "db2"):
        problems.append(f"unknown engine {engine!r} (use sqlserver or db2)")
        engine = None
    if sort and sort not in SORTS:
        problems.append(f"unknown sort {sort!r} (use {', '.join(SORTS)})")
        sort = None
    sort = sort or DEFAULT_SORT
    f = RecommendationFilter(engine or None, server or None, status_filter or None, to_tier or None, target or None,
                             database or None, (q or "").strip() or None, sort,
                             None if direction is None else direction == "desc")  # fmt: skip
    now = datetime.now(UTC)
    with state.store.session() as s:
        rows, total = list_recommendations(s, f, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE, now=now)
        active = active_for(s, now)
        suppressed = {r.id: (active[(r.target_id, r.key)], describe(active[(r.target_id, r.key)]))
                      for r in rows if (r.target_id, r.key) in active}  # fmt: skip
        events = recent_audit(s, limit=30)
        servers = list(s.scalars(select(Recommendation.server).distinct().order_by(Recommendation.server)))
        databases = list(
            s.scalars(select(Recommendation.database).distinct().order_by(Recommendation.database))
        )
        from app.verify import page_context  # verify after change: each executed move and the track record

        policy = current_policy(s, state.settings.policy_file)
        verification = page_context(s, rows, policy.verification)
        impact = impacts(rows, policy)  # what each move costs, before approval
    params = {"engine": f.engine, "server": f.server, "database": f.database, "status": f.status,
              "to_tier": f.to_tier, "target": f.target, "q": f.text}  # fmt: skip
    current_desc = SORTS[sort][1] if f.descending is None else f.descending
    headers = []
    for key, title, numeric in COLUMNS:
        on = key == sort
        desc = (not current_desc) if on else SORTS[key][1]
        headers.append({"key": key, "title": title, "numeric": numeric, "on": on,
                        "aria": ("descending" if current_desc else "ascending") if on else None,
                        "url": _list_query(params, sort=key, dir="desc" if desc else "asc")})  # fmt: skip
    sorted_by = {"sort": sort if sort != DEFAULT_SORT else None, "dir": direction}
    message = take_flash(request)
    return render(
        request,
        "recommendations.html",
        user,
        status_code=status.HTTP_400_BAD_REQUEST if problems else status.HTTP_200_OK,
        rows=rows,
        total=total,
        page=page,
        pages=max(1, -(-total // PAGE_SIZE)),
        filters=f,
        query=_list_query(params, **sorted_by),
        export_query=_list_query(params, **sorted_by),
        headers=headers,
        statuses=STATUS_CHOICES,
        servers=servers,
        databases=databases,
        events=events,
        actions=list(REVIEW_ACTIONS),
        # executed, superseded and withdrawn recommendations can no longer be reviewed: no controls
        can_review=user.role in ("approver", "admin")
        and f.status not in (Status.EXECUTED, Status.SUPERSEDED, Status.WITHDRAWN),
        message=message,
        problems=problems,
        suppressed=suppressed,
        refused={r.id: refusal(r) for r in rows if refusal(r)},
        verification=verification,
        impact=impact,
    )


# The measured figures of a recommendation, in DBA words, each read as its quantity (advisors.quantities).
FIGURES: dict[str, tuple[str, Callable[[float], str]]] = {
    "read_iops": ("Reads", partial(q.rate, unit="reads/s")), "write_iops": ("Writes", partial(q.rate, unit="writes/s")),
    "avg_read_ms": ("Average read latency", q.latency), "avg_write_ms": ("Average write latency", q.latency),
    "avg_read_bytes": ("Average read size", q.size), "avg_write_bytes": ("Average write size", q.size),
    "read_pct": ("Reads of all I/O", lambda v: q.pct(v / 100)), "read_mb_s": ("Read throughput", partial(q.rate, unit="MB/s")),
    "write_mb_s": ("Write throughput", partial(q.rate, unit="MB/s")), "read_miss_ratio": ("Read-miss ratio", q.pct),
    "prefetch_share": ("Prefetch (read-ahead) share", q.pct), "singleton_share": ("Singleton lookups", q.pct),
    "est_cache_hit_share": ("Estimated array-cache hits", q.pct),
    "heat": ("Heat", partial(q.rate, unit="I/O per GB-hour")),
    "heat_ratio": ("Heat against the database average", lambda v: f"{fixed(v, 2)} ×"),
    "trend_pct_per_day": ("Trend", lambda v: f"{q.change_pct(v)} per day"),
    "hours": ("Hours measured", lambda v: f"{fixed(v, 1)} h"),
    "instance_read_miss_ratio": ("Instance read-miss ratio", q.pct),
}  # fmt: skip


def figures(metrics: dict[str, Any]) -> list[tuple[str, str]]:
    """The evidence's metrics as (label, value with its unit) rows; unknown ones keep their own name."""
    out = []
    for key, value in metrics.items():
        if key == "io_per_s_by_hour_of_day" or isinstance(value, list | dict):
            continue
        label, text = FIGURES.get(key, (key.replace("_", " "), q.figure))
        out.append((label, "–" if value is None else text(float(value))))
    return out


@router.get("/recommendations/{rec_id}", response_class=HTMLResponse)
def recommendation_detail(
    rec_id: int,
    request: Request,
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    now = datetime.now(UTC)
    with state.store.session() as s:
        rec = s.get(Recommendation, rec_id)
        if rec is None:
            raise NotFound(f"no recommendation #{rec_id}")
        events = [
            e
            for e in recent_audit(s, limit=500)
            if e.subject_type == "recommendation" and e.subject_id == str(rec_id)
        ]
        from app.verify import add_verifications  # verify after change, once executed

        found: dict[str, Any] = {"id": rec_id}
        add_verifications(s, [found])
        members = unit_objects(s, rec)  # the unit's files (a filegroup's, tempdb's), its table space, ...
        policy = current_policy(s, state.settings.policy_file)
        impact = recommendation_impact(rec, policy)
        scripts = sorted(s.scalars(select(ScriptRecord).where(ScriptRecord.recommendation_id == rec_id)),
                         key=lambda sc: run_order(sc.direction))  # fmt: skip
        sup = active_for(s, now).get((rec.target_id, rec.key))
        target_name = s.scalar(select(Target.name).where(Target.id == rec.target_id))
    can_review = user.role in ("approver", "admin")
    return render(request, "recommendation.html", user, rec=rec, events=events, can_review=can_review,
                  actions=actions_for(rec.status) if can_review else [],
                  message=take_flash(request), verification=found["verification"],
                  figures=figures((rec.evidence or {}).get("metrics") or {}), members=members,
                  charted=next((m for m in members if not m.held), None), impact=impact, scripts=scripts,
                  saving=saving_ms_per_s(rec), gb_freed=freed(rec), refused=refusal(rec),
                  executable=can_review and executable(rec), suppression=sup,
                  suppression_text=describe(sup) if sup else None, target_name=target_name,
                  can_suppress=can_review and sup is None and rec.status in SUPPRESSIBLE,
                  today=now.strftime("%Y-%m-%dT%H:%M"), currency=policy.currency)  # fmt: skip


@router.post("/recommendations/review")
def review_form(
    ids: list[str] = Form(default=[]),
    action: str = Form(""),
    comment: str = Form(""),
    back: str = Form("/recommendations"),
    seen: list[str] = Form(default=[], description="id:status as the page showed each row"),
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    """Review the selected recommendations (a plain def: the store and the script generators block).
    A row reviewed by someone else since the page showed it answers 409 (review_many)."""
    rec_ids = [int(v) for v in ids if v.isascii() and v.isdigit()]
    shown = {int(i): st for i, _, st in (v.partition(":") for v in seen) if i.isascii() and i.isdigit()}
    if not back.startswith("/") or back.startswith("//"):  # never redirect off-site
        back = "/recommendations"
    if not rec_ids:
        return _back(back, "Select at least one recommendation.")
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            policy = current_policy(s, state.settings.policy_file)
            done = review_many(s, rec_ids, action=action, username=user.username, comment=comment.strip() or None,
                               now=now, policy=policy, seen=shown)  # fmt: skip
            refused = [f"#{r.id} {r.name}: {refusal(r)}" for r in done.refused]
            unchanged = len(done.unchanged)
    except ConcurrentChange:
        raise  # another review won the race: a 409 page that says who, nothing of this one kept
    except ReviewError as exc:
        return _back(back, str(exc))
    text = f"{action}: {len(rec_ids) - unchanged} recommendation(s) by {user.username}"
    if unchanged:
        text += f"; {unchanged} already {REVIEW_ACTIONS[action]}"
    if refused:
        text += f". Approved, but {'; '.join(refused)}"
    return _back(back, text)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


@router.post("/recommendations/suppress", response_model=None)
def suppress_form(
    request: Request,
    ids: list[str] = Form(default=[]),
    reason: str = Form(""),
    expires: str = Form("", description="expiry date (YYYY-MM-DD, 00:00 UTC) or date and time"),
    back: str = Form("/recommendations"),
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    """Suppress the selected recommendations' objects until `expires`, with a reason (audited).
    Asked for JSON (the page's script does), it answers in place instead of reloading the page."""
    back = back if back.startswith("/") and not back.startswith("//") else "/recommendations"

    def answer(message: str, rows: dict[int, dict[str, Any]] | None = None) -> Response:
        if _wants_json(request):
            code = status.HTTP_200_OK if rows is not None else status.HTTP_422_UNPROCESSABLE_CONTENT
            return JSONResponse({"message": message, "rows": rows or {}}, status_code=code)
        return _back(back, message)

    rec_ids = [int(v) for v in ids if v.isascii() and v.isdigit()]
    if not rec_ids:
        return answer("Select at least one recommendation to suppress.")
    try:
        until = datetime.fromisoformat(expires.strip())
    except ValueError:
        return answer(f"Give the expiry as a date (YYYY-MM-DD), not {expires!r}.")
    until = until if until.tzinfo else until.replace(tzinfo=UTC)
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            done = {rec_id: suppress(s, rec_id, reason=reason, expires_at=until, username=user.username, now=now)
                    for rec_id in rec_ids}  # fmt: skip
            rows = {rec_id: {"suppression": sup.id, "text": describe(sup)} for rec_id, sup in done.items()}
    except SuppressionError as exc:
        return answer(str(exc))
    return answer(f"suppressed {len(rec_ids)} recommendation(s) until {until:%Y-%m-%d %H:%M} UTC", rows)


@router.post("/suppressions/{sup_id}/lift")
def lift_form(
    sup_id: int,
    back: str = Form("/recommendations"),
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    back = back if back.startswith("/") and not back.startswith("//") else "/recommendations"
    try:
        with state.store.session() as s:
            name = lift(s, sup_id, username=user.username, now=datetime.now(UTC)).name
    except SuppressionError as exc:
        return _back(back, str(exc))
    return _back(back, f"lifted the suppression of {name}; its advice shows again")


class _FlashRedirect(RedirectResponse):
    """A 303 to `url` whose message waits in the signed-in login's row (app/http/flash.py) for the
    next page: left there as the response is sent, when the request (and its session) is at hand."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(url, status_code=status.HTTP_303_SEE_OTHER)
        self.message = message

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await run_in_threadpool(flash, Request(scope), self.message)  # the store blocks
        await super().__call__(scope, receive, send)


def _back(url: str, message: str) -> RedirectResponse:
    """Back to `url`, which shows `message` once (a flash message: never in the URL)."""
    return _FlashRedirect(url, message)
