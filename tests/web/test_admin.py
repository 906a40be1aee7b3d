"""Targets, policy editing, exports, API tokens and /metrics: roles, CSRF, audit, no secrets."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from fastapi.testclient import TestClient
from openpyxl import load_workbook
from sqlalchemy import select

from app.store.models import User
from app.store.tokens import create_token
from policies.loader import DEFAULT_POLICY
from tests.web.conftest import csrf_of, login


def test_admin_adds_tests_and_removes_a_target_without_echoing_secrets(app_client: TestClient) -> None:
    page = login(app_client, "ada").get("/targets").text
    token = csrf_of(page)
    conn = "DRIVER={FreeTDS};SERVER=127.0.0.1;PORT=1;UID=tw;PWD=Sup3rSecret!"
    r = app_client.post("/targets", data={"name": "SQLNEW", "engine": "sqlserver", "connection": conn,
                                          "interval": "300", "csrf_token": token})  # fmt: skip
    assert r.status_code == 200 and "added SQLNEW" in r.text
    assert "Sup3rSecret" not in r.text and "Sup3rSecret" not in app_client.get("/api/targets").text
    r = app_client.post("/targets/SQLNEW/test", data={"csrf_token": token})
    assert "SQLNEW: test failed" in r.text and "Sup3rSecret" not in r.text
    r = app_client.post("/targets/SQLNEW/remove", data={"csrf_token": token})
    assert "removed SQLNEW" in r.text
    actions = [e["action"] for e in app_client.get("/api/audit").json()]
    assert "add_target" in actions and "remove_target" in actions


def test_non_admin_cannot_change_targets_or_policy(app_client: TestClient) -> None:
    page = login(app_client, "abe").get("/targets").text
    assert "Add a target" not in page
    token = csrf_of(page)
    r = app_client.post(
        "/targets", data={"name": "X", "engine": "db2", "connection": "x", "csrf_token": token}
    )
    assert r.status_code == 403
    assert app_client.post("/targets/demo:SQLPROD01/remove", data={"csrf_token": token}).status_code == 403
    r = app_client.post("/policies", data={"yaml_text": "tiers: []", "csrf_token": token})
    assert r.status_code == 403


def test_forms_need_csrf(app_client: TestClient) -> None:
    login(app_client, "ada")
    r = app_client.post(
        "/targets", data={"name": "X", "engine": "db2", "connection": "x", "csrf_token": "nope"}
    )
    assert r.status_code == 403


def test_policy_edit_is_validated_versioned_and_audited(app_client: TestClient) -> None:
    page = login(app_client, "ada").get("/policies").text
    assert "device_iops: 140" in page
    token = csrf_of(page)
    bad = DEFAULT_POLICY.read_text().replace("device_iops: 140", "device_iops: -1")
    r = app_client.post("/policies", data={"yaml_text": bad, "csrf_token": token})
    assert r.status_code == 422 and "tiers[1].device_iops" in r.text
    good = DEFAULT_POLICY.read_text().replace("device_iops: 140", "device_iops: 200")
    r = app_client.post(
        "/policies", data={"yaml_text": good, "comment": "new FC drives", "csrf_token": token}
    )
    assert r.status_code == 200 and "policy saved" in r.text
    page = app_client.get("/policies").text
    assert "device_iops: 200" in page and "new FC drives" in page
    assert any(e["action"] == "edit_policy" for e in app_client.get("/api/audit").json())


def test_exports_match_the_api_and_defuse_formulas(app_client: TestClient) -> None:
    login(app_client, "vera")
    items = app_client.get("/api/recommendations", params={"limit": 1000}).json()["items"]
    r = app_client.get("/api/recommendations.csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [int(x["id"]) for x in rows] == [i["id"] for i in items]
    assert rows[0]["name"] == items[0]["name"]
    x = app_client.get("/api/recommendations.xlsx", params={"to_tier": "flash"})
    sheet = load_workbook(io.BytesIO(x.content)).active
    assert sheet is not None
    values = list(sheet.values)
    assert values[0][0] == "id"
    assert {v[8] for v in values[1:]} == {"flash"}
    from app.api.exports import _cell

    assert _cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and _cell("FG_1") == "FG_1"


def test_api_token_reads_metrics_and_reviews_without_csrf(app_client: TestClient) -> None:
    state = app_client.app.state.tierwise  # type: ignore[attr-defined]
    with state.store.session() as s:
        abe = s.scalar(select(User).where(User.username == "abe"))
        token = create_token(s, user=abe, name="ci", now=datetime.now(UTC))
    assert app_client.get("/metrics").status_code == 401
    headers = {"Authorization": f"Bearer {token}"}
    m = app_client.get("/metrics", headers=headers)
    assert m.status_code == 200
    assert 'tierwise_recommendations{status="open"}' in m.text and "tierwise_targets" in m.text
    rec = app_client.get("/api/recommendations", headers=headers).json()["items"][0]
    r = app_client.post(f"/api/recommendations/{rec['id']}/review", json={"action": "defer"}, headers=headers)
    assert r.status_code == 200 and r.json()["reviewed_by"] == "abe"
    bad = {"Authorization": "Bearer tw_not-a-token"}
    assert app_client.get("/api/targets", headers=bad).status_code == 401
