"""A login unused for TIERWISE_SESSION_IDLE_MINUTES ends at its next request, in the store too (every
copy of its cookie), and a page sends the browser to the login form saying why; any request renews
it; 0 turns the limit off. Time is moved by ageing the session's row, as the expiry tests do."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.models import WebSession
from app.store.users import add_user
from tests.web.conftest import PASSWORD, login

COOKIE = "tierwise_session"


def _client(settings: Settings, **changes: object) -> Iterator[TestClient]:
    settings = settings.model_copy(update={"demo": False, "scheduler_enabled": False, **changes})
    store = Store(settings.database_url)
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=datetime.now(UTC))
    store.dispose()
    with TestClient(create_app(settings)) as c:
        yield login(c, "vera")


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """The default limit (30 minutes)."""
    yield from _client(settings)


@pytest.fixture
def unlimited(settings: Settings) -> Iterator[TestClient]:
    yield from _client(settings, session_idle_minutes=0)


def _age(client: TestClient, minutes: float) -> None:
    """Make the only login look last used `minutes` ago."""
    with client.app.state.tierwise.store.session() as s:  # type: ignore[attr-defined]
        row = s.scalar(select(WebSession))
        assert row is not None
        row.last_seen_at = datetime.now(UTC) - timedelta(minutes=minutes)


def _last_used(client: TestClient) -> datetime | None:
    with client.app.state.tierwise.store.session() as s:  # type: ignore[attr-defined]
        row = s.scalar(select(WebSession))
        return None if row is None else row.last_seen_at


def test_the_default_limit_is_thirty_minutes() -> None:
    assert Settings().session_idle_minutes == 30


def test_an_idle_login_ends_and_the_page_sends_the_browser_to_log_in_with_a_message(
    client: TestClient,
) -> None:
    cookie = str(client.cookies.get(COOKIE))
    _age(client, 31)
    r = client.get("/recommendations", follow_redirects=False)
    assert r.status_code == 303 and urlsplit(r.headers["location"]).path == "/login"
    assert parse_qs(urlsplit(r.headers["location"]).query) == {"ended": ["idle"]}
    form = client.get(r.headers["location"])
    assert form.status_code == 200
    assert "Your session ended after 30 minutes without activity. Log in again." in form.text
    assert _last_used(client) is None  # ended in the store: a copy of the cookie is refused too
    client.cookies.clear()
    copy = client.get("/api/session", headers={"Cookie": f"{COOKIE}={cookie}"})
    assert copy.status_code == 401 and copy.json() == {"detail": "log in first"}
    assert login(client, "vera").get("/api/session").json()["username"] == "vera"  # log in again


def test_the_api_says_why_an_idle_session_is_refused(client: TestClient) -> None:
    _age(client, 45)
    r = client.get("/api/session")
    assert r.status_code == 401
    assert r.json() == {"detail": "the session ended after 30 minutes without activity; log in again"}
    assert client.get("/api/session").json() == {"detail": "log in first"}  # it is gone now


def test_activity_renews_the_login(client: TestClient) -> None:
    _age(client, 29)
    assert client.get("/recommendations", follow_redirects=False).status_code == 200
    renewed = _last_used(client)
    assert renewed is not None and datetime.now(UTC) - renewed < timedelta(minutes=1)
    _age(client, 29)  # another 29 minutes later: still one request within the limit
    assert client.get("/api/session").status_code == 200


def test_zero_turns_the_idle_limit_off(unlimited: TestClient) -> None:
    _age(unlimited, 11 * 60)  # the absolute expiry (12 h from login) still applies
    assert unlimited.get("/recommendations", follow_redirects=False).status_code == 200


@pytest.mark.parametrize("form", ["/logout", "/recommendations/review"])
def test_a_form_posted_on_an_idle_login_goes_to_the_login_form(client: TestClient, form: str) -> None:
    """Not a 403 for the CSRF token the ended login held: the form's user is sent to log in again."""
    token = client.get("/api/session").json()["csrf_token"]
    _age(client, 31)
    r = client.post(form, data={"csrf_token": token, "action": "approve"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login?ended=idle"


def test_the_login_page_shows_no_text_from_its_url(client: TestClient) -> None:
    """A crafted link cannot make the login page say something (only known codes have words)."""
    page = client.get("/login", params={"error": "Call 555-0100 to restore access", "ended": "idle"})
    assert page.status_code == 200 and "555-0100" not in page.text
    assert client.get("/login", params={"ended": "bogus"}).status_code == 422
