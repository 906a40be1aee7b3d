"""`tierwise ilm`: the plan's JSON contract from import files, the table, bad input, and the
scripts per month (`--scripts DIR --dialect D`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import app
from tests.conftest import FIXTURES
from tests.fixture_policy import mapped_policy

runner = CliRunner()
IMPORT = FIXTURES / "import"


def test_plan_json_contract() -> None:
    r = runner.invoke(app, ["ilm", "--input", str(IMPORT / "sqlserver_file_stats.csv"),
                            str(IMPORT / "sqlserver_partitions.csv"), "--months", "6"])  # fmt: skip
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) >= {"tables", "forecast"}
    table = doc["tables"][0]
    assert {table["engine"], table["server"], table["database"], table["table"]} == {
        "sqlserver",
        "SQLPROD01",
        "Sales",
        "dbo.Orders",
    }
    numbers = [p["partition"] for p in table["partitions"] if not p["new"]]
    assert len(numbers) == len(set(numbers))  # one entry per partition, not per index
    for p in table["partitions"]:
        assert {"partition", "range_start", "range_end", "current_tier", "moves"} <= set(p)
        for m in p["moves"]:
            assert set(m) >= {"date", "to_tier"} and m["to_tier"] in ("flash", "fc", "sata")
    assert set(doc["forecast"]) == {"flash", "fc", "sata"}
    assert all(len(v) == 7 for v in doc["forecast"].values())  # this month + 6
    assert table["fit"]["method"] in ("huber", "policy default")


def test_table_output_and_bad_input(tmp_path: Path) -> None:
    # the shipped policy knows none of the fixture's storage groups: the plan is empty and says why
    r = runner.invoke(app, ["ilm", "--input", str(IMPORT / "db2_tablespaces.csv"), str(IMPORT / "db2_table_partitions.csv"),
                            "--format", "table"])  # fmt: skip
    assert r.exit_code == 0 and "heat halves" not in r.stdout
    assert "SG_HOT matches no tier of the policy" in r.stderr
    policy = str(mapped_policy(tmp_path / "policy.yaml"))
    r = runner.invoke(app, ["ilm", "--input", str(IMPORT / "db2_tablespaces.csv"), str(IMPORT / "db2_table_partitions.csv"),
                            "--format", "table", "--policy", policy])  # fmt: skip
    assert r.exit_code == 0 and "SALES.ORDERS: heat halves every" in r.stdout
    assert "matches no tier" not in r.stderr
    r = runner.invoke(app, ["ilm", "--input", str(IMPORT / "db2_tablespaces.csv"), "--months", "0"])
    assert r.exit_code == 2 and "--months must be between 1 and 120" in r.output


MIGRATION_POLICY = FIXTURES.parent / "migrations" / "fixtures" / "policy.yaml"


def _ilm_scripts(tmp_path: Any, dialect: str, *extra: str) -> Any:
    return runner.invoke(
        app,
        ["ilm", "--input", str(IMPORT / "sqlserver_file_stats.csv"), str(IMPORT / "sqlserver_partitions.csv"),
         str(IMPORT / "db2_tablespaces.csv"), str(IMPORT / "db2_table_partitions.csv"),
         "--policy", str(MIGRATION_POLICY), "--months", "24", "--scripts", str(tmp_path), "--dialect", dialect, *extra],
    )  # fmt: skip


@pytest.mark.parametrize("dialect", ["tsql", "db2"])
def test_scripts_one_pair_per_month_with_plan_json(tmp_path: Path, dialect: str) -> None:
    out = tmp_path / "ilm"
    r = _ilm_scripts(out, dialect)
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    months = plan["months"]
    assert months, "the fixtures plan at least one month of moves"
    assert [m["order"] for m in months] == list(range(1, len(months) + 1))
    assert [m["month"] for m in months] == sorted(
        {m["month"] for m in months}
    )  # one entry per month, in order
    ext = ".sql" if dialect == "tsql" else ".db2"
    written = sorted(p.name for p in out.iterdir())
    # DB2: a check-only file per month too (issue #30), printed first with what it is for
    directions = ("forward", "rollback", "check") if dialect == "db2" else ("forward", "rollback")
    expected = sorted(["plan.json", *(m[d]["path"] for m in months for d in directions)])
    assert written == expected and all(n.endswith(ext) for n in written if n != "plan.json")
    printed = [line for line in r.stdout.splitlines() if line]
    first = "  (check only: changes nothing; run it first, days before the month)"
    assert printed == [
        line
        for m in months
        for line in (
            *([str(out / m["check"]["path"]) + first] if dialect == "db2" else []),
            str(out / m["forward"]["path"]),
            str(out / m["rollback"]["path"]),
        )
    ] + [str(out / "plan.json")]
    engine = "sqlserver" if dialect == "tsql" else "db2"
    for m in months:
        for d in directions:
            data = (out / m[d]["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == m[d]["sha256"]
        text = (out / m["forward"]["path"]).read_text(encoding="utf-8")
        assert f"for {m['month']}:" in text
        for mv in m["moves"]:
            assert f"(key {mv['key']})" in text and f"sha256 {mv['plan_sha256']}" in text
        assert all(mv["key"].startswith(("Sales/", "SALESDB/")) for mv in m["moves"])
        assert {mv["server"] for mv in m["moves"]} <= (
            {"SQLPROD01"} if engine == "sqlserver" else {"db2host01/db2inst1"}
        )
    other = "SALES.ORDERS" if dialect == "tsql" else "dbo.Orders"
    assert any(s["key"] == other and "not part of a" in s["reason"] for s in plan["skipped"])
    assert "note: skipped" in r.stderr and other in r.stderr
    actions = {mv["action"] for m in months for mv in m["moves"]}
    if dialect == "db2":
        # partitions 1 and 2 share TS_ORDERS_2024: detach / copy / attach; the leading edge adds partitions
        assert {"MoveDataPartition", "AddDataPartition"} <= actions
        texts = "".join((out / m["forward"]["path"]).read_text(encoding="utf-8") for m in months)
        assert "DETACH PARTITION" in texts and "ADD PARTITION" in texts
    else:
        assert {"MovePartition", "AddPartition"} <= actions


def test_scripts_bad_input_writes_nothing(tmp_path: Path) -> None:
    r = runner.invoke(app, ["ilm", "--input", str(IMPORT / "db2_tablespaces.csv"), str(IMPORT / "db2_table_partitions.csv"),
                            "--scripts", str(tmp_path / "x")])  # fmt: skip
    assert r.exit_code == 2 and "--dialect" in r.output and not (tmp_path / "x").exists()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "old.sql").write_text("old", encoding="utf-8")
    r = _ilm_scripts(busy, "db2")
    assert r.exit_code == 2 and "not an empty directory" in r.output
    assert sorted(p.name for p in busy.iterdir()) == ["old.sql"]
