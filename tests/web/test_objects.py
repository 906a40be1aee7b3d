"""Object pages and their JSON twins (target / database, object, heat map) on the demo fleet,
SQLite and PostgreSQL: login, filters, sort, pages, 404s, series checked against io_interval, and
escaping of hostile names in HTML and SVG."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, insert, select

from advisors.deltas import rates
from advisors.features import ObjectInfo, Usage, heat_of
from app.http.objects import heatmap_totals
from app.store.db import Store
from app.store.io_window import SUM_COLUMNS, heat, metrics_from
from app.store.models import DbObject, IoInterval, Recommendation, Target
from app.store.object_detail import MAX_POINTS, bucket_width
from app.store.rollup import not_rolled_up, roll_up
from app.web import charts
from tests.web.conftest import login

T = "demo:SQLPROD01"
T_URL = "/targets/demo%3ASQLPROD01"
HOSTILE = "</text><script>alert(1)</script>"


@pytest.fixture
def client(app_client: TestClient) -> TestClient:
    return app_client


def _store(client: TestClient) -> Store:
    return client.app.state.tierwise.store  # type: ignore[attr-defined,no-any-return]


def _object_id(client: TestClient, name: str) -> int:
    with _store(client).session() as s:
        return int(s.scalar(select(DbObject.id).where(DbObject.name == name)) or 0)


def _svgs(html: str) -> list[ET.Element]:
    """Every inline SVG, parsed as XML: a stray '<' or '&' from a name would fail here."""
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", html, flags=re.S)]


def _all(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    r = client.get(f"/api/targets/{T}/objects", params={"limit": 1000, **params})
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return items


# --- login ---------------------------------------------------------------------------------------

PAGES = [T_URL, T_URL + "/Sales", "/objects/1", "/heatmap", "/heatmap?target=demo%3ADB2PROD01"]
API = [f"/api/targets/{T}/objects", "/api/objects/1", "/api/heatmap"]


def test_pages_and_api_need_login(client: TestClient) -> None:
    for path in PAGES:
        r = client.get(path, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login", path
    for path in API:
        assert client.get(path).status_code == 401, path


# --- target / database ---------------------------------------------------------------------------


def test_target_page_renders_for_a_viewer(client: TestClient) -> None:
    html = login(client, "vera").get(T_URL).text
    assert "<h1>demo:SQLPROD01" in html
    for name in ("Sales_HotIdx1", "tempdev", "Sales_log"):
        assert name in html
    assert re.search(r'href="/targets/\d+/Sales"', html)  # databases table, the target by id
    assert '→ <span class="tier flash">flash</span>' in html  # advice from a stored recommendation
    assert "page 1 of 2" in html
    db = client.get(T_URL + "/Sales").text
    assert "Sales_HotIdx1" in db and "tempdev" not in db
    instance = client.get(T_URL + "/").text  # the instance-level objects have no database
    assert "Buffer Manager" in instance and "Sales_HotIdx1" not in instance


def test_objects_api_metrics_match_io_interval(client: TestClient) -> None:
    login(client, "vera")
    body = client.get(f"/api/targets/{T}/objects", params={"name": "Sales_HotIdx1"}).json()
    (row,) = body["items"]
    since, until = datetime.fromisoformat(body["since"]), datetime.fromisoformat(body["until"])
    assert since == until.replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)  # this hour + 23
    with _store(client).session() as s:
        ivs = s.scalars(
            select(IoInterval).where(
                IoInterval.object_id == row["id"], IoInterval.end_time >= since, IoInterval.end_time <= until
            )
        ).all()
        obj = s.get(DbObject, row["id"])
        assert obj is not None
        size = obj.size_bytes or 0
    secs = sum(i.seconds for i in ivs)
    reads, writes = sum(i.reads or 0 for i in ivs), sum(i.writes or 0 for i in ivs)
    assert row["read_iops"] == pytest.approx(reads / secs)
    assert row["write_iops"] == pytest.approx(writes / secs)
    assert row["avg_read_ms"] == pytest.approx(sum(i.read_time_ms or 0 for i in ivs) / reads)
    assert row["avg_read_kb"] == pytest.approx(sum(i.bytes_read or 0 for i in ivs) / reads / 1024)
    assert row["heat"] == pytest.approx((reads + writes) / (size / 2**30) / (secs / 3600))
    assert row["current_tier"] == "fc" and row["recommended_tier"] == "flash"
    assert row["placement_unit"] == "Sales/filegroup/FG_HOT_INDEX" and row["profile"] == "random_read"


def test_sorting(client: TestClient) -> None:
    login(client, "vera")
    rows = _all(client, sort="read_iops", dir="desc")
    known = [r["read_iops"] for r in rows if r["read_iops"] is not None]
    assert known == sorted(known, reverse=True) and len(known) > 10
    assert all(r["read_iops"] is None for r in rows[len(known) :])  # no value: last
    asc = _all(client, sort="read_iops", dir="asc")
    assert [r["read_iops"] for r in asc[: len(known)]] == sorted(known)
    names = [r["name"] for r in _all(client, sort="name", dir="asc")]
    assert names == sorted(names, key=str.lower)
    sizes = [r["size_bytes"] for r in _all(client, sort="size", dir="desc") if r["size_bytes"] is not None]
    assert sizes == sorted(sizes, reverse=True)
    # the page shows the same order
    html = client.get(T_URL, params={"sort": "name", "dir": "asc"}).text
    shown = re.findall(r'<a href="/objects/\d+" title="[^"]*">([^<]+)</a>', html)
    assert shown == names[:50]
    assert 'aria-sort="ascending"' in html


def test_unknown_sort_key_is_ignored_on_the_page_and_rejected_by_the_api(client: TestClient) -> None:
    login(client, "vera")
    r = client.get(T_URL, params={"sort": "name; drop table object", "dir": "asc"})
    assert r.status_code == 200 and "Unknown sort key" in r.text and "sorted by heat" in r.text
    shown = re.findall(r'<a href="/objects/\d+" title="[^"]*">([^<]+)</a>', r.text)
    assert shown == [x["name"] for x in _all(client)][:50]  # the default order: heat, hottest first
    assert re.search(r'href="/targets/\d+\?sort=name', r.text)  # headers still offer the real keys
    r = client.get(f"/api/targets/{T}/objects", params={"sort": "password"})
    assert r.status_code == 422 and "heat" in r.json()["detail"]
    assert client.get(f"/api/targets/{T}/objects", params={"dir": "sideways"}).status_code == 422
    assert len(_all(client)) == client.get(f"/api/targets/{T}/objects").json()["total"]  # nothing dropped


def test_filters(client: TestClient) -> None:
    login(client, "vera")
    with _store(client).session() as s:
        tid = s.scalar(select(Target.id).where(Target.name == T))
        partitions = s.scalar(
            select(func.count()).where(DbObject.target_id == tid, DbObject.kind == "partition")
        )
    parts = _all(client, kind="partition")
    assert len(parts) == partitions and {r["kind"] for r in parts} == {"partition"}
    assert all(r["read_iops"] is None for r in parts)  # their I/O is in their filegroup's files
    hot = _all(client, name="hotidx")  # contains, case-insensitive
    assert sorted(r["name"] for r in hot) == ["Sales_HotIdx1", "Sales_HotIdx2"]
    sata = _all(client, tier="sata")
    assert {r["name"] for r in sata} >= {"Sales_Archive1"} and {r["current_tier"] for r in sata} == {"sata"}
    unknown = _all(client, tier="unknown")
    assert {r["kind"] for r in unknown} == {"instance"}
    both = _all(client, kind="data_file", tier="fc", name="Ord")
    assert both and all(r["kind"] == "data_file" and "Ord" in r["name"] for r in both)
    html = client.get(T_URL, params={"kind": "partition", "name": "2025"}).text
    assert 'Objects <span class="muted">(12 matching)' in html
    one_db = client.get(f"/api/targets/{T}/objects", params={"database": "tempdb", "limit": 1000}).json()
    assert {r["database"] for r in one_db["items"]} == {"tempdb"} and one_db["total"] == 5


def test_pagination(client: TestClient) -> None:
    login(client, "vera")
    total = client.get(f"/api/targets/{T}/objects").json()["total"]
    assert total > 50
    first = client.get(f"/api/targets/{T}/objects", params={"limit": 50, "offset": 0}).json()["items"]
    second = client.get(f"/api/targets/{T}/objects", params={"limit": 50, "offset": 50}).json()["items"]
    assert len(first) == 50 and len(second) == total - 50
    ids = [r["id"] for r in first + second]
    assert len(set(ids)) == total == len(ids)
    assert ids == [r["id"] for r in _all(client)]
    past = client.get(f"/api/targets/{T}/objects", params={"offset": 5000}).json()
    assert past["items"] == [] and past["total"] == total
    page2 = client.get(T_URL, params={"page": 2}).text
    assert page2.count('<a href="/objects/') == total - 50 and "page 2 of 2" in page2
    assert re.search(r'href="/targets/\d+\?page=1"', page2)
    clamped = client.get(T_URL, params={"page": 99}).text
    assert "page 2 of 2" in clamped
    assert client.get(T_URL, params={"page": "x"}).status_code == 422


def test_not_found(client: TestClient) -> None:
    login(client, "vera")
    for path in ("/targets/nope", T_URL + "/NoSuchDb", "/objects/999999", "/heatmap?target=nope"):
        assert client.get(path).status_code == 404, path
    for path in ("/api/targets/nope/objects", "/api/objects/999999", "/api/heatmap?target=nope"):
        assert client.get(path).status_code == 404, path


# --- object --------------------------------------------------------------------------------------


def _expected_series(ivs: list[IoInterval], width: int) -> dict[datetime, dict[str, float | None]]:
    buckets: dict[int, list[IoInterval]] = defaultdict(list)
    for iv in ivs:
        buckets[math.floor(iv.end_time.timestamp() / width)].append(iv)
    out = {}
    for b, group in buckets.items():
        secs = sum(i.seconds for i in group)
        reads, writes = sum(i.reads or 0 for i in group), sum(i.writes or 0 for i in group)
        out[datetime.fromtimestamp(b * width, UTC)] = {
            "read_iops": reads / secs,
            "write_iops": writes / secs,
            "avg_read_ms": sum(i.read_time_ms or 0 for i in group) / reads if reads else None,
            "avg_write_ms": sum(i.write_time_ms or 0 for i in group) / writes if writes else None,
            "avg_read_kb": sum(i.bytes_read or 0 for i in group) / reads / 1024 if reads else None,
            "avg_write_kb": sum(i.bytes_written or 0 for i in group) / writes / 1024 if writes else None,
        }
    return out


def _check_series(client: TestClient, object_id: int) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/api/objects/{object_id}").json()
    since, until = datetime.fromisoformat(body["since"]), datetime.fromisoformat(body["until"])
    with _store(client).session() as s:
        ivs = list(
            s.scalars(
                select(IoInterval).where(
                    IoInterval.object_id == object_id,
                    IoInterval.end_time >= since,
                    IoInterval.end_time <= until,
                )
            )
        )
    expected = _expected_series(ivs, body["bucket_seconds"])
    assert 0 < len(body["series"]) <= MAX_POINTS
    got = {datetime.fromisoformat(p["t"]): p for p in body["series"]}
    assert set(got) == set(expected)
    for t, exp in expected.items():
        for k, v in exp.items():
            assert got[t][k] == pytest.approx(v), (t, k)
    return body


def test_object_series_equal_io_interval(client: TestClient) -> None:
    login(client, "vera")
    oid = _object_id(client, "Sales_HotIdx1")
    body = _check_series(client, oid)
    assert body["name"] == "Sales_HotIdx1" and body["current_tier"] == "fc"
    assert body["placement_unit"] == "Sales/filegroup/FG_HOT_INDEX"
    assert [m["name"] for m in body["unit_members"]] == ["Sales_HotIdx2"]
    assert body["recommendation"]["to_tier"] == "flash" and body["recommendation"]["reasons"]
    hours = body["heat_by_hour_of_day"]
    assert len(hours) == 24 and any(v for v in hours)


def test_object_series_downsampled_to_300_points(client: TestClient) -> None:
    """A week of one-minute intervals (10,080) comes back as at most 300 averaged buckets."""
    login(client, "vera")
    store = _store(client)
    end = datetime.now(UTC).replace(second=0, microsecond=0)
    with store.session() as s:
        tid = s.scalar(select(Target.id).where(Target.name == T))
        o = DbObject(
            target_id=tid,
            engine="sqlserver",
            server="SQLPROD01",
            database="Sales",
            kind="data_file",
            key="Sales/file/900",
            name="Sales_Busy",
            size_bytes=10 * 2**30,
            physical_name="F:\\fc\\Sales\\Sales_Busy.ndf",
            filegroup="FG_BUSY",
            first_seen=end,
            last_seen=end,
        )
        s.add(o)
        s.flush()
        rows = []
        for k in range(7 * 1440):
            t = end - timedelta(minutes=k)
            reads = 600 + (k * 37) % 500
            rows.append(
                {
                    "object_id": o.id,
                    "start_time": t - timedelta(minutes=1),
                    "end_time": t,
                    "seconds": 60.0,
                    "reads": reads,
                    "bytes_read": reads * 8192,
                    "read_time_ms": reads * (3 + k % 7),
                    "writes": k % 90,
                    "bytes_written": (k % 90) * 65536,
                    "write_time_ms": (k % 90) * 2,
                    "extra": {},
                }
            )
        s.execute(insert(IoInterval), rows)
        oid = o.id
    body = _check_series(client, oid)
    assert 150 <= len(body["series"]) <= MAX_POINTS  # hourly buckets: 168-169
    assert body["bucket_seconds"] == bucket_width(7 * 86400 - 60)
    html = client.get(f"/objects/{oid}").text
    svgs = _svgs(html)
    assert len(svgs) == 4 and all(svg.get("role") == "img" and svg.get("aria-label") for svg in svgs)


def test_object_page_renders_charts_and_recommendation(client: TestClient) -> None:
    login(client, "vera")
    oid = _object_id(client, "Sales_HotIdx1")
    html = client.get(f"/objects/{oid}").text
    svgs = _svgs(html)
    assert len(svgs) == 4
    ns = "{http://www.w3.org/2000/svg}"
    for svg in svgs[:3]:
        assert len(svg.findall(f".//{ns}path")) >= 2  # two series drawn
        assert svg.find(f"{ns}title") is not None
    assert len(svgs[3].findall(f".//{ns}rect")) >= 5  # hour-of-day bars
    rec = re.search(r'href="/recommendations/(\d+)"', html)
    assert rec and client.get(f"/recommendations/{rec.group(1)}").status_code == 200
    part = client.get(f"/objects/{_object_id(client, 'Orders 2026-11')}").text
    assert "its I/O is counted in the filegroup" in part


# --- heat map ------------------------------------------------------------------------------------


def test_heatmap_page_and_api(client: TestClient) -> None:
    login(client, "vera")
    body = client.get("/api/heatmap").json()
    assert 0 < len(body["rows"]) <= 40 and all(len(r["cells"]) == len(body["hours"]) for r in body["rows"])
    ios = [r["io"] for r in body["rows"]]
    assert ios == sorted(ios, reverse=True)
    assert not {r["kind"] for r in body["rows"]} & {"partition", "container", "buffer_pool", "instance"}
    skew = body["skew"]
    assert skew[0] == {"capacity_share": 0.0, "io_share": 0.0}
    assert skew[-1]["capacity_share"] == pytest.approx(1) and skew[-1]["io_share"] == pytest.approx(1)
    assert all(a["io_share"] <= b["io_share"] for a, b in itertools.pairwise(skew))
    assert body["knee"]["io_share"] > body["knee"]["capacity_share"]
    with _store(client).session() as s:
        recs = s.scalars(select(Recommendation).where(Recommendation.status.in_(("open", "approved")))).all()
    sv = body["savings"]
    assert sv["recommendations"] == len(recs) > 0
    assert sv["net_ms_per_s"] == pytest.approx(
        sum((r.io_ms_per_s_now or 0) - (r.io_ms_per_s_after or 0) for r in recs)
    )
    assert sv["flash_gb"] == pytest.approx(
        sum(r.size_bytes or 0 for r in recs if r.to_tier == "flash") / 2**30
    )
    one = client.get("/api/heatmap", params={"target": "demo:DB2PROD01"}).json()
    assert one["rows"] and {r["target"] for r in one["rows"]} == {"demo:DB2PROD01"}
    html = client.get("/heatmap").text
    svgs = _svgs(html)
    assert len(svgs) == 3 and "Predicted I/O wait saved" in html  # the grid, how much flash, the skew
    assert [s.get("aria-label", "")[:14] for s in svgs[1:]] == ["How much flash", "Skew: share of"]


def test_heat_cells_equal_io_interval(client: TestClient) -> None:
    login(client, "vera")
    body = client.get("/api/heatmap").json()
    row = body["rows"][0]
    hours = [datetime.fromisoformat(h) for h in body["hours"]]
    since, until = datetime.fromisoformat(body["since"]), datetime.fromisoformat(body["until"])
    with _store(client).session() as s:
        ivs = list(
            s.scalars(
                select(IoInterval).where(
                    IoInterval.object_id == row["id"],
                    IoInterval.end_time >= since,
                    IoInterval.end_time <= until,
                )
            )
        )
    by_hour: dict[datetime, list[IoInterval]] = defaultdict(list)
    for iv in ivs:
        by_hour[iv.end_time.replace(minute=0, second=0, microsecond=0)].append(iv)
    gb = row["size_bytes"] / 2**30
    for h, cell in zip(hours, row["cells"], strict=True):
        group = by_hour.get(h)
        if not group:
            assert cell is None
            continue
        io = sum((i.reads or 0) + (i.writes or 0) for i in group)
        assert cell == pytest.approx(io / gb / (sum(i.seconds for i in group) / 3600))


# --- escaping ------------------------------------------------------------------------------------


def test_hostile_object_name_is_escaped_everywhere(client: TestClient) -> None:
    login(client, "vera")
    end = datetime.now(UTC).replace(microsecond=0)
    with _store(client).session() as s:
        tid = s.scalar(select(Target.id).where(Target.name == T))
        o = DbObject(
            target_id=tid,
            engine="sqlserver",
            server="SQLPROD01",
            database="Sales",
            kind="data_file",
            key="Sales/file/666",
            name=HOSTILE,
            size_bytes=2**30,
            physical_name='F:\\fc\\"&<x>.ndf',
            filegroup="FG_<b>",
            first_seen=end,
            last_seen=end,
        )
        s.add(o)
        s.flush()
        for k in range(8):  # the busiest object of all: on the heat map's first row
            t = end - timedelta(minutes=15 * k)
            s.add(
                IoInterval(
                    object_id=o.id,
                    start_time=t - timedelta(minutes=15),
                    end_time=t,
                    seconds=900.0,
                    reads=50_000_000,
                    bytes_read=50_000_000 * 8192,
                    read_time_ms=50_000_000,
                    writes=1,
                    bytes_written=8192,
                    write_time_ms=1,
                )
            )
        oid = o.id
    pages = [client.get(T_URL).text, client.get(f"/objects/{oid}").text, client.get("/heatmap").text]
    for html in pages:
        assert "<script>alert(1)</script>" not in html
        assert "&lt;/text&gt;&lt;script&gt;" in html or "&lt;/text&gt;&lt;script" in html
        _svgs(html)  # every SVG still parses
    heat = _svgs(pages[2])[0]
    texts = "".join("".join(t.itertext()) for t in heat.iter("{http://www.w3.org/2000/svg}text"))
    assert "</text><script>" in texts  # shown as text, literally
    assert client.get(f"/api/objects/{oid}").json()["name"] == HOSTILE


def test_charts_escape_every_text() -> None:
    svg = charts.line_chart(
        [charts.Series("<b>&", [(0.0, 1.0), (3600.0, 2.0)])], title='"><script>x</script>', unit="<u>"
    )
    assert "<script>" not in svg and "<b>" not in svg and "<u>" not in svg
    root = ET.fromstring(str(svg))
    assert root.get("aria-label") == '"><script>x</script>' and root.get("role") == "img"
    bar = charts.bar_chart(["<a>"], [1.0], title="t&t", unit="&")
    ET.fromstring(str(bar))
    grid = charts.heat_grid(
        [charts.GridRow("<x>", "<y>", "/objects/1?a=1&b=<2>", [1.0, None, 100.0], "<tip>")],
        [datetime(2026, 1, 1, h, tzinfo=UTC) for h in range(3)],
        title="<grid>",
        unit="I/O per GB-hour",
    )
    assert "<x>" not in grid and "<tip>" not in grid
    ET.fromstring(str(grid))
    curve = charts.curve_chart(
        [(0, 0), (0.1, 0.8), (1, 1)], title="<c>", x_label="<x>", y_label="<y>", marker=(0.1, 0.8, "<m>")
    )
    ET.fromstring(str(curve))
    for empty in (
        charts.line_chart([charts.Series("s", [])], title="e", unit="u"),
        charts.bar_chart(["a"], [None], title="e", unit="u"),
        charts.heat_grid([], [], title="e", unit="u"),
        charts.curve_chart([], title="e", x_label="x", y_label="y"),
    ):
        assert "no " in str(empty) and ET.fromstring(str(empty)) is not None


@pytest.mark.parametrize("span", [0, 3600, 8 * 3600, 86400, 7 * 86400, 30 * 86400, 400 * 86400])
def test_bucket_width_keeps_at_most_300_points(span: int) -> None:
    w = bucket_width(span)
    assert span // w + 1 <= MAX_POINTS  # epoch-aligned buckets over the span
    assert bucket_width(span, interval_s=900) >= 900


# --- roll-ups, the heat map's cached ranking, the arithmetic ---------------------------------------


def test_same_figures_once_intervals_are_rolled_up(client: TestClient) -> None:
    """The target page and the heat map read hourly roll-ups plus the intervals not rolled up yet:
    rolling up changes where the sums come from, not the sums."""
    login(client, "vera")
    before_rows = {r["id"]: r for r in _all(client)}
    before_map = client.get("/api/heatmap").json()
    with _store(client).session() as s:
        assert roll_up(s) > 0
        assert s.scalar(select(func.count()).where(not_rolled_up())) == 0
    heatmap_totals.clear()
    after_rows = {r["id"]: r for r in _all(client)}
    after_map = client.get("/api/heatmap").json()
    assert set(before_rows) == set(after_rows)
    for oid, b in before_rows.items():
        for k in ("read_iops", "write_iops", "avg_read_kb", "avg_read_ms", "avg_write_ms", "heat", "seconds"):
            assert after_rows[oid][k] == pytest.approx(b[k]), (b["name"], k)
    assert [r["id"] for r in after_map["rows"]] == [r["id"] for r in before_map["rows"]]
    for b, a in zip(before_map["rows"], after_map["rows"], strict=True):
        assert a["cells"] == pytest.approx(b["cells"])
    flat = [v for p in before_map["skew"] for v in (p["capacity_share"], p["io_share"])]
    assert [v for p in after_map["skew"] for v in (p["capacity_share"], p["io_share"])] == pytest.approx(flat)


def test_heat_map_ranking_is_kept_a_few_minutes(client: TestClient) -> None:
    login(client, "vera")
    first = client.get("/api/heatmap").json()
    end = datetime.now(UTC).replace(microsecond=0)
    with _store(client).session() as s:
        tid = s.scalar(select(Target.id).where(Target.name == T))
        o = DbObject(
            target_id=tid,
            engine="sqlserver",
            server="SQLPROD01",
            database="Sales",
            kind="data_file",
            key="Sales/file/777",
            name="Sales_Suddenly_Hot",
            size_bytes=2**30,
            physical_name="F:\\fc\\Sales\\hot.ndf",
            first_seen=end,
            last_seen=end,
        )
        s.add(o)
        s.flush()
        s.add(
            IoInterval(
                object_id=o.id,
                start_time=end - timedelta(minutes=15),
                end_time=end,
                seconds=900.0,
                reads=10**9,
                writes=0,
            )
        )
    again = client.get("/api/heatmap").json()
    assert again["ranked_at"] == first["ranked_at"] and again["rows"][0]["name"] != "Sales_Suddenly_Hot"
    heatmap_totals.clear()
    fresh = client.get("/api/heatmap").json()
    assert fresh["rows"][0]["name"] == "Sales_Suddenly_Hot" and fresh["ranked_at"] > first["ranked_at"]


def test_metrics_use_the_advisors_arithmetic() -> None:
    sums = (900.0, 9000, 9000 * 8192, 45000, 300, 300 * 65536, 600)
    m = metrics_from(sums, 50 * 2**30)
    r = rates(dict(zip(SUM_COLUMNS[1:], sums[1:], strict=True)), 900.0)
    assert (m.read_iops, m.write_iops, m.avg_read_ms, m.avg_write_ms) == (
        r.read_iops,
        r.write_iops,
        r.avg_read_ms,
        r.avg_write_ms,
    )
    assert m.avg_read_kb == pytest.approx((r.avg_read_bytes or 0) / 1024)
    info = ObjectInfo(
        key="k",
        engine="sqlserver",
        server="s",
        database="d",
        kind="data_file",
        name="n",
        size_bytes=50 * 2**30,
    )
    assert m.heat == pytest.approx(heat_of(info, Usage(900.0, {"reads": 9000, "writes": 300})))
    assert metrics_from((900.0, None, None, None, None, None, None), 10).read_iops is None
    assert heat(5.0, 0, 3600.0) == pytest.approx(5 * 1024)  # a zero-size object counts as 1 MB


def test_odd_query_values_never_fail(client: TestClient) -> None:
    login(client, "vera")
    odd = ["", "<script>", "\x00", "%", "_", "'", "名前", "a" * 5000]
    for v in odd:
        for params in ({"sort": v}, {"dir": v}, {"kind": v}, {"tier": v}, {"name": v}):
            assert client.get(T_URL, params=params).status_code == 200, params
        assert client.get(f"/targets/{quote(v, safe='')}x").status_code == 404
        assert client.get("/heatmap", params={"target": v}).status_code in (200, 404)
        assert client.get(f"/api/targets/{T}/objects", params={"database": v}).status_code in (200, 404)
    assert client.get(T_URL + "/%00").status_code == 404
    assert client.get(T_URL, params={"page": 10**7}).status_code == 422
    assert client.get("/objects/0").status_code == 422 and client.get(f"/objects/{2**40}").status_code == 422


def test_object_pages_judge_tiers_by_the_stored_policy(app_client: TestClient) -> None:
    """After an admin saves a policy at /policies, the objects list and the flash curve use it,
    as the recommendations do (they used to re-read the YAML file)."""
    from policies.loader import DEFAULT_POLICY
    from tests.web.conftest import csrf_of

    c = login(app_client, "ada")
    url = "/api/targets/demo%3ASQLPROD01/objects"
    before = c.get(url, params={"limit": 1000}).json()["items"]
    assert "fc" in {r["current_tier"] for r in before}
    assert c.get("/api/targets/demo%3ASQLPROD01/flash-curve").json()["flash_tier"] == "flash"
    renamed = (
        DEFAULT_POLICY.read_text()
        .replace("  - name: flash\n", "  - name: nvme\n", 1)
        .replace("  - name: fc\n", "  - name: fibre\n", 1)
        .replace("only: [fc]", "only: [fibre]")
    )
    token = csrf_of(c.get("/policies").text)
    r = c.post("/policies", data={"yaml_text": renamed, "comment": "rename", "csrf_token": token})
    assert r.status_code == 200 and "policy saved" in r.text
    after = c.get(url, params={"limit": 1000}).json()["items"]
    tiers = {r["current_tier"] for r in after}
    assert "fibre" in tiers and "fc" not in tiers
    assert c.get("/api/targets/demo%3ASQLPROD01/flash-curve").json()["flash_tier"] == "nvme"


def test_a_target_whose_name_holds_a_slash_is_reached_and_removed_by_id(client: TestClient) -> None:
    """Every DB2 import is `import:db2:host/instance`: its links use the id, so the page opens and
    the Remove form works (by name, the "/" split the route and gave 404)."""
    from datetime import UTC, datetime

    from app.store.targets import import_target
    from tests.web.conftest import csrf_of

    state = client.app.state.tierwise  # type: ignore[attr-defined]
    with state.store.session() as s:
        tid = import_target(s, server="db2host01/db2inst1", engine="db2", now=datetime.now(UTC)).id
    c = login(client, "ada")
    fleet = c.get("/").text
    assert f'href="/targets/{tid}"' in fleet
    page = c.get(f"/targets/{tid}")
    assert page.status_code == 200 and "import:db2:db2host01/db2inst1" in page.text
    targets = c.get("/targets").text
    assert f'action="/targets/{tid}/remove"' in targets
    r = c.post(f"/targets/{tid}/remove", data={"csrf_token": csrf_of(targets)})
    assert r.status_code == 200 and "removed import:db2:db2host01/db2inst1" in r.text
    assert c.get(f"/targets/{tid}").status_code == 404
