"""migrations.ilm: an ILM plan's moves month by month, each from where the earlier months left
the partition, the leading edge, and one file per month."""

from __future__ import annotations

import json
from typing import Any

import pytest

from migrations import AddDataPartition, AddPartition, MoveDataPartition, MovePartition, SetReadOnly
from migrations.ilm import format_like, ilm_moves, month_pair
from tests.migrations.golden_cases import FIXTURES, GENERATED_AT, OPTIONS, tiers
from tests.migrations.sqltokens import db2_statements


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def test_sqlserver_months_chain_locations_and_add_the_leading_edge() -> None:
    sel = ilm_moves(
        load("advice_sqlserver.json"),
        load("ilm_plan_sqlserver.json"),
        source="p",
        tiers=tiers(),
        dialect="tsql",
    )
    assert [m.month for m in sel.months] == ["2024-06", "2024-12"]
    june, december = sel.months
    assert [type(m.action).__name__ for m in june.moves] == ["MovePartition", "AddPartition"]
    first, edge = june.moves
    assert isinstance(first.action, MovePartition) and isinstance(edge.action, AddPartition)
    assert (first.action.source_filegroup, first.action.target_filegroup) == (
        "FG_ORDERS_2024",
        "FG_ORDERS_2024_fc",
    )
    # the newest partition (4) stays on flash: the new one joins its filegroup
    assert (edge.action.boundary, edge.action.filegroup, edge.action.create_filegroup) == (
        "2024-07-01",
        "FG_ORDERS_2024",
        None,
    )
    (second,) = december.moves
    assert isinstance(second.action, MovePartition)
    # December starts where June left partition 3 (and the tier suffix is replaced, not stacked)
    assert (second.from_tier, second.action.source_filegroup, second.action.target_filegroup) == (
        "fc", "FG_ORDERS_2024_fc", "FG_ORDERS_2024_sata",
    )  # fmt: skip
    reasons = {s.key: s.reason for s in sel.skipped}
    assert "not part of a tsql plan" in reasons["SALES.ORDERS"]
    assert "does not exist yet" in reasons["Sales/dbo.Orders/new/2024-07-01"]


def test_db2_shared_table_space_months_use_detach_attach() -> None:
    sel = ilm_moves(
        load("advice_db2.json"), load("ilm_plan_db2.json"), source="p", tiers=tiers(), dialect="db2"
    )
    assert [m.month for m in sel.months] == ["2024-06", "2024-09", "2024-12"]
    june = sel.months[0]
    move, edge = june.moves
    assert isinstance(move.action, MoveDataPartition) and isinstance(edge.action, AddDataPartition)
    assert (move.action.route, move.action.target_tablespace) == ("detach_attach", "TS_ORDERS_2024_FC")
    assert (edge.action.partition_name, edge.action.range_low, edge.action.range_high) == (
        "P20240701",
        "2024-07-01",
        "2024-10-01",
    )
    assert (edge.action.low_inclusive, edge.action.high_inclusive, edge.action.target.name) == (
        True,
        False,
        "SG_HOT",
    )
    (september,) = sel.months[1].moves
    assert isinstance(september.action, MoveDataPartition)
    # partition 2 is alone in TS_ORDERS_2024 among the advice's partitions, but June's leading edge
    # put P20240701 there: re-pointing the table space would move it too, so: detach / attach
    assert (september.action.tablespace, september.action.route) == ("TS_ORDERS_2024", "detach_attach")
    (december,) = sel.months[2].moves
    assert isinstance(december.action, MoveDataPartition)
    # by December partitions 1 and 2 share TS_ORDERS_2024_FC: still the detach route
    assert (december.action.tablespace, december.action.target_tablespace, december.action.route) == (
        "TS_ORDERS_2024_FC", "TS_ORDERS_2024_SATA", "detach_attach",
    )  # fmt: skip
    assert december.action.source is not None and december.action.source.name == "SG_FC"


@pytest.mark.parametrize("dialect", ["tsql", "db2"])
def test_month_file_runs_parts_in_order_and_rollback_in_reverse(dialect: str) -> None:
    advice, plan = (
        ("advice_sqlserver.json", "ilm_plan_sqlserver.json")
        if dialect == "tsql"
        else ("advice_db2.json", "ilm_plan_db2.json")
    )
    sel = ilm_moves(load(advice), load(plan), source="p", tiers=tiers(), dialect=dialect)  # type: ignore[arg-type]
    june = sel.months[0]
    forward, rollback, moves, skipped = month_pair(june, dialect, OPTIONS, GENERATED_AT)  # type: ignore[arg-type]
    assert not skipped and [m.key for m in moves] == [m.key for m in june.moves]
    marker = "migration script: FORWARD"
    starts = [forward.text.index(f"Object:     {m.kind} {m.name} ") for m in moves]
    assert starts == sorted(starts) and forward.text.count(marker) == len(moves)
    back = [rollback.text.index(f"Object:     {m.kind} {m.name} ") for m in moves]
    assert back == sorted(back, reverse=True) and rollback.text.count("migration script: ROLLBACK") == len(
        moves
    )
    if dialect == "tsql":
        # every part after the first is guarded by the stop marker of the parts before it
        assert forward.text.count("IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NOT NULL") == len(moves) - 1
        assert forward.text.count("CREATE TABLE #tierwise_stopped") == len(moves)
    else:
        assert forward.text.startswith("--#SET TERMINATOR @\n")
        # one CONNECT per part: each part is a complete CLP script
        assert sum(s.startswith("CONNECT TO ") for s in db2_statements(forward.text)) == len(moves)


