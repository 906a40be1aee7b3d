"""Subscriptions are managed in the UI and the API; deliveries are shown, failures included."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient

from app.store.models import Delivery
from tests.web.conftest import csrf_of, login


def test_approver_adds_and_deletes_a_subscription(app_client: TestClient) -> None:
    token = csrf_of(login(app_client, "abe").get("/reports").text)
    r = app_client.post("/reports", data={"name": "Monday", "recipients": "dba@example.test", "scope": "fleet",
                                          "cron": "weekly", "timezone": "Europe/Berlin", "csrf_token": token})  # fmt: skip
    assert "subscription Monday added" in r.text
    r = app_client.post("/reports", data={"name": "Bad", "recipients": "dba@example.test", "scope": "fleet",
                                          "cron": "sometimes", "timezone": "UTC", "csrf_token": token})  # fmt: skip
    assert "not a cron expression" in r.text
    subs = app_client.get("/api/subscriptions").json()
    assert [s["name"] for s in subs] == ["Monday"]
    r = app_client.post(f"/reports/{subs[0]['id']}/delete", data={"csrf_token": token})
    assert "subscription deleted" in r.text and app_client.get("/api/subscriptions").json() == []
    assert {"add_subscription", "delete_subscription"} <= {
        e["action"] for e in app_client.get("/api/audit").json()
    }


def test_viewer_cannot_manage_and_api_validates(app_client: TestClient) -> None:
    page = login(app_client, "vera").get("/reports").text
    assert "Add a subscription" not in page
    r = app_client.post("/reports", data={"name": "x", "recipients": "a@b.c", "csrf_token": csrf_of(page)})
    assert r.status_code == 403
    app_client.post("/logout", data={"csrf_token": csrf_of(page)})
    login(app_client, "abe")
    token = app_client.get("/api/session").json()["csrf_token"]
    r = app_client.post("/api/subscriptions", json={"name": "n", "recipients": "nobody", "scope": "fleet"},
                        headers={"X-CSRF-Token": token})  # fmt: skip
    assert r.status_code == 422 and "recipients must be e-mail addresses" in r.json()["detail"]
    r = app_client.post("/api/subscriptions", json={"name": "n", "recipients": "a@b.c", "scope": "target:X", "cron": "0 6 * * 1"},
                        headers={"X-CSRF-Token": token})  # fmt: skip
    assert r.status_code == 422 and "scope" in r.json()["detail"] and "'X'" in r.json()["detail"]
    name = app_client.get("/api/targets").json()[0]["name"]
    r = app_client.post("/api/subscriptions", json={"name": "n", "recipients": "a@b.c", "scope": name, "cron": "0 6 * * 1"},
                        headers={"X-CSRF-Token": token})  # fmt: skip
    assert r.status_code == 201 and r.json()["scope"] == f"target:{name}" and r.json()["format"] == "html"
    r = app_client.post("/api/subscriptions", json={"name": "p", "recipients": "a@b.c", "format": "pdf"},
                        headers={"X-CSRF-Token": token})  # fmt: skip
    assert r.status_code == 422


def test_failed_delivery_is_visible(app_client: TestClient) -> None:
    state = app_client.app.state.tierwise  # type: ignore[attr-defined]
    with state.store.session() as s:
        s.add(Delivery(at=datetime.now(UTC), recipients="dba@example.test", subject="tierwise: report",
                       status="failed", attempts=4, error="SMTP 554: relay denied"))  # fmt: skip
    page = login(app_client, "vera").get("/reports").text
    assert "failed" in page and "SMTP 554: relay denied" in page
    assert app_client.get("/api/deliveries").json()[0]["status"] == "failed"
