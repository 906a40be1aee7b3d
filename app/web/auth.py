"""Sessions, roles, CSRF and the login rate limit for the web UI and the JSON API."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Depends, Form, HTTPException, Request, status

from app.store.users import role_at_least

SESSION_USER = "user"
SESSION_ROLE = "role"
SESSION_CSRF = "csrf"


def session_secret(fernet_key: bytes) -> str:
    """A cookie-signing secret derived from the credentials key, so there is one secret to keep."""
    return hmac.new(fernet_key, b"tierwise session cookies", hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class CurrentUser:
    username: str
    role: str
    via_token: bool = False  # bearer-token requests carry no cookie, so no CSRF check applies


class LoginRequired(Exception):
    """Raised for pages: the handler redirects to the login page."""


def current_user(request: Request) -> CurrentUser | None:
    user, role = request.session.get(SESSION_USER), request.session.get(SESSION_ROLE)
    if not user or not role:
        return None
    return CurrentUser(str(user), str(role))


def csrf_token(request: Request) -> str:
    token = request.session.get(SESSION_CSRF)
    if not token:
        token = secrets.token_urlsafe(32)
        request.session[SESSION_CSRF] = token
    return str(token)


def check_csrf(request: Request, submitted: str | None) -> None:
    expected = request.session.get(SESSION_CSRF)
    if not expected or not submitted or not hmac.compare_digest(str(expected), submitted):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "missing or wrong CSRF token; reload the page and try again"
        )


def page_user(request: Request) -> CurrentUser:
    user = current_user(request)
    if user is None:
        raise LoginRequired()
    return user


def api_user(request: Request) -> CurrentUser:
    """A session (cookie) or an API token (`Authorization: Bearer tw_…`)."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        from datetime import UTC, datetime

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
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "log in first", {"WWW-Authenticate": "Bearer"})
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
    """At most `attempts` failed logins per user name and client address in `window_s`."""

    def __init__(self, attempts: int = 5, window_s: float = 300.0) -> None:
        self.attempts, self.window_s = attempts, window_s
        self._failures: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        q = self._failures[key]
        while q and now - q[0] > self.window_s:
            q.popleft()
        return q

    def blocked(self, username: str, client: str) -> bool:
        with self._lock:
            return len(self._recent((username.lower(), client), time.monotonic())) >= self.attempts

    def failed(self, username: str, client: str) -> None:
        with self._lock:
            now = time.monotonic()
            self._recent((username.lower(), client), now).append(now)

    def succeeded(self, username: str, client: str) -> None:
        with self._lock:
            self._failures.pop((username.lower(), client), None)
