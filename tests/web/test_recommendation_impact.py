"""What a move costs is on the Recommendations list, the recommendation's page and the API before
approval, and the script written at approval does what they said (#28 item 6), on the demo fleet."""

from __future__ import annotations

import html as htmllib
import re

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.store.db import Store
from app.store.models import DbObject, Recommendation, ScriptRecord
from app.store.recommendations import Status
from migrations.durations import copy_minutes, minutes_text
from tests.web.conftest import login

PRIMARY = "Sales/filegroup/PRIMARY"  # the demo's offline copy: the filegroup holds the primary file


def _store(client: TestClient) -> Store:
    return client.app.state.tierwise.store  # type: ignore[attr-defined,no-any-return]


def _primary(client: TestClient) -> tuple[int, int]:
    """The open recommendation for Sales' PRIMARY filegroup, and its files' size."""
    with _store(client).session() as s:
        rec = s.scalar(select(Recommendation).where(Recommendation.key == PRIMARY))
        assert rec is not None and rec.status == Status.OPEN
        size = sum(f["size_bytes"] for f in rec.evidence["files"])
        stored = s.scalar(select(DbObject.size_bytes).where(DbObject.key == "Sales/file/1"))
        assert size == stored  # the demo's own file, not a figure of this test
        return rec.id, size


def test_the_list_shows_each_moves_impact(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    rec_id, size = _primary(c)
    page = c.get("/recommendations", params={"q": "Sales"}).text
    assert ">Impact</th>" in page
    rows = dict(re.findall(r'<tr data-id="(\d+)".*?<td class="impact-cell">(.*?)</td>', page, flags=re.S))
    assert str(rec_id) in rows and len(rows) > 10
    minutes = minutes_text(copy_minutes(size, 200))
    assert f"offline ≈ {minutes}" in htmllib.unescape(rows.pop(str(rec_id)))
    badges = {re.sub(r"<[^>]+>", "", cell).strip() for cell in rows.values()}
    assert "online" in badges  # the secondary filegroups move online


def test_the_page_says_downtime_before_approval_and_the_script_agrees(app_client: TestClient) -> None:
    c = login(app_client, "abe")
    rec_id, size = _primary(c)
    minutes = minutes_text(copy_minutes(size, 200))
    with _store(c).session() as s:
        assert s.scalar(select(ScriptRecord.id).where(ScriptRecord.recommendation_id == rec_id)) is None
    page = htmllib.unescape(c.get(f"/recommendations/{rec_id}").text)
    impact = page.split('id="impact"', 1)[1].split("</dd>", 1)[0]
    assert f"offline ≈ {minutes}" in impact
    assert "database Sales is offline" in impact and "the primary data file" in impact
    assert f"about {minutes}, an estimate from the size at the policy's copy rate of 200 MB/s" in impact
    assert "change_windows" in impact  # where the rate comes from

    token = c.get("/api/session").json()["csrf_token"]
    r = c.post(
        f"/api/recommendations/{rec_id}/review", json={"action": "approve"}, headers={"X-CSRF-Token": token}
    )
    assert r.status_code == 200, r.text
    with _store(c).session() as s:
        forward = s.scalar(
            select(ScriptRecord).where(
                ScriptRecord.recommendation_id == rec_id, ScriptRecord.direction == "forward"
            )
        )
        assert forward is not None
        assert "SET OFFLINE" in forward.text and forward.manual_step and not forward.restart_required
        assert f"about {minutes} to copy" in forward.text and "at ~200 MB/s" in forward.text


def test_an_online_move_says_so(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    with _store(c).session() as s:
        rec_id = s.scalar(
            select(Recommendation.id).where(Recommendation.key == "Sales/filegroup/FG_HOT_INDEX")
        )
    page = htmllib.unescape(c.get(f"/recommendations/{rec_id}").text)
    impact = page.split('id="impact"', 1)[1].split("</dd>", 1)[0]
    assert ">online</span>" in impact and "DBCC SHRINKFILE EMPTYFILE" in impact and "Blocking spans" in impact
    assert "change_windows" not in impact  # no copy, no copy rate


def test_the_api_items_carry_the_impact(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    rec_id, size = _primary(c)
    items = c.get("/api/recommendations", params={"limit": 1000}).json()["items"]
    by_id = {i["id"]: i for i in items}
    primary = by_id[rec_id]["impact"]
    assert primary["kind"] == "offline"
    assert (primary["downtime_minutes"], primary["copy_bytes"], primary["copy_rate_mb_s"]) == (
        copy_minutes(size, 200),
        size,
        200,
    )
    kinds = {(i["engine"], i["impact"]["kind"]) for i in items}
    assert ("sqlserver", "online") in kinds and ("db2", "online") in kinds
    assert all(i["impact"]["detail"] and i["impact"]["summary"] for i in items)
    online = [i["impact"] for i in items if i["impact"]["kind"] == "online"]
    assert online and all(i["downtime_minutes"] is None for i in online)
