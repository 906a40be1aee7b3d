"""Storage pools: each pool is placed on its own tiers, within its own limits; objects on
locations that match no tier of their pool are left out of the placement and listed."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from advisors.advise import advise
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage
from advisors.pools import placed
from app.advice import report_json
from policies.loader import DEFAULT_POLICY, parse_policy
from policies.model import Policy

T0 = datetime(2026, 11, 1, tzinfo=UTC)
WEEK = 7 * 24


def two_pool_policy(flash_gb: float = 100) -> Policy:
    """The default policy plus arrays A and B, each with its own small flash tier."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text())
    tiers = data["tiers"]

    def pool(name: str, prefix: str) -> dict[str, Any]:
        own = []
        for t in tiers:
            t = {**t, "locations": {"sqlserver_path_prefixes": [f"{prefix}{t['name']}\\"]}}
            if t["name"] == "flash":
                t["capacity_gb"] = flash_gb
            own.append(t)
        return {"name": name, "servers": [f"{name.upper()}*"], "tiers": own}

    data["pools"] = [pool("array-a", "A:\\"), pool("array-b", "B:\\")]
    return parse_policy(yaml.safe_dump(data), source="two pools")


def data_file(
    server: str, name: str, path: str, *, policy: Policy, reads_s: float, size_gb: float = 40
) -> ObjectWindow:
    """A data file (its own placement unit) with a steady random 8 KB read load over a week at 10 ms."""
    n = int(reads_s * 3600)
    c = {"reads": n, "bytes_read": n * 8192, "read_time_ms": n * 10, "writes": 0, "bytes_written": 0,
         "write_time_ms": 0}  # fmt: skip
    pool, tier = placed(policy, server=server, engine="sqlserver", physical_name=path, storage_group=None)
    info = ObjectInfo(
        key=f"D/file/{name}",
        engine="sqlserver",
        server=server,
        database="D",
        kind="data_file",
        name=name,
        size_bytes=int(size_gb * GB),
        current_tier=tier,
        physical_name=path,
        pool=pool,
    )
    by_hour = tuple((T0 + timedelta(hours=h), Usage(3600, c)) for h in range(WEEK))
    total = Usage(3600 * WEEK, {k: v * WEEK for k, v in c.items()})
    return ObjectWindow(info, total, by_hour)


def test_hot_objects_of_a_pool_never_take_another_pools_flash() -> None:
    policy = two_pool_policy(flash_gb=100)
    hot_a = [data_file("ARRAY-A-SQL1", f"HOT{i}", f"A:\\fc\\hot{i}.ndf", policy=policy, reads_s=400)
             for i in range(5)]  # fmt: skip
    cold_b = [data_file("ARRAY-B-SQL1", f"COLD{i}", f"B:\\sata\\cold{i}.ndf", policy=policy, reads_s=0.01)
              for i in range(2)]  # fmt: skip
    report = advise([*hot_a, *cold_b], policy, now=T0 + timedelta(hours=WEEK), curve_points=0)
    units = {a.info.name: a for a in report.objects}
    assert {a.info.pool for a in units.values() if a.info.server.startswith("ARRAY-A")} == {"array-a"}
    on_flash = [a for a in units.values() if a.recommended_tier == "flash"]
    # A's flash is full with two of its five hot 40 GB files; B's flash stays empty though A wants more
    assert len(on_flash) == 2 and all(a.info.pool == "array-a" for a in on_flash)
    assert sum(a.info.size_bytes or 0 for a in on_flash) / GB <= 100
    assert all(units[f"COLD{i}"].recommended_tier != "flash" for i in range(2))
    pools = {p.name: p for p in report.pools}
    assert set(pools) == {"array-a", "array-b"}
    for p in pools.values():  # each pool's placement within 0.5 % of its own LP bound
        assert p.placement.status != "infeasible" and p.placement.gap <= 0.005, (p.name, p.placement)
    assert set(pools["array-a"].placement.assignment) == {f"ARRAY-A-SQL1|D/file/HOT{i}" for i in range(5)}
    doc = report_json(report, policy)
    assert [p["name"] for p in doc["summary"]["pools"]] == ["array-a", "array-b"]
    assert all(o["pool"] in ("array-a", "array-b") for o in doc["objects"])
    assert doc["summary"]["pools"][0]["gb_by_recommended_tier"]["flash"] <= 100


