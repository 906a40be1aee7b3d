"""FastAPI application factory: store, scheduler, (demo) fleet, JSON API and web pages in one process."""

from __future__ import annotations

import logging
import secrets
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import DataError, DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware

from app.api import exports as api_exports
from app.api import health as api_health
from app.api import ilm as api_ilm
from app.api import objects as api_objects
from app.api import reports as api_reports
from app.api import routes as api_routes
from app.api import scripts as api_scripts
from app.demo import DEMO_PASSWORD, DEMO_USER, ensure_demo_fleet, ensure_demo_user
from app.errors import StoreBusy, TierwiseError
from app.evaluate import evaluate
from app.http.auth import CurrentUser, LoginRequired, current_user, session_secret
from app.http.state import AppState
from app.jobs import Runtime, Scheduler
from app.secrets import Vault, load_key
from app.settings import Settings, get_settings
from app.store.db import Store, retryable
from app.store.policies import current_policy
from app.web.admin import router as admin_router
from app.web.mapping import router as mapping_router
from app.web.objects import router as objects_router
from app.web.pages import router as pages_router
from app.web.plans import router as plans_router
from app.web.reports import router as reports_router
from app.web.scripts_pages import router as scripts_router
from app.web.security import install as install_security
from app.web.security import validation_error
from app.web.templating import error_page

log = logging.getLogger("tierwise")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    key = load_key(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = Store(settings.database_url)
        state = AppState(settings=settings, store=store, vault=Vault(key))
        if settings.demo:
            result = ensure_demo_fleet(store, state.vault, settings)
            ensure_demo_user(store)
            log.info("demo fleet ready: %d samples backfilled; log in as %s / %s", result.samples, DEMO_USER,
                     DEMO_PASSWORD)  # fmt: skip
            with store.session() as s:
                policy = current_policy(s, settings.policy_file)
            evaluate(store, policy, now=datetime.now(UTC))
        if settings.scheduler_enabled:
            scheduler = Scheduler(
                Runtime(
                    store=store, vault=state.vault, settings=settings, import_quiet_s=settings.import_quiet_s
                )
            )
            if scheduler.start():
                state.scheduler = scheduler
        app.state.tierwise = state
        try:
            yield
        finally:
            if state.scheduler is not None:
                state.scheduler.shutdown()
            store.dispose()

    # the API docs and schema are served by app.web.security, behind login
    app = FastAPI(title="tierwise", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)  # fmt: skip
    app.add_middleware(
        SessionMiddleware,
        secret_key=session_secret(key),
        session_cookie="tierwise_session",
        same_site="lax",
        https_only=settings.secure_cookies,
        max_age=settings.session_hours * 3600,
    )
    install_security(app)  # headers, body limit, short 422s, /docs and /openapi.json behind login
    app.mount("/static", StaticFiles(directory=str(Path(__file__).parent / "web" / "static")), name="static")
    for api in (api_health, api_routes, api_objects, api_scripts, api_exports, api_ilm, api_reports):
        app.include_router(api.router)  # every /api route is in app/api
    app.include_router(admin_router)
    app.include_router(mapping_router)
    app.include_router(reports_router)
    app.include_router(plans_router)
    app.include_router(objects_router)
    app.include_router(scripts_router)
    app.include_router(pages_router)

    @app.exception_handler(OverflowError)
    @app.exception_handler(DataError)
    def out_of_range(request: Request, exc: Exception) -> Response:
        """An id or offset too large for the store's integers (SQLite raises OverflowError,
        PostgreSQL a DataError): the request is wrong, not the server."""
        detail = "a number in the request is out of range"
        if wants_html(request):
            return error_page(request, 422, detail + ".", user=_page_user(request))
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(TierwiseError)
    def domain_error(request: Request, exc: TierwiseError) -> Response:
        """NotFound / Conflict / Invalid / StoreBusy (app/errors.py) raised by a service: their
        status code with the message, as a page for a browser and as {"detail": ...} for /api and
        JSON clients; a busy store also says when to try again (Retry-After)."""
        headers = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, StoreBusy) else None
        if wants_html(request):  # a busy store may be what the page's user would be read from
            user = None if headers else _page_user(request)
            return error_page(request, exc.status_code, exc.detail, user=user, headers=headers)
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)

    @app.exception_handler(DBAPIError)
    @app.exception_handler(sqlite3.Error)
    @app.exception_handler(psycopg.Error)
    def store_error(request: Request, exc: Exception) -> Response:
        """A store error: 503 with Retry-After when it is worth trying again (app.store.db.retryable:
        locked, busy, a lock or statement timeout, a serialization failure, unreachable), else the
        500 below."""
        if retryable(exc):
            log.warning(
                "store busy, answered 503: %s %s (%s)", request.method, request.url.path, type(exc).__name__
            )
            return domain_error(request, StoreBusy())
        return server_error(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """404/403/400/... as a page in the site's layout for a browser; JSON for /api and for
        clients that ask for JSON (as FastAPI answers by default)."""
        if not wants_html(request) or exc.status_code < 400:
            return await http_exception_handler(request, exc)
        detail = str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"There is no page at {request.url.path}."
        elif exc.status_code == 405 and detail == "Method Not Allowed":
            detail = f"{request.url.path} does not take a {request.method}."
        return error_page(request, exc.status_code, detail, user=_page_user(request),
                          headers=getattr(exc, "headers", None))  # fmt: skip

    @app.exception_handler(RequestValidationError)
    async def bad_value(request: Request, exc: RequestValidationError) -> Response:
        """A query or form value a page cannot take: a 422 page naming the field, for a browser."""
        if not wants_html(request):
            return await validation_error(request, exc)
        fields = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ())[1:]) or 'the request'}: {err.get('msg', 'invalid')}"
            for err in exc.errors()[:5]
        )
        return error_page(request, 422, f"The request has a value this page cannot take ({fields}).",
                          user=_page_user(request))  # fmt: skip

    @app.exception_handler(Exception)
    def server_error(request: Request, exc: Exception) -> Response:
        """A 500 says only that something failed and a reference to find in the log: never the
        exception's text (it may quote a connection string) nor a traceback. A busy store (raised
        in a middleware, outside the handlers above) is a 503 here too."""
        if retryable(exc):
            return domain_error(request, StoreBusy())
        ref = secrets.token_hex(4)
        log.error("unhandled error, reference %s: %s %s (%s)", ref, request.method, request.url.path,
                  type(exc).__name__)  # fmt: skip
        detail = f"The server could not answer this request. Reference {ref} (in the service log)."
        if wants_html(request):
            return error_page(request, 500, detail)
        return JSONResponse({"detail": detail}, status_code=500)

    @app.exception_handler(LoginRequired)
    def to_login(request: Request, exc: LoginRequired) -> Response:
        return RedirectResponse("/login", status_code=303)

    return app


def wants_html(request: Request) -> bool:
    """A browser asking for a page: not /api, and text/html accepted ahead of JSON."""
    path = request.url.path
    if path == "/api" or path.startswith("/api/") or path == "/openapi.json":
        return False
    accept = request.headers.get("accept", "").lower()
    html, json = accept.find("text/html"), accept.find("application/json")
    return html >= 0 and (json < 0 or html < json)


def _page_user(request: Request) -> CurrentUser | None:
    """The signed-in user for an error page's navigation; None when there is none or no session."""
    if "session" not in request.scope:
        return None
    try:
        return current_user(request)
    except Exception:  # the store may be what failed
        return None
