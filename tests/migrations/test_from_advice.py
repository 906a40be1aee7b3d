"""From advice JSON to moves: selection, naming, refusals and run order."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from migrations import (
    AdviceError,
    MoveDataPartition,
    MoveFiles,
    MovePartition,
    MoveTablespace,
    MoveTempTablespace,
    SetReadOnly,
    StorageGroup,
    select_moves,
)
from tests.migrations.golden_cases import FIXTURES, tiers


def advice(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return doc


def test_default_selection_is_the_recommended_moves_of_placement_units() -> None:
    sel = select_moves(advice("advice_sqlserver.json"), source="a.json", tiers=tiers(), dialect="tsql")
    # Sales's log and PRIMARY are both offline moves: one move, one offline period (issue #30, N8)
    assert [m.key for m in sel.moves] == [
        "Sales/file/2 + Sales/filegroup/PRIMARY",
        "Sales/filegroup/FG_ORDERS_2024",
        "tempdb/data",
        "tempdb/file/2",
    ]
    modes = {m.key: m.action.mode for m in sel.moves if isinstance(m.action, MoveFiles)}
    assert modes == {
        "Sales/file/2 + Sales/filegroup/PRIMARY": "offline",
        "Sales/filegroup/FG_ORDERS_2024": "online",
        "tempdb/data": "restart",
        "tempdb/file/2": "restart",
    }
    reasons = {s.key: s.reason for s in sel.skipped}
    assert "current tier unknown" in reasons["master/filegroup/PRIMARY"]
    assert "--only" in reasons["Sales/partition/dbo.Orders/1/1"]
    # partitions inside a moving filegroup are not listed: they move with it
    assert "Sales/partition/dbo.Orders/1/3" not in reasons


def test_new_names_and_paths() -> None:
    sel = select_moves(advice("advice_sqlserver.json"), source="a.json", tiers=tiers(), dialect="tsql")
    fg = next(m for m in sel.moves if m.key == "Sales/filegroup/FG_ORDERS_2024")
    assert isinstance(fg.action, MoveFiles)
    (f,) = fg.action.files
    assert (f.from_name, f.from_path) == ('Orders, 2024 "hot"', "E:\\data\\Sales_Orders_2024.ndf")
    assert (f.to_name, f.to_path) == ('Orders, 2024 "hot"_fc', "F:\\fc\\Sales_Orders_2024.ndf")
    back = fg.inverse().action
    assert isinstance(back, MoveFiles)
    assert (back.files[0].to_name, back.files[0].to_path) == (
        'Orders, 2024 "hot"',
        "E:\\data\\Sales_Orders_2024.ndf",
    )


def test_tier_suffix_is_replaced_not_stacked() -> None:
    doc = advice("advice_sqlserver.json")
    fg = next(o for o in doc["objects"] if o["key"] == "Sales/filegroup/FG_ORDERS_2024")
    fg["files"][0]["logical_name"] = "Orders_flash"
    sel = select_moves(
        doc, source="a.json", tiers=tiers(), dialect="tsql", only=["Sales/filegroup/FG_ORDERS_2024"]
    )
    action = sel.moves[0].action
    assert isinstance(action, MoveFiles) and action.files[0].to_name == "Orders_fc"


def test_only_selects_a_single_partition() -> None:
    sel = select_moves(
        advice("advice_sqlserver.json"),
        source="a.json",
        tiers=tiers(),
        dialect="tsql",
        only=["Sales/partition/dbo.Orders/1/3", "SQLPROD01|Sales/partition/dbo.Orders/2/3"],
    )
    (move,) = sel.moves
    a = move.action
    assert isinstance(a, MovePartition)
    assert (a.schema, a.table, a.partition_number, a.source_filegroup, a.target_filegroup) == (
        "dbo",
        "Orders",
        3,
        "FG_ORDERS_2024",
        "FG_ORDERS_2024_fc",
    )
    assert a.create_target is not None and a.create_target.path == "F:\\fc\\Sales_FG_ORDERS_2024_fc.ndf"
    assert a.size_bytes == 638976000 + 212992000  # all indexes of partition 3
    assert "same table partition" in sel.skipped[0].reason
    inverse = move.inverse().action
    assert isinstance(inverse, MovePartition)
    assert inverse.target_filegroup == "FG_ORDERS_2024" and inverse.remove_source == a.create_target


def test_only_with_server_prefix_picks_one_server() -> None:
    sel = select_moves(
        advice("advice_sqlserver.json"),
        source="a.json",
        tiers=tiers(),
        dialect="tsql",
        only=["SQLPROD02\\OLTP|OLTP/file/2"],
    )
    assert sel.moves == () and "already on its recommended tier fc" in sel.skipped[0].reason


def test_read_only_is_an_extra_move_after_the_others() -> None:
    key = "Sales/filegroup/FG_ORDERS_2024"
    sel = select_moves(
        advice("advice_sqlserver.json"), source="a.json", tiers=tiers(), dialect="tsql", read_only=[key]
    )
    assert isinstance(sel.moves[-1].action, SetReadOnly) and sel.moves[-1].key == key


def test_other_engine_is_skipped_with_a_note() -> None:
    sel = select_moves(
        advice("advice_sqlserver.json"),
        source="a.json",
        tiers=tiers(),
        dialect="db2",
        only=["Sales/filegroup/FG_ORDERS_2024"],
    )
    assert sel.moves == () and "sqlserver object" in sel.skipped[0].reason


def test_db2_moves() -> None:
    sel = select_moves(advice("advice_db2.json"), source="d.json", tiers=tiers(), dialect="db2")
    assert [m.key for m in sel.moves] == [
        "SALESDB/tablespace/USERSPACE1",
        "SALESDB/tablespace/TS_ORDERS_2024",
    ]
    ts = sel.moves[0].action
    assert isinstance(ts, MoveTablespace)
    assert ts.source == StorageGroup("IBMSTOGROUP")
    assert ts.target == StorageGroup("SG_SATA", ("/db2/sata1",), 12.0, 70.0, 9)
    part = select_moves(
        advice("advice_db2.json"),
        source="d.json",
        tiers=tiers(),
        dialect="db2",
        only=["SALESDB/partition/SALES.ORDERS/1"],
    ).moves[0]
    assert isinstance(part.action, MoveDataPartition)
    assert (part.action.schema, part.action.table, part.action.partition_name) == (
        "SALES",
        "ORDERS",
        "P2024Q1",
    )


def test_db2_log_is_a_note_and_temp_table_space_is_recreated() -> None:
    sel = select_moves(
        advice("advice_db2.json"),
        source="d.json",
        tiers=tiers(),
        dialect="db2",
        only=["SALESDB/tablespace/TEMPSPACE1", "SALESDB/log"],
    )
    (temp,) = sel.moves
    assert isinstance(temp.action, MoveTempTablespace)
    assert (temp.action.tablespace, temp.action.new_tablespace, temp.action.source, temp.action.target.name) == (
        "TEMPSPACE1", "TEMPSPACE1_FC", None, "SG_FC",
    )  # fmt: skip
    back = temp.inverse().action
    assert isinstance(back, MoveTempTablespace)
    assert (back.tablespace, back.new_tablespace, back.target.name) == (
        "TEMPSPACE1_FC",
        "TEMPSPACE1",
        "IBMSTOGROUP",
    )
    (log,) = sel.skipped
    assert log.reason.startswith("unsupported here: review") and "NEWLOGPATH" in log.reason


def test_dms_rollback_goes_to_the_default_group() -> None:
    (move,) = select_moves(
        advice("advice_db2_dms.json"),
        source="d.json",
        tiers=tiers(),
        dialect="db2",
        only=["SALESDB/tablespace/TS_LEGACY"],
    ).moves
    assert isinstance(move.action, MoveTablespace) and move.action.source is None
    back = move.inverse().action
    assert isinstance(back, MoveTablespace) and back.target == StorageGroup("IBMSTOGROUP")


def test_run_order_frees_fast_tiers_first() -> None:
    doc = advice("advice_sqlserver.json")
    up = copy.deepcopy(next(o for o in doc["objects"] if o["key"] == "Sales/filegroup/FG_ORDERS_2024"))
    up.update(
        key="Sales/filegroup/FG_UP",
        name="FG_UP",
        filegroup="FG_UP",
        placement_unit="Sales/filegroup/FG_UP",
        current_tier="sata",
        recommended_tier="flash",
    )
    up["files"][0].update(logical_name="up", physical_name="S:\\sata\\up.ndf")
    doc["objects"].insert(0, up)
    keys = [m.key for m in select_moves(doc, source="a.json", tiers=tiers(), dialect="tsql").moves]
    assert keys[-1] == "Sales/filegroup/FG_UP"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.clear(), "expected an object with an objects list"),
        (lambda d: d["objects"][0].pop("recommended_tier"), "recommended_tier None is not a tier"),
        (lambda d: d["objects"][0].update(recommended_tier="ssd"), "'ssd' is not a tier of the policy"),
        (lambda d: d["objects"][0].update(current_tier="nvme"), "current_tier 'nvme' is not a tier"),
        (lambda d: d["objects"][0].pop("server"), "server must be a non-empty string"),
        (lambda d: d["objects"][0].update(engine="oracle"), "engine must be sqlserver or db2"),
        (lambda d: d["objects"].append(7), "object 18: expected a JSON object"),
        (lambda d: d["objects"][6].pop("files"), "has no location"),
        (lambda d: d["objects"][6]["files"][0].pop("physical_name"), "a file has no location"),
        (lambda d: d["objects"][1].pop("logical_name"), "a file has no location"),
    ],
)
def test_bad_advice_names_file_and_object(mutate: Any, message: str) -> None:
    doc = advice("advice_sqlserver.json")
    mutate(doc)
    with pytest.raises(AdviceError) as err:
        select_moves(doc, source="advice.json", tiers=tiers(), dialect="tsql")
    assert "advice.json" in str(err.value) and message in str(err.value)


def test_unknown_only_key_is_an_error() -> None:
    with pytest.raises(AdviceError, match="--only nope: no object has that key"):
        select_moves(
            advice("advice_sqlserver.json"), source="a.json", tiers=tiers(), dialect="tsql", only=["nope"]
        )


def test_tier_without_location_is_an_error() -> None:
    spots = [t if t.name != "fc" else type(t)("fc") for t in tiers()]
    with pytest.raises(AdviceError, match=r"tier fc has no locations\.sqlserver_directory"):
        select_moves(advice("advice_sqlserver.json"), source="a.json", tiers=spots, dialect="tsql")


def _db2_partition(doc: dict[str, Any], key: str) -> dict[str, Any]:
    obj: dict[str, Any] = next(o for o in doc["objects"] if o["key"] == key)
    return obj


def _only(doc: dict[str, Any], key: str, dialect: str = "db2") -> Any:
    return select_moves(doc, source="d.json", tiers=tiers(), dialect=dialect, only=[key])  # type: ignore[arg-type]


def test_db2_shared_table_space_takes_the_detach_attach_route() -> None:
    sel = _only(advice("advice_db2.json"), "SALESDB/partition/SALES.ORDERS/1")
    a = sel.moves[0].action
    assert isinstance(a, MoveDataPartition)
    assert (a.route, a.tablespace, a.target_tablespace) == (
        "detach_attach",
        "TS_ORDERS_2024",
        "TS_ORDERS_2024_FC",
    )
    assert (a.range_low, a.range_high, a.low_inclusive, a.high_inclusive) == (
        "2024-01-01",
        "2024-04-01",
        True,
        False,
    )
    back = sel.moves[0].inverse().action
    assert isinstance(back, MoveDataPartition)
    assert (back.tablespace, back.target_tablespace, back.target.name) == (
        "TS_ORDERS_2024_FC",
        "TS_ORDERS_2024",
        "SG_HOT",
    )
    alone = (
        _only(advice("advice_db2_partition_alone.json"), "SALESDB/partition/SALES.ORDERS/3").moves[0].action
    )
    assert (
        isinstance(alone, MoveDataPartition)
        and alone.route == "tablespace"
        and alone.target_tablespace is None
    )


def test_db2_detach_route_needs_the_inclusive_flags_and_a_storage_group() -> None:
    doc = advice("advice_db2.json")
    del _db2_partition(doc, "SALESDB/partition/SALES.ORDERS/1")["high_inclusive"]
    sel = _only(doc, "SALESDB/partition/SALES.ORDERS/1")
    assert not sel.moves and "high_inclusive is missing" in sel.skipped[0].reason
    doc = advice("advice_db2.json")
    for o in doc["objects"]:
        o.pop("storage_group", None)
    sel = _only(doc, "SALESDB/partition/SALES.ORDERS/1")
    assert not sel.moves and "not in a storage group" in sel.skipped[0].reason


def test_schema_and_table_fields_are_used_instead_of_splitting_the_name() -> None:
    doc = advice("advice_db2.json")
    p = _db2_partition(doc, "SALESDB/partition/SALES.ORDERS/1")
    p.update(schema="SALES.EU", table="ORDERS", table_name="SALES.EU.ORDERS", name="SALES.EU.ORDERS P2024Q1")
    a = _only(doc, "SALESDB/partition/SALES.ORDERS/1").moves[0].action
    assert isinstance(a, MoveDataPartition) and (a.schema, a.table, a.partition_name) == (
        "SALES.EU",
        "ORDERS",
        "P2024Q1",
    )
    # the advice could not split the name: null fields -> refused with a note, not guessed
    p.update(schema=None, table=None)
    sel = _only(doc, "SALESDB/partition/SALES.ORDERS/1")
    assert not sel.moves and "no separate schema and table" in sel.skipped[0].reason
    # older advice without the fields: split when unambiguous
    for field in ("schema", "table"):
        p.pop(field)
    sel = _only(doc, "SALESDB/partition/SALES.ORDERS/1")
    assert not sel.moves and "cannot be split" in sel.skipped[0].reason


def test_db2_tier_suffix_is_upper_case_and_replaces_an_earlier_one_in_either_case() -> None:
    """DB2 folds ordinary identifiers to upper case: TS_X_FC can be typed unquoted in a manual
    command; "TS_X_fc" could not."""
    from migrations.advice_build import _db2_suffixed

    tiers = ["flash", "fc", "sata"]
    assert _db2_suffixed("TS_ORDERS", "fc", tiers) == "TS_ORDERS_FC"
    assert _db2_suffixed("TS_ORDERS_FC", "sata", tiers) == "TS_ORDERS_SATA"
    assert _db2_suffixed("TS_ORDERS_fc", "flash", tiers) == "TS_ORDERS_FLASH"
    long = _db2_suffixed("T" * 200, "sata", tiers)
    assert long.endswith("_SATA") and len(long.encode()) == 128
