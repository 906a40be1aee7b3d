"""Response models of the /api routes that serve advised objects, so the OpenAPI schema documents them.

The routes still build their JSON as before; FastAPI validates it against these models and writes
back only the keys the route gave (`response_model_exclude_unset`), in field order. Field order is
therefore the routes' key order, and the advice parts (decision, predicted, metrics) are the advice
document's own models (advisors.document), which keep unknown keys of older and newer rows. Numbers
are `float | int` as there, so an integer stays an integer. tests/app/test_design_api_models.py
holds the bodies to what the routes build, byte for byte.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from advisors.document import DecisionDoc, Metrics, Number, Predicted
from app.store.recommendations import Status


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvidenceUnit(_Out):
    """The placement unit a file or partition moves with, and the unit's own decision."""

    key: str | None = None
    kind: str | None = None
    name: str | None = None
    explanation: str | None = None
    decision: DecisionDoc | None = None
    recommended_tier: str | None = None


class Evidence(_Out):
    """What the last advice run decided for an object and the numbers it used, moved or not."""

    evaluated_at: str | None = None
    explanation: str | None = None
    decision: DecisionDoc | None = None
    reasons: list[str] = []
    profile: str | None = None
    rule: str | None = None
    recommended_tier: str | None = None
    predicted: Predicted | None = None
    unit: EvidenceUnit | None = None


class _ObjectId(_Out):
    object_id: int


class ObjectEvidence(Evidence, _ObjectId):
    """GET /api/objects/{id}/evidence: the object's id first, then its evidence."""


class ObjectMetrics(_Out):
    """An object's rates over a window (app.store.io_window.Metrics, as the API names them)."""

    read_iops: Number | None = None
    write_iops: Number | None = None
    avg_read_kb: Number | None = None
    avg_write_kb: Number | None = None
    avg_read_ms: Number | None = None
    avg_write_ms: Number | None = None
    heat: Number | None = None
    seconds: Number | None = None


class UnitRecommendation(_Out):
    """The placement unit's current recommendation (app.store.rec_list.RecSummary) and its page."""

    id: int
    key: str
    kind: str
    name: str
    from_tier: str | None = None
    to_tier: str
    profile: str | None = None
    rule: str | None = None
    status: str
    io_ms_per_s_now: Number | None = None
    io_ms_per_s_after: Number | None = None
    reasons: list[str] = []
    metrics: Metrics | None = None
    url: str


class ObjectDetail(_Out):
    """GET /api/objects/{id}: where the object lives, its averaged series, heat by hour of day, the
    placement unit's recommendation and the last advice run's evidence."""

    id: int
    target: str
    engine: str
    server: str
    database: str
    kind: str
    name: str
    key: str
    size_bytes: int | None = None
    physical_name: str | None = None
    storage_group: str | None = None
    filegroup: str | None = None
    tablespace: str | None = None
    table_name: str | None = None
    partition_number: int | None = None
    range_low: str | None = None
    range_high: str | None = None
    current_tier: str | None = None
    placement_unit: str
    unit_members: list[dict[str, Any]] = []  # id, kind, name of each object that moves with it
    since: str | None = None
    until: str | None = None
    bucket_seconds: int
    series: list[dict[str, Any]] = []  # t (bucket start, UTC), seconds, rates
    heat_by_hour_of_day: list[Number | None] = []
    total: ObjectMetrics
    recommendation: UnitRecommendation | None = None
    evidence: Evidence | None = None


class MoveImpact(_Out):
    """What the move costs before approval (migrations.impact.Impact): online, offline (with the
    downtime estimated from the size and the policy's copy rate), restart, or no_script."""

    kind: Literal["online", "offline", "restart", "no_script"]
    summary: str
    detail: str
    downtime_minutes: int | None = None
    copy_bytes: int | None = None
    copy_rate_mb_s: Number | None = None


class Recommendation(_Out):
    """One recommendation: the move, its figures from the advice, its review and suppression; the
    list adds what the target's figures rest on (data_end, data_note) and the verification."""

    id: int
    engine: str
    server: str
    database: str
    kind: str
    name: str
    key: str
    from_tier: str | None = None
    to_tier: str
    profile: str | None = None
    rule: str | None = None
    size_bytes: int | None = None
    io_ms_per_s_now: Number | None = None
    io_ms_per_s_after: Number | None = None
    status: Status
    reasons: list[str] = []
    metrics: Metrics | None = None
    created_at: str | None = None
    updated_at: str | None = None
    reviewed_by: str | None = None
    reviewed_at: str | None = None
    review_comment: str | None = None
    scripts_refused: str | None = None  # an approved move no safe script could be written for
    suppression: dict[str, Any] | None = None  # the suppression in force for this object
    data_end: str | None = None
    data_note: str | None = None
    verification: dict[str, Any] | None = None  # app.verify.verification_json, once executed
    impact: MoveImpact | None = None  # what the move costs: online, offline copy (downtime), restart


class RecommendationList(_Out):
    """GET /api/recommendations: the total that matched, and this page of them."""

    total: int
    items: list[Recommendation]