def test_format_like_keeps_the_boundary_style() -> None:
    from datetime import date

    d = date(2024, 7, 1)
    assert [format_like(s, d) for s in ("202401", "20240101", "2024-01-01", "'2024-01-01'", None)] == [
        "202407", "20240701", "2024-07-01", "2024-07-01", "2024-07-01",
    ]  # fmt: skip


def test_leading_edge_refuses_range_left_and_open_db2_ends() -> None:
    advice = load("advice_sqlserver.json")
    for o in advice["objects"]:
        if o["kind"] == "partition":
            o["range_right"] = False
    sel = ilm_moves(advice, load("ilm_plan_sqlserver.json"), source="p", tiers=tiers(), dialect="tsql")
    assert not any(isinstance(m.action, AddPartition) for month in sel.months for m in month.moves)
    assert any("RANGE LEFT" in s.reason for s in sel.skipped)
    advice = load("advice_db2.json")
    for o in advice["objects"]:
        if o.get("partition_number") == 2:
            o["range_high"] = None
    sel = ilm_moves(advice, load("ilm_plan_db2.json"), source="p", tiers=tiers(), dialect="db2")
    assert any("MAXVALUE" in s.reason for s in sel.skipped)


def test_read_only_age_rule_freezes_the_filegroup_after_the_move() -> None:
    sel = ilm_moves(
        load("advice_sqlserver.json"), load("ilm_plan_sqlserver_read_only.json"), source="p", tiers=tiers(),
        dialect="tsql",
    )  # fmt: skip
    december = sel.months[-1]
    move, mark = december.moves
    assert isinstance(move.action, MovePartition) and isinstance(mark.action, SetReadOnly)
    assert (mark.action.filegroup, mark.action.read_only, mark.action.partitions) == (
        "FG_ORDERS_2024_sata", True, (("dbo", "Orders", 3),),
    )  # fmt: skip
    assert mark.why.reasons == ("older than 8 months: sata and read-only",)
    # June's move (read_only false) marks nothing
    assert not any(isinstance(m.action, SetReadOnly) for m in sel.months[0].moves)
    forward, rollback, moves, skipped = month_pair(december, "tsql", OPTIONS, GENERATED_AT)
    assert not skipped and moves == [move, mark]
    # forward: move, then READ_ONLY; rollback: READ_WRITE first, then the partition goes back
    assert forward.text.index("SWITCH PARTITION") < forward.text.index(
        "MODIFY FILEGROUP [FG_ORDERS_2024_sata] READ_ONLY"
    )
    assert rollback.text.index("MODIFY FILEGROUP [FG_ORDERS_2024_sata] READ_WRITE") < rollback.text.index(
        "SWITCH PARTITION"
    )
    assert "holds data other than the partitions this plan froze" in forward.text
    assert "needs exclusive access" in forward.text


def _plan_with(plan: dict[str, Any], number: int, moves: list[dict[str, Any]]) -> dict[str, Any]:
    for p in plan["tables"][0]["partitions"]:
        if p["partition"] == number:
            p["moves"] = moves
    return plan


def test_read_only_is_a_note_when_the_filegroup_would_hold_more() -> None:
    advice = load("advice_sqlserver.json")
    # partition 4 shares FG_ORDERS_2024: moving it to sata (not read-only) in the same month
    # puts it in FG_ORDERS_2024_sata too
    same_month = _plan_with(load("ilm_plan_sqlserver_read_only.json"), 4, [
        {"date": "2024-12-01", "to_tier": "sata", "read_only": False, "reason": "x"},
    ])  # fmt: skip
    # ... or in a later month
    later = _plan_with(load("ilm_plan_sqlserver_read_only.json"), 4, [
        {"date": "2025-03-01", "to_tier": "sata", "read_only": False, "reason": "x"},
    ])  # fmt: skip
    for plan, why in ((same_month, "other partitions in the advice"), (later, "moves into it in 2025-03")):
        sel = ilm_moves(advice, plan, source="p", tiers=tiers(), dialect="tsql")
        assert not any(isinstance(m.action, SetReadOnly) for month in sel.months for m in month.moves)
        notes = [s.reason for s in sel.skipped if "read-only not scripted" in s.reason]
        assert notes and all(why in n and "FG_ORDERS_2024_sata" in n for n in notes), notes


def test_db2_read_only_is_said_not_invented() -> None:
    plan = load("ilm_plan_db2.json")
    plan["tables"][0]["partitions"][0]["moves"][1]["read_only"] = True
    sel = ilm_moves(load("advice_db2.json"), plan, source="p", tiers=tiers(), dialect="db2")
    december = sel.months[-1]
    (move,) = december.moves
    assert isinstance(move.action, MoveDataPartition)
    assert any("no read-only table space" in n for n in move.notes)
    assert any(s.key == move.key and "no read-only table space" in s.reason for s in sel.skipped)
    forward, _, _, _ = month_pair(december, "db2", OPTIONS, GENERATED_AT)
    assert "Db2 has no read-only table space" in forward.text
    assert "READ_ONLY" not in forward.text  # nothing invented
