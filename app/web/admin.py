"""Targets (add/test/remove, credentials write-only), policy view/edit, your password and /metrics."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Depends, Form, Path, Request, status
from fastapi.responses import HTMLResponse, Response

from app.collect import read_target
from app.http.auth import CurrentUser, api_user, form_user, page_user, session_id
from app.http.state import AppState, app_state
from app.metrics import render as render_metrics
from app.store.policies import current_policy_text, history, save_policy
from app.store.recommendations import audit
from app.store.targets import TargetError, add_target, get_target, statuses
from app.store.tokens import TokenError, TokenInfo, list_tokens, revoke_token
from app.store.users import UserError, authenticate, set_password
from app.store.watermarks import pool_health, pool_state
from app.web.mapping import by_target, tier_choices, unknown_locations
from app.web.pages import _back
from app.web.templating import render
from connectors.records import SourceError
from policies.loader import PolicyError, parse_policy

router = APIRouter()

# ---- targets -------------------------------------------------------------------------------


@router.get("/targets", response_class=HTMLResponse)
def targets_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    is_admin = user.role == "admin"
    with state.store.session() as s:
        rows = statuses(s)
        unknown = by_target(unknown_locations(s))
        pools = pool_health(s) if is_admin else []
    return render(request, "targets.html", user, rows=rows, now=datetime.now(UTC), is_admin=is_admin,
                  message=request.query_params.get("message"), unknown=unknown, pools=pools,
                  pool_state=pool_state)  # fmt: skip


@router.post("/targets")
def add_target_form(
    name: str = Form(...),
    engine: str = Form(...),
    connection: str = Form(...),
    password_env: str = Form(""),
    interval: int = Form(300),
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            add_target(s, name=name.strip(), engine=engine, source="live",
                       connection_encrypted=state.vault.encrypt(connection),
                       password_env=password_env.strip() or None, poll_interval_s=interval, now=now)  # fmt: skip
            audit(s, at=now, username=user.username, action="add_target", subject_type="target", subject_id=name,
                  summary=f"added {engine} target {name} (polled every {interval} s)")  # fmt: skip
    except TargetError as exc:
        return _back("/targets", str(exc))
    if state.scheduler is not None:
        state.scheduler.sync_targets()
    return _back("/targets", f"added {name}; the connection string is stored encrypted and will not be shown")


@router.post("/targets/{ref}/test")
def test_target_form(
    ref: str,
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    """`ref`: the target's id (what the page links) or its name."""
    try:
        with state.store.session() as s:
            target = get_target(s, ref)
            s.expunge(target)
        snap = read_target(
            target, state.vault, now=datetime.now(UTC), timeout_s=state.settings.poll_timeout_s
        )
    except TargetError as exc:
        return _back("/targets", str(exc))
    except SourceError as exc:
        return _back("/targets", f"{target.name}: test failed: {exc}")
    return _back("/targets", f"{target.name}: ok, server {snap.server}, {len(snap.samples)} objects")


