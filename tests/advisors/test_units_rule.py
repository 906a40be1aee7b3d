"""The one placement-unit rule (advisors.units.unit_key) for every kind the store holds, on both
engines: what moves with what, what is its own unit, and how verification sees held objects."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from advisors.features import ObjectInfo, ObjectWindow, Usage
from advisors.units import build_units, unit_key


def info(engine: str, kind: str, key: str, **more: str) -> ObjectInfo:
    database = "tempdb" if kind == "tempdb" else ("SALESDB" if engine == "db2" else "Sales")
    return ObjectInfo(key=key, engine=engine, server="S1", database=database, kind=kind, name=key, **more)  # type: ignore[arg-type]


CASES = [
    # SQL Server: a filegroup's files and partitions move with the filegroup
    (info("sqlserver", "data_file", "Sales/file/3", filegroup="FG_HOT"), "Sales/filegroup/FG_HOT"),
    (info("sqlserver", "partition", "Sales/partition/1", filegroup="FG_HOT"), "Sales/filegroup/FG_HOT"),
    (info("sqlserver", "tempdb", "tempdb/file/1"), "tempdb/data"),
    (info("sqlserver", "log_file", "Sales/file/2"), None),
    (info("sqlserver", "data_file", "Sales/file/9"), None),  # no filegroup known: its own unit
    (info("sqlserver", "instance", "instance/buffer_manager"), None),
    # DB2: partitions and containers move with their table space
    (info("db2", "partition", "SALESDB/partition/T/1", tablespace="TS_HOT"), "SALESDB/tablespace/TS_HOT"),
    (
        info("db2", "container", "SALESDB/container/TS_HOT/c0", tablespace="TS_HOT"),
        "SALESDB/tablespace/TS_HOT",
    ),
    (info("db2", "tablespace", "SALESDB/tablespace/TS_HOT", tablespace="TS_HOT"), None),
    (info("db2", "log_file", "SALESDB/log"), None),
    (info("db2", "buffer_pool", "SALESDB/bufferpool/BP1"), None),
    (info("db2", "container", "SALESDB/container/?/c1"), None),  # table space unknown: its own unit
]


@pytest.mark.parametrize(("obj", "unit"), CASES, ids=[f"{o.engine}-{o.kind}-{o.key}" for o, _ in CASES])
def test_each_kind_moves_with_its_unit(obj: ObjectInfo, unit: str | None) -> None:
    assert unit_key(obj) == unit


def test_a_table_space_container_joins_the_key_of_the_table_space_itself() -> None:
    ts = info("db2", "tablespace", "SALESDB/tablespace/TS_HOT", tablespace="TS_HOT")
    container = info("db2", "container", "SALESDB/container/TS_HOT/c0", tablespace="TS_HOT")
    assert unit_key(container) == ts.key  # the container's unit is the stored table space object


@pytest.mark.parametrize(
    "obj",
    [
        info("sqlserver", "partition", "Sales/partition/1", filegroup="FG_HOT"),
        info("db2", "partition", "SALESDB/partition/T/1", tablespace="TS_HOT"),
        info("db2", "container", "SALESDB/container/TS_HOT/c0", tablespace="TS_HOT"),
    ],
    ids=["sqlserver-partition", "db2-partition", "db2-container"],
)
def test_held_objects_are_their_own_unit_when_verified(obj: ObjectInfo) -> None:
    assert unit_key(obj) is not None
    assert unit_key(obj, held_alone=True) is None


def test_held_alone_leaves_files_in_their_unit() -> None:
    f = info("sqlserver", "data_file", "Sales/file/3", filegroup="FG_HOT")
    assert unit_key(f, held_alone=True) == "Sales/filegroup/FG_HOT"
    assert unit_key(info("sqlserver", "tempdb", "tempdb/file/1"), held_alone=True) == "tempdb/data"


def _window(i: ObjectInfo, reads: int | None) -> ObjectWindow:
    counters = {"reads": reads, "writes": None if reads is None else 0}
    t = datetime(2026, 11, 1, tzinfo=UTC)
    return ObjectWindow(i, Usage(3600.0, counters), ((t, Usage(3600.0, counters)),))


def test_build_units_never_places_a_container() -> None:
    """Containers are context, not storage to place: the table space is the unit, alone."""
    ts = info("db2", "tablespace", "SALESDB/tablespace/TS_HOT", tablespace="TS_HOT")
    container = info("db2", "container", "SALESDB/container/TS_HOT/c0", tablespace="TS_HOT")
    units, member_of = build_units([_window(ts, 100), _window(container, None)])
    assert [u.info.key for u in units] == [ts.key]
    assert member_of == {"S1|SALESDB/tablespace/TS_HOT": "S1|SALESDB/tablespace/TS_HOT"}
