"""Targets (add/test/remove, credentials write-only), policy view/edit, your password and /metrics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import yaml
from fastapi import APIRouter, Depends, Form, Path, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.collect import read_target
from app.http.auth import CurrentUser, api_user, form_user, page_user, session_id
from app.http.flash import take as take_flash
from app.http.state import AppState, app_state
from app.jobs import advise_soon
from app.metrics import render as render_metrics
from app.store.advice_run import advice_run
from app.store.policies import conflicts_text, current_policy_text, history, pool_conflicts, save_policy
from app.store.recommendations import audit
from app.store.targets import TargetError, get_target, register_target, statuses
from app.store.tokens import TokenError, TokenInfo, list_tokens, revoke_token
from app.store.unmapped import by_target, unknown_locations
from app.store.users import UserError, authenticate, set_password
from app.store.watermarks import pool_health, pool_state, request_advice
from app.web.mapping import tier_choices
from app.web.pages import _back
from app.web.policy_form import PolicyForm, Problem, attach, check, dump, form_of
from app.web.templating import render
from connectors.records import SourceError
from policies.loader import PolicyError, parse_policy
from policies.model import Policy

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
                  message=take_flash(request), unknown=unknown, pools=pools,
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
            register_target(s, name=name.strip(), engine=engine, connection=connection, vault=state.vault,
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
    return render(request, "account.html", user, message=take_flash(request), error=None,
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


@dataclass(frozen=True)
class _InForce:
    """The policy in force: its text, where it is from, the stored version (0: a file), and the
    document and policy it reads as (None when it does not load: the form needs a valid policy)."""

    text: str
    source: str
    base: int
    doc: dict[str, Any] | None
    policy: Policy | None
    problem: str | None


def _newest_version(s: Session) -> int:
    newest = history(s, limit=1)
    return newest[0].id if newest else 0


def _in_force(s: Session, state: AppState) -> _InForce:
    text, source = current_policy_text(s, state.settings.policy_file)
    base = _newest_version(s)
    try:
        policy = parse_policy(text, source=source)
    except PolicyError as exc:
        return _InForce(text, source, base, None, None, str(exc))
    return _InForce(text, source, base, yaml.safe_load(text), policy, None)


def _policy_page(
    request: Request, user: CurrentUser, state: AppState, *, form: PolicyForm | None = None, text: str | None = None,
    source: str | None = None, error: str | None = None, status_code: int = 200,
) -> HTMLResponse:  # fmt: skip
    """The page: the form (the policy in force, or a refused submission), the locations that match
    no tier, the YAML view (the policy in force, or a refused edit) and the history."""
    with state.store.session() as s:
        now = _in_force(s, state)
        versions = history(s)
        unknown = unknown_locations(s)
        run = advice_run(s)
    if form is None and now.doc is not None and now.policy is not None:
        form = form_of(now.doc, now.policy, base=now.base)
    return render(request, "policies.html", user, text=now.text if text is None else text,
                  source=source or now.source, versions=versions, is_admin=user.role == "admin", error=error,
                  message=take_flash(request), unknown=unknown,
                  choices=tier_choices(now.policy) if now.policy is not None else {}, form=form,
                  form_problem=now.problem, run=run, status_code=status_code)  # fmt: skip


@router.get("/policies", response_class=HTMLResponse)
def policy_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    return _policy_page(request, user, state)


@router.post("/policies", response_model=None)
def save_policy_form(
    request: Request,
    yaml_text: str = Form(...),
    comment: str = Form(""),
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    """The YAML view's save: the whole text, comments kept."""
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            policy = save_policy(
                s, yaml_text=yaml_text, username=user.username, comment=comment or None, now=now
            )
            audit(s, at=now, username=user.username, action="edit_policy", subject_type="policy",
                  subject_id=policy.name, summary=f"saved policy {policy.name} ({len(policy.tiers)} tiers)",
                  comment=comment or None)  # fmt: skip
            request_advice(s)
    except PolicyError as exc:
        return _policy_page(request, user, state, text=yaml_text, source="your edit (not saved)", error=str(exc),
                            status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)  # fmt: skip
    advise_soon()
    return _back("/policies", "policy saved; advising every target with it now")


# A field per figure: a policy of 100 pools of 4 tiers is ~8,500 fields (the body limit bounds it anyway).
FORM_MAX_FIELDS = 50_000


async def _submitted(request: Request) -> FormData:
    """The posted form, whatever fields it has (the policy form's are the policy's paths)."""
    return await request.form()


