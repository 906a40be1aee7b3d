"""Verify after change in the web UI and API: an executed move waits, a regression offers its rollback."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.settings import Settings
from app.store.db import Store
from app.store.models import Verification
from tests.web.conftest import csrf_of, login


def _execute_fg_hot_index(client: TestClient) -> int:
    page = client.get("/recommendations").text
    rec = next(r for r in client.get("/api/recommendations", params={"status": "open"}).json()["items"]
               if r["name"] == "FG_HOT_INDEX")  # fmt: skip
    assert rec["verification"] is None
    client.post(
        "/recommendations/review",
        data={"ids": str(rec["id"]), "action": "approve", "csrf_token": csrf_of(page)},
    )
    token = csrf_of(client.get("/scripts").text)
    r = client.post(
        f"/recommendations/{rec['id']}/executed",
        data={"executed_at": "2026-11-21T01:30", "csrf_token": token},
    )
    assert r.status_code == 200
    return int(rec["id"])


def test_executed_move_waits_for_its_window(app_client: TestClient) -> None:
    login(app_client, "abe")
    rec_id = _execute_fg_hot_index(app_client)
    [item] = app_client.get("/api/recommendations", params={"status": "executed"}).json()["items"]
    v = item["verification"]
    assert item["id"] == rec_id
    assert (v["status"], v["trigger"], v["changed_at"]) == (
        "waiting",
        "executed",
        "2026-11-21T01:30:00+00:00",
    )
    assert v["predicted_gain_ms_per_s"] == item["io_ms_per_s_now"] - item["io_ms_per_s_after"]
    assert v["window_days"] == 7
    [listed] = app_client.get("/api/verifications").json()
    assert listed["id"] == v["id"] and listed["recommendation_id"] == rec_id
    assert app_client.get("/api/verifications", params={"status": "regressed"}).json() == []
    record = app_client.get("/api/track-record").json()
    assert record["counts"] == {"waiting": 1, "improved": 0, "no_effect": 0, "within_band": 0, "outside_band": 0,
                                "regressed": 0, "uncontrolled": 0, "inconclusive": 0, "not_moved": 0}  # fmt: skip
    assert v["confidence"] is None and v["interval"] is None  # an interval replaces the confidence
    assert (record["judged"], record["achieved"], record["share_achieved"]) == (0, 0, None)
    page = app_client.get("/recommendations", params={"status": "executed"}).text
    assert 'data-status="waiting"' in page and "measuring since 2026-11-21 01:30 UTC" in page
    assert "Track record" in page and "No move has been verified against a prediction yet." in page
    # executed moves cannot be reviewed again: the list offers no review or suppress controls
    assert "Approve selected" not in page and "Suppress selected" not in page
    assert "Approve selected" in app_client.get("/recommendations").text


def test_regression_offers_the_rollback_script(app_client: TestClient, web_settings: Settings) -> None:
    login(app_client, "abe")
    rec_id = _execute_fg_hot_index(app_client)
    store = Store(web_settings.database_url)
    with store.session() as s:  # what the hourly evaluation writes for a move that got slower
        v = s.scalar(select(Verification).where(Verification.recommendation_id == rec_id))
        assert v is not None
        v.status, v.achieved_gain_ms_per_s, v.share_of_prediction = "regressed", -300.0, -0.2
        verdict = "regression: latency +50 % (95 % interval +41 % to +59 %, 7 days), all beyond the 20 % and 1 ms allowed"
        v.after = {"interval": {"estimate_pct": 50.0, "low_pct": 41.0, "high_pct": 59.0, "days": 7, "level": 0.95},
                   "verdict": verdict, "controlled": True, "regression": "object"}  # fmt: skip
        v.reasons = ["read latency 6.0 → 9.0 ms", verdict]
        v.evaluated_at = datetime.now(UTC)
    store.dispose()
    scripts = app_client.get(f"/api/recommendations/{rec_id}/scripts").json()["scripts"]
    rollback = next(s for s in scripts if s["direction"] == "rollback")
    [item] = app_client.get("/api/recommendations", params={"status": "executed"}).json()["items"]
    assert item["verification"]["status"] == "regressed"
    assert item["verification"]["rollback_script"]["id"] == rollback["id"]
    page = app_client.get("/recommendations", params={"status": "executed"}).text
    assert 'data-status="regressed"' in page
    assert f'href="/scripts/{rollback["id"]}">rollback script</a>' in page
    assert "regression: latency +50 % (95 % interval +41 % to +59 %, 7 days)" in page
    assert "latency +50 % (95 % interval +41 % to +59 %, 7 days, controlled)" in page
    assert "confidence" not in page.lower()
    assert "0 of 1</strong> verified moves achieved at least 80 %" in page
    assert app_client.get(f"/scripts/{rollback['id']}/download").status_code == 200
    detail = app_client.get(f"/recommendations/{rec_id}").text
    assert "Verified after the move" in detail and "regression: latency +50 %" in detail
    assert f'href="/scripts/{rollback["id"]}/download"' in detail


def test_verification_routes_need_a_login(app_client: TestClient) -> None:
    assert app_client.get("/api/verifications").status_code == 401
    assert app_client.get("/api/track-record").status_code == 401


def test_api_marks_an_approved_move_executed(app_client: TestClient) -> None:
    """Marking executed through the API (approver, CSRF for sessions) starts the verification too."""
    login(app_client, "abe")
    rec = next(r for r in app_client.get("/api/recommendations", params={"status": "open"}).json()["items"]
               if r["name"] == "FG_HOT_INDEX")  # fmt: skip
    token = app_client.get("/api/session").json()["csrf_token"]
    headers = {"X-CSRF-Token": token}
    url = f"/api/recommendations/{rec['id']}/executed"
    r = app_client.post(url, json={}, headers=headers)
    assert r.status_code == 409 and "only approved moves" in r.json()["detail"]  # still open
    r = app_client.post(
        f"/api/recommendations/{rec['id']}/review", json={"action": "approve"}, headers=headers
    )
    assert r.status_code == 200 and r.json()["status"] == "approved"
    assert app_client.post(url, json={}).status_code == 403  # no CSRF token
    r = app_client.post(url, json={"executed_at": "2999-01-01T00:00"}, headers=headers)
    assert r.status_code == 422 and "future" in r.json()["detail"]
    assert (
        app_client.post("/api/recommendations/999999/executed", json={}, headers=headers).status_code == 404
    )
    r = app_client.post(url, json={"executed_at": "2026-11-21T01:30"}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json() == {"id": rec["id"], "status": "executed", "executed_by": "abe",
                        "executed_at": "2026-11-21T01:30:00+00:00"}  # fmt: skip
    [item] = app_client.get("/api/recommendations", params={"status": "executed"}).json()["items"]
    assert item["verification"]["status"] == "waiting"
    assert item["verification"]["changed_at"] == "2026-11-21T01:30:00+00:00"
    [entry] = [e for e in app_client.get("/api/audit").json() if e["action"] == "executed"]
    assert entry["username"] == "abe" and entry["subject_id"] == str(rec["id"])
    # a viewer may not
    app_client.post("/logout", data={"csrf_token": token})
    login(app_client, "vera")
    token = app_client.get("/api/session").json()["csrf_token"]
    r = app_client.post(url, json={}, headers={"X-CSRF-Token": token})
    assert r.status_code == 403


def _set(web_settings: Settings, rec_id: int, **fields: object) -> None:
    """What the hourly evaluation writes, written directly."""
    store = Store(web_settings.database_url)
    with store.session() as s:
        v = s.scalar(select(Verification).where(Verification.recommendation_id == rec_id))
        assert v is not None
        for k, x in fields.items():
            setattr(v, k, x)
        v.evaluated_at = datetime.now(UTC)
    store.dispose()


def test_an_extended_verification_says_until_when(app_client: TestClient, web_settings: Settings) -> None:
    """Inconclusive after a week: still waiting, and the pages and API say it measures to 14 days."""
    login(app_client, "abe")
    rec_id = _execute_fg_hot_index(app_client)
    until = "2026-12-05T01:30:00+00:00"
    _set(web_settings, rec_id, window_days=14, after={"extended_until": until},
         reasons=["inconclusive at 7 days: measuring to 14 days, until 2026-12-05 01:30 UTC"])  # fmt: skip
    [row] = app_client.get("/api/verifications", params={"status": "waiting"}).json()
    assert (row["status"], row["extended_until"], row["window_days"]) == ("waiting", until, 14)
    page = app_client.get("/recommendations", params={"status": "executed"}).text
    assert "inconclusive after the first week: measuring to 14 days, until 2026-12-05 01:30 UTC" in page
    assert "measuring to 14 days, until 2026-12-05 01:30</span>" in page  # the track record's row


def test_outside_band_offers_no_rollback_and_every_status_filters(
    app_client: TestClient, web_settings: Settings
) -> None:
    """A promotion that landed above flash's band: the array is the suspect, so no rollback link;
    the tier it joined and this object's share of it are shown."""
    login(app_client, "abe")
    rec_id = _execute_fg_hot_index(app_client)
    verdict = "outside flash's normal band: read latency 7.1 ms is above flash's normal band (up to 2 ms)"
    interval = {"estimate_pct": -5.0, "low_pct": -9.0, "high_pct": -1.0, "days": 7, "level": 0.95}
    _set(web_settings, rec_id, status="outside_band", reasons=[verdict],
         after={"verdict": verdict, "interval": interval, "tier_share": 0.17,
                "tier_intervals": {"read": interval}})  # fmt: skip
    page = app_client.get("/recommendations", params={"status": "executed"}).text
    assert 'data-status="outside_band"' in page and verdict.replace("'", "&#39;") in page
    assert "rollback script" not in page
    assert "flash: this object is 17 % of its I/O; others' reads -5 % (-9 % to -1 %)" in page
    for status in ("improved", "no_effect", "within_band", "outside_band", "not_moved", "waiting"):
        r = app_client.get("/api/verifications", params={"status": status})
        assert r.status_code == 200, (status, r.text)
        assert [x["status"] for x in r.json()] == (["outside_band"] if status == "outside_band" else [])
    assert app_client.get("/api/verifications", params={"status": "great"}).status_code == 422