def test_a_pool_alone_gives_the_same_advice_as_a_policy_of_its_tiers() -> None:
    """A pool's placement is the placement of its objects on its tiers, nothing else."""
    policy = two_pool_policy(flash_gb=100)
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text())
    data["tiers"] = [t.model_dump(exclude_none=True) for t in policy.pool_tiers("array-a")]
    plain = parse_policy(yaml.safe_dump(data), source="array A alone")
    hot = [data_file("ARRAY-A-SQL1", f"HOT{i}", f"A:\\fc\\hot{i}.ndf", policy=policy, reads_s=100 * (i + 1))
           for i in range(5)]  # fmt: skip
    pooled = advise(hot, policy, now=T0 + timedelta(hours=WEEK), curve_points=0)
    alone = advise([replace(w, info=replace(w.info, pool="default")) for w in hot], plain,
                   now=T0 + timedelta(hours=WEEK), curve_points=0)  # fmt: skip
    assert [p.name for p in pooled.pools] == ["array-a"]
    assert [(a.info.name, a.recommended_tier) for a in pooled.objects] == [
        (a.info.name, a.recommended_tier) for a in alone.objects
    ]
    assert sorted(a.info.name for a in pooled.objects if a.recommended_tier == "flash") == ["HOT3", "HOT4"]


def test_unmatched_locations_are_left_out_and_listed() -> None:
    policy = two_pool_policy()
    known = data_file("ARRAY-A-SQL1", "HOT0", "A:\\fc\\hot0.ndf", policy=policy, reads_s=400)
    lost = [data_file("ARRAY-A-SQL1", f"X{i}", f"D:\\MSSQL\\DATA\\x{i}.ndf", policy=policy, reads_s=10, size_gb=5)
            for i in range(3)]  # fmt: skip
    other = data_file("SQLPROD01", "Y", "D:\\MSSQL\\DATA\\y.mdf", policy=policy, reads_s=1, size_gb=2)
    report = advise([known, *lost, other], policy, now=T0 + timedelta(hours=WEEK), curve_points=0)
    assert [a.info.name for a in report.objects] == ["HOT0"]
    assert all(k.startswith("ARRAY-A-SQL1|D/file/HOT") for k in report.placement.assignment)
    by_server = {u.server: u for u in report.unknown_locations}
    a = by_server["ARRAY-A-SQL1"]
    assert (a.location, a.location_kind, a.pool, a.objects) == ("D:\\MSSQL\\DATA\\", "path", "array-a", 3)
    assert abs(a.size_gb - 15) < 1e-9 and abs(a.reads_per_s - 30) < 0.01
    assert a.text == "D:\\MSSQL\\DATA\\ matches no tier of pool array-a"
    assert by_server["SQLPROD01"].pool == "default"
    doc = report_json(report, policy)
    assert [u["location"] for u in doc["unknown_locations"]] == ["D:\\MSSQL\\DATA\\", "D:\\MSSQL\\DATA\\"]


def test_without_pools_an_unmatched_location_matches_no_tier_of_the_policy() -> None:
    policy = parse_policy(DEFAULT_POLICY.read_text(), source="default")
    lost = data_file("SQLPROD01", "X", "D:\\MSSQL\\DATA\\x.ndf", policy=policy, reads_s=10)
    known = data_file("SQLPROD01", "Y", "F:\\MSSQL\\SAS\\y.ndf", policy=policy, reads_s=10)
    report = advise([lost, known], policy, now=T0 + timedelta(hours=WEEK), curve_points=0)
    assert [a.info.name for a in report.objects] == ["Y"]
    (u,) = report.unknown_locations
    assert u.text == "D:\\MSSQL\\DATA\\ matches no tier of the policy"
    assert [p.name for p in report.pools] == ["default"]


