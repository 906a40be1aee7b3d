"""`tierwise ilm`: the plan's JSON contract from import files, the table, and bad input."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from app.cli import app
from tests.conftest import FIXTURES

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


def test_table_output_and_bad_input() -> None:
    r = runner.invoke(app, ["ilm", "--input", str(IMPORT / "db2_tablespaces.csv"), str(IMPORT / "db2_table_partitions.csv"),
                            "--format", "table"])  # fmt: skip
    assert r.exit_code == 0 and "SALES.ORDERS: heat halves every" in r.stdout
    r = runner.invoke(app, ["ilm", "--input", str(IMPORT / "db2_tablespaces.csv"), "--months", "0"])
    assert r.exit_code == 2 and "--months must be between 1 and 120" in r.output
