"""The client's address and the login throttle (issue #33 item 4), through a real uvicorn server:
X-Forwarded-For counts only from a trusted proxy; failures are throttled by account and by
source address (a password sprayed across many names included); the right password is refused
while a login is throttled."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy import select

from app.http.auth import LoginLimiter
from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.models import AuditEvent
from app.store.users import add_user
from tests.conftest import live_server
from tests.web.conftest import PASSWORD, csrf_of

USERS = ("ada", "abe", "vera")


@pytest.fixture
def server_settings(settings: Settings) -> Settings:
    store = Store(settings.database_url)
    with store.session() as s:
        for name in USERS:
            add_user(s, username=name, password=PASSWORD, role="viewer", now=datetime.now(UTC))
    store.dispose()
    return settings.model_copy(update={"scheduler_enabled": False})


@contextmanager
def serve(settings: Settings, limiter: LoginLimiter | None = None) -> Iterator[str]:
    app = create_app(settings)
    with live_server(settings, app) as url:
        if limiter is not None:
            app.state.tierwise.limiter = limiter
        yield url


def attempt(url: str, username: str, password: str, forwarded_for: str | None = None) -> httpx.Response:
    """One login as a browser makes it: the form (for its CSRF token and cookie), then the post."""
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    with httpx.Client(base_url=url, headers=headers, follow_redirects=False, timeout=30) as client:
        token = csrf_of(client.get("/login").text)
        return client.post("/login", data={"username": username, "password": password, "csrf_token": token})


def login_audits(settings: Settings) -> list[str]:
    store = Store(settings.database_url)
    try:
        with store.session() as s:
            return list(
                s.scalars(
                    select(AuditEvent.summary).where(AuditEvent.action == "login").order_by(AuditEvent.id)
                )
            )
    finally:
        store.dispose()


# --- the limiter's rules, on its own clock ----------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_five_failures_block_an_account_from_every_address() -> None:
    clock = Clock()
    limiter = LoginLimiter(clock=clock)
    for n in range(5):
        assert not limiter.blocked("Ada", f"10.0.0.{n}")
        limiter.failed("Ada", f"10.0.0.{n}")
    assert limiter.blocked("ada", "10.9.9.9")  # any case, any address
    assert not limiter.blocked("abe", "10.9.9.9")
    clock.now += 299
    assert limiter.retry_after("ada", "10.9.9.9") == pytest.approx(1)
    clock.now += 1
    assert not limiter.blocked("ada", "10.9.9.9")


def test_ten_failures_from_one_address_block_it_whatever_the_names() -> None:
    clock = Clock()
    limiter = LoginLimiter(clock=clock)
    for n in range(10):
        assert not limiter.blocked(f"user{n}", "10.0.0.1")
        limiter.failed(f"user{n}", "10.0.0.1")
        clock.now += 1
    assert limiter.blocked("someone-else", "10.0.0.1")
    assert not limiter.blocked("someone-else", "10.0.0.2")
    # the oldest failure leaves the window first: one more attempt is allowed then
    assert limiter.retry_after("x", "10.0.0.1") == pytest.approx(300 - 10)


def test_a_success_clears_its_account_but_not_its_address() -> None:
    limiter = LoginLimiter(clock=Clock())
    for n in range(9):
        limiter.failed(f"user{n}", "10.0.0.1")
    for _ in range(4):
        limiter.failed("ada", "10.0.0.2")
    limiter.succeeded("ada", "10.0.0.2")
    limiter.succeeded("user0", "10.0.0.1")
    limiter.failed("ada", "10.0.0.2")
    assert not limiter.blocked("ada", "10.0.0.3")  # one failure since the success
    limiter.failed("user9", "10.0.0.1")
    assert limiter.blocked("anyone", "10.0.0.1")  # the address's nine failures still count


def test_tracked_names_stay_bounded() -> None:
    clock = Clock()
    limiter = LoginLimiter(clock=clock)
    limiter.MAX_KEYS = 50
    for n in range(200):
        limiter.failed(f"name{n}", f"10.0.{n}.1")
        clock.now += 10  # each failure has expired before the 31st next
    assert len(limiter._accounts) <= 51 and len(limiter._addresses) <= 51


# --- through uvicorn ----------------------------------------------------------------------------


def test_forged_forwarded_for_from_loopback_is_ignored(server_settings: Settings) -> None:
    assert server_settings.trusted_proxies == ""  # the default: no proxy is trusted
    with serve(server_settings) as url:
        r = attempt(url, "abe", PASSWORD, forwarded_for="203.0.113.9")
        assert r.status_code == 303
        # rotating the header does not spread the failures over fake addresses
        for n in range(5):
            r = attempt(url, "ada", "wrong", forwarded_for=f"198.51.100.{n}")
            assert r.status_code == 200 and "Wrong user name or password" in r.text
        r = attempt(url, "ada", PASSWORD, forwarded_for="198.51.100.77")
        assert r.status_code == 429 and "Too many failed logins" in r.text
        assert 0 < int(r.headers["Retry-After"]) <= 300
    assert login_audits(server_settings) == ["logged in from 127.0.0.1"]


def test_a_trusted_proxy_s_forwarded_address_is_the_client(server_settings: Settings) -> None:
    trusted = server_settings.model_copy(update={"trusted_proxies": "127.0.0.1, 10.0.0.0/8"})
    with serve(trusted) as url:
        assert attempt(url, "abe", PASSWORD, forwarded_for="203.0.113.7").status_code == 303
        # ten failures from one forwarded address block that address, not the proxy's other clients
        for n in range(10):
            assert attempt(url, f"nobody{n}", "wrong", forwarded_for="203.0.113.66").status_code == 200
        assert attempt(url, "vera", PASSWORD, forwarded_for="203.0.113.66").status_code == 429
        assert attempt(url, "vera", PASSWORD, forwarded_for="203.0.113.67").status_code == 303
    assert login_audits(trusted) == ["logged in from 203.0.113.7", "logged in from 203.0.113.67"]


def test_a_password_sprayed_over_twelve_names_is_throttled(server_settings: Settings) -> None:
    with serve(server_settings) as url:
        codes = [attempt(url, f"user{n:02d}", "Spring2025!").status_code for n in range(12)]
        assert codes == [200] * 10 + [429] * 2
        # every account from this address now waits, the real ones included
        assert attempt(url, "ada", PASSWORD).status_code == 429
    assert login_audits(server_settings) == []


def test_the_right_password_is_refused_until_the_window_passes(server_settings: Settings) -> None:
    window = 3.0
    with serve(server_settings, LoginLimiter(window_s=window)) as url:
        for n in range(5):
            assert attempt(url, "ada", "wrong").status_code == 200
            if n == 0:
                first_counted = time.monotonic()  # the failure was recorded before this answer
        r = attempt(url, "ada", PASSWORD)
        assert r.status_code == 429 and "Wrong" not in r.text
        while time.monotonic() - first_counted < window + 0.2:
            time.sleep(0.2)
        assert attempt(url, "ada", PASSWORD).status_code == 303
    assert login_audits(server_settings) == ["logged in from 127.0.0.1"]


def test_no_handler_reads_forwarded_headers_itself() -> None:
    """The client address has one source: uvicorn's resolution (request.client). No code of ours
    names a forwarding header as a string to look it up."""
    import re
    from pathlib import Path

    header = re.compile(r"""["'](x-forwarded-for|x-real-ip|forwarded)["']""", re.IGNORECASE)
    root = Path(__file__).resolve().parents[2] / "app"
    readers = [str(p.relative_to(root)) for p in root.rglob("*.py") if header.search(p.read_text())]
    assert readers == []


def test_trusted_proxies_must_be_addresses() -> None:
    from pydantic import ValidationError

    assert Settings(trusted_proxies=" 10.0.0.5 ,10.1.0.0/16,::1").trusted_proxy_list == [
        "10.0.0.5",
        "10.1.0.0/16",
        "::1",
    ]
    with pytest.raises(ValidationError, match="trusted_proxies") as caught:
        Settings(trusted_proxies="10.0.0.5,proxy.corp")
    assert "'proxy.corp' is not an IP address or network" in str(caught.value)
    with pytest.raises(ValidationError, match="would trust any sender"):
        Settings(trusted_proxies="*")
