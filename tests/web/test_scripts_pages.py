"""Approving writes the scripts once; the Scripts page previews and downloads them; executed is audited."""

from __future__ import annotations

import hashlib

from fastapi.testclient import TestClient

from tests.web.conftest import csrf_of, login


def _approve_first(client: TestClient) -> dict:  # type: ignore[type-arg]
    page = client.get("/recommendations").text
    rec = next(r for r in client.get("/api/recommendations", params={"status": "open"}).json()["items"]
               if r["name"] == "FG_HOT_INDEX")  # fmt: skip
    r = client.post(
        "/recommendations/review",
        data={"ids": str(rec["id"]), "action": "approve", "csrf_token": csrf_of(page)},
    )
    assert r.status_code == 200
    return rec


def test_approval_writes_scripts_and_page_previews_and_downloads(app_client: TestClient) -> None:
    login(app_client, "abe")
    rec = _approve_first(app_client)
    api = app_client.get(f"/api/recommendations/{rec['id']}/scripts").json()
    assert api["error"] is None
    assert sorted(s["direction"] for s in api["scripts"]) == ["forward", "rollback"]
    forward = next(s for s in api["scripts"] if s["direction"] == "forward")
    body = app_client.get(forward["download"])
    assert body.status_code == 200 and "attachment" in body.headers["content-disposition"]
    assert hashlib.sha256(body.content).hexdigest() == forward["sha256"]
    text = body.content.decode()
    assert "FG_HOT_INDEX" in text and "[Sales]" in text
    again = app_client.get(f"/api/recommendations/{rec['id']}/scripts").json()
    assert [s["sha256"] for s in again["scripts"]] == [
        s["sha256"] for s in api["scripts"]
    ]  # frozen at approval
    page = app_client.get("/scripts").text
    assert "FG_HOT_INDEX" in page and "preview" in page
    preview = app_client.get(f"/scripts/{forward['id']}").text
    assert forward["sha256"] in preview and "<span" in preview  # highlighted


def test_scripts_need_approval_and_login(app_client: TestClient) -> None:
    assert app_client.get("/scripts/1/download").status_code == 401
    login(app_client, "vera")
    open_rec = app_client.get("/api/recommendations", params={"status": "open"}).json()["items"][0]
    assert app_client.get(f"/api/recommendations/{open_rec['id']}/scripts").status_code == 409


def test_mark_executed_is_audited_and_only_for_approved(app_client: TestClient) -> None:
    login(app_client, "abe")
    rec = _approve_first(app_client)
    token = csrf_of(app_client.get("/scripts").text)
    r = app_client.post(
        f"/recommendations/{rec['id']}/executed",
        data={"executed_at": "2026-11-21T01:30", "csrf_token": token},
    )
    assert f"#{rec['id']} marked executed by abe" in r.text
    done = app_client.get("/api/recommendations", params={"status": "executed"}).json()["items"]
    assert [d["id"] for d in done] == [rec["id"]]
    audit = app_client.get("/api/audit").json()[0]
    assert audit["action"] == "executed" and "2026-11-21 01:30" in audit["summary"]
    r = app_client.post(f"/recommendations/{rec['id']}/executed", data={"csrf_token": token})
    assert r.status_code == 409 and "already executed by abe" in r.text  # a second click changes nothing
