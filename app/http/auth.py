"""Sessions, roles, CSRF and the login rate limit for the web UI and the JSON API.

A login is a row in the store (app.store.users); the signed cookie carries only its random id, so
logout and revocation end it for every copy of the cookie, and the role is read afresh per request.
A login unused for `session_idle_minutes` ends at its next request (the page says so at the login
form); every request renews it (the store writes the time it was last used at most once a minute)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fastapi import Depends, Form, HTTPException, Request, status

from app.store.users import IdleEnded, end_session, role_at_least, session_user, start_session

SESSION_ID = "sid"  # the only thing the cookie holds once logged in
SESSION_CSRF = "csrf"  # before login only: the login form's CSRF token


def session_secret(fernet_key: bytes) -> str:
    """A cookie-signing secret derived from the credentials key, so there is one secret to keep."""
    return hmac.new(fernet_key, b"tierwise session cookies", hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class CurrentUser:
    username: str
    role: str
    via_token: bool = False  # bearer-token requests carry no cookie, so no CSRF check applies


@dataclass(frozen=True)
class _Login:
    user: CurrentUser
    csrf: str


class LoginRequired(Exception):
    """Raised for pages: the handler redirects to the login page."""


class SessionIdle(LoginRequired):
    """Raised for pages when this request found its login idle and ended it: the login page says why
    (app.web.security redirects with the message)."""

    def __init__(self, minutes: int) -> None:
        super().__init__(minutes)
        self.minutes = minutes

    @property
    def message(self) -> str:
        return f"Your session ended after {self.minutes} minutes without activity. Log in again."


def _login(request: Request) -> _Login | None:
    """The live login behind the request's cookie, looked up once per request. The role is the user's
    role now, not the one at login; an ended, expired, idle or disabled login drops the id from the
    cookie (an idle one is ended in the store too, and the request remembers why)."""
    if hasattr(request.state, "tw_login"):
        cached: _Login | None = request.state.tw_login
        return cached
    found: _Login | None = None
    idle_minutes = 0
    sid = request.session.get(SESSION_ID)
    if sid:
        state = request.app.state.tierwise
        limit = state.settings.session_idle_minutes
        now = datetime.now(UTC)
        with state.store.session() as s:
            try:
                live = session_user(
                    s, str(sid), now=now, idle_limit=timedelta(minutes=limit) if limit > 0 else None
                )
            except IdleEnded:
                live, idle_minutes = None, limit
            if live is not None:
                found = _Login(CurrentUser(live[0].username, live[0].role), live[1].csrf)
        if found is None:
            request.session.pop(SESSION_ID, None)
    request.state.tw_login = found
    request.state.tw_idle_minutes = idle_minutes
    return found


def _idle_minutes(request: Request) -> int:
    """The idle limit that ended this request's login (0: it did not end for idleness)."""
    _login(request)
    return int(getattr(request.state, "tw_idle_minutes", 0))


def current_user(request: Request) -> CurrentUser | None:
    login = _login(request)
    return None if login is None else login.user


def log_in(request: Request, *, user_id: int, username: str, role: str, now: datetime) -> None:
    """Start a server-side session for the user (a fresh id and CSRF token at every login; the login this
    browser had before, if any, ends). Call it outside other store sessions (SQLite has one writer)."""
    state = request.app.state.tierwise
    old = request.session.get(SESSION_ID)
    with state.store.session() as s:
        if old:
            end_session(s, str(old))
        lifetime = timedelta(hours=state.settings.session_hours)
        sid, csrf = start_session(s, user_id=user_id, role=role, now=now, lifetime=lifetime)
    request.session.clear()
    request.session[SESSION_ID] = sid
    request.state.tw_login = _Login(CurrentUser(username, role), csrf)


def log_out(request: Request) -> None:
    """End this login in the store, so a copy of the cookie taken before stops working too."""
    sid = request.session.get(SESSION_ID)
    if sid:
        with request.app.state.tierwise.store.session() as s:
            end_session(s, str(sid))
    request.session.clear()
    request.state.tw_login = None


def session_id(request: Request) -> str | None:
    """This request's session id (to keep it when its user changes their password)."""
    return None if _login(request) is None else str(request.session.get(SESSION_ID))


def csrf_token(request: Request) -> str:
    login = _login(request)
    if login is not None:
        return login.csrf
    token = request.session.get(SESSION_CSRF)
    if not token:
        token = secrets.token_urlsafe(32)
        request.session[SESSION_CSRF] = token
    return str(token)