def overlapping_pools_policy() -> Policy:
    """Arrays A (servers 'SQL*01') and B (servers 'SQLPROD*'): their patterns overlap on SQLPROD01."""
    data: dict[str, Any] = yaml.safe_load(two_pool_policy().model_dump_json(exclude_none=True))
    data["pools"][0]["servers"] = ["SQL*01"]
    data["pools"][1]["servers"] = ["SQLPROD*"]
    return parse_policy(yaml.safe_dump(data), source="overlapping pools")


def test_an_object_two_pools_take_is_left_out_and_listed_the_others_advised() -> None:
    policy = overlapping_pools_policy()
    torn = data_file("SQLPROD01", "TORN", "B:\\fc\\torn.ndf", policy=policy, reads_s=50, size_gb=8)
    a = data_file("SQLDEV01", "A1", "A:\\fc\\a1.ndf", policy=policy, reads_s=400)
    b = data_file("SQLPROD02", "B1", "B:\\fc\\b1.ndf", policy=policy, reads_s=400)
    assert (torn.info.pool, torn.info.current_tier) == ("array-a+array-b", None)
    report = advise([a, torn, b], policy, now=T0 + timedelta(hours=WEEK), curve_points=0)
    assert sorted((o.info.name, o.info.pool) for o in report.objects) == [
        ("A1", "array-a"),
        ("B1", "array-b"),
    ]
    (u,) = report.unknown_locations
    assert (u.server, u.location, u.objects, u.pools) == ("SQLPROD01", "B:\\fc\\", 1, ("array-a", "array-b"))
    assert abs(u.size_gb - 8) < 1e-9 and abs(u.io_per_s - 50) < 0.01
    assert "matched by pools 'array-a' and 'array-b'" in u.text
    doc = report_json(report, policy)
    (c,) = doc["summary"]["pool_conflicts"]
    assert c["pools"] == ["array-a", "array-b"] and c["objects"] == 1 and c["size_gb"] == 8
    assert [u["location"] for u in doc["unknown_locations"]] == ["B:\\fc\\"]


def test_a_unit_with_one_file_two_pools_take_is_left_out_whole() -> None:
    """Array A takes SQL*01's B:\\fc\\, array B takes SQLPROD*'s B:\\: on SQLPROD01 only B:\\fc\\ is torn."""
    data: dict[str, Any] = yaml.safe_load(two_pool_policy().model_dump_json(exclude_none=True))
    data["pools"][0].update(servers=["SQL*01"], sqlserver_path_prefixes=["B:\\fc\\"])
    data["pools"][1].update(servers=["SQLPROD*"], sqlserver_path_prefixes=["B:\\"])
    policy = parse_policy(yaml.safe_dump(data), source="split pools overlapping on one path")
    torn = data_file("SQLPROD01", "F1", "B:\\fc\\f1.ndf", policy=policy, reads_s=10)
    along = data_file("SQLPROD01", "F2", "B:\\sata\\f2.ndf", policy=policy, reads_s=10)
    assert (torn.info.pool, along.info.pool) == ("array-a+array-b", "array-b")
    unit = [replace(w, info=replace(w.info, filegroup="FG1")) for w in (torn, along)]
    fine = data_file("SQLPROD02", "B1", "B:\\fc\\b1.ndf", policy=policy, reads_s=10)
    report = advise([*unit, fine], policy, now=T0 + timedelta(hours=WEEK), curve_points=0)
    assert [o.info.name for o in report.objects] == ["B1"]
    by_location = {u.location: u for u in report.unknown_locations}
    assert by_location["B:\\fc\\"].pools == ("array-a", "array-b")
    assert not by_location["B:\\sata\\"].conflict
    assert by_location["B:\\sata\\"].reason == "moves whole with files matched by pools array-a and array-b"