@router.post("/targets/{ref}/remove")
def remove_target_form(
    ref: str,
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            target = get_target(s, ref)
            name = target.name
            s.delete(target)
            audit(s, at=now, username=user.username, action="remove_target", subject_type="target",
                  subject_id=name, summary=f"removed target {name} and its samples")  # fmt: skip
    except TargetError as exc:
        return _back("/targets", str(exc))
    if state.scheduler is not None:
        state.scheduler.sync_targets()
    return _back("/targets", f"removed {name}")


# ---- your account --------------------------------------------------------------------------


def _my_tokens(state: AppState, user: CurrentUser) -> list[TokenInfo]:
    with state.store.session() as s:
        return list_tokens(s, user.username, revoked=False)


@router.get("/account", response_class=HTMLResponse)
def account_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    return render(request, "account.html", user, message=request.query_params.get("message"), error=None,
                  tokens=_my_tokens(state, user))  # fmt: skip


@router.post("/account/tokens/{token_id}/revoke", response_model=None)
def revoke_token_form(
    token_id: int = Path(..., ge=1, le=2**31 - 1),
    user: CurrentUser = Depends(form_user("viewer")),
    state: AppState = Depends(app_state),
) -> Response:
    """Revoke one of your own API tokens (CSRF-checked, audited); someone else's id is unknown."""
    try:
        with state.store.session() as s:
            t = revoke_token(s, token_id, owner=user.username)
            audit(s, at=datetime.now(UTC), username=user.username, action="revoke_token", subject_type="user",
                  subject_id=user.username, summary=f"revoked their API token #{t.id} ({t.name})")  # fmt: skip
    except TokenError as exc:
        return _back("/account", str(exc))
    return _back("/account", f"API token #{t.id} ({t.name}) revoked")


@router.post("/account/password", response_model=None)
def change_password_form(
    request: Request,
    current: str = Form(...),
    new: str = Form(...),
    again: str = Form(...),
    user: CurrentUser = Depends(form_user("viewer")),
    state: AppState = Depends(app_state),
) -> Response:
    """Your own password; your other sessions end (a stolen cookie dies with the old password), this
    one stays."""
    error = None
    client = request.client.host if request.client else "?"
    if state.limiter.blocked(user.username, client):
        # the same limiter as the login: a stolen cookie cannot be used to guess the password here
        return render(request, "account.html", user, message=None, status_code=status.HTTP_429_TOO_MANY_REQUESTS,
                      error="Too many wrong passwords: wait five minutes.", tokens=_my_tokens(state, user))  # fmt: skip
    if new != again:
        error = "The two new passwords differ."
    else:
        try:
            with state.store.session() as s:
                if authenticate(s, user.username, current) is None:
                    state.limiter.failed(user.username, client)
                    error = "The current password is wrong."
                else:
                    set_password(s, username=user.username, password=new, keep_sid=session_id(request))
                    audit(s, at=datetime.now(UTC), username=user.username, action="change_password",
                          subject_type="user", subject_id=user.username,
                          summary="changed their password; their other sessions ended")  # fmt: skip
        except UserError as exc:
            error = str(exc)
    if error is not None:
        return render(request, "account.html", user, message=None, error=error, tokens=_my_tokens(state, user),
                      status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)  # fmt: skip
    return _back("/account", "password changed; your other sessions have ended")


# ---- policy --------------------------------------------------------------------------------


@router.get("/policies", response_class=HTMLResponse)
def policy_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    with state.store.session() as s:
        text, source = current_policy_text(s, state.settings.policy_file)
        versions = history(s)
        unknown = unknown_locations(s)
    try:
        choices = tier_choices(parse_policy(text, source=source))
    except PolicyError:
        choices = {}
    return render(request, "policies.html", user, text=text, source=source, versions=versions,
                  is_admin=user.role == "admin", error=None, message=request.query_params.get("message"),
                  unknown=unknown, choices=choices)  # fmt: skip


@router.post("/policies", response_model=None)
def save_policy_form(
    request: Request,
    yaml_text: str = Form(...),
    comment: str = Form(""),
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            policy = save_policy(
                s, yaml_text=yaml_text, username=user.username, comment=comment or None, now=now
            )
            audit(s, at=now, username=user.username, action="edit_policy", subject_type="policy",
                  subject_id=policy.name, summary=f"saved policy {policy.name} ({len(policy.tiers)} tiers)",
                  comment=comment or None)  # fmt: skip
    except PolicyError as exc:
        with state.store.session() as s:
            versions = history(s)
        return render(request, "policies.html", user, text=yaml_text, source="your edit (not saved)",
                      versions=versions, is_admin=True, error=str(exc), message=None,
                      status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)  # fmt: skip
    return _back("/policies", "policy saved; the next advice run uses it")


# ---- metrics (the exports are in app/api/exports.py) ------------------------------------


@router.get("/metrics")
def metrics(user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)) -> Response:
    """Prometheus exposition; scrape with an API token (`tierwise users token`)."""
    return Response(render_metrics(state.store), media_type="text/plain; version=0.0.4; charset=utf-8")
