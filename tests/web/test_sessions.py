"""Server-side sessions: a copy of the cookie taken before logout, a role change, a password change or
the user's deletion stops working (the signed cookie alone used to stay valid for its 12 hours)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.settings import Settings
from app.store.db import Store
from app.store.models import User, WebSession
from app.store.users import delete_user, set_password, set_role
from tests.web.conftest import PASSWORD, csrf_of, login

COOKIE = "tierwise_session"


def _copy(client: TestClient) -> str:
    value = client.cookies.get(COOKIE)
    assert value, "no session cookie after login"
    return str(value)


def _as(client: TestClient, cookie: str, url: str = "/api/session") -> int:
    """The status a request with exactly this cookie gets (nothing else from the client's jar)."""
    client.cookies.clear()
    r = client.get(url, headers={"Cookie": f"{COOKIE}={cookie}"}, follow_redirects=False)
    return int(r.status_code)


def _store(settings: Settings) -> Store:
    return Store(settings.database_url, migrate=False)


def _payload(cookie: str) -> dict[str, object]:
    data = cookie.split(".")[0]
    decoded: dict[str, object] = json.loads(base64.b64decode(data + "=" * (-len(data) % 4)))
    return decoded


def test_cookie_holds_only_a_random_session_id_and_the_store_only_its_hash(
    app_client: TestClient, web_settings: Settings
) -> None:
    c = login(app_client, "ada")
    payload = _payload(_copy(c))
    assert set(payload) == {"sid"} and len(str(payload["sid"])) >= 40
    store = _store(web_settings)
    with store.session() as s:
        rows = list(s.scalars(select(WebSession)))
        assert len(rows) == 1 and rows[0].role_at_login == "admin"
        assert rows[0].id_sha256 != payload["sid"] and len(rows[0].id_sha256) == 64
        assert rows[0].expires_at - rows[0].created_at == timedelta(hours=web_settings.session_hours)
    store.dispose()


def test_copied_cookie_is_refused_after_logout(app_client: TestClient) -> None:
    c = login(app_client, "abe")
    copy = _copy(c)
    assert c.get("/api/session").json()["role"] == "approver"
    token = csrf_of(c.get("/").text)
    assert c.post("/logout", data={"csrf_token": token}, follow_redirects=False).status_code == 303
    assert _as(c, copy) == 401
    assert _as(c, copy, "/recommendations") == 303  # a page sends it to the login form


def test_copied_cookie_is_refused_after_role_change(app_client: TestClient, web_settings: Settings) -> None:
    c = login(app_client, "ada")
    copy = _copy(c)
    assert _as(c, copy) == 200
    store = _store(web_settings)
    with store.session() as s:
        set_role(s, username="ada", role="viewer")
    store.dispose()
    assert _as(c, copy) == 401
    assert login(c, "ada").get("/api/session").json()["role"] == "viewer"


def test_copied_cookie_is_refused_after_user_deletion(app_client: TestClient, web_settings: Settings) -> None:
    c = login(app_client, "vera")
    copy = _copy(c)
    store = _store(web_settings)
    with store.session() as s:
        delete_user(s, username="vera")
    with store.session() as s:
        assert s.scalar(select(WebSession)) is None
    store.dispose()
    assert _as(c, copy) == 401


def test_password_change_ends_the_other_sessions_and_keeps_the_current_one(
    app_client: TestClient, web_settings: Settings
) -> None:
    first = _copy(login(app_client, "abe"))
    app_client.cookies.clear()
    second = _copy(login(app_client, "abe"))
    assert first != second and _as(app_client, first) == 200 and _as(app_client, second) == 200
    store = _store(web_settings)
    with store.session() as s:
        set_password(s, username="abe", password="a new long password", keep_sid=str(_payload(second)["sid"]))
    store.dispose()
    assert _as(app_client, first) == 401
    assert _as(app_client, second) == 200


def test_role_is_read_from_the_user_on_each_request(app_client: TestClient, web_settings: Settings) -> None:
    """The role at login is a snapshot for the record: a role changed in the store (even without a
    revocation) applies at once, and a disabled user's session is refused."""
    c = login(app_client, "ada")
    store = _store(web_settings)
    with store.session() as s:
        user = s.scalar(select(User).where(User.username == "ada"))
        assert user is not None
        user.role = "viewer"
    assert c.get("/api/session").json()["role"] == "viewer"
    token = csrf_of(c.get("/targets").text)
    r = c.post("/targets/x/remove", data={"csrf_token": token}, follow_redirects=False)
    assert r.status_code == 403
    with store.session() as s:
        user = s.scalar(select(User).where(User.username == "ada"))
        assert user is not None
        user.disabled = True
    store.dispose()
    assert c.get("/api/session").status_code == 401


def test_expired_session_is_refused(app_client: TestClient, web_settings: Settings) -> None:
    c = login(app_client, "vera")
    copy = _copy(c)
    store = _store(web_settings)
    with store.session() as s:
        row = s.scalar(select(WebSession))
        assert row is not None
        row.expires_at = datetime.now(UTC) - timedelta(seconds=1)
    store.dispose()
    assert _as(c, copy) == 401


def test_login_ends_the_browsers_previous_session(app_client: TestClient) -> None:
    """A new login in the same browser ends the session it had: no orphan stays valid."""
    c = login(app_client, "vera")
    before = _copy(c)
    token = csrf_of(c.get("/login").text)
    r = c.post("/login", data={"username": "abe", "password": PASSWORD, "csrf_token": token},
               follow_redirects=False)  # fmt: skip
    assert r.status_code == 303
    after = _copy(c)
    assert c.get("/api/session").json()["username"] == "abe"
    assert _as(c, before) == 401 and _as(c, after) == 200


def test_changing_your_password_on_the_account_page_ends_your_other_sessions(app_client: TestClient) -> None:
    other = _copy(login(app_client, "vera"))  # another browser
    app_client.cookies.clear()
    c = login(app_client, "vera")
    mine = _copy(c)
    token = csrf_of(c.get("/account").text)
    wrong = c.post("/account/password", data={"current": "nope", "new": "n3w password", "again": "n3w password",
                                              "csrf_token": token})  # fmt: skip
    assert wrong.status_code == 422 and "current password is wrong" in wrong.text
    assert _as(c, other) == 200
    c.cookies.set(COOKIE, mine)
    r = c.post("/account/password", data={"current": PASSWORD, "new": "n3w password", "again": "n3w password",
                                          "csrf_token": token}, follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == "/account"
    assert _as(c, other) == 401
    assert _as(c, mine) == 200
    c.cookies.set(COOKIE, mine)
    assert "password changed; your other sessions have ended" in c.get("/account").text  # its flash
    app_client.cookies.clear()
    login(app_client, "vera", "n3w password")


def test_the_account_page_limits_password_guesses(app_client: TestClient) -> None:
    """Someone holding a stolen cookie cannot guess the current password there without limit."""
    c = login(app_client, "vera")
    token = csrf_of(c.get("/account").text)
    codes = [
        c.post(
            "/account/password",
            data={
                "current": f"guess {i}",
                "new": "n3w password",
                "again": "n3w password",
                "csrf_token": token,
            },
        ).status_code
        for i in range(6)
    ]
    assert codes[:5] == [422] * 5 and codes[5] == 429
    blocked = c.post("/account/password", data={"current": PASSWORD, "new": "n3w password",
                                                "again": "n3w password", "csrf_token": token})  # fmt: skip
    assert blocked.status_code == 429  # even the right one, until the window passes


def _token(settings: Settings, username: str, name: str) -> tuple[int, str]:
    from app.store.models import ApiToken
    from app.store.tokens import create_token

    store = _store(settings)
    with store.session() as s:
        user = s.scalars(select(User).where(User.username == username)).one()
        token = create_token(s, user=user, name=name, now=datetime.now(UTC))
        token_id = s.scalars(select(ApiToken.id).where(ApiToken.name == name)).one()
    store.dispose()
    return token_id, token


def test_the_account_page_lists_and_revokes_your_own_tokens(
    app_client: TestClient, web_settings: Settings
) -> None:
    from app.store.models import AuditEvent

    mine, token = _token(web_settings, "vera", "grafana")
    theirs, _ = _token(web_settings, "ada", "backup-job")
    login(app_client, "vera")
    page = app_client.get("/account")
    assert "grafana" in page.text and f"/account/tokens/{mine}/revoke" in page.text
    assert "backup-job" not in page.text and token not in page.text
    # without the form's CSRF token: refused, the token still works
    bad = app_client.post(f"/account/tokens/{mine}/revoke", data={"csrf_token": "x"}, follow_redirects=False)
    assert bad.status_code == 403
    app_client.cookies.clear()
    assert app_client.get("/api/session", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    login(app_client, "vera")
    csrf = csrf_of(app_client.get("/account").text)
    other = app_client.post(f"/account/tokens/{theirs}/revoke", data={"csrf_token": csrf})
    assert f"no API token #{theirs} of yours" in other.text  # someone else's id is unknown
    done = app_client.post(f"/account/tokens/{mine}/revoke", data={"csrf_token": csrf})
    assert done.status_code == 200 and f"API token #{mine} (grafana) revoked" in done.text
    assert "grafana" not in done.text.split("revoked")[-1]  # gone from the list
    app_client.cookies.clear()
    assert app_client.get("/api/session", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    store = _store(web_settings)
    with store.session() as s:
        events = list(s.scalars(select(AuditEvent).where(AuditEvent.action == "revoke_token")))
    store.dispose()
    assert [(e.username, e.subject_id) for e in events] == [("vera", "vera")]


def test_the_login_page_says_how_to_create_the_first_admin(settings: Settings) -> None:
    from app.main import create_app

    with TestClient(create_app(settings.model_copy(update={"scheduler_enabled": False}))) as client:
        page = client.get("/login").text
        assert "tierwise users add NAME --role admin" in page
        # a first try at logging in on the empty store keeps the hint
        r = client.post("/login", data={"username": "ada", "password": PASSWORD, "csrf_token": csrf_of(page)})
        assert "Wrong user name or password" in r.text and "tierwise users add NAME --role admin" in r.text
    store = _store(settings)
    with store.session() as s:
        from app.store.users import add_user

        add_user(s, username="ada", password=PASSWORD, role="admin", now=datetime.now(UTC))
    store.dispose()
    with TestClient(create_app(settings.model_copy(update={"scheduler_enabled": False}))) as client:
        assert "tierwise users add NAME --role admin" not in client.get("/login").text
