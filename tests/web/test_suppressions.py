"""Suppressions through the pages and the API: roles, CSRF, validation, display, approval refused,
lift, and the fleet's open count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient

from tests.web.conftest import csrf_of, login


def _future(days: int = 30) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).date().isoformat()


def _open(client: TestClient, name: str = "FG_HOT_INDEX") -> dict[str, Any]:
    items = client.get("/api/recommendations", params={"status": "open", "limit": 1000}).json()["items"]
    return next(r for r in items if r["name"] == name)


def _suppress_form(client: TestClient, rec_id: int, token: str, **data: str) -> Any:
    form = {"ids": str(rec_id), "reason": "vendor tool moves it", "expires": _future(), "csrf_token": token,
            "back": "/recommendations", **data}  # fmt: skip
    return client.post("/recommendations/suppress", data=form)


def _fleet_open(client: TestClient, rec: dict[str, Any]) -> int:
    targets = client.get("/api/targets").json()
    return sum(t["open_recommendations"] for t in targets if t["name"].endswith(rec["server"]))


def test_suppress_form_shows_row_as_suppressed_refuses_approval_and_lift_restores(
    app_client: TestClient,
) -> None:
    login(app_client, "abe")
    rec = _open(app_client)
    open_before = _fleet_open(app_client, rec)
    token = csrf_of(app_client.get("/recommendations").text)
    r = _suppress_form(app_client, rec["id"], token)
    assert r.status_code == 200 and "suppressed 1 recommendation(s) until" in r.text
    until = _future()
    # the list shows the row, marked, with who, until when and why
    page = app_client.get("/recommendations").text
    assert f"suppressed until {until} 00:00 UTC by abe (vendor tool moves it)" in page
    assert 'formaction="/recommendations/suppress"' in page
    api = _open(app_client)
    assert api["status"] == "open"
    assert api["suppression"]["text"] == f"suppressed until {until} 00:00 UTC by abe (vendor tool moves it)"
    assert api["suppression"]["state"] == "active"
    # left out of the fleet's open count
    assert _fleet_open(app_client, rec) == open_before - 1
    # approval refused while suppressed, by the form and by the API
    r = app_client.post(
        "/recommendations/review", data={"ids": str(rec["id"]), "action": "approve", "csrf_token": token}
    )
    assert r.status_code == 200 and "is suppressed until" in r.text and "lift the suppression" in r.text
    assert _open(app_client)["status"] == "open"
    r = app_client.post(f"/api/recommendations/{rec['id']}/review", json={"action": "approve"},
                        headers={"X-CSRF-Token": token})  # fmt: skip
    assert r.status_code == 409 and "is suppressed until" in r.json()["detail"]
    # audited
    events = app_client.get("/api/audit").json()
    assert any(e["action"] == "suppress" and e["comment"] == "vendor tool moves it" for e in events)
    # lift from the page: the form is there, outside the review form
    sup_id = api["suppression"]["id"]
    assert f'form="lift-{sup_id}"' in page and f'action="/suppressions/{sup_id}/lift"' in page
    r = app_client.post(
        f"/suppressions/{sup_id}/lift", data={"csrf_token": token, "back": "/recommendations"}
    )
    assert r.status_code == 200 and "lifted the suppression of FG_HOT_INDEX" in r.text
    assert _open(app_client)["suppression"] is None
    assert _fleet_open(app_client, rec) == open_before
    assert any(e["action"] == "lift_suppression" for e in app_client.get("/api/audit").json())
    r = app_client.post(
        "/recommendations/review", data={"ids": str(rec["id"]), "action": "approve", "csrf_token": token}
    )
    assert "approve: 1 recommendation(s) by abe" in r.text


def test_suppress_and_lift_forms_need_approver_and_csrf(app_client: TestClient) -> None:
    r = app_client.post("/recommendations/suppress", data={"ids": "1", "reason": "x", "expires": _future(),
                                                           "csrf_token": "x"}, follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == "/login"
    login(app_client, "vera")
    rec = _open(app_client)
    page = app_client.get("/recommendations").text
    assert "Suppress selected" not in page
    token = csrf_of(page)
    r = _suppress_form(app_client, rec["id"], token)
    assert r.status_code == 403 and "this needs the approver role (you are viewer)" in r.text
    assert app_client.post("/suppressions/1/lift", data={"csrf_token": token}).status_code == 403
    app_client.post("/logout", data={"csrf_token": token})
    login(app_client, "abe")
    r = _suppress_form(app_client, rec["id"], "forged")
    assert r.status_code == 403 and "CSRF" in r.text
    r = app_client.post(
        "/recommendations/suppress", data={"ids": str(rec["id"]), "reason": "x", "expires": _future()}
    )
    assert r.status_code == 403 and "missing or wrong CSRF token" in r.text  # no token at all
    assert _open(app_client)["suppression"] is None
    assert app_client.get("/api/suppressions").json() == []


def test_suppress_form_validation_messages(app_client: TestClient) -> None:
    login(app_client, "ada")  # admins may too
    rec = _open(app_client)
    token = csrf_of(app_client.get("/recommendations").text)
    cases = [
        ({"reason": "  "}, "a reason is required to suppress a recommendation"),
        ({"expires": ""}, "Give the expiry as a date (YYYY-MM-DD), not &#39;&#39;."),
        ({"expires": "next week"}, "Give the expiry as a date (YYYY-MM-DD), not &#39;next week&#39;."),
        ({"expires": "2020-01-01"}, "the expiry 2020-01-01 00:00 UTC is not in the future"),
        ({"expires": _future(400)}, "is more than 365 days away"),
        ({"ids": ""}, "Select at least one recommendation to suppress."),
    ]
    for data, message in cases:
        r = _suppress_form(app_client, rec["id"], token, **data)
        assert r.status_code == 200 and message in r.text, (data, r.text[-2000:])
    assert app_client.get("/api/suppressions", params={"include_ended": True}).json() == []


def test_suppression_api(app_client: TestClient) -> None:
    login(app_client, "abe")
    rec = _open(app_client)
    token = app_client.get("/api/session").json()["csrf_token"]
    headers = {"X-CSRF-Token": token}
    url = f"/api/recommendations/{rec['id']}/suppress"
    assert app_client.post(url, json={"reason": "x", "expires_at": _future()}).status_code == 403  # no CSRF
    r = app_client.post(url, json={"reason": "x", "expires_at": "2020-01-01"}, headers=headers)
    assert r.status_code == 422 and "is not in the future" in r.json()["detail"]
    assert (
        app_client.post(url, json={"reason": "", "expires_at": _future()}, headers=headers).status_code == 422
    )
    r = app_client.post("/api/recommendations/999999/suppress", json={"reason": "x", "expires_at": _future()},
                        headers=headers)  # fmt: skip
    assert r.status_code == 404
    r = app_client.post(
        url, json={"reason": "quarter-end freeze", "expires_at": _future(10)}, headers=headers
    )
    assert r.status_code == 201, r.text
    sup = r.json()
    assert (sup["name"], sup["created_by"], sup["state"]) == ("FG_HOT_INDEX", "abe", "active")
    r = app_client.post(url, json={"reason": "again", "expires_at": _future(10)}, headers=headers)
    assert r.status_code == 422 and "is already suppressed until" in r.json()["detail"]
    assert [x["id"] for x in app_client.get("/api/suppressions").json()] == [sup["id"]]
    # Prometheus counts the suppressed one apart from those waiting for review
    assert 'tierwise_recommendations{status="suppressed"} 1.0' in app_client.get("/metrics").text
    r = app_client.post(f"/api/suppressions/{sup['id']}/lift", headers=headers)
    assert r.status_code == 200 and r.json()["state"] == "lifted" and r.json()["lifted_by"] == "abe"
    assert app_client.post(f"/api/suppressions/{sup['id']}/lift", headers=headers).status_code == 409
    assert app_client.post("/api/suppressions/999999/lift", headers=headers).status_code == 404
    assert app_client.get("/api/suppressions").json() == []
    assert app_client.get("/api/suppressions", params={"include_ended": True}).json()[0]["state"] == "lifted"
    app_client.post("/logout", data={"csrf_token": token})
    login(app_client, "vera")
    token = app_client.get("/api/session").json()["csrf_token"]
    r = app_client.post(url, json={"reason": "x", "expires_at": _future()}, headers={"X-CSRF-Token": token})
    assert r.status_code == 403
