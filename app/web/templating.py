"""The one template environment of the web pages: its filters, its `render` and what each page gets.

Every page goes through `render`, which adds the context base.html needs (`BASE_CONTEXT`); the rest
of each page's context is listed in `PAGE_CONTEXTS` (template name -> variable -> meaning), so a
template can be changed without reading the handler. A test checks every template is listed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.freshness import stale_notes
from app.http.auth import CurrentUser, csrf_token
from app.http.state import app_state
from app.textfmt import filters

TEMPLATE_DIR = Path(__file__).parent / "templates"
templates = Jinja2Templates(directory=str(TEMPLATE_DIR))

# The shared filters (app.textfmt): one per quantity (io_wait, latency, gb, bytes, rate, pct, money,
# ...), never a number formatted by hand in a template (tests/web/test_quantity_filters.py).
FILTERS = filters()
templates.env.filters.update(FILTERS)

# What `render` gives every page (base.html reads these).
BASE_CONTEXT = {
    "user": "the signed-in user (CurrentUser: id, username, role) or None on the login and error pages",
    "csrf": "the session's CSRF token, for every form's hidden csrf_token field",
    "demo": "True when the server runs the simulated demo fleet",
    "stale_targets": "list of (target names, data-end note) for targets judged on an older window, targets "
    "with the same note together (banner)",
    "active": "which navigation tab is highlighted (fleet, recommendations, heatmap, ...); optional",
}

# Each page's own context, beyond BASE_CONTEXT. Partials (names starting "_") are included by pages.
PAGE_CONTEXTS: dict[str, dict[str, str]] = {
    "login.html": {
        "error": "why the last attempt failed, or None",
        "no_users": "True when the store has no user yet: the page says how to create the first admin",
    },
    "error.html": {
        "code": "the HTTP status (404, 403, 400, 422, 500, ...)",
        "title": "a short heading (Not found, Not allowed, ...)",
        "detail": "what went wrong, in words fit for a browser; never a traceback or a credential",
    },
    "account.html": {
        "message": "a confirmation after a change, or None",
        "error": "why the password change failed, or None",
        "tokens": "the user's API tokens (app.store.tokens.TokenInfo: id, name, created_at, last_used_at)",
    },
    "fleet.html": {
        "targets": "app.store.targets.statuses rows",
        "start": "app.store.workbench.StartHere: what the open moves save, flash used/free, GB freed, problems",
        "currency": "the policy's currency, for the money filter (what the moves to cheaper tiers free)",
        "run": "app.store.advice_run.AdviceRun: whether the advice has caught up with the last policy change",
    },
    "_advice_run.html": {"run": "app.store.advice_run.AdviceRun (the page refreshes while it runs)"},
    "recommendations.html": {
        "rows": "the page of Recommendation rows",
        "total": "how many rows the filter matches",
        "page": "the page number (1-based)",
        "pages": "how many pages",
        "filters": "the RecommendationFilter in force",
        "query": "the filter as a URL query string, for paging links",
        "servers": "every server name, for the filter",
        "events": "recent audit events",
        "suppressed": "rec id -> (Suppression, description) for suppressed rows",
        "can_review": "the user may approve/reject",
        "verification": "app.verify.page_context: verification per executed move and the track record",
        "export_query": "the filter as a query string for the CSV/XLSX export links",
        "headers": "the sortable column headers (label, sort key, link, current direction)",
        "statuses": "the status filter's choices (suppressed included)",
        "databases": "every database name, for the filter",
        "actions": "the review actions",
        "message": "a confirmation after an action, or None",
        "problems": "why a filter value was refused (bad status, sort, ...), shown above the list",
        "refused": "rec id -> why its scripts were refused, for approved moves that cannot be scripted",
        "impact": "rec id -> migrations.impact.Impact: what each move costs the applications, before approval",
    },
    "recommendation.html": {
        "rec": "the Recommendation",
        "events": "its audit events",
        "can_review": "the user may approve/reject",
        "actions": "the review actions",
        "message": "a confirmation after an action, or None",
        "verification": "the move's verification, or None",
        "figures": "the measured figures as (label, value, unit) rows",
        "scripts": "its generated scripts",
        "saving": "the I/O wait the move saves, ms per second",
        "gb_freed": "GB and cost a demotion frees, or None",
        "currency": "the policy's currency, for the money filter",
        "members": "the stored objects of its unit (app.store.unit_objects: a filegroup's files, a table space, ...)",
        "charted": "the first of `members` with I/O counters of its own (its charts), or None",
        "impact": "migrations.impact.Impact: what approving it costs the applications (online, offline, restart)",
        "refused": "why its scripts were refused, or None",
        "executable": "the user may mark it executed now",
        "suppression": "the Suppression that covers it, or None",
        "suppression_text": "that suppression in words",
        "target_name": "its target's name",
        "can_suppress": "the user may suppress it",
        "today": "now, for the datetime-local inputs",
    },
    "database.html": {"page": "app.web.objects.DatabasePage: a target's or database's objects and totals"},
    "object.html": {"page": "app.web.objects.ObjectPage: one object's I/O over time and its advice"},
    "heatmap.html": {"page": "app.web.objects.HeatmapPage: the fleet heat map"},
    "targets.html": {
        "rows": "targets with their status",
        "now": "the time of the request (UTC)",
        "is_admin": "the user may add, change and remove targets",
        "message": "a confirmation after a change, or None",
        "unknown": "per target, the locations (path prefixes, storage groups) no tier of the policy knows",
        "pools": "admins only: each storage pool's evaluation state (PoolWatermark rows), else []",
        "pool_state": "app.store.watermarks.pool_state: a pool row's state in one word",
    },
    "policies.html": {
        "text": "the policy YAML shown",
        "source": "where the text comes from (stored version, file, or your unsaved edit)",
        "versions": "stored policy versions",
        "is_admin": "the user may save a policy",
        "error": "why the edit was refused, or None",
        "message": "a confirmation after saving, or None",
        "unknown": "the locations no tier knows, with their objects, GB and I/O (the mapping form's rows)",
        "choices": "the pool/tier pairs a location can be mapped to",
        "form": "app.web.policy_form.PolicyForm: the pools and tiers as fields (in force, or a refused "
        "submission with each problem at its field), or None when the policy in force does not load",
        "form_problem": "why the policy in force does not load (then there is no form), or None",
        "run": "app.store.advice_run.AdviceRun: whether the advice has caught up with the last policy change",
    },
    "reports.html": {
        "subs": "report subscriptions",
        "deliveries": "recent deliveries",
        "can_manage": "the user may add and remove subscriptions",
        "targets": "the known target names, offered for a subscription's scope",
        "message": "a confirmation after a change, or None",
    },
    "scripts.html": {
        "rows": "generated scripts",
        "can_execute": "the user may mark a script executed",
        "message": "a confirmation after a change, or None",
        "today": "now, for the datetime-local inputs",
        "windows": "upcoming change windows",
        "refused": "approved moves whose scripts were refused (rec, why): listed apart, never planned",
    },
    "script.html": {
        "row": "the script",
        "rec": "its Recommendation",
        "code": "the highlighted script (Markup)",
        "steps": "the check-only command and the run (app.web.scripts_pages.first_steps), or None",
    },
    "ilm.html": {
        "rec": "the newest ILM plan row, or None",
        "tables": "per table, its timeline rows",
        "months": "the forecast months",
    },
    "_track_record.html": {"verification": "as on recommendations.html"},
    "_verification.html": {
        "v": "one move's verification (app.verify.verification_json), set by the includer"
    },
}


def render(
    request: Request, name: str, user: CurrentUser | None, *, status_code: int = 200, **context: Any
) -> HTMLResponse:
    """A page in the site's layout: `BASE_CONTEXT` plus the page's own (see PAGE_CONTEXTS)."""
    state = app_state(request)
    base = {
        "user": user,
        "csrf": csrf_token(request),
        "demo": state.settings.demo,
        "stale_targets": stale_notes(state.store) if user is not None else [],
    }
    return templates.TemplateResponse(request, name, {**base, **context}, status_code=status_code)


ERROR_TITLES = {
    400: "Bad request",
    401: "Log in first",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed here",
    409: "Conflict",
    413: "Too large",
    422: "Bad value",
    429: "Too many requests",
    500: "Something went wrong",
    503: "Busy, try again",
}


def error_page(
    request: Request,
    code: int,
    detail: str,
    *,
    user: CurrentUser | None = None,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """An error in the site's layout for a browser. Needs neither a session nor the store (a 500 may
    come from either): the navigation shows only when the caller passes the signed-in user."""
    state = getattr(request.app.state, "tierwise", None)
    context: dict[str, Any] = {
        "user": user,
        "csrf": csrf_token(request) if user is not None else "",
        "demo": bool(state and state.settings.demo),
        "stale_targets": [],
        "code": code,
        "title": ERROR_TITLES.get(code, "Error"),
        "detail": detail,
    }
    return templates.TemplateResponse(request, "error.html", context, status_code=code, headers=headers)
