"""A recommendation's page links the stored objects of its placement unit (a filegroup's files,
tempdb's data files, a DB2 table space and what it holds) and their I/O charts; "(no longer
collected)" only when none of them is stored (#28 item 4: every SQL Server recommendation of the
demo said it, since a recommendation's key is its unit's, which no file has)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from fastapi.testclient import TestClient
from sqlalchemy import delete, select

from app.store.db import Store
from app.store.models import DbObject, Recommendation
from app.store.placement import unit_key_of
from app.store.recommendations import Status
from app.store.unit_objects import unit_objects
from tests.web.conftest import login

GONE = "(no longer collected"


def _store(client: TestClient) -> Store:
    return client.app.state.tierwise.store  # type: ignore[attr-defined,no-any-return]


def _charts(html: str) -> int:
    """How many SVG charts the object page's chart block holds."""
    block = html.split('id="charts"', 1)
    return block[1].split("</div>", 1)[0].count("<svg") if len(block) == 2 else 0


def test_every_open_recommendation_links_objects_with_charts(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    with _store(c).session() as s:
        recs = list(s.scalars(select(Recommendation).where(Recommendation.status == Status.OPEN)))
        # every stored object, and the unit each moves with: the answer found without narrowing
        everything = list(s.execute(select(DbObject.id, DbObject.target_id, DbObject.engine, DbObject.kind,
                                           DbObject.database, DbObject.key, DbObject.filegroup,
                                           DbObject.tablespace)))  # fmt: skip
        expected = {
            r.id: {
                o.id for o in everything if o.target_id == r.target_id and r.key in (o.key, unit_key_of(o))
            }
            for r in recs
        }
    assert {r.engine for r in recs} == {"sqlserver", "db2"}
    assert sum(r.engine == "sqlserver" for r in recs) > 10
    charted_pages: dict[int, int] = {}
    for r in recs:
        html = c.get(f"/recommendations/{r.id}").text
        assert GONE not in html, r.key
        linked = {int(i) for i in re.findall(r'href="/objects/(\d+)"', html)}
        assert linked and linked == expected[r.id], r.key
        charted = re.search(r'href="/objects/(\d+)#charts"', html)
        assert charted, r.key
        charted_pages[r.id] = int(charted.group(1))
    for rec_id, object_id in charted_pages.items():
        page = c.get(f"/objects/{object_id}")
        assert page.status_code == 200
        assert _charts(page.text) >= 4, f"recommendation #{rec_id}: object #{object_id} shows no charts"


def test_a_unit_whose_objects_are_gone_says_so(app_client: TestClient) -> None:
    c = login(app_client, "vera")
    store = _store(c)
    with store.session() as s:
        rec = s.scalar(select(Recommendation).where(Recommendation.key == "Sales/filegroup/FG_HOT_INDEX"))
        assert rec is not None
        files = {
            o.name: o.id for o in s.scalars(select(DbObject).where(DbObject.filegroup == "FG_HOT_INDEX"))
        }
        rec_id = rec.id
    assert set(files) == {"Sales_HotIdx1", "Sales_HotIdx2"}
    with store.session() as s:
        s.execute(delete(DbObject).where(DbObject.id == files["Sales_HotIdx1"]))
    html = c.get(f"/recommendations/{rec_id}").text
    assert GONE not in html
    assert set(re.findall(r'href="/objects/(\d+)', html)) == {str(files["Sales_HotIdx2"])}
    with store.session() as s:
        s.execute(delete(DbObject).where(DbObject.id == files["Sales_HotIdx2"]))
    html = c.get(f"/recommendations/{rec_id}").text
    assert GONE in html and "/objects/" not in html.split('id="unit-objects"', 1)[1].split("</dd>", 1)[0]


def test_tempdb_and_a_log_are_found_as_units(app_client: TestClient) -> None:
    """tempdb's data files move as one unit (not its log); a log is its own unit."""
    with _store(app_client).session() as s:
        target_id = s.scalar(select(DbObject.target_id).where(DbObject.key == "tempdb/file/1"))
        now = datetime.now(UTC)

        def rec(key: str, kind: str, name: str, database: str) -> Recommendation:
            return Recommendation(target_id=target_id, key=key, engine="sqlserver", server="SQLPROD01",
                                  database=database, kind=kind, name=name, to_tier="flash", profile="p",
                                  rule="r", evidence={}, status="open", created_at=now, updated_at=now)  # fmt: skip

        tempdb = unit_objects(s, rec("tempdb/data", "tempdb", "tempdb", "tempdb"))
        log = unit_objects(s, rec("Sales/file/2", "log_file", "Sales_log", "Sales"))
    assert [o.name for o in tempdb] == ["temp2", "temp3", "temp4", "tempdev"]
    assert all(o.kind == "tempdb" and not o.held for o in tempdb)
    assert [(o.kind, o.name) for o in log] == [("log_file", "Sales_log")]
