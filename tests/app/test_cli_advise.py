"""`tierwise advise`: the JSON contract on import files, the table, and bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from app.cli import app
from tests.conftest import FIXTURES
from tests.fixture_policy import mapped_policy as fixture_mapped_policy

runner = CliRunner()
IMPORT = FIXTURES / "import"
OBJECT_KEYS = {
    "engine", "server", "database", "kind", "name", "size_bytes", "profile", "current_tier",
    "recommended_tier", "metrics", "reasons",
}  # fmt: skip
METRIC_KEYS = {
    "read_iops", "write_iops", "avg_read_bytes", "avg_write_bytes", "avg_read_ms", "avg_write_ms", "read_pct",
    "read_miss_ratio", "heat",
}  # fmt: skip


def _advise(*args: str) -> dict:  # type: ignore[type-arg]
    r = runner.invoke(app, ["advise", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def mapped_policy(tmp_path: Path) -> str:
    """The default policy with the import fixtures' directories and storage groups on its tiers
    (with the default alone they match no tier, and are left out of the placement)."""
    sql = ["C:\\Program Files\\", "D:\\MSSQL\\", "E:\\data\\", "F:\\OLTP\\", "G:\\OLTP\\", "L:\\log\\",
           "T:\\tempdb\\"]  # fmt: skip
    locations = {
        "flash": {"db2_storage_groups": ["SG_HOT"]},
        "fc": {"sqlserver_path_prefixes": sql, "db2_path_prefixes": ["/db2/log/"]},
        "sata": {"db2_storage_groups": ["SG_COLD"]},
    }
    return str(fixture_mapped_policy(tmp_path / "mapped.yaml", locations))


def test_unmatched_locations_are_listed_not_advised() -> None:
    doc = _advise("--input", str(IMPORT / "sqlserver_file_stats.csv"))
    assert doc["objects"] == [] and doc["summary"]["placement_units"] == 0
    found = {(u["server"], u["location"]): u for u in doc["unknown_locations"]}
    data = found[("SQLPROD01", "E:\\data\\")]
    assert data["text"] == "E:\\data\\ matches no tier of the policy" and data["pool"] == "default"
    assert data["objects"] >= 1 and data["size_gb"] > 0 and data["io_per_s"] > 0


def test_json_contract_for_sqlserver_files(tmp_path: Path) -> None:
    doc = _advise("--input", str(IMPORT / "sqlserver_file_stats.csv"), "--policy", mapped_policy(tmp_path))
    assert set(doc) == {"objects", "summary", "unknown_locations"} and doc["unknown_locations"] == []
    objs = doc["objects"]
    assert objs
    for o in objs:
        assert set(o) >= OBJECT_KEYS, o
        assert set(o["metrics"]) >= METRIC_KEYS
        assert o["engine"] == "sqlserver"
        assert o["kind"] in ("data_file", "log_file", "filegroup", "partition", "tablespace", "tempdb")
        assert o["recommended_tier"] in ("flash", "fc", "sata")
        assert o["reasons"] and all(isinstance(r, str) for r in o["reasons"])
    sales = next(o for o in objs if o["database"] == "Sales" and o["name"] == "PRIMARY")
    assert sales["kind"] == "filegroup" and sales["filegroup"] == "PRIMARY"
    assert sales["files"] and all(f["key"].startswith("Sales/file/") for f in sales["files"])
    assert all(f["logical_name"] and f["physical_name"] and f["size_bytes"] for f in sales["files"])
    # the numbers equal the file's own deltas: 10:00 -> 10:05 (the 10:10 sample follows a restart)
    rows = [
        r
        for r in csv.DictReader((IMPORT / "sqlserver_file_stats.csv").open())
        if r["server_name"] == "SQLPROD01"
        and r["database_name"] == "Sales"
        and r["filegroup_name"] == "PRIMARY"
    ]
    first = [r for r in rows if r["sample_time"].startswith("2024-05-01T10:00")]
    second = [r for r in rows if r["sample_time"].startswith("2024-05-01T10:05")]

    def total(rs: list[dict[str, str]], col: str) -> int:
        return sum(int(r[col]) for r in rs)

    reads = total(second, "num_of_reads") - total(first, "num_of_reads")
    m = sales["metrics"]
    assert m["avg_read_bytes"] == round(
        (total(second, "num_of_bytes_read") - total(first, "num_of_bytes_read")) / reads, 1
    )
    assert m["avg_read_ms"] == round(
        (total(second, "io_stall_read_ms") - total(first, "io_stall_read_ms")) / reads, 3
    )
    assert m["read_pct"] is not None and 0 < m["read_pct"] <= 100
    log = next(o for o in objs if o["name"] == "Sales_log")
    assert (log["kind"], log["profile"]) == ("log_file", "log_write") and log["recommended_tier"] != "sata"
    system = next(o for o in objs if o["database"] == "master")
    assert system["recommended_tier"] == "fc"  # pinned by the default policy
    s = doc["summary"]
    dbs = {(c["server"], c["database"]) for c in s["flash_curve_by_database"]}
    assert ("SQLPROD01", "Sales") in dbs and ("SQLPROD02\\OLTP", "OLTP") in dbs
    for c in s["flash_curve_by_database"]:
        shares = [p["io_time_saved_share"] for p in c["curve"]]
        assert shares == sorted(shares)
    assert len(sales["metrics"]["io_per_s_by_hour_of_day"]) == 24
    assert s["placement"]["status"] in ("optimal", "feasible")
    assert s["placement"]["objective"] >= s["placement"]["lower_bound"] - 1e-6


def test_several_files_after_one_input_and_the_table(tmp_path: Path) -> None:
    files = [
        str(IMPORT / f)
        for f in ("db2_tablespaces.csv", "db2_transaction_log.csv", "db2_table_partitions.csv")
    ]
    policy = mapped_policy(tmp_path)
    files = [*files, "--policy", policy]
    doc = _advise("--input", *files)
    kinds = {o["kind"] for o in doc["objects"]}
    assert {"tablespace", "log_file", "partition"} <= kinds
    part = next(o for o in doc["objects"] if o["kind"] == "partition")
    assert part["placement_unit"].startswith("SALESDB/tablespace/")
    r = runner.invoke(app, ["advise", "--input", *files, "--format", "table"])
    assert r.exit_code == 0
    assert "TS_ORDERS_2024" in r.stdout and "placement optimal" in r.stdout


def test_bad_inputs_are_clear_errors(tmp_path: Path) -> None:
    one_sample = tmp_path / "one.csv"
    lines = (IMPORT / "sqlserver_file_stats.csv").read_text().splitlines()
    one_sample.write_text("\n".join(lines[:2]) + "\n")
    r = runner.invoke(app, ["advise", "--input", str(one_sample)])
    assert r.exit_code == 2 and "needs at least two samples" in r.output
    bad_policy = tmp_path / "p.yaml"
    bad_policy.write_text("tiers: []\n")
    r = runner.invoke(
        app, ["advise", "--input", str(IMPORT / "sqlserver_file_stats.csv"), "--policy", str(bad_policy)]
    )
    assert r.exit_code == 2 and "p.yaml: tiers" in r.output
    r = runner.invoke(app, ["advise", "--input", str(tmp_path / "none.csv")])
    assert r.exit_code == 2 and "none.csv" in r.output
    r = runner.invoke(app, ["advise", "--input", str(IMPORT / "sqlserver_file_stats.csv"), "--format", "xml"])
    assert r.exit_code == 2 and "--format" in r.output


def test_window_days_limits_the_input() -> None:
    from datetime import UTC, datetime, timedelta

    from app.advice import windows_from_snapshots
    from connectors.simulator import demo_fleet
    from policies.loader import load_policy

    origin = datetime(2026, 11, 1, tzinfo=UTC)
    fleet = demo_fleet(origin)
    snaps = [s for h in range(31, 31 + 10 * 24 + 1) for s in fleet.snapshots(origin + timedelta(hours=h))]
    policy = load_policy()
    windows = windows_from_snapshots(snaps, policy)
    assert {round(w.total.seconds / 86400, 3) for w in windows} == {policy.window_days}
