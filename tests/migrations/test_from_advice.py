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
    assert [m.key for m in sel.moves] == [
        "Sales/file/2",
        "Sales/filegroup/FG_ORDERS_2024",
        "Sales/filegroup/PRIMARY",
        "tempdb/data",
        "tempdb/file/2",
    ]
    modes = {m.key: m.action.mode for m in sel.moves if isinstance(m.action, MoveFiles)}
    assert modes == {
        "Sales/file/2": "offline",
        "Sales/filegroup/FG_ORDERS_2024": "online",
        "Sales/filegroup/PRIMARY": "offline",
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


def test_db2_unsupported_kinds_are_notes() -> None:
    sel = select_moves(
        advice("advice_db2.json"),
        source="d.json",
        tiers=tiers(),
        dialect="db2",
        only=["SALESDB/tablespace/TEMPSPACE1", "SALESDB/log"],
    )
    assert sel.moves == ()
    assert ["temporary table space" in s.reason or "NEWLOGPATH" in s.reason for s in sel.skipped] == [
        True,
        True,
    ]
    assert all(s.reason.startswith("unsupported here: review") for s in sel.skipped)


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
