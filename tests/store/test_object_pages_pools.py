"""The object pages judge an object's tier among the tiers of its pool, on SQLite and PostgreSQL:
the same path is a different tier on another array, and an object two pools claim shows an
unknown tier instead of breaking the page. Also the store's adapters to the one unit rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from app.store.db import Store
from app.store.models import AdviceSnapshot, DbObject, Recommendation, Target
from app.store.object_detail import object_detail
from app.store.object_flash import DatabaseFlash, curves_tier_label, fastest_tier, fastest_tiers, flash_curves
from app.store.object_list import ObjectFilter, list_objects
from app.store.object_rows import tier_names
from app.store.object_rows_cache import object_rows_cache
from app.store.placement import tier_of_object, unit_key_of
from app.store.savings import predicted_savings
from app.verify import unit_of
from policies.loader import DEFAULT_POLICY, parse_policy
from policies.model import DEFAULT_POOL, Policy
from tests.policies.test_pools_policy import nvme_pool

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def two_pool_policy() -> Policy:
    """The shipped tiers for every server, array-b for the SQLDEV servers, and array-c claiming
    N:\\shared\\ on every *01 server: SQLDEV01's N:\\shared\\ is in both (a conflict)."""
    data = yaml.safe_load(DEFAULT_POLICY.read_text())
    data["pools"] = [
        nvme_pool("array-b", "SQLDEV*"),
        nvme_pool("array-c", "*01", sqlserver_path_prefixes=["N:\\shared\\"]),
    ]
    return parse_policy(yaml.safe_dump(data), source="pools.yaml")


FILES = {  # name -> (physical name, filegroup)
    "hot": ("N:\\data\\hot.mdf", "FG_NVME"),
    "cold": ("S:\\MSSQL\\NLSAS\\cold.ndf", "FG_SAS"),
    "flash_path": ("E:\\MSSQL\\FLASH\\x.ndf", "FG_X"),
    "claimed_twice": ("N:\\shared\\both.ndf", "FG_BOTH"),
}


