"""An approved DB2 move offers its check-only script (issue #30) beside the forward and rollback:
through the API and the Scripts page, downloadable, and as the stored text."""

from __future__ import annotations

import hashlib

from fastapi.testclient import TestClient

from tests.web.conftest import csrf_of, login


def test_an_approved_db2_move_offers_its_check_only_script(app_client: TestClient) -> None:
    login(app_client, "abe")
    page = app_client.get("/recommendations").text
    recs = app_client.get("/api/recommendations", params={"status": "open"}).json()["items"]
    rec = next(r for r in recs if r["engine"] == "db2")
    r = app_client.post("/recommendations/review",
                        data={"ids": str(rec["id"]), "action": "approve", "csrf_token": csrf_of(page)})  # fmt: skip
    assert r.status_code == 200
    api = app_client.get(f"/api/recommendations/{rec['id']}/scripts").json()
    assert api["error"] is None
    assert sorted(s["direction"] for s in api["scripts"]) == ["check", "forward", "rollback"]
    check = next(s for s in api["scripts"] if s["direction"] == "check")
    assert check["filename"].endswith(".check.db2") and check["dialect"] == "db2"
    body = app_client.get(check["download"])
    assert body.status_code == 200 and hashlib.sha256(body.content).hexdigest() == check["sha256"]
    text = body.content.decode()
    assert "migration script: CHECK ONLY (changes nothing)" in text and "EXECUTE IMMEDIATE" not in text
    assert f"/scripts/{check['id']}" in app_client.get("/scripts").text
    # listed in the order ops runs them: the check-only run first, the rollback last
    ids = {s["direction"]: s["id"] for s in api["scripts"]}
    for html in (app_client.get(f"/recommendations/{rec['id']}").text, app_client.get("/scripts").text):
        at = [html.index(f'/scripts/{ids[d]}"') for d in ("check", "forward", "rollback")]
        assert at == sorted(at), at
