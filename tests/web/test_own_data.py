"""A DBA's own collection on every page (#28): two SQL Server instances and a Db2 one, collected
30 days before the import, SQLCRM01 on a D:\\ that no tier names. Every page and API route that
shows I/O reads the window the advice judged (the week ending at each target's newest sample,
app/store/anchor.py) and shows the advice's own figures; the unmatched location is named first
wherever a DBA looks; mapping it on the Policy page advises it again. SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.evaluate import evaluate
from app.importer import import_file
from app.jobs import ImportWatch
from app.mail.content import gather
from app.mail.scope import Scope
from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.models import AdviceSnapshot, DbObject, Recommendation, Target
from app.store.placement import unit_key_of
from app.store.users import add_user
from app.store.watermarks import import_pending
from policies.loader import load_policy
from tests.app.test_advise_after_import import wait_for
from tests.own_collection import BUSIEST_UNMAPPED, UNMAPPED_DIR, collection_end, write_collection
from tests.web.conftest import PASSWORD, csrf_of, login

DAYS_OLD = 30
APPROX = {"rel": 1e-6, "abs": 1e-9}


@dataclass
class Own:
    client: TestClient
    store: Store
    settings: Settings
    end: datetime


@pytest.fixture
def own(settings: Settings, store: Store, tmp_path: Path) -> Iterator[Own]:
    settings = settings.model_copy(update={"scheduler_enabled": False})
    for path in write_collection(tmp_path / "collection", DAYS_OLD):
        import_file(store, path)
    evaluate(store, load_policy(), now=datetime.now(UTC))
    with store.session() as s:
        add_user(s, username="ada", password=PASSWORD, role="admin", now=datetime.now(UTC))
    with TestClient(create_app(settings)) as client:
        yield Own(login(client, "ada"), store, settings, collection_end(DAYS_OLD))


def _evidence(store: Store) -> list[tuple[str, dict[str, Any], list[DbObject]]]:
    """(target name, the advice's evidence of a placement unit, the stored objects of the unit)
    for every unit advised: a filegroup's files, tempdb's files, a log, a table space."""
    out = []
    with store.session() as s:
        for name, snap in s.execute(select(Target.name, AdviceSnapshot).join(AdviceSnapshot)):
            objects = list(s.scalars(select(DbObject).where(DbObject.target_id == snap.target_id)))
            for unit in snap.objects:
                members = [o for o in objects if unit_key_of(o) == unit["key"]]
                if members and unit["metrics"].get("hours"):
                    out.append((name, unit, members))
            s.expunge_all()
    return out


def _sum(rows: list[dict[str, Any]], rate: str, per: str | None = None) -> float | None:
    """A unit's rate from its members' (summed), or its per-request figure (weighted by `rate`)."""
    if per is None:
        return sum(r[rate] or 0.0 for r in rows)
    weight = sum(r[rate] or 0.0 for r in rows)
    return None if weight == 0 else sum((r[rate] or 0.0) * (r[per] or 0.0) for r in rows) / weight


def test_every_surface_reads_the_window_the_advice_judged(own: Own) -> None:
    advised = _evidence(own.store)
    assert {m[0].engine for _, _, m in advised} == {"sqlserver", "db2"} and len(advised) >= 7
    heat = own.client.get("/api/heatmap").json()
    heat_rows = {r["id"]: r for r in heat["rows"]}
    for target, unit, members in advised:
        m = unit["metrics"]
        # each member's JSON and page: the week ending at the newest sample holds the advice's hours
        totals = []
        for obj in members:
            d = own.client.get(f"/api/objects/{obj.id}").json()
            assert datetime.fromisoformat(d["until"]) == own.end, obj.name
            assert d["total"]["seconds"] / 3600 == pytest.approx(m["hours"]), obj.name
            assert len(d["series"]) >= 48, obj.name
            totals.append(d["total"])
            page = own.client.get(f"/objects/{obj.id}").text
            assert page.count("<svg") >= 4 and 'id="charts"' in page, obj.name
        where = unit["name"]
        assert _sum(totals, "read_iops") == pytest.approx(m["read_iops"], **APPROX), where
        assert _sum(totals, "write_iops") == pytest.approx(m["write_iops"], **APPROX), where
        for rate, per in (("read_iops", "avg_read_ms"), ("write_iops", "avg_write_ms")):
            want = m[per]
            assert _sum(totals, rate, per) == (None if want is None else pytest.approx(want, **APPROX)), (
                where,
                per,
            )
        # the target's objects: the 24 hours ending at the newest sample (constant rates here)
        items = own.client.get(f"/api/targets/{target}/objects", params={"limit": 1000}).json()
        assert datetime.fromisoformat(items["until"]) == own.end
        rows = [i for i in items["items"] if i["id"] in {o.id for o in members}]
        assert all(r["seconds"] == pytest.approx(24 * 3600) for r in rows) and len(rows) == len(members)
        assert _sum(rows, "read_iops") == pytest.approx(m["read_iops"], **APPROX), where
        # the heat map: the week's I/O of each member on the advice's window
        for obj, t in zip(members, totals, strict=True):
            if obj.id in heat_rows:
                assert heat_rows[obj.id]["heat"] == pytest.approx(t["heat"], **APPROX), obj.name
                assert heat_rows[obj.id]["io"] == pytest.approx(
                    ((t["read_iops"] or 0) + (t["write_iops"] or 0)) * t["seconds"], **APPROX
                )
    assert len(heat["windows"]) == 1 and heat["windows"][0]["old"]
    assert datetime.fromisoformat(heat["windows"][0]["data_end"]) == own.end
    assert any(r["name"] == "FG_CONTACTS_1" for r in heat["rows"])  # the busiest, though not advised
    html = own.client.get("/heatmap").text
    assert "no I/O recorded" not in html and f"{DAYS_OLD} days old" in html
    # the report reads the same windows: its fleet rates are the advised units' plus the objects on
    # the unmatched drive (I/O all the same, though not advised)
    with own.store.session() as s:
        content = gather(s, Scope("fleet", None, None), now=datetime.now(UTC))
    on_d = 2400.0 + 0.2 + 0.01 + 2.0  # the collection's reads/s there: CRM, master, model, msdb
    assert content.read_iops == pytest.approx(
        sum(u["metrics"]["read_iops"] for _, u, _ in advised) + on_d, rel=1e-4
    )


def test_the_unmatched_drive_is_the_first_thing_a_dba_sees(own: Own) -> None:
    fleet = own.client.get("/").text
    start = fleet[fleet.index('id="start-here"') : fleet.index("<h2>Targets</h2>")]
    # the block comes before the figures of the advice it left out
    assert start.index('id="unmapped"') < start.index('id="start-saving"')
    rows = re.findall(r'<tr class="unmapped">(.*?)</tr>', start, flags=re.S)
    locations = [re.search(r"<code>([^<]+)</code>", r).group(1) for r in rows]  # type: ignore[union-attr]
    # the busiest first, as the CLI and the Policy page list them
    assert locations[0] == BUSIEST_UNMAPPED
    assert set(locations[1:]) == {UNMAPPED_DIR + db + "\\" for db in ("msdb", "master", "model")}
    first = rows[0]
    assert (
        ">CRM</a>" in first and ">SQLCRM01</a>" in first and ">90.0 GB<" in first and ">2,850 I/O/s<" in first
    )
    assert 'href="/policies#unknown-locations">Map it to a tier' in first
    attention = start[start.index('id="start-attention"') :]
    assert "4 locations match no tier" in attention and "No failing target" not in attention
    with own.store.session() as s:
        crm = s.scalar(select(Target.id).where(Target.name == "import:sqlserver:SQLCRM01"))
        contacts = s.scalar(select(DbObject.id).where(DbObject.name == "FG_CONTACTS_1"))
    target = own.client.get(f"/targets/{crm}").text
    assert 'id="unmapped"' in target and BUSIEST_UNMAPPED in target
    page = own.client.get(f"/objects/{contacts}").text
    assert (
        f"<strong>Not advised:</strong> <code>{BUSIEST_UNMAPPED}</code> matches no tier of the policy" in page
    )
    assert page.count("<svg") >= 4 and "has not run" not in page


def test_mapping_the_drive_advises_it_again(own: Own) -> None:
    """The service as `tierwise serve` runs it (the scheduler in this process), with an import quiet
    period of an hour: only the mapping's own hurry can advise it within the test."""
    with own.store.session() as s:
        crm = s.scalar(select(Target.id).where(Target.name == "import:sqlserver:SQLCRM01"))
        before = s.scalar(select(AdviceSnapshot.unknown_locations).where(AdviceSnapshot.target_id == crm))
    assert before and {u["location"] for u in before} >= {BUSIEST_UNMAPPED}
    serving = own.settings.model_copy(update={"scheduler_enabled": True, "import_quiet_s": 3600.0})
    with TestClient(create_app(serving)) as client:
        login(client, "ada")
        assert client.get("/api/health").json()["scheduler"] == "running"
        page = client.get("/policies").text
        assert 'name="listed" value="D:\\MSSQL\\DATA\\CRM\\"' in page  # each row may be shortened to a drive
        r = client.post("/policies/mapping", data={
            "csrf_token": csrf_of(page), "location": UNMAPPED_DIR[:3], "listed": BUSIEST_UNMAPPED,
            "engine": "sqlserver", "kind": "path", "pool": "default", "tier": "fc"}, follow_redirects=False)  # fmt: skip
        assert r.status_code == 303 and r.headers["location"].endswith("#unknown-locations")
        assert "advising the 1 target with objects there" in client.get(r.headers["location"]).text  # flash
        saved = datetime.now(UTC)
        wait_for(
            lambda: "Advice done" in client.get("/policies").text,
            timeout=60,
            what="the advice after the mapping",
        )
        assert (datetime.now(UTC) - saved).total_seconds() < 60
        status = client.get("/policies").text
    with own.store.session() as s:
        assert crm not in import_pending(s)
        after = s.scalar(select(AdviceSnapshot.unknown_locations).where(AdviceSnapshot.target_id == crm))
        moves = s.scalars(select(Recommendation).where(Recommendation.target_id == crm)).all()
    assert after == []  # the whole drive is mapped: master, model and msdb too
    assert any(m.name == "FG_CONTACTS" and m.to_tier == "flash" for m in moves), [
        (m.name, m.to_tier) for m in moves
    ]
    assert f"{len(moves)} new recommendation" in status and '<meta http-equiv="refresh"' not in status
    assert "None: every location of the last advice run matches a tier" in status
    assert '<tr class="unmapped">' not in own.client.get("/").text


def test_while_the_advice_runs_the_page_says_so_and_refreshes(own: Own) -> None:
    page = own.client.get("/policies").text
    r = own.client.post("/policies/mapping", data={
        "csrf_token": csrf_of(page), "location": BUSIEST_UNMAPPED, "listed": BUSIEST_UNMAPPED, "engine": "sqlserver",
        "kind": "path", "pool": "default", "tier": "fc"}, follow_redirects=False)  # fmt: skip
    assert r.status_code == 303
    with own.store.session() as s:
        crm = s.scalar(select(Target.id).where(Target.name == "import:sqlserver:SQLCRM01"))
        assert set(import_pending(s)) == {crm}  # marked as an import is: the after-import job advises it
    for path in ("/policies", "/"):
        status = own.client.get(path).text
        assert "Advice running for import:sqlserver:SQLCRM01" in status, path
        assert f'<meta http-equiv="refresh" content="5; url={path}">' in status, path


def test_a_prefix_that_does_not_cover_the_location_is_refused(own: Own) -> None:
    page = own.client.get("/policies").text
    r = own.client.post("/policies/mapping", data={
        "csrf_token": csrf_of(page), "location": "E:\\", "listed": BUSIEST_UNMAPPED, "engine": "sqlserver",
        "kind": "path", "pool": "default", "tier": "fc"}, follow_redirects=False)  # fmt: skip
    assert r.status_code == 303
    assert "E:\\ does not cover D:\\MSSQL\\DATA\\CRM\\" in own.client.get(r.headers["location"]).text  # flash
    with own.store.session() as s:
        assert not import_pending(s)


def test_the_import_watch_is_hurried_once() -> None:
    w = ImportWatch()
    assert not w.due({1: 2}, 0.0, 60.0)  # an import's chunk: wait for the quiet period
    w.hurry(1.0, within_s=10.0)
    assert w.due({1: 2}, 2.0, 60.0)  # a policy change: at once
    w.advised()
    assert not w.due({1: 2}, 3.0, 60.0)  # advised: not again
    assert not w.due({1: 3}, 4.0, 60.0)  # the hurry was used up: a new import waits again
    w.hurry(5.0, within_s=10.0)
    assert not w.due({}, 6.0, 60.0)  # nothing pending: nothing to do
    assert not w.due({1: 4}, 20.0, 60.0)  # the hurry ran out before anything was pending
    assert w.due({1: 4}, 80.5, 60.0)


def test_the_banner_says_once_what_the_targets_share(own: Own) -> None:
    html = own.client.get("/heatmap").text
    start = html.index('id="data-end-banner"')
    banner = html[start : html.index("</div>", start)]
    assert banner.count(f"{DAYS_OLD} days old") == 1, banner  # one collection, one note
    for name in ("import:db2:db2prod01", "import:sqlserver:SQLCRM01", "import:sqlserver:SQLERP01"):
        assert name in banner
