"""The object vocabulary has one owner (connectors.records: ObjectRef's location fields and
CORE_COUNTERS); every other place that names them is derived from it or checked here, so a field
added to ObjectRef and forgotten elsewhere (or renamed in one place) fails this test."""

from __future__ import annotations

import types
from dataclasses import fields
from typing import Any, get_type_hints

import pytest

from advisors.document import AdvisedObject
from advisors.features import ObjectInfo
from app import verify
from app.store import ingest, io_window
from app.store.models import COUNTER_COLUMNS, DbObject, IoInterval, Sample
from connectors import sqlserver
from connectors.records import CORE_COUNTERS, LOCATION_FIELDS, ObjectRef

REF_TYPES = get_type_hints(ObjectRef)


def _order(names: list[str]) -> list[str]:
    return [n for n in names if n in LOCATION_FIELDS]


def test_the_owner_lists_where_an_object_lives() -> None:
    assert LOCATION_FIELDS[:2] == ("physical_name", "logical_name")
    assert {"filegroup", "storage_group", "tablespace", "table_name", "schema_name", "partition_number",
            "range_low", "range_high", "range_right", "low_inclusive", "high_inclusive"} <= set(LOCATION_FIELDS)  # fmt: skip
    assert not {"engine", "server", "database", "kind", "key", "name", "size_bytes"} & set(LOCATION_FIELDS)
    assert len(set(LOCATION_FIELDS)) == len(LOCATION_FIELDS)


def test_derived_lists_are_the_owner() -> None:
    assert set(LOCATION_FIELDS) <= set(ingest._LOCATION_FIELDS)
    assert set(ingest.PLACEMENT_FIELDS) <= set(LOCATION_FIELDS)


def test_object_info_repeats_the_owner_with_the_same_types_in_order() -> None:
    info = {f.name: f for f in fields(ObjectInfo)}
    hints = get_type_hints(ObjectInfo)
    for name in LOCATION_FIELDS:
        assert name in info, f"advisors.features.ObjectInfo lacks {name}"
        assert hints[name] == REF_TYPES[name], name
        assert info[name].default is None, name
    assert _order([f.name for f in fields(ObjectInfo)]) == list(LOCATION_FIELDS)


def test_advised_object_repeats_the_owner_with_the_same_types_in_order() -> None:
    """The document's field order is the stored JSON's key order, so it must be the owner's."""
    model = AdvisedObject.model_fields
    for name in LOCATION_FIELDS:
        assert name in model, f"advisors.document.AdvisedObject lacks {name}"
        assert model[name].annotation == REF_TYPES[name], name
        assert not model[name].is_required(), name
    assert _order(list(model)) == list(LOCATION_FIELDS)


def _python_type(hint: Any) -> type:
    args = [a for a in getattr(hint, "__args__", (hint,)) if a is not type(None)]
    assert isinstance(hint, types.UnionType) and len(args) == 1, hint
    return args[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", [*LOCATION_FIELDS, "name", "size_bytes", "rows"])
def test_every_copied_field_is_a_nullable_object_column_of_the_same_type(name: str) -> None:
    """What ingest copies from an ObjectRef onto the store's object row (name and size are set
    when an object is first seen; the location and rows follow the newest sample)."""
    column = DbObject.__table__.c.get(name)
    assert column is not None, f"app.store.models.DbObject has no column {name}"
    hint = REF_TYPES[name]
    expected = hint if isinstance(hint, type) else _python_type(hint)
    assert column.type.python_type is expected, name
    assert column.nullable == (not isinstance(hint, type)), name
    assert name in ingest._LOCATION_FIELDS


def test_counter_names_agree_everywhere() -> None:
    """One list of engine-neutral counters. The copies below are in modules this refactor did not
    own yet; each should become `= CORE_COUNTERS` (see issue #18 item 1)."""
    assert COUNTER_COLUMNS == CORE_COUNTERS
    assert ("seconds", *CORE_COUNTERS) == io_window.SUM_COLUMNS
    assert ("seconds", *CORE_COUNTERS) == verify._FIELDS
    assert tuple(sqlserver.NO_COUNTERS) == CORE_COUNTERS
    for table in (Sample, IoInterval):
        for c in CORE_COUNTERS:
            assert c in table.__table__.c, f"{table.__name__} has no column {c}"
