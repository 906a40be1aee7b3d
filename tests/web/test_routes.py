"""Every route: login required, roles, CSRF, and the review trail (TestClient, SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import datetime

import pytest
from fastapi.testclient import TestClient

from tests.web.conftest import PASSWORD, csrf_of, login

PAGES = ["/", "/recommendations", "/recommendations/1"]
API = ["/api/targets", "/api/recommendations", "/api/audit", "/api/session"]


def test_health_needs_no_login(app_client: TestClient) -> None:
    r = app_client.get("/api/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["demo"] is True and body["targets"] > 0
    # cheap state: when data last arrived (one row per target), not counts of the biggest tables
    assert datetime.fromisoformat(body["data_changed_at"]).tzinfo is not None
    assert "samples" not in body and "intervals" not in body


@pytest.mark.parametrize("path", PAGES)
def test_pages_redirect_to_login(app_client: TestClient, path: str) -> None:
    r = app_client.get(path, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login"


@pytest.mark.parametrize("path", API)
def test_api_needs_login(app_client: TestClient, path: str) -> None:
    assert app_client.get(path).status_code == 401


def test_review_post_needs_login(app_client: TestClient) -> None:
    r = app_client.post(
        "/recommendations/review", data={"ids": "1", "action": "approve"}, follow_redirects=False
    )
    assert r.status_code == 303 and r.headers["location"] == "/login"
    assert app_client.post("/api/recommendations/1/review", json={"action": "approve"}).status_code == 401


def test_login_page_and_bad_password(app_client: TestClient) -> None:
    token = csrf_of(app_client.get("/login").text)
    r = app_client.post("/login", data={"username": "abe", "password": "nope", "csrf_token": token})
    assert r.status_code == 200 and "Wrong user name or password" in r.text
    assert app_client.get("/", follow_redirects=False).status_code == 303


def test_login_needs_csrf(app_client: TestClient) -> None:
    app_client.get("/login")
    r = app_client.post("/login", data={"username": "abe", "password": PASSWORD, "csrf_token": "forged"})
    assert r.status_code == 403


def test_login_rate_limit(app_client: TestClient) -> None:
    token = csrf_of(app_client.get("/login").text)
    for _ in range(5):
        app_client.post("/login", data={"username": "abe", "password": "wrong", "csrf_token": token})
    r = app_client.post("/login", data={"username": "abe", "password": PASSWORD, "csrf_token": token})
    assert r.status_code == 429 and "Too many failed logins" in r.text


def test_session_cookie_flags(app_client: TestClient) -> None:
    token = csrf_of(app_client.get("/login").text)
    r = app_client.post("/login", data={"username": "abe", "password": PASSWORD, "csrf_token": token},
                        follow_redirects=False)  # fmt: skip
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie


def test_fleet_page_shows_targets_without_credentials(app_client: TestClient) -> None:
    html = login(app_client, "vera").get("/").text
    assert "demo:SQLPROD01" in html and "demo:DB2PROD01" in html
    assert "simulated" in html
    assert "simulator:instance" not in html  # the stored connection is never rendered
    targets = app_client.get("/api/targets").json()
    assert {t["name"] for t in targets} == {"demo:SQLPROD01", "demo:DB2PROD01"}
    assert all("connection" not in t for t in targets)
    assert sum(t["open_recommendations"] for t in targets) > 0


def test_viewer_sees_but_cannot_review(app_client: TestClient) -> None:
    page = login(app_client, "vera").get("/recommendations").text
    assert "FG_HOT_INDEX" in page
    assert "Approve selected" not in page
    r = app_client.post("/recommendations/review",
                        data={"ids": "1", "action": "approve", "csrf_token": csrf_of(page)})  # fmt: skip
    assert r.status_code == 403
    token = app_client.get("/api/session").json()["csrf_token"]
    r = app_client.post(
        "/api/recommendations/1/review", json={"action": "approve"}, headers={"X-CSRF-Token": token}
    )
    assert r.status_code == 403


def test_approver_reviews_with_comment_and_audit(app_client: TestClient) -> None:
    page = login(app_client, "abe").get("/recommendations").text
    rec = app_client.get("/api/recommendations", params={"status": "open"}).json()["items"][0]
    r = app_client.post(
        "/recommendations/review",
        data={"ids": [str(rec["id"])], "action": "approve", "comment": "window Sat 01:00", "csrf_token": csrf_of(page),
              "back": "/recommendations"},
    )  # fmt: skip
    assert r.status_code == 200 and "approve: 1 recommendation(s) by abe" in r.text
    after = app_client.get("/api/recommendations", params={"status": "approved"}).json()["items"]
    assert [(a["id"], a["reviewed_by"], a["review_comment"]) for a in after] == [
        (rec["id"], "abe", "window Sat 01:00")
    ]
    events = app_client.get("/api/audit").json()
    assert events[0]["action"] == "approve" and events[0]["username"] == "abe"
    assert events[0]["comment"] == "window Sat 01:00" and rec["name"] in events[0]["summary"]
    assert "window Sat 01:00" in app_client.get("/recommendations").text  # audit log on the page


def test_api_review_needs_csrf_header_and_rejects_bad_actions(app_client: TestClient) -> None:
    login(app_client, "abe")
    rec = app_client.get("/api/recommendations").json()["items"][0]
    url = f"/api/recommendations/{rec['id']}/review"
    assert app_client.post(url, json={"action": "reject"}).status_code == 403
    token = app_client.get("/api/session").json()["csrf_token"]
    r = app_client.post(url, json={"action": "explode"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 422 and "approve" in r.text  # an unknown action is refused before any lookup
    r = app_client.post(url, json={"action": "reject", "comment": "not now"}, headers={"X-CSRF-Token": token})
    assert r.status_code == 200 and r.json()["status"] == "rejected"
    r = app_client.post(
        "/api/recommendations/999999/review", json={"action": "reject"}, headers={"X-CSRF-Token": token}
    )
    assert r.status_code == 404


def test_review_never_redirects_off_site(app_client: TestClient) -> None:
    page = login(app_client, "abe").get("/recommendations").text
    r = app_client.post("/recommendations/review",
                        data={"ids": "1", "action": "defer", "csrf_token": csrf_of(page), "back": "https://evil.example/"},
                        follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == "/recommendations"


def test_logout(app_client: TestClient) -> None:
    page = login(app_client, "ada").get("/").text
    r = app_client.post("/logout", data={"csrf_token": csrf_of(page)}, follow_redirects=False)
    assert r.status_code == 303
    assert app_client.get("/", follow_redirects=False).status_code == 303


@pytest.mark.parametrize(
    "path", ["/api/recommendations?offset=99999999999999999999", "/recommendations/99999999999999999999"]
)
def test_out_of_range_numbers_are_a_client_error(app_client: TestClient, path: str) -> None:
    login(app_client, "vera")
    r = app_client.get(path)
    assert r.status_code in (404, 422), r.text
