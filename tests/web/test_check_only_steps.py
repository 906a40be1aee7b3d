"""The Scripts page makes the check-only run the first step, with the exact command per dialect
(issue #30): T-SQL runs the forward script itself with sqlcmd -v TW_CHECK_ONLY=1, then 0 in the
window; DB2 runs its stored .check.db2 with the CLP command its header gives."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from tests.web.conftest import csrf_of, login


def _approve(client: TestClient, pick: str) -> dict:  # type: ignore[type-arg]
    page = client.get("/recommendations").text
    recs = client.get("/api/recommendations", params={"status": "open"}).json()["items"]
    rec = next(r for r in recs if pick in (r["name"], r["engine"]))
    r = client.post("/recommendations/review", data={"ids": str(rec["id"]), "action": "approve",
                                                     "csrf_token": csrf_of(page)})  # fmt: skip
    assert r.status_code == 200
    return rec


def test_scripts_page_shows_the_check_only_command_first(app_client: TestClient) -> None:
    login(app_client, "abe")
    tsql = _approve(app_client, "FG_HOT_INDEX")
    db2 = _approve(app_client, "db2")
    page = html.unescape(app_client.get("/scripts").text)
    scripts = {
        r["id"]: app_client.get(f"/api/recommendations/{r['id']}/scripts").json()["scripts"]
        for r in (tsql, db2)
    }

    forward = next(s for s in scripts[tsql["id"]] if s["direction"] == "forward")
    check = f"sqlcmd -S {tsql['server']} -E -b -f 65001 -v TW_CHECK_ONLY=1 -i {forward['filename']}"
    run = f"sqlcmd -S {tsql['server']} -E -b -f 65001 -v TW_CHECK_ONLY=0 -i {forward['filename']}"
    i = page.index(check)
    assert page.rfind("1. check only", 0, i) > page.rfind("</tr>", 0, i)  # in this move's row, before it
    assert i < page.index("2. in the window", i) < page.index(run, i)
    # the first step comes before the script links of its move
    assert page.index(check) < page.index(f'/scripts/{forward["id"]}"')
    preview = html.unescape(app_client.get(f"/scripts/{forward['id']}").text)
    assert check in preview and run in preview

    db2_check = next(s for s in scripts[db2["id"]] if s["direction"] == "check")
    db2_forward = next(s for s in scripts[db2["id"]] if s["direction"] == "forward")
    assert f"db2 -td@ -vsf {db2_check['filename']}" in page
    assert page.index(f"db2 -td@ -vsf {db2_check['filename']}") < page.index(
        f"db2 -td@ -vsf {db2_forward['filename']}"
    )
    # a rollback's preview offers no first step of its own
    rollback = next(s for s in scripts[tsql["id"]] if s["direction"] == "rollback")
    assert "<strong>1. check only</strong>" not in app_client.get(f"/scripts/{rollback['id']}").text
