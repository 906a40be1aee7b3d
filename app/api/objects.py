"""The object, heat-map, evidence and flash-curve JSON under /api: the same read-models as the pages.

The pages in app/web/objects.py and these routes share the queries, the caches and the policy in force
(app/http/objects.py, below both); only the JSON shaping lives here.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Path, Query

from app import errors
from app.api import schemas
from app.http.auth import CurrentUser, api_user
from app.http.objects import (
    DEFAULT_SORT,
    MAX_ID,
    cached_heat_map,
    curves,
    detail,
    evidence,
    object_filter,
    policy_in_force,
)
from app.http.state import AppState, app_state
from app.store.io_window import Metrics
from app.store.object_evidence import Evidence
from app.store.object_flash import curves_tier_label
from app.store.object_list import list_objects
from app.store.object_rows import SORT_KEYS, ObjectRow
from app.store.rec_list import RecSummary
from app.timefmt import iso

router = APIRouter(prefix="/api")


# --- objects of a target ---------------------------------------------------------------------------


def _metrics_json(m: Metrics) -> dict[str, Any]:
    return {
        "read_iops": m.read_iops,
        "write_iops": m.write_iops,
        "avg_read_kb": m.avg_read_kb,
        "avg_write_kb": m.avg_write_kb,
        "avg_read_ms": m.avg_read_ms,
        "avg_write_ms": m.avg_write_ms,
        "heat": m.heat,
        "seconds": m.seconds,
    }


def _rec_json(r: RecSummary | None) -> dict[str, Any] | None:
    if r is None:
        return None
    out = asdict(r)
    out["url"] = f"/recommendations/{r.id}"
    return out


def _row_json(r: ObjectRow) -> dict[str, Any]:
    return {
        "id": r.id,
        "url": f"/objects/{r.id}",
        "database": r.database,
        "kind": r.kind,
        "name": r.name,
        "key": r.key,
        "location": r.location,
        "size_bytes": r.size_bytes,
        "current_tier": r.current_tier,
        "placement_unit": r.unit_key,
        "profile": r.profile,
        "recommended_tier": r.recommended_tier,
        "recommendation_id": None if r.recommendation is None else r.recommendation.id,
        **_metrics_json(r.m),
    }


@router.get("/targets/{target_name}/objects")
def target_objects_json(
    target_name: str,
    database: str | None = None,
    kind: str | None = None,
    tier: str | None = None,
    name: str | None = None,
    sort: str = DEFAULT_SORT,
    dir: str = Query("desc", pattern="^(asc|desc)$"),
    limit: int = Query(50, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=10**9),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """The objects table as JSON: metrics over the last 24 h; same filters and sort keys as the page."""
    if sort not in SORT_KEYS:
        raise errors.Invalid(f"unknown sort key {sort[:40]!r}; use one of {', '.join(SORT_KEYS)}")
    f = object_filter(kind, tier, name, sort, dir, offset, limit, clamp=False)
    with state.store.session() as s:
        objects = list_objects(
            session=s,
            target=target_name,
            database=database,
            policy=policy_in_force(state),
            now=datetime.now(UTC),
            filters=f,
        )
    return {
        "target": objects.target,
        "database": objects.database,
        "since": iso(objects.since),
        "until": iso(objects.until),
        "sort": f.sort,
        "dir": "desc" if f.descending else "asc",
        "total": objects.total,
        "offset": objects.offset,
        "limit": objects.limit,
        "items": [_row_json(r) for r in objects.rows],
    }


@router.get("/objects/{object_id}", response_model=schemas.ObjectDetail, response_model_exclude_unset=True)
def object_json(
    object_id: int = Path(ge=1, le=MAX_ID),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """Metadata, the averaged series (at most 300 buckets of `bucket_seconds`, by interval end),
    heat by hour of day and the placement unit's current recommendation."""
    d = detail(state, object_id)
    meta = {
        k: getattr(d, k)
        for k in (
            "id",
            "target",
            "engine",
            "server",
            "database",
            "kind",
            "name",
            "key",
            "size_bytes",
            "physical_name",
            "storage_group",
            "filegroup",
            "tablespace",
            "table_name",
            "partition_number",
            "range_low",
            "range_high",
            "current_tier",
        )
    }
    return {
        **meta,
        "placement_unit": d.unit_key,
        "unit_members": [asdict(m) for m in d.unit_members],
        "since": iso(d.since),
        "until": iso(d.until),
        "bucket_seconds": d.bucket_seconds,
        "series": [{**asdict(p), "t": iso(p.t)} for p in d.series],
        "heat_by_hour_of_day": d.heat_by_hour,
        "total": _metrics_json(d.total),
        "recommendation": _rec_json(d.recommendation),
        "evidence": evidence_json(evidence(state, object_id)),
    }


