"""`tierwise advise` with two pools that both take one server: that server's objects are left out
and listed (a warning on stderr, `summary.pool_conflicts` in the JSON), the others advised."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from app.cli import app
from tests.conftest import FIXTURES
from tests.fixture_policy import mapped_policy

IMPORT = FIXTURES / "import"


def test_advise_skips_and_lists_objects_two_pools_take(tmp_path: Path) -> None:
    data: dict[str, Any] = yaml.safe_load(mapped_policy(tmp_path / "mapped.yaml").read_text(encoding="utf-8"))
    data["pools"] = [
        {"name": "array-a", "servers": "SQL*01", "tiers": data["tiers"]},
        {"name": "array-b", "servers": ["SQLPROD*"], "tiers": data["tiers"]},
    ]
    policy = tmp_path / "pools.yaml"
    policy.write_text(yaml.safe_dump(data), encoding="utf-8")
    r = CliRunner().invoke(
        app, ["advise", "--input", str(IMPORT / "sqlserver_file_stats.csv"), "--policy", str(policy)]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["objects"] and {o["server"] for o in doc["objects"]} == {"SQLPROD02\\OLTP"}
    assert {o["pool"] for o in doc["objects"]} == {"array-b"}
    conflicts = doc["summary"]["pool_conflicts"]
    assert conflicts and {c["server"] for c in conflicts} == {"SQLPROD01"}
    assert all(c["pools"] == ["array-a", "array-b"] for c in conflicts)
    assert "warning: " in r.stderr and "matched by pools 'array-a' and 'array-b'" in r.stderr
    assert "narrow one of the pools in the policy" in r.stderr
