"""The golden cases: one per action and dialect, forward and rollback.

Shared by tests/migrations/test_golden.py and scripts/regen_golden.py. The advice fixtures are
frozen JSON (advice_sqlserver.json and advice_db2.json were made with `tierwise advise` from
tests/fixtures/import and tests/migrations/fixtures/policy.yaml; advice_sqlserver.json then had
Sales PRIMARY recommended on fc to exercise the offline move, and advice_db2.json's partitions got
the schema/table/inclusive fields that `tierwise advise` now writes; the others are hand-written:
advice_db2_user_temp.json is advice_db2.json's TEMPSPACE1 renamed to a user temporary USERTEMP1 on
SG_SATA, ilm_plan_sqlserver_read_only.json is ilm_plan_sqlserver.json with partition 3's December
move marked read-only).
db2_partition is the shared-table-space route (detach / copy / attach), db2_partition_alone the
table space route.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from migrations import Move, Options, SetReadOnly, TierSpot, render_check, render_pair, select_moves
from migrations.ilm import ilm_moves
from policies.loader import load_policy

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
POLICY = FIXTURES / "policy.yaml"
GENERATED_AT = datetime(2024, 5, 2, 6, 0, 0, tzinfo=UTC)
OPTIONS = Options(generator="tierwise (golden files)")
EXT = {"tsql": ".sql", "db2": ".db2"}


@dataclass(frozen=True)
class Case:
    name: str
    dialect: str
    advice: str
    key: str
    read_only: bool = False
    ilm: str | None = None  # an ILM plan fixture: the move comes from migrations.ilm.ilm_moves
    db2_log_path: str | None = None  # the recommended tier's log path (tierwise script --db2-log-path)
    also: tuple[str, ...] = ()  # more keys selected with `key` (offline files of one database: one move)


CASES = (
    Case(
        "tsql_filegroup_online", "tsql", "advice_sqlserver.json", "SQLPROD01|Sales/filegroup/FG_ORDERS_2024"
    ),
    Case(
        "tsql_filegroup_offline_primary", "tsql", "advice_sqlserver.json", "SQLPROD01|Sales/filegroup/PRIMARY"
    ),
    Case("tsql_log_offline", "tsql", "advice_sqlserver.json", "SQLPROD01|Sales/file/2"),
    # both offline moves of Sales in one plan: one script, one offline period (issue #30, N8)
    Case(
        "tsql_offline_database",
        "tsql",
        "advice_sqlserver.json",
        "SQLPROD01|Sales/filegroup/PRIMARY",
        also=("SQLPROD01|Sales/file/2",),
    ),
    Case("tsql_tempdb_data", "tsql", "advice_sqlserver.json", "SQLPROD01|tempdb/data"),
    Case("tsql_tempdb_log", "tsql", "advice_sqlserver.json", "SQLPROD01|tempdb/file/2"),
    Case("tsql_partition", "tsql", "advice_sqlserver.json", "SQLPROD01|Sales/partition/dbo.Orders/1/3"),
    Case(
        "tsql_read_only",
        "tsql",
        "advice_sqlserver.json",
        "SQLPROD01|Sales/filegroup/FG_ORDERS_2024",
        read_only=True,
    ),
    Case(
        "tsql_hostile_names",
        "tsql",
        "advice_hostile.json",
        "SQLPROD01|Sales]; DROP DATABASE x; --/filegroup/FG]'x /* y",
    ),
    Case("db2_tablespace", "db2", "advice_db2.json", "db2host01/db2inst1|SALESDB/tablespace/USERSPACE1"),
    Case(
        "db2_tablespace_dms", "db2", "advice_db2_dms.json", "db2host01/db2inst1|SALESDB/tablespace/TS_LEGACY"
    ),
    Case("db2_partition", "db2", "advice_db2.json", "db2host01/db2inst1|SALESDB/partition/SALES.ORDERS/1"),
    Case(
        "db2_partition_alone",
        "db2",
        "advice_db2_partition_alone.json",
        "db2host01/db2inst1|SALESDB/partition/SALES.ORDERS/3",
    ),
    Case("db2_temp_tablespace", "db2", "advice_db2.json", "db2host01/db2inst1|SALESDB/tablespace/TEMPSPACE1"),
    # a user temporary table space (advice_db2_user_temp.json: hand-written, the TEMPSPACE1 object renamed)
    Case(
        "db2_user_temp_tablespace",
        "db2",
        "advice_db2_user_temp.json",
        "db2host01/db2inst1|SALESDB/tablespace/USERTEMP1",
    ),
    Case("db2_log", "db2", "advice_db2.json", "db2host01/db2inst1|SALESDB/log", db2_log_path="/db2/fc1/log"),
    # the ILM leading edge (tierwise ilm --scripts): NEXT USED + SPLIT / ADD PARTITION
    Case(
        "tsql_ilm_add_partition",
        "tsql",
        "advice_sqlserver.json",
        "SQLPROD01|Sales/partition/dbo.Orders/new/2024-07-01",
        ilm="ilm_plan_sqlserver.json",
    ),
    Case(
        "db2_ilm_add_partition",
        "db2",
        "advice_db2.json",
        "db2host01/db2inst1|SALESDB/partition/SALES.ORDERS/new/2024-07-01",
        ilm="ilm_plan_db2.json",
    ),
    # ILM read-only (age rule: sata and read-only): READ_ONLY on the filegroup the partition moved to
    Case(
        "tsql_ilm_read_only",
        "tsql",
        "advice_sqlserver.json",
        "SQLPROD01|Sales/filegroup/FG_ORDERS_2024_sata",
        ilm="ilm_plan_sqlserver_read_only.json",
    ),
)


def tiers() -> list[TierSpot]:
    policy = load_policy(POLICY)
    return [
        TierSpot(
            t.name,
            t.locations.sqlserver_directory,
            t.locations.db2_storage_group,
            tuple(t.locations.db2_paths),
            t.locations.db2_overhead_ms,
            t.locations.db2_device_read_rate_mb_s,
            t.locations.db2_data_tag,
        )
        for t in policy.tiers
    ]


def case_move(case: Case) -> Move:
    doc = json.loads((FIXTURES / case.advice).read_text(encoding="utf-8"))
    if case.ilm is not None:
        plan = json.loads((FIXTURES / case.ilm).read_text(encoding="utf-8"))
        sel = ilm_moves(doc, plan, source=case.ilm, tiers=tiers(), dialect=case.dialect)  # type: ignore[arg-type]
        hits = [m for month in sel.months for m in month.moves if f"{m.target.server}|{m.key}" == case.key]
        if len(hits) != 1:
            raise AssertionError(f"{case.name}: expected one move, got {hits} (skipped: {sel.skipped})")
        return hits[0]
    spots = [replace(t, db2_log_path=case.db2_log_path) for t in tiers()]
    selection = select_moves(
        doc,
        source=case.advice,
        tiers=spots,
        dialect=case.dialect,  # type: ignore[arg-type]
        only=[case.key, *case.also],
        read_only=[case.key] if case.read_only else [],
    )
    moves = [m for m in selection.moves if isinstance(m.action, SetReadOnly) == case.read_only]
    if len(moves) != 1:
        raise AssertionError(f"{case.name}: expected one move, got {moves} (skipped: {selection.skipped})")
    return moves[0]


def render_case(case: Case) -> dict[str, str]:
    """The case's forward and rollback scripts, and for DB2 its check-only script (.check.db2)."""
    move = case_move(case)
    forward, rollback = render_pair(move, case.dialect, OPTIONS, GENERATED_AT)  # type: ignore[arg-type]
    ext = EXT[case.dialect]
    out = {f"{case.name}.forward{ext}": forward.text, f"{case.name}.rollback{ext}": rollback.text}
    check = render_check(move, case.dialect, OPTIONS, GENERATED_AT)  # type: ignore[arg-type]
    if check is not None:
        out[f"{case.name}.check{ext}"] = check.text
    return out


def all_golden() -> dict[str, str]:
    out: dict[str, str] = {}
    for case in CASES:
        out.update(render_case(case))
    return out
