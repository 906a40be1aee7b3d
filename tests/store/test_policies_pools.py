"""Saving a policy checks the stored objects: a policy whose pools would both take an object is
refused, naming the object and both pools, and nothing is stored."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from app.store.db import Store
from app.store.models import DbObject, Target
from app.store.policies import history, pool_conflicts, save_policy
from policies.loader import DEFAULT_POLICY, PolicyError, parse_policy

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def pooled_text(a_servers: list[str], b_servers: list[str]) -> str:
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    data["pools"] = [
        {"name": "array-a", "servers": a_servers, "tiers": data["tiers"]},
        {"name": "array-b", "servers": b_servers, "tiers": data["tiers"]},
    ]
    return yaml.safe_dump(data)


def add_objects(store: Store) -> None:
    with store.session() as s:
        t = Target(name="SQLPROD01", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        for server, key, path in (("SQLPROD01", "Sales/file/1", "E:\\data\\Sales.mdf"),
                                  ("SQLDEV02", "Dev/file/1", "E:\\data\\Dev.mdf")):  # fmt: skip
            s.add(DbObject(target_id=t.id, engine="sqlserver", server=server, database=key.split("/")[0],
                           kind="data_file", key=key, name=key, physical_name=path, first_seen=NOW,
                           last_seen=NOW))  # fmt: skip


def test_a_policy_whose_pools_both_take_a_stored_object_is_refused(store: Store) -> None:
    add_objects(store)
    overlapping = pooled_text(["SQL*01"], ["SQLPROD*"])  # both match SQLPROD01, not SQLDEV02
    with store.session() as s, pytest.raises(PolicyError) as err:
        save_policy(s, yaml_text=overlapping, username="ada", comment=None, now=NOW)
    message = str(err.value)
    assert "pools 'array-a' and 'array-b' would both take stored objects" in message
    assert (
        "sqlserver SQLPROD01 Sales Sales/file/1 (E:\\data\\Sales.mdf)" in message
        and "SQLDEV02" not in message
    )
    with store.session() as s:
        assert history(s) == []
    apart = pooled_text(["SQLDEV*"], ["SQLPROD*"])
    with store.session() as s:
        assert pool_conflicts(s, parse_policy(apart, source="apart")) == []
        save_policy(s, yaml_text=apart, username="ada", comment="apart", now=NOW)
    with store.session() as s:
        assert [v.comment for v in history(s)] == ["apart"]