@router.get("/heatmap")
def heatmap_json(
    target: str | None = None, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    m = cached_heat_map(state, target)
    sv = m.savings
    return {
        "target": m.target,
        "since": iso(m.since),
        "until": iso(m.until),
        "unit": "I/O per GB-hour",
        "hours": [iso(h) for h in m.hours],
        # each target's week ends at its newest sample: targets whose weeks start at the same hour
        # share a window; a row's cells follow `hours`, None outside its window
        "windows": [
            {
                "targets": w.targets,
                "since": iso(w.since),
                "until": iso(w.until),
                "data_end": iso(w.data_end),
                "old": w.old,
                "hours": [iso(h) for h in w.hours],
            }
            for w in m.windows
        ],
        "rows": [{**asdict(r), "url": f"/objects/{r.id}"} for r in m.rows],
        "objects": m.objects,
        "skew": [asdict(p) for p in m.skew],
        "knee": None if m.knee is None else asdict(m.knee),
        "ranked_at": iso(m.ranked_at),
        "capacity_share_for_80pct_io": m.capacity_for_80,
        "savings": {**asdict(sv), "net_ms_per_s": sv.net_ms_per_s},
    }


def evidence_json(e: Evidence | None) -> dict[str, Any] | None:
    if e is None:
        return None
    src = e.advice or e.unit or {}
    return {
        "evaluated_at": iso(e.evaluated_at),
        "explanation": e.explanation,
        "decision": e.decision,
        "reasons": src.get("reasons", []),
        "profile": src.get("profile"),
        "rule": src.get("rule"),
        "recommended_tier": src.get("recommended_tier"),
        "predicted": src.get("predicted"),
        "unit": None
        if e.unit is None
        else {
            k: e.unit.get(k) for k in ("key", "kind", "name", "explanation", "decision", "recommended_tier")
        },
    }


@router.get(
    "/objects/{object_id}/evidence", response_model=schemas.ObjectEvidence, response_model_exclude_unset=True
)
def object_evidence_json(
    object_id: int = Path(ge=1, le=MAX_ID),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """What the last advice run decided for this object and the numbers it used, moved or not;
    a file or partition that moves with its filegroup / table space also gets the unit's."""
    e = evidence(state, object_id)
    if e is None:
        raise errors.NotFound(f"object #{object_id} has no evidence yet: the advice has not covered it")
    return {"object_id": object_id, **(evidence_json(e) or {})}


@router.get("/targets/{target}/flash-curve")
def flash_curve_json(
    target: str, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    """How much flash each database of a target could use: [flash GB, share of I/O wait saved]
    points and the recommended placement's predicted savings, from the last advice run. With
    storage pools each database's curve counts GB of its own pool's fastest tier (its `flash_tier`);
    the top-level `flash_tier` names them all ("flash / nvme")."""
    policy = policy_in_force(state)
    found = curves(state, target)
    return {
        "target": found[0].target if found else target,
        "evaluated_at": iso(found[0].evaluated_at) if found else None,
        "flash_tier": curves_tier_label(policy, found),
        "databases": [{**c.curve, "flash_tier": c.flash_tier(policy)} for c in found],
    }
