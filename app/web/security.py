"""Response headers every answer carries, a request-body limit applied before anything reads the body
(login checks included), and validation errors that never echo large or non-JSON inputs back."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from typing import Any
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.http.auth import CurrentUser, SessionIdle, api_user, page_user

MAX_BODY_BYTES = 2 * 1024 * 1024  # the largest legitimate body is a policy YAML of a few tens of KB
MAX_ECHO_CHARS = 100  # how much of a rejected input a 422 shows

# Scripts only from our own static files: no inline script, no handler attribute, no eval. Inline style
# attributes are not allowed either (every page's styles are in /static). Charts are inline SVG.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)


class SecurityHeaders:
    """Adds the headers above to every HTTP response (a route may set its own CSP: it is kept)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in HEADERS if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class _TooLarge(HTTPException):
    """Raised from the body stream: an HTTPException, so that FastAPI, reading a form or JSON body,
    passes it on as a 413 instead of wrapping it in a 400."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"request body too large (at most {max_bytes} bytes)")


class BodyLimit:
    """Refuses request bodies over `max_bytes` with 413 before the application reads them: a declared
    Content-Length over the limit is refused unread, and a streamed (chunked) body is counted and cut
    off at the limit. Runs outside the routes, so an anonymous client cannot make the server buffer
    a large body before its login is checked."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def _refuse(self, send: Send) -> None:
        body = b'{"detail":"request body too large (at most %d bytes)"}' % self.max_bytes
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.max_bytes:
                    await self._refuse(send)
                    return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge(self.max_bytes)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _TooLarge:
            if not started:
                await self._refuse(send)
        except Exception as exc:  # FastAPI wraps body-reading errors; unwrap ours
            if not started and _caused_by_too_large(exc):
                await self._refuse(send)
            else:
                raise


def _caused_by_too_large(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, _TooLarge):
            return True
        if isinstance(seen, BaseExceptionGroup):
            return any(_caused_by_too_large(e) for e in seen.exceptions)
        seen = seen.__cause__ or seen.__context__
    return False


def _short(value: Any) -> Any:
    """A rejected input as a 422 may show it: non-finite numbers as text, long text and large
    collections cut (the client sent them; echoing megabytes back helps nobody)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return (
            value if len(value) <= MAX_ECHO_CHARS else value[:MAX_ECHO_CHARS] + f"… ({len(value)} characters)"
        )
    if isinstance(value, dict):
        if len(value) > 20:
            return f"(an object of {len(value)} keys)"
        return {str(_short(k)): _short(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if len(value) > 20:
            return f"(a list of {len(value)} items)"
        return [_short(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _short(str(value))


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 with each error's location and message; its `input` shortened (see _short), and `ctx`
    made JSON-safe (a NaN there used to turn the 422 into a 500)."""
    assert isinstance(exc, RequestValidationError)
    errors = []
    for err in exc.errors():
        out = {k: v for k, v in err.items() if k not in ("input", "ctx", "url")}
        if "input" in err:
            out["input"] = _short(err["input"])
        if "ctx" in err:
            out["ctx"] = _short(jsonable_encoder(err["ctx"], custom_encoder={Exception: str}))
        errors.append(out)
    return JSONResponse({"detail": errors}, status_code=422)


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


class FiniteJson:
    """Refuses JSON request bodies that contain NaN or Infinity (not JSON, but Python's parser takes
    them) with 422, before a route sees a non-finite number. Bodies are small here (BodyLimit runs
    first), so reading one twice costs nothing worth keeping a non-standard number for."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # the first Content-Type, as Starlette reads it; none at all is parsed as JSON by FastAPI too
        ctypes = [v for k, v in scope.get("headers", []) if k == b"content-type"]
        ctype = ctypes[0].split(b";")[0].strip().lower() if ctypes else b""
        if scope["type"] != "http" or not (ctype in (b"", b"application/json") or ctype.endswith(b"+json")):
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            json.loads(body, parse_constant=_reject_constant)
        except ValueError as exc:
            if str(exc) in ("NaN", "Infinity", "-Infinity"):
                detail = [{"type": "finite_number", "loc": ["body"], "msg": f"{exc} is not a JSON number"}]
                response = JSONResponse({"detail": detail}, status_code=422)
                await response(scope, receive, send)
                return
            # other malformed JSON: the route answers it as usual

        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _docs_csp(html: str) -> str:
    """The API docs page is FastAPI's Swagger UI: its bundle from the CDN and one inline script, allowed
    by its hash (nothing of ours or of a user is in it)."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(m.encode()).digest()).decode() + "'"
        for m in re.findall(r"<script>(.*?)</script>", html, re.S)
    )
    cdn = "https://cdn.jsdelivr.net"
    return (
        f"default-src 'self'; script-src 'self' {cdn} {hashes}; style-src 'self' {cdn} 'unsafe-inline'; "
        "img-src 'self' data: https://fastapi.tiangolo.com; connect-src 'self'; object-src 'none'; "
        "base-uri 'none'; frame-ancestors 'none'"
    )


def idle_to_login(request: Request, exc: Exception) -> Response:
    """A page whose login just ended for idleness: to the login form, which says why (the handler
        of its base class, LoginRequired, redirects without a word). A code, not the words: the login
    page never shows text taken from its URL, so a link cannot make it say something we did not."""
    assert isinstance(exc, SessionIdle)
    return RedirectResponse("/login?" + urlencode({"ended": "idle"}), status_code=303)


def install(app: FastAPI, *, max_body_bytes: int = MAX_BODY_BYTES) -> None:
    """Headers, body limit, non-finite JSON and short 422s, idle logins sent to the login form with
    a message; /openapi.json and /docs behind login
    (create the app with docs_url, redoc_url and openapi_url set to None). Call after the session
    middleware is added: these wrap it."""
    app.add_middleware(FiniteJson)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(SecurityHeaders)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(SessionIdle, idle_to_login)

    @app.get("/openapi.json", include_in_schema=False)
    def openapi(user: CurrentUser = Depends(api_user)) -> dict[str, Any]:
        return app.openapi()

    @app.get("/docs", include_in_schema=False)
    def docs(user: CurrentUser = Depends(page_user)) -> HTMLResponse:
        page = get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} API")
        page.headers["Content-Security-Policy"] = _docs_csp(bytes(page.body).decode())
        return page