def _add(store: Store, server: str) -> dict[str, int]:
    with store.session() as s:
        t = Target(name=server, engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        objs = {
            name: DbObject(
                target_id=t.id,
                engine="sqlserver",
                server=server,
                database="Sales",
                kind="data_file",
                key=f"Sales/file/{i}",
                name=name,
                size_bytes=2**30,
                physical_name=path,
                filegroup=fg,
                first_seen=NOW,
                last_seen=NOW,
            )
            for i, (name, (path, fg)) in enumerate(FILES.items(), start=1)
        }
        objs["part"] = DbObject(target_id=t.id, engine="sqlserver", server=server, database="Sales",
                                kind="partition", key="Sales/partition/Orders/1", name="part", filegroup="FG_NVME",
                                first_seen=NOW, last_seen=NOW)  # fmt: skip
        s.add_all(objs.values())
        s.flush()
        return {"target": t.id, **{n: o.id for n, o in objs.items()}}


def _tiers(store: Store, server: str, policy: Policy) -> dict[str, str | None]:
    object_rows_cache.clear()
    with store.session() as s:
        page = list_objects(session=s, target=server, database=None, policy=policy, now=NOW,
                            filters=ObjectFilter(sort="name", limit=100))  # fmt: skip
    return {r.name: r.current_tier for r in page.rows}


def test_an_object_is_on_the_tier_of_its_pool(store: Store) -> None:
    policy = two_pool_policy()
    _add(store, "SQLDEV01")
    _add(store, "SQLPROD02")
    dev = _tiers(store, "SQLDEV01", policy)
    assert dev["hot"] == "nvme"  # array-b's flash: the top-level tiers do not know N:\
    assert dev["cold"] == "sas"  # S:\ is array-b's sas here...
    assert dev["flash_path"] is None  # ...and E:\MSSQL\FLASH\ is no tier of array-b
    assert dev["part"] == "nvme"  # a partition: where its filegroup's files are
    assert dev["claimed_twice"] is None  # two pools take it: unknown, and the page still renders
    prod = _tiers(store, "SQLPROD02", policy)  # the same paths on a server of the default pool
    assert (prod["hot"], prod["cold"], prod["flash_path"]) == (None, "sata", "flash")


def test_tier_filter_and_sort_know_pool_tiers(store: Store) -> None:
    policy = two_pool_policy()
    assert tier_names(policy) == ["flash", "fc", "sata", "nvme", "sas"]  # the filter's choices
    _add(store, "SQLDEV01")
    object_rows_cache.clear()
    with store.session() as s:
        nvme = list_objects(session=s, target="SQLDEV01", database=None, policy=policy, now=NOW,
                            filters=ObjectFilter(tier="nvme"))  # fmt: skip
        unknown = list_objects(session=s, target="SQLDEV01", database=None, policy=policy, now=NOW,
                               filters=ObjectFilter(tier="unknown"))  # fmt: skip
        by_tier = list_objects(session=s, target="SQLDEV01", database=None, policy=policy, now=NOW,
                               filters=ObjectFilter(sort="tier", descending=False))  # fmt: skip
    assert sorted(r.name for r in nvme.rows) == ["hot", "part"]
    assert sorted(r.name for r in unknown.rows) == ["claimed_twice", "flash_path"]
    # pool tiers rank after the top-level ones, in their pool's order; unknown last
    assert [r.current_tier for r in by_tier.rows] == ["nvme", "nvme", "sas", None, None]


def test_object_page_judges_the_tier_in_its_pool(store: Store) -> None:
    policy = two_pool_policy()
    ids = _add(store, "SQLDEV01")
    with store.session() as s:
        hot = object_detail(session=s, object_id=ids["hot"], policy=policy, now=NOW)
        both = object_detail(session=s, object_id=ids["claimed_twice"], policy=policy, now=NOW)
    assert hot.current_tier == "nvme" and hot.unit_key == "Sales/filegroup/FG_NVME"
    assert [m.name for m in hot.unit_members] == ["part"]
    assert both.current_tier is None and both.since == NOW.replace(minute=0) - timedelta(hours=24 * 7 - 1)


def test_tier_of_object_without_pools_is_the_top_level_answer() -> None:
    policy = parse_policy(DEFAULT_POLICY.read_text(), source="default.yaml")
    where: dict[str, Any] = {
        "engine": "sqlserver",
        "physical_name": "E:\\MSSQL\\FLASH\\a.mdf",
        "storage_group": None,
    }
    assert tier_of_object(policy, server="ANY", **where) == policy.tier_of_location(**where) == "flash"


def _obj(engine: str, kind: str, key: str, **more: Any) -> DbObject:
    return DbObject(engine=engine, server="S1", database="SALESDB", kind=kind, key=key, name=key, **more)


@pytest.mark.parametrize(
    ("obj", "page_unit", "verified_as"),
    [
        (_obj("db2", "container", "SALESDB/container/TS1/c0", tablespace="TS1"), "SALESDB/tablespace/TS1",
         "SALESDB/container/TS1/c0"),
        (_obj("db2", "partition", "SALESDB/partition/T/1", tablespace="TS1"), "SALESDB/tablespace/TS1",
         "SALESDB/partition/T/1"),
        (_obj("sqlserver", "data_file", "SALESDB/file/3", filegroup="FG"), "SALESDB/filegroup/FG",
         "SALESDB/filegroup/FG"),
        (_obj("db2", "tablespace", "SALESDB/tablespace/TS1", tablespace="TS1"), "SALESDB/tablespace/TS1",
         "SALESDB/tablespace/TS1"),
    ],
    ids=["db2-container", "db2-partition", "sqlserver-file", "db2-tablespace"],
)  # fmt: skip
def test_pages_and_verification_ask_the_one_unit_rule(
    obj: DbObject, page_unit: str, verified_as: str
) -> None:
    assert unit_key_of(obj) == page_unit  # the unit it moves with, as the object pages show it
    assert unit_of(obj) == verified_as  # a held object (partition, container) is verified as itself


def _rec(
    target_id: int, key: str, to_tier: str, pool: str | None, gb: int, status: str = "open"
) -> Recommendation:
    evidence: dict[str, Any] = {"key": key} if pool is None else {"key": key, "pool": pool}
    return Recommendation(target_id=target_id, key=key, engine="sqlserver", server="SQLDEV01", database="Sales",
                          kind="filegroup", name=key, from_tier="sas", to_tier=to_tier, profile="hot", rule="TW101",
                          size_bytes=gb * 2**30, io_ms_per_s_now=10.0, io_ms_per_s_after=4.0, evidence=evidence,
                          status=status, created_at=NOW, updated_at=NOW)  # fmt: skip


def test_fastest_tier_is_the_first_tier_of_the_objects_pool() -> None:
    policy = two_pool_policy()
    assert fastest_tier(policy, None) == fastest_tier(policy, DEFAULT_POOL) == "flash"
    assert fastest_tier(policy, "array-b") == "nvme" and fastest_tier(policy, "gone") is None
    assert fastest_tiers(policy, ()) == ["flash", "nvme"]  # array-c's nvme once
    assert fastest_tiers(policy, ["array-c", "array-b"]) == ["nvme"]
    plain = parse_policy(DEFAULT_POLICY.read_text(), source="default.yaml")
    assert fastest_tiers(plain, ()) == ["flash"]


def test_predicted_savings_count_flash_per_pool(store: Store) -> None:
    """A move onto nvme is onto the fastest tier in array-b, not in the default pool (whose flash
    it is not); a pool the policy no longer lists counts in the wait only."""
    policy = two_pool_policy()
    ids = _add(store, "SQLDEV01")
    with store.session() as s:
        s.add_all([
            _rec(ids["target"], "Sales/filegroup/A", "nvme", "array-b", 10),
            _rec(ids["target"], "Sales/filegroup/B", "flash", None, 3),  # stored before pools: the default pool
            _rec(ids["target"], "Sales/filegroup/C", "nvme", None, 100),  # nvme is no tier of the default pool
            _rec(ids["target"], "Sales/filegroup/D", "nvme", "retired-array", 1000),
            _rec(ids["target"], "Sales/filegroup/E", "nvme", "array-b", 7, status="rejected"),
        ])  # fmt: skip
    with store.session() as s:
        sv = predicted_savings(s, ids["target"], policy)
        nothing = predicted_savings(s, ids["target"] + 1000, policy)
    assert sv.recommendations == 4 and sv.flash_gb == pytest.approx(13.0)
    assert sv.flash_tiers == ("flash", "nvme") and sv.flash_tier == "flash / nvme"
    assert sv.saved_ms_per_s == pytest.approx(24.0)
    assert nothing.recommendations == 0 and nothing.flash_tier == "flash / nvme"  # every pool's
    plain = parse_policy(DEFAULT_POLICY.read_text(), source="default.yaml")
    with store.session() as s:
        unpooled = predicted_savings(s, ids["target"], plain)
    assert unpooled.flash_tier == "flash" and unpooled.flash_gb == pytest.approx(3.0)  # as before pools


def test_flash_curves_name_their_pools_fastest_tier(store: Store) -> None:
    policy = two_pool_policy()
    ids = _add(store, "SQLDEV01")
    with store.session() as s:
        s.add(AdviceSnapshot(target_id=ids["target"], evaluated_at=NOW, objects=[], notes=[], flash_curve=[
            {"database": "Sales", "pool": "array-b", "flash_tier": "nvme", "points": [[0, 0], [10, 0.5]]},
            {"database": "Old", "points": [[0, 0], [5, 0.2]]},  # stored before pools: the default pool
        ]))  # fmt: skip
    with store.session() as s:
        found = flash_curves(s, "SQLDEV01")
    assert [c.flash_tier(policy) for c in found] == ["nvme", "flash"]
    assert curves_tier_label(policy, found) == "flash / nvme"
    assert curves_tier_label(policy, found[:1]) == "nvme"
    assert curves_tier_label(policy, []) == "flash / nvme"
    gone = DatabaseFlash("t", NOW, {"pool": "retired-array", "flash_tier": "ssd"})
    assert gone.flash_tier(policy) == "ssd"  # the pool left the policy: the tier the advice stored
