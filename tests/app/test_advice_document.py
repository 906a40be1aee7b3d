"""The typed advice document (advisors.document.AdvisedObject): what report_json stores and prints,
read back by the script generators without re-wrapping, byte for byte as earlier versions wrote it.

The *_STORED texts below are Recommendation.evidence / AdviceSnapshot.objects rows exactly as
report_json wrote them before the model existed (json.dumps of the dict, as the store's JSON
column does): a filegroup with member files and maintenance, a log judged in a business period,
a SQL Server partition with its schema/table split, and a DB2 partition.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisors.advise import advise
from advisors.document import AdvisedObject, split_table
from app.advice import advised_object, report_json, windows_from_snapshots
from migrations import select_moves
from migrations.advice_read import AdviceError, Dialect
from migrations.from_advice import read_advised, select_advised
from tests.advisors.test_scenarios import policy_of, snapshots_of
from tests.migrations.golden_cases import tiers

# fmt: off
FILEGROUP_WITH_FILES = r'''{"engine": "sqlserver", "server": "SQLFIN01", "database": "Finance", "kind": "filegroup", "name": "FG_JOURNAL", "key": "Finance/filegroup/FG_JOURNAL", "size_bytes": 536870912000, "profile": "random_read", "rule": "TW710", "current_tier": "fc", "recommended_tier": "fc", "placement_unit": "Finance/filegroup/FG_JOURNAL", "pool": "default", "metrics": {"read_iops": 60.0, "write_iops": 5.0, "avg_read_bytes": 8192.0, "avg_write_bytes": 8192.0, "avg_read_ms": 7.0, "avg_write_ms": 2.0, "read_pct": 92.3, "read_miss_ratio": null, "heat": 468.0, "heat_ratio": 0.833, "prefetch_share": null, "singleton_share": null, "est_cache_hit_share": 0.0, "trend_pct_per_day": null, "instance_read_miss_ratio": null, "read_mb_s": 0.469, "write_mb_s": 0.039, "hours": 44.0, "io_per_s_by_hour_of_day": [65.0, 65.0, 0.0, 0.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0, 65.0]}, "predicted": {"io_ms_per_s_now": 430.0, "io_ms_per_s_after": 430.0}, "reasons": ["flash would save 362.5 ms of I/O wait per second (0.72 ms/s per GB), less than its extra price of 1.50 ms/s per GB; on sata it would wait 490.0 ms more per second (0.98 ms/s per GB, on the whole window), more than the 0.35 ms/s per GB a move to sata would free (0.45 price difference less 0.10 for the move)", "random reads: 8.0 KB average read, 92 % reads", "TW102 11 % of this filegroup's reads fell in hours of large sequential reads (4 h, avg 898.7 KB per read, e.g. a backup or DBCC) and were left out of its heat and rates", "normal for its tier: 7.0 ms per read (normal on fc: 5-8 ms); 2.0 ms per write (normal on fc: 0-10 ms)", "8.0 KB average read, 60 reads/s, 7.0 ms average read latency, 5 writes/s, heat 468.0 I/O per GB-hour (0.83x the database average)"], "maintenance": {"io_share": 0.1075, "read_share": 0.1094, "hours": 4.0, "note": null, "slices": [{"name": "large sequential reads", "kind": "burst", "hours": 4.0, "reads": 1167840, "writes": 72000, "bytes_read": 1074753699840, "avg_read_bytes": 920291.9, "requests": 1239840.0}]}, "period": null, "decision": {"stage": "price", "rule": "TW710", "moved": false, "current_tier": "fc", "preferred_tier": "fc", "recommended_tier": "fc", "allowed_tiers": ["flash", "fc", "sata"], "detail": "flash would save 362.5 ms of I/O wait per second (0.72 ms/s per GB), less than its extra price of 1.50 ms/s per GB; on sata it would wait 490.0 ms more per second (0.98 ms/s per GB, on the whole window), more than the 0.35 ms/s per GB a move to sata would free (0.45 price difference less 0.10 for the move)", "unit": null, "numbers": {"read_iops": 60.0, "write_iops": 5.0, "read_pct": 92.3077, "avg_read_kb": 8.0, "avg_write_kb": 8.0, "read_miss_ratio": null, "instance_read_miss_ratio": null, "prefetch_share": null, "random_share": null, "est_cache_hit_share": 0.0, "heat": 468.0, "heat_ratio": 0.8331, "avg_read_ms": 7.0, "avg_write_ms": 2.0, "io_ms_per_s_now": 430.0, "io_ms_per_s_after": 430.0, "io_ms_per_s_saved": 0.0, "sequential_share": 0.0, "write_gb_day": 3.2959, "backend_iops": 70.0, "price_ms_per_s_per_gb": 0.5, "saving_ms_per_s_per_gb": 0.0, "saving_ms_per_io": 0.0}, "predicted": [{"tier": "flash", "read_ms": 1.0, "write_ms": 1.5, "io_ms_per_s": 67.5, "measured": false}, {"tier": "fc", "read_ms": 7.0, "write_ms": 2.0, "io_ms_per_s": 430.0, "measured": true}, {"tier": "sata", "read_ms": 15.0, "write_ms": 4.0, "io_ms_per_s": 920.0, "measured": false}]}, "explanation": "Stays on fc: flash would save 362.5 ms of I/O wait per second (0.72 ms/s per GB), less than its extra price of 1.50 ms/s per GB; on sata it would wait 490.0 ms more per second (0.98 ms/s per GB, on the whole window), more than the 0.35 ms/s per GB a move to sata would free (0.45 price difference less 0.10 for the move).", "physical_name": "F:\\fc\\Finance\\FG_JOURNAL_1.mdf", "filegroup": "FG_JOURNAL", "files": [{"key": "Finance/file/1", "file_id": 1, "logical_name": "FG_JOURNAL_1", "physical_name": "F:\\fc\\Finance\\FG_JOURNAL_1.mdf", "size_bytes": 268435456000, "current_tier": "fc"}, {"key": "Finance/file/3", "file_id": 3, "logical_name": "FG_JOURNAL_2", "physical_name": "F:\\fc\\Finance\\FG_JOURNAL_2.ndf", "size_bytes": 268435456000, "current_tier": "fc"}]}'''
LOG_IN_A_PERIOD = r'''{"engine": "sqlserver", "server": "SQLGL01", "database": "Ledger", "kind": "log_file", "name": "Ledger_log", "key": "Ledger/file/2", "size_bytes": 21474836480, "profile": "log_write", "rule": "TW700", "current_tier": "fc", "recommended_tier": "fc", "placement_unit": "Ledger/file/2", "pool": "default", "metrics": {"read_iops": 0.0, "write_iops": 40.0, "avg_read_bytes": null, "avg_write_bytes": 8192.0, "avg_read_ms": null, "avg_write_ms": 0.8, "read_pct": 0.0, "read_miss_ratio": null, "heat": 7200.0, "heat_ratio": 50.62, "prefetch_share": null, "singleton_share": null, "est_cache_hit_share": 0.0, "trend_pct_per_day": 0.0, "instance_read_miss_ratio": null, "read_mb_s": 0.0, "write_mb_s": 0.312, "hours": 168.0, "io_per_s_by_hour_of_day": [40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0, 40.0, 0.0]}, "predicted": {"io_ms_per_s_now": 32.0, "io_ms_per_s_after": 32.0}, "reasons": ["no tier it may use would cut its I/O wait (32.0 ms per second now)", "transaction log: 40 writes/s of 8.0 KB at 0.8 ms", "normal for its tier: 0.8 ms per write (normal on fc: 0-10 ms)", "n/a average read, 0 reads/s, n/a average read latency, 40 writes/s, heat 7,200.0 I/O per GB-hour (50.62x the database average)"], "maintenance": null, "period": {"name": "month-end close", "kind": "month_end", "occurrence": "2026-10-29", "hot": false, "ratio": 1.0, "hot_min_ratio": 3.0, "hours": 96.0, "read_iops": 0.0, "write_iops": 40.0, "heat": 7200.0, "io_rate": 40.0}, "decision": {"stage": "benefit", "rule": "TW700", "moved": false, "current_tier": "fc", "preferred_tier": "fc", "recommended_tier": "fc", "allowed_tiers": ["fc"], "detail": "no tier it may use would cut its I/O wait (32.0 ms per second now)", "unit": null, "numbers": {"read_iops": 0.0, "write_iops": 40.0, "read_pct": 0.0, "avg_read_kb": null, "avg_write_kb": 8.0, "read_miss_ratio": null, "instance_read_miss_ratio": null, "prefetch_share": null, "random_share": null, "est_cache_hit_share": 0.0, "heat": 7200.0, "heat_ratio": 50.6203, "avg_read_ms": null, "avg_write_ms": 0.8, "io_ms_per_s_now": 32.0, "io_ms_per_s_after": 32.0, "io_ms_per_s_saved": 0.0, "sequential_share": 0.0, "write_gb_day": 26.3672, "backend_iops": 80.0, "price_ms_per_s_per_gb": 0.5, "saving_ms_per_s_per_gb": 0.0, "saving_ms_per_io": 0.0}, "predicted": [{"tier": "flash", "read_ms": null, "write_ms": 1.5, "io_ms_per_s": 60.0, "measured": false}, {"tier": "fc", "read_ms": null, "write_ms": 0.8, "io_ms_per_s": 32.0, "measured": true}, {"tier": "sata", "read_ms": null, "write_ms": 4.0, "io_ms_per_s": 160.0, "measured": false}]}, "explanation": "Stays on fc: no tier it may use would cut its I/O wait (32.0 ms per second now).", "physical_name": "F:\\fc\\Ledger\\Ledger_log.ldf", "logical_name": "Ledger_log", "file_id": 2}'''
SQLSERVER_PARTITION = r'''{"engine": "sqlserver", "server": "SQLPROD01", "database": "Sales", "kind": "partition", "name": "dbo.Orders p1", "key": "Sales/partition/dbo.Orders/1/1", "size_bytes": 5013504000, "profile": "cold", "rule": "TW750", "current_tier": null, "recommended_tier": "sata", "placement_unit": "Sales/partition/dbo.Orders/1/1", "pool": "default", "metrics": {"read_iops": 0.0, "write_iops": 0.0, "avg_read_bytes": null, "avg_write_bytes": null, "avg_read_ms": null, "avg_write_ms": null, "read_pct": null, "read_miss_ratio": 0.0, "heat": 0.0, "heat_ratio": 0.0, "prefetch_share": null, "singleton_share": 0.875, "est_cache_hit_share": null, "trend_pct_per_day": null, "instance_read_miss_ratio": null, "read_mb_s": 0.0, "write_mb_s": 0.0, "hours": 0.17, "io_per_s_by_hour_of_day": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}, "predicted": {"io_ms_per_s_now": null, "io_ms_per_s_after": 0.0}, "reasons": ["cold: 0.0 I/O per second", "0.0 page I/O latch waits (physical-read proxy) per second, 88 % of accesses are singleton lookups, 0 % read-miss, heat 0.0 per GB-hour (0.00x the database average)", "the filegroup / table space holding it is not in the input, and a partition is placed with the one that holds it: not placed"], "maintenance": null, "period": null, "decision": {"stage": "not_placed", "rule": "TW750", "moved": false, "current_tier": null, "preferred_tier": "sata", "recommended_tier": "sata", "allowed_tiers": ["sata"], "detail": "the filegroup / table space holding it is not in the input, and a partition is placed with the one that holds it: not placed", "unit": null, "numbers": {}, "predicted": []}, "explanation": "Not placed: the filegroup / table space holding it is not in the input, and a partition is placed with the one that holds it: not placed; its own figures: 0.0 page I/O latch waits (physical-read proxy) per second, 88 % of accesses are singleton lookups, 0 % read-miss, heat 0.0 per GB-hour (0.00x the database average).", "filegroup": "FG_ARCHIVE", "table_name": "dbo.Orders", "schema_name": "dbo", "partition_number": 1, "partition_scheme": "ps_OrderDate", "partition_function": "pf_OrderDate", "range_high": "2023-01-01", "range_right": true, "high_inclusive": false, "schema": "dbo", "table": "Orders"}'''
DB2_PARTITION = r'''{"engine": "db2", "server": "db2host01/db2inst1", "database": "SALESDB", "kind": "partition", "name": "SALES.ORDERS P2023", "key": "SALESDB/partition/SALES.ORDERS/0", "size_bytes": 401408000, "profile": "cold", "rule": "TW710", "current_tier": "sata", "recommended_tier": "sata", "placement_unit": "SALESDB/tablespace/TS_ORDERS_2023", "pool": "default", "metrics": {"read_iops": 0.0, "write_iops": 0.0, "avg_read_bytes": null, "avg_write_bytes": null, "avg_read_ms": null, "avg_write_ms": null, "read_pct": null, "read_miss_ratio": null, "heat": 0.0, "heat_ratio": 0.0, "prefetch_share": null, "singleton_share": null, "est_cache_hit_share": null, "trend_pct_per_day": null, "instance_read_miss_ratio": null, "read_mb_s": 0.0, "write_mb_s": 0.0, "hours": 0.08, "io_per_s_by_hour_of_day": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}, "predicted": {"io_ms_per_s_now": null, "io_ms_per_s_after": 0.0}, "reasons": ["tablespace TS_ORDERS_2023: Stays on sata: flash would save 5.7 ms of I/O wait per second (0.50 ms/s per GB), less than its extra price of 1.95 ms/s per GB.", "0.0 object physical reads per second, heat 0.0 per GB-hour (0.00x the database average)", "moves with tablespace TS_ORDERS_2023 (recommended: sata)"], "maintenance": null, "period": null, "decision": {"stage": "moves_with_unit", "rule": "TW710", "moved": false, "current_tier": "sata", "preferred_tier": "sata", "recommended_tier": "sata", "allowed_tiers": ["sata"], "detail": "moves with table space TS_ORDERS_2023 (stays on sata)", "unit": "SALESDB/tablespace/TS_ORDERS_2023", "numbers": {"read_iops": 0.0, "write_iops": 0.0, "read_pct": null, "avg_read_kb": null, "avg_write_kb": null, "read_miss_ratio": null, "instance_read_miss_ratio": null, "prefetch_share": null, "random_share": null, "est_cache_hit_share": null, "heat": 0.0, "heat_ratio": 0.0, "avg_read_ms": null, "avg_write_ms": null, "io_ms_per_s_now": null, "io_ms_per_s_after": null, "io_ms_per_s_saved": null}, "predicted": []}, "explanation": "Moves with table space TS_ORDERS_2023 (stays on sata): DB2 places data by table space, so a partition cannot move alone; its own figures: 0.0 object physical reads per second, heat 0.0 per GB-hour (0.00x the database average). The table space: Stays on sata: flash would save 5.7 ms of I/O wait per second (0.50 ms/s per GB), less than its extra price of 1.95 ms/s per GB.", "storage_group": "SG_COLD", "tablespace": "TS_ORDERS_2023", "table_name": "SALES.ORDERS", "schema_name": "SALES", "partition_number": 0, "range_low": "2023-01-01", "range_high": "2024-01-01", "low_inclusive": true, "high_inclusive": false, "schema": "SALES", "table": "ORDERS"}'''
# fmt: on

STORED = {
    "filegroup with files": FILEGROUP_WITH_FILES,
    "log in a period": LOG_IN_A_PERIOD,
    "sqlserver partition": SQLSERVER_PARTITION,
    "db2 partition": DB2_PARTITION,
}


@pytest.mark.parametrize("text", STORED.values(), ids=STORED.keys())
def test_stored_evidence_reads_and_writes_back_byte_for_byte(text: str) -> None:
    row = json.loads(text)
    doc = AdvisedObject.model_validate(row)
    assert json.dumps(doc.as_json()) == text  # same keys, same order, same numbers (1 stays 1)
    assert (doc.key, doc.recommended_tier, doc.placement_unit) == (
        row["key"],
        row["recommended_tier"],
        row["placement_unit"],
    )


def test_typed_fields_of_a_stored_row() -> None:
    fg = AdvisedObject.model_validate(json.loads(FILEGROUP_WITH_FILES))
    assert fg.maintenance is not None and fg.maintenance.slices and fg.maintenance.slices[0].reads > 0
    assert [f.key for f in fg.files] == [f["key"] for f in json.loads(FILEGROUP_WITH_FILES)["files"]]
    log = AdvisedObject.model_validate(json.loads(LOG_IN_A_PERIOD))
    assert log.period is not None and log.period.name and log.period.occurrence
    part = AdvisedObject.model_validate(json.loads(SQLSERVER_PARTITION))
    assert (part.table_schema, part.table) == ("dbo", "Orders")
    assert part.metrics is not None and len(part.metrics.io_per_s_by_hour_of_day) == 24


def test_an_older_row_without_the_newer_keys_still_reads_and_keeps_unknown_keys() -> None:
    row = json.loads(SQLSERVER_PARTITION)
    for newer in ("pool", "period", "maintenance", "decision", "explanation", "schema_name", "rule"):
        del row[newer]
    row["metrics"] = {"read_iops": 1.5, "heat": 2}  # an early row: fewer metrics
    row["retired_field"] = {"kept": True}
    doc = AdvisedObject.model_validate(row)
    assert doc.pool is None and doc.decision is None
    assert doc.as_json() == row and json.dumps(doc.as_json()) == json.dumps(row)


def test_identity_and_tiers_are_required() -> None:
    row = json.loads(DB2_PARTITION)
    del row["recommended_tier"]
    with pytest.raises(ValueError, match="recommended_tier"):
        AdvisedObject.model_validate(row)


@pytest.mark.parametrize("name", STORED.keys())
def test_scripts_from_typed_objects_equal_scripts_from_the_wrapped_document(name: str) -> None:
    """select_advised takes the typed objects a recommendation stores: no {"objects": [...]} wrap."""
    row = json.loads(STORED[name])
    dialect: Dialect = "db2" if row["engine"] == "db2" else "tsql"
    uid = f"{row['server']}|{row['key']}"
    typed = select_advised([AdvisedObject.model_validate(row)], source="rec", tiers=tiers(), dialect=dialect,
                           only=[uid])  # fmt: skip
    wrapped = select_moves({"objects": [row]}, source="rec", tiers=tiers(), dialect=dialect, only=[uid])
    assert typed == wrapped
    assert typed.moves or typed.skipped  # it was judged: a move, or a note saying why not


def test_typed_objects_get_the_same_checks_as_json() -> None:
    row = json.loads(SQLSERVER_PARTITION)
    row["recommended_tier"] = "nvme"  # not a tier of the policy
    with pytest.raises(AdviceError, match=r"rec: object 1 \(SQLPROD01\|.*recommended_tier 'nvme'"):
        select_advised([AdvisedObject.model_validate(row)], source="rec", tiers=tiers(), dialect="tsql")


def test_a_stored_row_that_is_not_an_advised_object_is_an_advice_error() -> None:
    """What a recommendation's script generation catches: the source and the field named."""
    row = json.loads(FILEGROUP_WITH_FILES)
    assert read_advised(row, "recommendation #7").as_json() == row
    del row["placement_unit"]
    with pytest.raises(
        AdviceError, match=r"^recommendation #7: not an advised object: placement_unit: Field required"
    ):
        read_advised(row, "recommendation #7")
    with pytest.raises(AdviceError, match=r"^recommendation #7: not an advised object"):
        read_advised(None, "recommendation #7")


def test_split_table() -> None:
    assert split_table(None, "dbo") is None
    assert split_table("dbo.Orders", None) == ("dbo", "Orders")
    assert split_table("my.schema.Orders", "my.schema") == ("my.schema", "Orders")
    assert split_table("a.b.c", None) == (None, None)
    assert split_table("dbo.", "dbo") == (None, None)


@pytest.mark.parametrize("scenario", ["month-end-rereads", "backup-bursts", "mixed-fleet"])
def test_report_objects_are_the_documents_json(scenario: str) -> None:
    """report_json's objects are AdvisedObject.as_json(), and read back to the same model."""
    policy, snaps = policy_of(scenario), snapshots_of(scenario)
    report = advise(windows_from_snapshots(snaps, policy), policy, now=max(s.sample_time for s in snaps))
    objects: list[dict[str, Any]] = report_json(report, policy)["objects"]
    assert objects and objects == [advised_object(a).as_json() for a in report.objects]
    for o in objects:
        assert json.dumps(AdvisedObject.model_validate(o).as_json()) == json.dumps(o)
