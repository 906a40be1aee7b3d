"""The Scripts page and GET /api/change-windows list what fits in the next change window."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from fastapi.testclient import TestClient

from policies.loader import DEFAULT_POLICY
from tests.web.conftest import csrf_of, login


def _next_saturday_label() -> str:
    now = datetime.now(UTC)
    day = now.date()
    while day.weekday() != 5 or datetime.combine(day, time(5, 0), tzinfo=UTC) <= now:
        day += timedelta(days=1)
    return f"{day:%A %Y-%m-%d} 01:00–05:00 UTC"


def _approve(client: TestClient, name: str = "FG_HOT_INDEX") -> dict:  # type: ignore[type-arg]
    page = client.get("/recommendations").text
    items = client.get("/api/recommendations", params={"status": "open", "limit": 1000}).json()["items"]
    rec = next(r for r in items if r["name"] == name)
    r = client.post("/recommendations/review", data={"ids": str(rec["id"]), "action": "approve",
                                                     "csrf_token": csrf_of(page)})  # fmt: skip
    assert "approve: 1 recommendation(s)" in r.text
    return rec


def test_scripts_page_and_api_list_the_next_window(app_client: TestClient) -> None:
    assert app_client.get("/api/change-windows").status_code == 401
    login(app_client, "abe")
    label = _next_saturday_label()
    empty = app_client.get("/api/change-windows").json()
    assert empty["next_window"]["label"] == label and empty["next_window"]["moves"] == []
    assert "No approved move is planned in this window." in app_client.get("/scripts").text
    rec = _approve(app_client)
    body = app_client.get("/api/change-windows").json()
    nw = body["next_window"]
    assert nw["label"] == label and nw["cap_gb"] == 500 and nw["length_minutes"] == 240
    [move] = nw["moves"]
    assert move["recommendation"] == rec["id"] and move["action"] == "emptyfile"
    assert move["reason"].startswith("FG_HOT_INDEX ") and f"; fits {label} (" in move["reason"]
    assert "EMPTYFILE overhead" in move["reason"]
    assert move["starts_at"] == nw["opens_at"]
    assert body["cannot_fit"] == [] and body["waiting"] == []
    page = app_client.get("/scripts").text
    assert f"Next change window: {label}" in page
    assert move["reason"].replace("FG_HOT_INDEX", "") in page.replace("FG_HOT_INDEX", "")


def test_a_move_larger_than_the_cap_is_flagged_with_the_reason(app_client: TestClient) -> None:
    login(app_client, "ada")
    yaml_text = DEFAULT_POLICY.read_text(encoding="utf-8")
    assert "cap_gb_per_window: 500" in yaml_text
    token = csrf_of(app_client.get("/policies").text)
    r = app_client.post("/policies", data={"yaml_text": yaml_text.replace("cap_gb_per_window: 500",
                                                                          "cap_gb_per_window: 0.001"),
                                           "comment": "tiny windows", "csrf_token": token})  # fmt: skip
    assert r.status_code == 200 and "policy saved" in r.text
    rec = _approve(app_client)
    body = app_client.get("/api/change-windows").json()
    assert body["next_window"]["moves"] == []
    [move] = body["cannot_fit"]
    assert move["recommendation"] == rec["id"]
    # the cap of 0.001 GB reads in the size rule (advisors.quantities): 1.0 MB
    assert move["reason"].endswith("; larger than the 1.0 MB a window may move "
                                   "(change_windows.cap_gb_per_window): split the move or raise the cap")  # fmt: skip
    page = app_client.get("/scripts").text
    assert "Cannot be planned as they are" in page and "split the move or raise the cap" in page
    # a viewer sees the same
    app_client.post("/logout", data={"csrf_token": token})
    login(app_client, "vera")
    assert app_client.get("/api/change-windows").json()["cannot_fit"][0]["recommendation"] == rec["id"]