def _text_of(fields: FormData) -> Callable[[str], str | None]:
    def get(name: str) -> str | None:
        v = fields.get(name)
        return v if isinstance(v, str) else None

    return get


def _stale(base: str | None, now: _InForce) -> str | None:
    """Why a form drawn from another version may not be saved over the newest (None: it may)."""
    if base == str(now.base):
        return None
    return (f"The policy was saved again ({now.source}) after this form was opened: nothing was saved. "
            "The form now shows that version; make your change again.")  # fmt: skip


def _changes_text(changes: list[str], limit: int = 20) -> str:
    more = f"; and {len(changes) - limit} more" if len(changes) > limit else ""
    return "; ".join(changes[:limit]) + more


@router.post("/policies/validate", response_model=None, form_limits={"max_fields": FORM_MAX_FIELDS})
def validate_policy_fields(
    fields: FormData = Depends(_submitted),
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> JSONResponse:
    """The policy form's values checked as the save checks them, without saving: each problem with
    the field it belongs to ("" = the policy as a whole), and what a save would change."""
    with state.store.session() as s:
        now = _in_force(s, state)
        if now.doc is None or now.policy is None:
            problems = [
                Problem("", f"the policy in force does not load; fix it in the YAML view: {now.problem}")
            ]
            return JSONResponse({"valid": False, "errors": [asdict(p) for p in problems], "changes": []})
        edit, problems, policy = check(now.doc, now.policy, _text_of(fields), base=now.base)
        if policy is not None:
            conflicts = pool_conflicts(s, policy)
            if conflicts:
                problems = [Problem("", conflicts_text(conflicts))]
    stale = _stale(_text_of(fields)("base"), now)
    if stale is not None:
        problems.append(Problem("", stale))
    return JSONResponse(
        {"valid": not problems, "errors": [asdict(p) for p in problems], "changes": edit.changes}
    )


@router.post("/policies/form", response_model=None, form_limits={"max_fields": FORM_MAX_FIELDS})
def save_policy_fields(
    request: Request,
    fields: FormData = Depends(_submitted),
    user: CurrentUser = Depends(form_user("admin")),
    state: AppState = Depends(app_state),
) -> Response:
    """The form's save: the fields applied to the policy in force (every other key kept), checked by
    the model, saved as a new version and audited; refused, the form comes back with each problem
    next to its field (422) and nothing is saved."""
    submitted = _text_of(fields)
    comment = (submitted("comment") or "").strip() or None
    with state.store.session() as s:
        now = _in_force(s, state)
    if now.doc is None or now.policy is None:
        return _back(
            "/policies",
            f"not saved: the policy in force does not load; fix it in the YAML view ({now.problem})",
        )
    stale = _stale(submitted("base"), now)
    if stale is not None:
        form = form_of(now.doc, now.policy, base=now.base)
        form.errors.append(stale)
        return _policy_page(request, user, state, form=form, status_code=status.HTTP_409_CONFLICT)
    edit, problems, policy = check(now.doc, now.policy, submitted, base=now.base)
    what = _changes_text(edit.changes)
    if policy is not None and not edit.changes:
        return _back("/policies", "nothing to save: the form's values are those of the policy in force")
    if policy is not None:
        at = datetime.now(UTC)
        try:
            with state.store.session() as s:
                if _newest_version(s) != now.base:  # saved by someone else since it was read
                    raise PolicyError(_stale("", _in_force(s, state)) or "")
                saved = save_policy(s, yaml_text=dump(edit.data, username=user.username, now=at),
                                    username=user.username, comment=comment or f"form: {what}"[:500], now=at)  # fmt: skip
                audit(s, at=at, username=user.username, action="edit_policy", subject_type="policy",
                      subject_id=saved.name, summary=f"saved policy {saved.name} from the form: {what}",
                      comment=comment)  # fmt: skip
                request_advice(s)
        except PolicyError as exc:
            problems = [Problem("", str(exc))]
    if problems:
        attach(edit.form, problems)
        return _policy_page(
            request, user, state, form=edit.form, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT
        )
    advise_soon()
    return _back("/policies", f"policy saved from the form ({_changes_text(edit.changes, limit=5)}); "
                              "advising every target with it now")  # fmt: skip


# ---- metrics (the exports are in app/api/exports.py) ------------------------------------


@router.get("/metrics")
def metrics(user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)) -> Response:
    """Prometheus exposition; scrape with an API token (`tierwise users token`)."""
    return Response(render_metrics(state.store), media_type="text/plain; version=0.0.4; charset=utf-8")
