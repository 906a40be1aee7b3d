"""The advice document: one typed model of an advised object, as the advice JSON carries it.

`app.advice` builds an `AdvisedObject` per advised object from the advisors' `Advice`; its
`as_json()` is what is stored (Recommendation.evidence, AdviceSnapshot.objects) and what
`tierwise advise` prints; the script generators (migrations/) and the API read it back with
`AdvisedObject.model_validate`.

The stored JSON is the contract, so the model reproduces it exactly: a key is written only when
it was given (`exclude_unset`), which keeps the location fields that are None out of the
document, and `schema`/`table` only on objects with a table, as the advice JSON always had them.
Rows written by older versions still read: everything but the identity, the tiers and the
placement unit has a default, and keys the model does not know are kept (`extra="allow"`).

Numbers are `float | int` so an integer stays an integer on the way through (pydantic would turn
1 into 1.0 for a `float`, which changes the stored text).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Number = float | int


class _Part(BaseModel):
    """A nested part of the document: unknown keys kept, so older and newer rows round-trip."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Metrics(_Part):
    """The object's figures over the window (advisors.features.Features, rounded)."""

    read_iops: Number | None = None
    write_iops: Number | None = None
    avg_read_bytes: Number | None = None
    avg_write_bytes: Number | None = None
    avg_read_ms: Number | None = None
    avg_write_ms: Number | None = None
    read_pct: Number | None = None
    read_miss_ratio: Number | None = None
    heat: Number | None = None
    heat_ratio: Number | None = None
    prefetch_share: Number | None = None
    singleton_share: Number | None = None
    est_cache_hit_share: Number | None = None
    trend_pct_per_day: Number | None = None
    instance_read_miss_ratio: Number | None = None
    read_mb_s: Number | None = None
    write_mb_s: Number | None = None
    hours: Number | None = None
    io_per_s_by_hour_of_day: list[Number] = []


class Predicted(_Part):
    """I/O wait per second where the object is now, and predicted on the recommended tier."""

    io_ms_per_s_now: Number | None = None
    io_ms_per_s_after: Number | None = None


class MaintenanceSlice(_Part):
    """I/O of one maintenance source left out of the object's heat."""

    name: str
    kind: str
    hours: Number | None = None
    reads: int = 0
    writes: int = 0
    bytes_read: int = 0
    avg_read_bytes: Number | None = None
    requests: Number | None = None


class Maintenance(_Part):
    """What was left out of the object's figures as maintenance."""

    io_share: Number | None = None
    read_share: Number | None = None
    hours: Number | None = None
    note: str | None = None
    slices: list[MaintenanceSlice] = []


class Period(_Part):
    """The object in the latest occurrence of a declared business period."""

    name: str
    kind: str
    occurrence: str
    hot: bool
    ratio: Number | None = None
    hot_min_ratio: Number | None = None
    hours: Number | None = None
    read_iops: Number | None = None
    write_iops: Number | None = None
    heat: Number | None = None
    io_rate: Number | None = None


class MemberFile(_Part):
    """A member file of a filegroup or tempdb (the scripts move each)."""

    key: str
    file_id: int | None = None
    logical_name: str | None = None
    physical_name: str | None = None
    size_bytes: int | None = None
    current_tier: str | None = None


class PredictedWait(_Part):
    """I/O wait on one tier (advisors.explain.TierPrediction): measured on the current tier, the
    tier's service times elsewhere."""

    tier: str
    read_ms: Number | None = None
    write_ms: Number | None = None
    io_ms_per_s: Number | None = None  # reads/s x read ms + writes/s x write ms
    measured: bool


class DecisionDoc(_Part):
    """Why the object is recommended where it is: the binding reason and the numbers it used.

    advisors.explain.Decision.as_json writes it, every key always (its form has not changed since
    decisions were first stored, so every stored decision has them all); `stage` is one of
    advisors.explain.STAGES. `numbers` keeps its keys in the order written, which differs by stage."""

    stage: str
    rule: str
    moved: bool
    current_tier: str | None = None
    preferred_tier: str  # where the rule alone would put it
    recommended_tier: str
    allowed_tiers: list[str] = []  # what the rules and pins allow, fastest first
    detail: str = ""
    unit: str | None = None  # the placement unit's key, for a partition that moves with it
    numbers: dict[str, Number | None] = {}
    predicted: list[PredictedWait] = []


class AdvisedObject(_Part):
    """One advised object: who it is, the verdict, the figures behind it and where it lives.

    Field order is the JSON's key order. The location fields are the object vocabulary
    (connectors.records.LOCATION_FIELDS, which advisors may not import; tests/advisors/
    test_vocabulary.py holds this list to it) and are present only when known."""

    engine: str
    server: str
    database: str
    kind: str
    name: str
    key: str
    size_bytes: int | None = None
    profile: str | None = None
    rule: str | None = None
    current_tier: str | None = None
    recommended_tier: str
    placement_unit: str
    pool: str | None = None
    metrics: Metrics | None = None
    predicted: Predicted | None = None
    reasons: list[str] = []
    maintenance: Maintenance | None = None
    period: Period | None = None
    decision: DecisionDoc | None = None
    explanation: str | None = None
    # where it lives (the object vocabulary)
    physical_name: str | None = None
    logical_name: str | None = None
    file_id: int | None = None
    filegroup: str | None = None
    storage_group: str | None = None
    tablespace: str | None = None
    table_name: str | None = None
    schema_name: str | None = None
    partition_number: int | None = None
    partition_scheme: str | None = None
    partition_function: str | None = None
    range_low: str | None = None
    range_high: str | None = None
    range_right: bool | None = None
    low_inclusive: bool | None = None
    high_inclusive: bool | None = None
    files: list[MemberFile] = []
    # a partition's table, split so script generators need not split table_name (split_table)
    # ("schema" in the JSON: the name would shadow BaseModel.schema)
    table_schema: str | None = Field(default=None, alias="schema")
    table: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The stored and printed form: only the keys that were given, in field order."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


def split_table(table_name: str | None, schema_name: str | None) -> tuple[str | None, str | None] | None:
    """`(schema, table)` of a partition's table, or None when the object names no table.

    The collectors give the schema on its own (`schema_name`), which makes the split exact even
    when a name contains "."; for objects collected before that, `table_name` is split when
    unambiguous, else both are None (the scripts then refuse the move with a note)."""
    if table_name is None:
        return None
    if schema_name and table_name.startswith(schema_name + "."):
        table = table_name[len(schema_name) + 1 :]
        return (schema_name, table) if table else (None, None)
    parts = table_name.split(".")
    return (parts[0], parts[1]) if len(parts) == 2 and all(parts) else (None, None)
