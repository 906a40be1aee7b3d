"""Pools in the policy: old files load unchanged, mistakes name the field path, overlaps name both pools."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from policies.loader import DEFAULT_POLICY, PolicyError, parse_policy
from policies.model import DEFAULT_POOL, PoolConflict


def base() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text())
    return data


def nvme_pool(name: str = "local-nvme", servers: Any = "SQLDEV*", **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "servers": servers,
        "tiers": [
            {"name": "nvme", "device_iops": 50000, "devices": 2, "raid_level": 1, "read_latency_ms": 0.2,
             "write_latency_ms": 0.1, "capacity_gb": 800, "cost_per_gb": 10,
             "locations": {"sqlserver_path_prefixes": ["N:\\"]}},
            {"name": "sas", "device_iops": 200, "devices": 8, "raid_level": 10, "read_latency_ms": 5,
             "write_latency_ms": 2, "capacity_gb": 4000, "cost_per_gb": 2,
             "locations": {"sqlserver_path_prefixes": ["S:\\"]}},
        ],
        **more,
    }  # fmt: skip


def load(data: dict[str, Any]) -> Any:
    return parse_policy(yaml.safe_dump(data), source="p.yaml")


def test_a_policy_without_pools_is_one_default_pool() -> None:
    p = load(base())
    assert p.pools == [] and p.pool_names() == [DEFAULT_POOL]
    assert p.for_pool(DEFAULT_POOL) is p
    assert (
        p.pool_of(server="ANY", engine="sqlserver", physical_name="E:\\flash\\a.mdf", storage_group=None)
        == "default"
    )


def test_pool_tiers_locations_and_pins() -> None:
    data = base()
    data["pools"] = [nvme_pool()]
    p = load(data)
    assert p.pool_names() == ["default", "local-nvme"]
    where = {"engine": "sqlserver", "physical_name": "n:/data/a.mdf", "storage_group": None}
    assert p.pool_of(server="sqldev01", **where) == "local-nvme"
    assert p.pool_of(server="SQLPROD01", **where) == "default"
    assert p.tier_of_location(pool="local-nvme", **where) == "nvme"
    assert p.tier_of_location(**where) is None  # the top-level tiers do not know N:\
    view = p.for_pool("local-nvme")
    assert [t.name for t in view.tiers] == ["nvme", "sas"] and view.pools == []
    # the default pins name flash, fc and sata: none applies to nvme/sas, so every tier is open
    assert view.allowed_tiers("log_file", "sqlserver") == ["nvme", "sas"]
    assert p.allowed_tiers("log_file", "sqlserver") == ["flash", "fc"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["pools"][0]["tiers"][0].update(capacity_gb=-1), "pools[0].tiers[0].capacity_gb"),
        (lambda d: d["pools"][0]["tiers"][1].update(raid_level=3), "pools[0].tiers[1].raid_level"),
        (lambda d: d["pools"][0].pop("servers"), "pools[0].servers: Field required"),
        (lambda d: d["pools"][0].update(name="default"), "pools[0].name"),
        (lambda d: d["pools"][0]["tiers"][1].update(name="nvme"), "pools[0]: Value error, tier names must be unique"),
        (lambda d: d["pools"][0].update(colour="red"), "pools[0].colour: Extra inputs are not permitted"),
        (lambda d: d["pins"].append({"kind": "tempdb", "only": ["optane"]}), "names unknown tier 'optane'"),
        (lambda d: d["pins"].append({"kind": "tempdb", "only": ["nvme"], "forbid": ["nvme"]}),
         "leaves no tier in pool 'local-nvme'"),
    ],
)  # fmt: skip
def test_pool_mistakes_name_the_field(change: Any, message: str) -> None:
    data = base()
    data["pools"] = [nvme_pool()]
    change(data)
    with pytest.raises(PolicyError) as err:
        load(data)
    assert message in str(err.value)


def test_two_pools_taking_one_server_is_an_error_naming_both() -> None:
    data = base()
    data["pools"] = [nvme_pool("array-a", "SQLPROD01"), nvme_pool("array-b", ["SQLPROD0*"])]
    with pytest.raises(PolicyError) as err:
        load(data)
    assert "pools[0] (array-a) and pools[1] (array-b) both take server 'SQLPROD01'" in str(err.value)
    # split by path prefixes, one server may be on two arrays
    data["pools"] = [
        nvme_pool("array-a", "SQLPROD01", sqlserver_path_prefixes=["E:\\"]),
        nvme_pool("array-b", "SQLPROD01", sqlserver_path_prefixes=["F:\\"]),
    ]
    p = load(data)
    on = {"server": "SQLPROD01", "engine": "sqlserver", "storage_group": None}
    assert p.pool_of(physical_name="e:\\x.mdf", **on) == "array-a"
    assert p.pool_of(physical_name="F:/x.mdf", **on) == "array-b"
    assert p.pool_of(physical_name="G:\\x.mdf", **on) == "default"
    data["pools"][1]["sqlserver_path_prefixes"] = ["E:\\data\\"]
    with pytest.raises(PolicyError, match=r"both take server 'SQLPROD01' and path E:\\data\\"):
        load(data)


def test_an_object_two_pattern_pools_both_take_is_a_conflict_naming_both() -> None:
    data = base()
    data["pools"] = [nvme_pool("array-a", "SQL*01"), nvme_pool("array-b", "SQLPROD*")]
    p = load(data)  # two patterns: the overlap shows only on a real name
    with pytest.raises(PoolConflict, match="matched by pools 'array-a' and 'array-b'"):
        p.pool_of(server="SQLPROD01", engine="sqlserver", physical_name="E:\\a.mdf", storage_group=None)
    assert (
        p.pool_of(server="SQLPROD02", engine="sqlserver", physical_name="E:\\a.mdf", storage_group=None)
        == "array-b"
    )


def test_db2_pools_split_by_storage_group() -> None:
    data = base()
    data["pools"] = [nvme_pool("array-a", "DB2PROD", db2_storage_groups="SG_HOT")]
    data["pools"][0]["tiers"][0]["locations"] = {"db2_storage_groups": ["SG_HOT"]}
    p = load(data)
    assert p.pool_of(server="db2prod", engine="db2", physical_name=None, storage_group="sg_hot") == "array-a"
    assert p.pool_of(server="DB2PROD", engine="db2", physical_name=None, storage_group="SG_FC") == "default"
    assert (
        p.tier_of_location(engine="db2", physical_name=None, storage_group="SG_HOT", pool="array-a") == "nvme"
    )