def check_csrf(request: Request, submitted: str | None) -> None:
    login = _login(request)
    expected = login.csrf if login is not None else request.session.get(SESSION_CSRF)
    if not expected or not submitted or not hmac.compare_digest(str(expected), submitted):
        idle = _idle_minutes(request)
        if idle:  # the form's login just ended for idleness: log in again, not "reload the page"
            raise SessionIdle(idle)
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "missing or wrong CSRF token; reload the page and try again"
        )


def page_user(request: Request) -> CurrentUser:
    user = current_user(request)
    if user is None:
        idle = _idle_minutes(request)
        raise SessionIdle(idle) if idle else LoginRequired()
    return user


def api_user(request: Request) -> CurrentUser:
    """A session (cookie) or an API token (`Authorization: Bearer tw_…`)."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        from app.store.tokens import user_for_token

        with request.app.state.tierwise.store.session() as s:
            owner = user_for_token(s, header[7:].strip(), now=datetime.now(UTC))
            if owner is None:
                raise HTTPException(
                    status.HTTP_401_UNAUTHORIZED,
                    "unknown or revoked API token",
                    {"WWW-Authenticate": "Bearer"},
                )
            return CurrentUser(owner.username, owner.role, via_token=True)
    user = current_user(request)
    if user is None:
        idle = _idle_minutes(request)
        detail = (
            f"the session ended after {idle} minutes without activity; log in again"
            if idle
            else "log in first"
        )
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, detail, {"WWW-Authenticate": "Bearer"})
    return user


def require(user: CurrentUser, role: str) -> None:
    if not role_at_least(user.role, role):
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"this needs the {role} role (you are {user.role})")


def form_user(role: str) -> Callable[..., CurrentUser]:
    """A dependency for the pages' POST forms: a logged-in session (else the login page), the form's
    `csrf_token` field matching the session's (missing or wrong: 403), then at least `role` (403);
    in that order, as every form did by hand before. Checked before the route's own form fields."""

    def dependency(
        request: Request,
        user: CurrentUser = Depends(page_user),
        csrf_token_field: str = Form("", alias="csrf_token"),
    ) -> CurrentUser:
        check_csrf(request, csrf_token_field)
        require(user, role)
        return user

    dependency.__name__ = f"form_user_{role}"
    return dependency


class LoginLimiter:
    """Failed logins, counted in this process over a sliding window (`window_s`, 5 minutes), by two
    rules that hold together (docs/security.md, "Login throttling"):

    - per account: `per_account` (5) failures for one user name (any case), from any addresses,
      block that account's logins;
    - per source address: `per_address` (10) failures from one client address, whatever user names
      they tried, block every login from that address: a password sprayed across many names gets
      ten tries, not one per name.

    A blocked login is refused before its password is checked, so the right password is refused
    too, until enough counted failures have left the window. A success clears its account's count,
    never its address's (one good account does not reset a spray). The address is the one uvicorn
    resolved (`request.client.host`): the socket's peer, or a trusted proxy's X-Forwarded-For
    (TIERWISE_TRUSTED_PROXIES)."""

    MAX_KEYS = 10_000  # above this many tracked names and addresses, expired ones are dropped

    def __init__(
        self,
        per_account: int = 5,
        per_address: int = 10,
        window_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_account, self.per_address, self.window_s = per_account, per_address, window_s
        self._clock = clock
        self._accounts: dict[str, deque[float]] = {}
        self._addresses: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, table: dict[str, deque[float]], key: str, now: float) -> deque[float]:
        q = table.get(key)
        if q is None:
            return deque()
        while q and now - q[0] >= self.window_s:
            q.popleft()
        if not q:
            del table[key]
        return q

    def retry_after(self, username: str, client: str) -> float:
        """Seconds until a login for `username` from `client` is allowed again (0: it is now)."""
        with self._lock:
            now = self._clock()
            waits = [0.0]
            for table, key, limit in (
                (self._accounts, username.lower(), self.per_account),
                (self._addresses, client, self.per_address),
            ):
                q = self._recent(table, key, now)
                if len(q) >= limit:  # allowed once the failure that makes the count `limit` expires
                    waits.append(q[len(q) - limit] + self.window_s - now)
            return max(waits)

    def blocked(self, username: str, client: str) -> bool:
        return self.retry_after(username, client) > 0

    def failed(self, username: str, client: str) -> None:
        with self._lock:
            now = self._clock()
            for table, key in ((self._accounts, username.lower()), (self._addresses, client)):
                q = self._recent(table, key, now)
                q.append(now)
                table[key] = q
                if len(table) > self.MAX_KEYS:
                    for k in list(table):
                        self._recent(table, k, now)

    def succeeded(self, username: str, client: str) -> None:
        with self._lock:
            self._accounts.pop(username.lower(), None)
