"""Saving a policy checks every stored object of the servers two pools name, with the pools
matched once per server (policies/model.ServerPools), not per object. The verdicts must be the
ones `Policy.pools_taking` gives object by object: many objects, with paths and storage groups in
every case and slash variant, under pools that split servers by path prefix, by storage group,
both, or not at all."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from sqlalchemy import insert, select

from app.store.db import Store
from app.store.models import DbObject, Target
from app.store.policies import StoredConflict, conflicts_text, pool_conflicts, save_policy
from policies.loader import DEFAULT_POLICY, PolicyError, parse_policy
from policies.model import Policy

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)

SERVERS = [f"SQLPROD{i:02d}" for i in range(1, 13)] + [
    "sqlprod-x",
    "SQLDEV03",
    "SQLDEV07",
    "DB2PROD01",
    "db2prod02",
]
PATHS = [
    None,
    "",
    "D:\\data\\a.mdf",
    "d:/DATA/b.ndf",
    "D:\\database\\c.mdf",  # under the prefix "D:\\data" (a prefix need not end at a folder)
    "D:\\DATA\\hot\\d.mdf",
    "d:\\data\\Hot\\e.ldf",
    "E:\\SQL\\f.mdf",
    "e:\\sql2\\g.mdf",
    "F:\\h.mdf",
    "f:",
    "G:\\i.mdf",
    "G:\\logs.ldf",  # in the folder of G:\i.mdf but under the prefix G:\log: one verdict per path
    "g:\\LOG\\x.ldf",
    "/db2/hot/c1",
    "D:\\DATA\\hot\\Ärger.mdf",  # not ASCII within the longest prefix's width: checked per object
    "e:\\SQL\\İx.mdf",  # "İ".lower() is two characters
    "D:\\dätä\\y.mdf",
]
GROUPS = [None, "", "HOTSG", "hotsg", "ColdSG", "OTHER"]


def policy_text() -> str:
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    tiers = data["tiers"]
    data["pools"] = [  # server patterns that overlap only on some names: the policy's own check
        # (policies/model._check_pools) passes, and only the stored objects show the conflicts
        {"name": "array-a", "servers": ["SQLPROD*"], "sqlserver_path_prefixes": ["D:\\data", "e:/SQL/", "G:\\log"],
         "tiers": tiers},
        {"name": "array-b", "servers": ["*0?", "DB2*"], "sqlserver_path_prefixes": ["D:\\DATA\\hot\\", "F:\\"],
         "db2_storage_groups": ["HOTSG"], "tiers": tiers},
        {"name": "array-c", "servers": ["DB2PROD*", "*1?"], "db2_storage_groups": ["coldsg"], "tiers": tiers},
        {"name": "local-d", "servers": ["*7", "*2"], "tiers": tiers},
        {"name": "array-e", "servers": ["*dev*", "*-x"], "sqlserver_path_prefixes": ["d:", "/db2/"],
         "tiers": tiers},
    ]  # fmt: skip
    return yaml.safe_dump(data)


def add_many(store: Store, per_server: int = 150) -> int:
    rng = random.Random(14)
    rows = []
    with store.session() as s:
        t = Target(name="fleet", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        for server in SERVERS:
            for i in range(per_server):
                engine = "db2" if server.lower().startswith("db2") or i % 7 == 0 else "sqlserver"
                database = f"db{i % 4}"
                key = f"{server}/{engine}/{database}/obj{i:03d}"
                rows.append(
                    {"target_id": t.id, "engine": engine, "server": server, "database": database,
                     "kind": "data_file", "key": key, "name": key, "physical_name": rng.choice(PATHS),
                     "storage_group": rng.choice(GROUPS), "first_seen": NOW, "last_seen": NOW}
                )  # fmt: skip
        s.execute(insert(DbObject), rows)
    return len(rows)


def one_by_one(store: Store, policy: Policy) -> list[StoredConflict]:
    """The reference: every object judged on its own by the policy's per-object rule, in the order
    the check reads them (the store's ORDER BY)."""
    out = []
    with store.session() as s:
        rows = s.execute(
            select(DbObject.engine, DbObject.server, DbObject.database, DbObject.key, DbObject.physical_name,
                   DbObject.storage_group).order_by(DbObject.server, DbObject.database, DbObject.key)
        ).all()  # fmt: skip
    for engine, server, database, key, path, group in rows:
        takers = policy.pools_taking(server=server, physical_name=path, storage_group=group)
        if len(takers) > 1:
            out.append(
                StoredConflict(engine, server, database, key, path or group or "(no location)", tuple(takers))
            )
    return out


def test_grouped_check_gives_the_per_object_verdicts(store: Store) -> None:
    total = add_many(store)
    text = policy_text()
    policy = parse_policy(text, source="many")
    expected = one_by_one(store, policy)
    pairs = {c.pools for c in expected}
    assert 200 < len(expected) < total - 200  # many conflicts, and many objects taken once or not at all
    assert len(pairs) >= 5 and any(len(p) > 2 for p in pairs)  # every kind of overlap is exercised
    with store.session() as s:
        assert pool_conflicts(s, policy, limit=total) == expected
        assert pool_conflicts(s, policy) == expected[:20]
    with store.session() as s, pytest.raises(PolicyError) as err:
        save_policy(s, yaml_text=text, username="ada", comment=None, now=NOW)
    assert str(err.value) == conflicts_text(expected[:20])


def test_a_policy_that_splits_every_server_apart_is_saved(store: Store) -> None:
    total = add_many(store, per_server=60)
    data = yaml.safe_load(policy_text())
    data["pools"] = [
        {**data["pools"][0], "servers": ["*"], "sqlserver_path_prefixes": ["D:\\"], "db2_storage_groups": []},
        {**data["pools"][1], "servers": ["*"], "sqlserver_path_prefixes": ["e:", "f:", "/"],
         "db2_storage_groups": ["hotsg", "coldsg"]},
    ]  # fmt: skip
    text = yaml.safe_dump(data)
    policy = parse_policy(text, source="apart")
    with store.session() as s:
        d_with_group = s.scalar(
            select(DbObject.key).where(DbObject.physical_name.like("D:%"), DbObject.storage_group == "HOTSG")
        )
    assert d_with_group is not None  # taken by both: a path under D: and a storage group of the other
    assert len(one_by_one(store, policy)) > 0
    data["pools"][1]["db2_storage_groups"] = []
    text = yaml.safe_dump(data)
    policy = parse_policy(text, source="apart")
    assert one_by_one(store, policy) == []
    with store.session() as s:
        assert pool_conflicts(s, policy, limit=total) == []
        save_policy(s, yaml_text=text, username="ada", comment="apart", now=NOW)


def hidden_policy() -> Policy:
    """Two pools on overlapping server patterns (SQLPROD01 and SQLTEST01 are in both) whose
    prefixes overlap; the longest prefix is 12 characters."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    tiers = data["tiers"]
    data["pools"] = [
        {"name": "array-a", "servers": ["SQL*"], "sqlserver_path_prefixes": ["D:\\data\\hot\\", "D:\\Ärchiv\\", "E:\\İ"],
         "db2_storage_groups": ["SG_A"], "tiers": tiers},
        {"name": "array-b", "servers": ["*01"], "sqlserver_path_prefixes": ["d:/DATA/h", "d:\\ä", "e:\\i", "d:\\logs\\xyzσ"],
         "db2_storage_groups": ["HOTSG"], "tiers": tiers},
    ]  # fmt: skip
    return parse_policy(yaml.safe_dump(data), source="hidden")


# taken by one pool at most; on the conflicting object's server, ASCII paths that share a head with
# it; the others on a server of their own (a server with a path not ASCII in its head is checked
# object by object)
NOISE = ["D:\\data\\cold\\{i}.mdf", "D:\\data\\h{i}.mdf", "D:\\data\\hot.{i}.mdf", "D:\\data\\hotx\\{i}.mdf",
         "D:\\DATA\\HOT{i}", "E:\\x{i}.mdf", "e:\\I{i}.mdf", "D:\\data\\cold\\É{i}.mdf", ""]  # fmt: skip
OTHER_NOISE = ["d:\\ärger\\{i}.mdf", "D:\\LOGS\\XYZΣ{i}.ldf", "D:\\dätä\\{i}.mdf"]


@pytest.mark.parametrize(
    ("path", "group"),
    [
        ("D:\\DATA\\HOT\\x.mdf", None),  # case
        ("d:/data/hot/x.mdf", None),  # slashes
        ("D:\\data\\hot\\", None),  # exactly the prefix
        ("D:\\data\\hot\\É.mdf", None),  # not ASCII after the longest prefix's width
        ("d:\\ÄRCHIV\\x.mdf", None),  # not ASCII within it
        ("e:\\İx.mdf", None),  # "İ".lower() is two characters
        ("D:\\LOGS\\XYZΣA.ldf", "SG_A"),  # "XYZΣ" cut at 12 characters lower-cases to "xyzς", not "xyzσ"
        ("D:\\data\\hx.mdf", "sg_a"),  # one pool by path, the other by storage group
        ("D:\\data\\hot\\y.mdf", "HotSG"),
    ],
)
def test_one_conflict_among_many_objects_is_found(store: Store, path: str, group: str | None) -> None:
    """A check that judged a location by too short a part of its path, or by a lower-cased cut
    of a path that is not ASCII, would miss the one conflict and pass the policy."""
    policy = hidden_policy()
    rows: list[tuple[str, str, str | None]] = [
        ("SQLPROD01", p.format(i=i), None) for p in NOISE for i in range(120)
    ]
    rows += [("SQLTEST01", p.format(i=i), None) for p in OTHER_NOISE for i in range(40)]
    rows += [("SQLPROD01", path, group)]
    with store.session() as s:
        t = Target(name="SQLPROD01", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        s.execute(
            insert(DbObject),
            [{"target_id": t.id, "engine": "sqlserver", "server": server, "database": "db", "kind": "data_file",
              "key": f"k{n:05d}", "name": f"k{n}", "physical_name": p, "storage_group": g, "first_seen": NOW,
              "last_seen": NOW} for n, (server, p, g) in enumerate(rows)],
        )  # fmt: skip
    expected = one_by_one(store, policy)
    assert [c.key for c in expected] == [f"k{len(rows) - 1:05d}"]
    with store.session() as s:
        assert pool_conflicts(s, policy) == expected
