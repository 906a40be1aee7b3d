"""ILM per storage pool: each pool's partitions are planned on its own tiers and capacity, and
their scripts name the pool's own storage groups and directories."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from advisors.advise import advise
from app.advice import windows_from_snapshots
from app.ilm import make_plan, pool_ilm_moves
from app.script_spots import pool_spots
from connectors.simulator import demo_fleet
from migrations.ilm import ilm_moves, month_pair
from policies.loader import DEFAULT_POLICY, parse_policy
from tests.app.test_scripts_pools import two_pools
from tests.migrations.golden_cases import FIXTURES, GENERATED_AT, OPTIONS


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def test_each_pools_partitions_are_planned_on_its_own_capacity() -> None:
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    tiers = copy.deepcopy(data["tiers"])  # the same locations, on an array with a smaller flash tier
    tiers[0]["capacity_gb"] = 123
    data["pools"] = [{"name": "db2-array", "servers": "DB2PROD*", "tiers": tiers}]
    policy = parse_policy(yaml.safe_dump(data), source="db2 on its own array")
    origin = datetime(2026, 11, 1, tzinfo=UTC)
    fleet = demo_fleet(origin)
    snaps = [s for h in range(31, 31 + 7 * 24 + 1) for s in fleet.snapshots(origin + timedelta(hours=h))]
    report = advise(windows_from_snapshots(snaps, policy), policy, curve_points=0)
    plan = make_plan(report, policy, now=snaps[-1].sample_time, months=6)
    assert {t.engine for t in plan.tables} == {"sqlserver", "db2"}
    assert set(plan.forecast) == {
        f"{p}/{t}" for p in ("default", "db2-array") for t in ("flash", "fc", "sata")
    }
    assert plan.forecast["db2-array/flash"][0]["capacity_gb"] == 123
    assert plan.forecast["default/flash"][0]["capacity_gb"] == policy.tiers[0].capacity_gb
    assert all(note.startswith(("default: ", "db2-array: ")) for note in plan.notes)


def test_ilm_moves_of_pool_b_name_pool_bs_storage_groups() -> None:
    policy = two_pools()
    spots = {pool: pool_spots(policy, pool) for pool in policy.pool_names()}
    advice = load("advice_db2.json")
    for o in advice["objects"]:
        o["pool"] = "array-b"
    plan = load("ilm_plan_db2.json")
    pooled = pool_ilm_moves(advice, plan, source="p", tiers=spots, dialect="db2")
    assert pooled == ilm_moves(advice, plan, source="p", tiers=spots["array-b"], dialect="db2")
    assert pooled != ilm_moves(advice, plan, source="p", tiers=spots["default"], dialect="db2")
    text = "".join(month_pair(m, "db2", OPTIONS, GENERATED_AT)[0].text for m in pooled.months)
    assert "SG_B_" in text and "SG_FC" not in text and "SG_SATA" not in text
    # with objects of two pools in one advice, each table moves with its own pool's tiers
    both = {**advice, "objects": [*load("advice_sqlserver.json")["objects"], *advice["objects"]]}
    plans = {**plan, "tables": [*load("ilm_plan_sqlserver.json")["tables"], *plan["tables"]]}
    mixed = pool_ilm_moves(both, plans, source="p", tiers=spots, dialect="db2")
    assert [m.month for m in mixed.months] == [m.month for m in pooled.months]
    assert [x.checksum() for m in mixed.months for x in m.moves] == [
        x.checksum() for m in pooled.months for x in m.moves
    ]
