"""Evidence for every object (moved or not) and the "how much flash" curve, from the stored
AdviceSnapshot, on the demo fleet with SQLite and PostgreSQL: API, object page and heat map."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import delete, select

from app.evaluate import evaluate
from app.store.db import Store
from app.store.models import AdviceSnapshot, DbObject, Recommendation, Target
from app.web.charts import CurveLine, flash_chart
from policies.loader import load_policy
from tests.web.conftest import login

T = "demo:SQLPROD01"


def _store(client: TestClient) -> Store:
    return client.app.state.tierwise.store  # type: ignore[attr-defined,no-any-return]


def _object_id(client: TestClient, name: str) -> int:
    with _store(client).session() as s:
        oid = s.scalar(select(DbObject.id).where(DbObject.name == name))
    assert oid is not None, name
    return int(oid)


def _svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", html, flags=re.S)]


def test_evidence_api_for_a_file_that_stays(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    oid = _object_id(c, "Sales_Archive1")  # the only file of FG_ARCHIVE: 1.6 TB, idle, on sata
    r = c.get(f"/api/objects/{oid}/evidence")
    assert r.status_code == 200, r.text
    e = r.json()
    assert e["explanation"].startswith(
        "Moves with filegroup FG_ARCHIVE: SQL Server places data by filegroup (proportional fill "
        "spreads it over all its files), so this file does not move on its own. The filegroup: "
        "Stays on sata: "
    ), e["explanation"]
    assert re.search(r"less than the [\d.]+ ms/s per GB that a GB on \w+ costs over sata", e["explanation"])
    assert e["decision"]["stage"] == "price" and e["decision"]["rule"] == "TW710"
    assert e["decision"]["moved"] is False and e["recommended_tier"] == "sata"
    assert e["decision"]["numbers"]["avg_read_kb"] > 32
    assert [p["tier"] for p in e["decision"]["predicted"]] == ["flash", "fc", "sata"]
    assert e["unit"]["key"] == "Sales/filegroup/FG_ARCHIVE"
    # no recommendation is stored for it: the evidence is the only answer to "why not?"
    with _store(c).session() as s:
        assert s.scalar(select(Recommendation.id).where(Recommendation.key == e["unit"]["key"])) is None
    # the object JSON carries the same evidence
    same = c.get(f"/api/objects/{oid}").json()["evidence"]
    assert same == {k: v for k, v in e.items() if k != "object_id"}


def test_evidence_api_for_a_partition_and_a_moved_filegroup(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    e = c.get(f"/api/objects/{_object_id(c, 'Orders 2024-12')}/evidence").json()
    assert e["decision"]["stage"] == "moves_with_unit"
    assert e["explanation"].startswith("Moves with filegroup FG_ORD_202412 (fc -> sata): SQL Server places")
    assert e["unit"]["decision"]["moved"] is True
    hot = c.get(f"/api/objects/{_object_id(c, 'Sales_HotIdx1')}/evidence").json()
    assert "The filegroup: Move filegroup FG_HOT_INDEX from fc to flash: saves " in hot["explanation"]
    assert hot["decision"]["numbers"]["io_ms_per_s_saved"] > 0


def test_evidence_not_found(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    assert c.get("/api/objects/999999/evidence").status_code == 404
    r = c.get(f"/api/objects/{_object_id(c, 'Buffer Manager')}/evidence")
    assert r.status_code == 404 and "no evidence yet" in r.json()["detail"]


def test_object_page_shows_the_evidence_block(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    oid = _object_id(c, "Sales_Archive1")
    html = c.get(f"/objects/{oid}").text
    block = html[html.index('id="evidence"') :]
    block = block[: block.index("</section>")]
    assert "Stays on sata: " in block and re.search(
        r"less than the [\d.]+ ms/s per GB that a GB on \w+ costs over sata", block
    )
    assert "Decided by</dt><dd>price" in block and "(rule TW710)" in block
    assert 'class="chosen"' in block and "measured · recommended" in block
    assert "avg read kb" in block  # the numbers it used
    assert "No current recommendation" in html  # evidence shown even without a recommendation


def test_object_page_before_any_advice_run(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    with _store(c).session() as s:
        s.execute(delete(AdviceSnapshot))
    html = c.get(f"/objects/{_object_id(c, 'Sales_Rpt1')}").text
    assert "No evidence yet: the advice has not run" in html
    assert c.get(f"/api/objects/{_object_id(c, 'Sales_Rpt1')}").json()["evidence"] is None


def test_evidence_follows_the_newest_run(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    oid = _object_id(c, "Sales_Rpt1")
    first = c.get(f"/api/objects/{oid}/evidence").json()["evaluated_at"]
    later = datetime.now(UTC) + timedelta(minutes=1)
    evaluate(_store(c), load_policy(), now=later)
    second = c.get(f"/api/objects/{oid}/evidence").json()["evaluated_at"]
    assert second != first and datetime.fromisoformat(second) == later


def test_flash_curve_api(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    doc = c.get("/api/targets/demo%3ASQLPROD01/flash-curve").json()
    assert doc["target"] == T and doc["flash_tier"] == "flash" and doc["evaluated_at"]
    sales = next(d for d in doc["databases"] if d["database"] == "Sales")
    pts = sales["points"]
    assert len(pts) >= 2 and pts[0][0] == 0 and [p[1] for p in pts] == sorted(p[1] for p in pts)
    assert sales["savings"]["io_ms_per_s_saved"] > 0 and sales["savings"]["flash_gb_recommended"] > 0
    with _store(c).session() as s:
        tid = s.scalar(select(Target.id).where(Target.name == T))
    assert c.get(f"/api/targets/{tid}/flash-curve").json()["databases"] == doc["databases"]
    assert c.get("/api/targets/nope/flash-curve").status_code == 404


def test_heatmap_shows_the_flash_curve(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    for url in ("/heatmap", "/heatmap?target=demo%3ASQLPROD01"):
        html = c.get(url).text
        assert "<h2>How much flash</h2>" in html
        svgs = [s for s in _svgs(html) if (s.get("aria-label") or "").startswith("How much flash")]
        assert len(svgs) == 1
        paths = [
            p for p in svgs[0].iter("{http://www.w3.org/2000/svg}path") if p.find("{*}title") is not None
        ]
        assert any((p.find("{*}title").text or "").startswith("Sales") for p in paths)  # type: ignore[union-attr]
        table = html[html.index('class="compact flash-savings"') :]
        assert "<td>Sales</td>" in table[: table.index("</table>")]


def test_flash_chart_escapes_names_and_handles_no_data() -> None:
    svg = flash_chart(
        [CurveLine("</text><script>x</script>", [(0, 0.1), (100, 0.5)], 50.0)], title="t", flash_tier="flash"
    )
    ET.fromstring(str(svg))
    assert "<script>" not in str(svg)
    assert "no flash curve yet" in str(flash_chart([], title="t", flash_tier="flash"))
