"""Object pages: a target's (or database's) objects, one object's I/O over time, the fleet heat map.

Each page has a JSON twin under /api with the same filters. The template context of each page is
one dataclass (DatabasePage, ObjectPage, HeatmapPage) passed as `page`; the charts are SVG strings
rendered here by app.web.charts, already escaped.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path as FilePath
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, status
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlalchemy import bindparam, select, text
from sqlalchemy.orm import Session

from app.store.models import AdviceSnapshot, DbObject, Target
from app.store.policies import current_policy_text
from app.store.queries import (
    PAGE_SIZE,
    SORT_KEYS,
    HeatMap,
    IoTotals,
    Metrics,
    NotFound,
    ObjectDetail,
    ObjectFilter,
    ObjectList,
    ObjectRow,
    RecSummary,
    heat_map,
    io_totals,
    list_objects,
    object_detail,
    unit_key_of,
    window_start,
)
from app.store.targets import find_target
from app.web.auth import CurrentUser, api_user, csrf_token, page_user
from app.web.charts import (
    PALETTE,
    READ,
    WRITE,
    CurveLine,
    GridRow,
    Series,
    bar_chart,
    curve_chart,
    flash_chart,
    fmt_num,
    heat_grid,
    line_chart,
)
from app.web.state import AppState, app_state
from policies.loader import parse_policy
from policies.model import Policy

templates = Jinja2Templates(directory=str(FilePath(__file__).parent / "templates"))
router = APIRouter()

DEFAULT_SORT = "heat"
HEATMAP_DAYS = 7
MAX_ID = 2**31 - 1  # object ids are INTEGER columns


def _bytes(n: float | None) -> str:
    if n is None:
        return "–"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n = n / 1024
    return str(n)


def _fixed(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def _when(t: datetime | None) -> str:
    return "never" if t is None else t.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _num(v: float | None) -> str:
    """fmt_num for tables, where a trickle reads better as "<0.01" than as 0.00098."""
    return "<0.01" if v is not None and 0 < abs(v) < 0.01 else fmt_num(v)


templates.env.filters.update(
    bytes=_bytes, fixed=_fixed, num=_num, when=_when, path=lambda s: quote(str(s), safe="")
)

_policies: dict[str, Policy] = {}


def _policy(state: AppState) -> Policy:
    """The policy in force (the newest stored version, as the advice uses), parsed once per text."""
    with state.store.session() as s:
        text, source = current_policy_text(s, state.settings.policy_file)
    policy = _policies.get(text)
    if policy is None:
        _policies.clear()
        policy = _policies[text] = parse_policy(text, source=source)
    return policy


def _render(request: Request, name: str, user: CurrentUser, **context: Any) -> HTMLResponse:
    state = app_state(request)
    return templates.TemplateResponse(
        request,
        name,
        {"user": user, "csrf": csrf_token(request), "demo": state.settings.demo, **context},
    )


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat()


def _target_url(target_id: int, database: str | None = None) -> str:
    """Targets are addressed by id: a name may hold "/" (every DB2 import is host/instance)."""
    url = f"/targets/{target_id}"
    return url if database is None else f"{url}/{quote(database, safe='')}"


# --- target / database ---------------------------------------------------------------------------


@dataclass
class DatabasePage:
    """Context of database.html."""

    objects: ObjectList
    filters: ObjectFilter
    tiers: list[str]  # the policy's tiers, fastest first
    base_url: str
    query: dict[str, str]  # the current filters and sort, for links
    note: str | None  # e.g. an ignored sort key

    def url(self, **changes: str | int | None) -> str:
        q = {k: v for k, v in {**self.query, **changes}.items() if v not in (None, "")}
        return self.base_url + ("?" + urlencode(q) if q else "")

    def sort_url(self, key: str) -> str:
        same = self.filters.sort == key
        descending = not self.filters.descending if same else key not in ("name", "database", "kind", "tier")
        return self.url(sort=key, dir="desc" if descending else "asc", page=None)

    def sort_mark(self, key: str) -> str:
        if self.filters.sort != key:
            return ""
        return " ↓" if self.filters.descending else " ↑"

    def aria_sort(self, key: str) -> str:
        if self.filters.sort != key:
            return "none"
        return "descending" if self.filters.descending else "ascending"


def _filters(
    kind: str | None,
    tier: str | None,
    name: str | None,
    sort: str,
    direction: str | None,
    offset: int,
    limit: int,
    *,
    clamp: bool,
) -> ObjectFilter:
    return ObjectFilter(
        kind=kind or None,
        tier=tier or None,
        name=(name or "").strip() or None,
        sort=sort,
        descending=direction != "asc",
        offset=offset,
        limit=limit,
        clamp=clamp,
    )


def _objects_page(
    request: Request,
    user: CurrentUser,
    state: AppState,
    target: str,
    database: str | None,
    kind: str | None,
    tier: str | None,
    name: str | None,
    sort: str | None,
    direction: str | None,
    page: int,
) -> HTMLResponse:
    note = None
    if sort and sort not in SORT_KEYS:
        note = f"Unknown sort key {sort[:40]!r} ignored: sorted by {DEFAULT_SORT}."
        sort, direction = None, None
    f = _filters(
        kind,
        tier,
        name,
        sort or DEFAULT_SORT,
        direction,
        (max(page, 1) - 1) * PAGE_SIZE,
        PAGE_SIZE,
        clamp=True,
    )
    policy = _policy(state)
    try:
        with state.store.session() as s:
            objects = list_objects(
                session=s, target=target, database=database, policy=policy, now=datetime.now(UTC), filters=f
            )
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    query = {"kind": f.kind, "tier": f.tier, "name": f.name}
    if sort:
        query |= {"sort": f.sort, "dir": "desc" if f.descending else "asc"}
    ctx = DatabasePage(
        objects=objects,
        filters=f,
        tiers=[t.name for t in policy.tiers],
        base_url=_target_url(objects.target_id, database),
        query={k: v for k, v in query.items() if v},
        note=note,
    )
    return _render(request, "database.html", user, active="fleet", page=ctx)


@router.get("/targets/{target_name}", response_class=HTMLResponse)
def target_page(
    request: Request,
    target_name: str,
    kind: str | None = None,
    tier: str | None = None,
    name: str | None = None,
    sort: str | None = None,
    dir: str | None = None,
    page: int = Query(1, ge=1, le=10**6),
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    """All databases of a target: their objects with the last 24 h of I/O."""
    return _objects_page(request, user, state, target_name, None, kind, tier, name, sort, dir, page)


@router.get("/targets/{target_name}/{database:path}", response_class=HTMLResponse)
def database_page(
    request: Request,
    target_name: str,
    database: str,
    kind: str | None = None,
    tier: str | None = None,
    name: str | None = None,
    sort: str | None = None,
    dir: str | None = None,
    page: int = Query(1, ge=1, le=10**6),
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    """One database of a target."""
    return _objects_page(request, user, state, target_name, database, kind, tier, name, sort, dir, page)


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


@router.get("/api/targets/{target_name}/objects")
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
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"unknown sort key {sort[:40]!r}; use one of {', '.join(SORT_KEYS)}",
        )
    f = _filters(kind, tier, name, sort, dir, offset, limit, clamp=False)
    try:
        with state.store.session() as s:
            objects = list_objects(
                session=s,
                target=target_name,
                database=database,
                policy=_policy(state),
                now=datetime.now(UTC),
                filters=f,
            )
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    return {
        "target": objects.target,
        "database": objects.database,
        "since": _iso(objects.since),
        "until": _iso(objects.until),
        "sort": f.sort,
        "dir": "desc" if f.descending else "asc",
        "total": objects.total,
        "offset": objects.offset,
        "limit": objects.limit,
        "items": [_row_json(r) for r in objects.rows],
    }


# --- object --------------------------------------------------------------------------------------


@dataclass
class ObjectPage:
    """Context of object.html."""

    obj: ObjectDetail
    iops_chart: Markup
    latency_chart: Markup
    size_chart: Markup
    hours_chart: Markup
    target_url: str
    database_url: str
    bucket: str  # the width of one point, e.g. "15 min"
    evidence: Evidence | None = None  # the last advice run's decision, moved or not


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400} d"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} s"


def _series_charts(d: ObjectDetail) -> tuple[Markup, Markup, Markup]:
    typical = statistics.median([p.seconds for p in d.series]) if d.series else 0.0
    gap = 1.5 * max(d.bucket_seconds, typical)

    def pts(get: Callable[[Any], float | None]) -> list[tuple[float, float | None]]:
        return [(p.t.timestamp(), get(p)) for p in d.series]

    per = "per " + _duration(d.bucket_seconds)
    iops = line_chart(
        [
            Series("read IOPS", pts(lambda p: p.read_iops), READ),
            Series("write IOPS", pts(lambda p: p.write_iops), WRITE),
        ],
        title=f"{d.name}: read and write IOPS ({per})",
        unit="IOPS",
        gap=gap,
    )
    latency = line_chart(
        [
            Series("read ms", pts(lambda p: p.avg_read_ms), READ),
            Series("write ms", pts(lambda p: p.avg_write_ms), WRITE),
        ],
        title=f"{d.name}: average read and write latency ({per})",
        unit="ms",
        gap=gap,
    )
    size = line_chart(
        [
            Series("avg read KB", pts(lambda p: p.avg_read_kb), READ),
            Series("avg write KB", pts(lambda p: p.avg_write_kb), WRITE),
        ],
        title=f"{d.name}: average I/O size ({per})",
        unit="KB",
        gap=gap,
    )
    return iops, latency, size


@router.get("/objects/{object_id}", response_class=HTMLResponse)
def object_page(
    request: Request,
    object_id: int = Path(ge=1, le=MAX_ID),
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    """One object: 7 days of IOPS, latency and I/O size, heat by hour of day, its recommendation."""
    d = _detail(state, object_id)
    iops, latency, size = _series_charts(d)
    hours = bar_chart(
        [f"{h:02d}" for h in range(24)],
        d.heat_by_hour,
        title=f"{d.name}: heat by hour of day (UTC)",
        unit="I/O per GB-hour",
    )
    ctx = ObjectPage(
        d,
        iops,
        latency,
        size,
        hours,
        _target_url(d.target_id),
        _target_url(d.target_id, d.database),
        _duration(d.bucket_seconds),
        object_evidence(state, object_id),
    )
    return _render(request, "object.html", user, active="fleet", page=ctx)


def _detail(state: AppState, object_id: int) -> ObjectDetail:
    try:
        with state.store.session() as s:
            return object_detail(session=s, object_id=object_id, policy=_policy(state), now=datetime.now(UTC))
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


@router.get("/api/objects/{object_id}")
def object_json(
    object_id: int = Path(ge=1, le=MAX_ID),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """Metadata, the averaged series (at most 300 buckets of `bucket_seconds`, by interval end),
    heat by hour of day and the placement unit's current recommendation."""
    d = _detail(state, object_id)
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
        "since": _iso(d.since),
        "until": _iso(d.until),
        "bucket_seconds": d.bucket_seconds,
        "series": [{**asdict(p), "t": _iso(p.t)} for p in d.series],
        "heat_by_hour_of_day": d.heat_by_hour,
        "total": _metrics_json(d.total),
        "recommendation": _rec_json(d.recommendation),
        "evidence": evidence_json(object_evidence(state, object_id)),
    }


# --- heat map ------------------------------------------------------------------------------------


@dataclass
class HeatmapPage:
    """Context of heatmap.html."""

    map: HeatMap
    grid: Markup
    skew_chart: Markup
    flash_chart: Markup | None = None
    flash: list[DatabaseFlash] | None = None  # the stored curves, most I/O wait first
    flash_tier: str = "flash"


class TotalsCache:
    """Recent io_totals per (store, target, window): the heat map's ranking and skew read every
    object's week, which takes seconds on a big SQLite fleet; they may lag `max_age_s` behind,
    the hour cells and the savings never do."""

    def __init__(self, max_age_s: float = 300.0, size: int = 64) -> None:
        self.max_age_s, self.size = max_age_s, size
        self._items: dict[tuple[str, str, datetime], tuple[float, IoTotals]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, datetime]) -> IoTotals | None:
        with self._lock:
            hit = self._items.get(key)
        return hit[1] if hit is not None and time.monotonic() - hit[0] <= self.max_age_s else None

    def put(self, key: tuple[str, str, datetime], value: IoTotals) -> None:
        with self._lock:
            if len(self._items) >= self.size:
                self._items.pop(min(self._items, key=lambda k: self._items[k][0]))
            self._items[key] = (time.monotonic(), value)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


heatmap_totals = TotalsCache()


def _heatmap(state: AppState, target: str | None) -> HeatMap:
    now = datetime.now(UTC)
    key = (state.store.url, target or "", window_start(now, 24 * HEATMAP_DAYS))
    try:
        with state.store.session() as s:
            totals = heatmap_totals.get(key)
            if totals is None:
                totals = io_totals(session=s, target=target or None, now=now, days=HEATMAP_DAYS)
                heatmap_totals.put(key, totals)
            return heat_map(
                session=s,
                target=target or None,
                policy=_policy(state),
                now=now,
                days=HEATMAP_DAYS,
                totals=totals,
            )
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


@router.get("/heatmap", response_class=HTMLResponse)
def heatmap_page(
    request: Request,
    target: str | None = None,
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    """Hourly heat of the 40 busiest objects over 7 days, the skew curve, the predicted savings."""
    m = _heatmap(state, target)
    rows = []
    for r in m.rows:
        peak = max((v for v in r.cells if v is not None), default=None)
        rows.append(
            GridRow(
                label=r.name,
                context=r.database if m.target else f"{r.database} · {r.target}",
                href=f"/objects/{r.id}",
                cells=r.cells,
                tip=f"{r.target} · {r.database} · {r.kind} {r.name}: {fmt_num(r.heat)} I/O per GB-hour "
                f"over the window, peak hour {fmt_num(peak)}",
            )
        )
    grid = heat_grid(rows, m.hours, title="Heat by hour: the busiest objects", unit="I/O per GB-hour")
    marker = None
    if m.knee is not None:
        marker = (
            m.knee.capacity_share,
            m.knee.io_share,
            f"{m.knee.capacity_share:.0%} of capacity → {m.knee.io_share:.0%} of I/O",
        )
    skew = curve_chart(
        [(p.capacity_share, p.io_share) for p in m.skew],
        title="Skew: share of I/O against share of capacity, hottest objects first",
        x_label="share of capacity",
        y_label="share of I/O",
        marker=marker,
    )
    tier = _policy(state).tiers[0].name
    flash = sorted(
        flash_curves(state, target),
        key=lambda c: -float((c.curve.get("savings") or {}).get("io_ms_per_s_now") or 0.0),
    )
    lines = [
        CurveLine(
            c.curve.get("database", "") if target else f"{c.curve.get('database', '')} · {c.target}",
            [(float(p[0]), float(p[1])) for p in c.curve.get("points", [])],
            (c.curve.get("savings") or {}).get("flash_gb_recommended"),
        )
        for c in flash[: len(PALETTE)]
        if len(c.curve.get("points", [])) > 1
    ]
    chart = flash_chart(
        lines, title=f"How much {tier}: share of I/O wait saved against GB of {tier}", flash_tier=tier
    )
    page = HeatmapPage(m, grid, skew, chart, flash, tier)
    return _render(request, "heatmap.html", user, active="heatmap", page=page)


@router.get("/api/heatmap")
def heatmap_json(
    target: str | None = None, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    m = _heatmap(state, target)
    sv = m.savings
    return {
        "target": m.target,
        "since": _iso(m.since),
        "until": _iso(m.until),
        "unit": "I/O per GB-hour",
        "hours": [_iso(h) for h in m.hours],
        "rows": [{**asdict(r), "url": f"/objects/{r.id}"} for r in m.rows],
        "objects": m.objects,
        "skew": [asdict(p) for p in m.skew],
        "knee": None if m.knee is None else asdict(m.knee),
        "ranked_at": _iso(m.ranked_at),
        "capacity_share_for_80pct_io": m.capacity_for_80,
        "savings": {**asdict(sv), "net_ms_per_s": sv.net_ms_per_s},
    }


# --- evidence (every object, moved or not) and the flash curve, from the last advice run ----------


@dataclass(frozen=True)
class Snapshot:
    """Some objects of a target's last advice run (AdviceSnapshot), by (server, key)."""

    target_id: int
    evaluated_at: datetime
    objects: dict[tuple[str, str], dict[str, Any]]


class SnapshotCache:
    """Objects of the last advice run by (store, target, evaluated_at, keys); a new run of a
    target replaces its entries."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: dict[tuple[Any, ...], Snapshot] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Snapshot | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: tuple[Any, ...], value: Snapshot) -> None:
        with self._lock:
            for old in [k for k in self._items if k[:2] == key[:2] and k[2] != key[2]]:
                del self._items[old]  # an older run of the same target
            if len(self._items) >= self.size:
                self._items.pop(next(iter(self._items)))
            self._items[key] = value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


snapshots = SnapshotCache()

# The objects JSON of a big target is megabytes: the database picks out the wanted elements
# (measured on 10,000 objects, PostgreSQL: ~170 ms against ~600 ms to read and parse it all).
_ELEMENTS = {
    "postgresql": "SELECT e AS doc FROM advice_snapshot, json_array_elements(advice_snapshot.objects) AS e "
    "WHERE advice_snapshot.target_id = :target AND e->>'key' IN :keys",
    "sqlite": "SELECT j.value AS doc FROM advice_snapshot, json_each(advice_snapshot.objects) AS j "
    "WHERE advice_snapshot.target_id = :target AND json_extract(j.value, '$.key') IN :keys",
}


def _snapshot(state: AppState, s: Session, target_id: int, keys: tuple[str, ...]) -> Snapshot | None:
    """The last run's advice JSON of the objects with these keys (None: no run yet)."""
    at = s.scalar(select(AdviceSnapshot.evaluated_at).where(AdviceSnapshot.target_id == target_id))
    if at is None:
        return None
    key = (state.store.url, target_id, at, keys)
    hit = snapshots.get(key)
    if hit is not None:
        return hit
    sql = _ELEMENTS.get(s.get_bind().dialect.name)
    docs: list[dict[str, Any]]
    if sql is None:  # another database: read it all
        everything = s.scalar(select(AdviceSnapshot.objects).where(AdviceSnapshot.target_id == target_id))
        docs = [d for d in everything or [] if d.get("key") in keys]
    else:
        q = text(sql).bindparams(bindparam("keys", expanding=True))
        rows = s.scalars(q, {"target": target_id, "keys": list(keys)})
        docs = [d if isinstance(d, dict) else json.loads(d) for d in rows]
    snap = Snapshot(target_id, at, {(d.get("server", ""), d.get("key", "")): d for d in docs})
    snapshots.put(key, snap)
    return snap


@dataclass(frozen=True)
class Evidence:
    """What the last advice run decided for an object, and why (moved or not)."""

    evaluated_at: datetime
    explanation: str
    advice: dict[str, Any] | None  # the object's own advice JSON (units, partitions)
    unit: dict[str, Any] | None  # the placement unit's, when the object moves with one

    @property
    def decision(self) -> dict[str, Any] | None:
        src = self.advice or self.unit
        return None if src is None else src.get("decision")

    @property
    def numbers(self) -> list[tuple[str, Any]]:
        d = self.decision or {}
        return [(k, v) for k, v in (d.get("numbers") or {}).items() if v is not None]


def _member_sentence(kind: str, unit: dict[str, Any]) -> str:
    """Why a file or container has no advice of its own: it moves with its placement unit."""
    name = unit.get("name")
    if unit.get("kind") == "tempdb":
        holder, short, why = (
            "tempdb's data files",
            "tempdb",
            "tempdb's data files are advised and moved together",
        )
    elif unit.get("kind") == "filegroup":
        holder, short = f"filegroup {name}", "filegroup"
        why = "SQL Server places data by filegroup (proportional fill spreads it over all its files)"
    else:
        holder, short, why = f"table space {name}", "table space", "DB2 places data by table space"
    what = "file" if kind in ("data_file", "tempdb") else kind.replace("_", " ")
    return (
        f"Moves with {holder}: {why}, so this {what} does not move on its own. "
        f"The {short}: {unit.get('explanation', '')}"
    )


def object_evidence(state: AppState, object_id: int) -> Evidence | None:
    """The object's evidence from its target's last advice run (None: not covered yet)."""
    with state.store.session() as s:
        o = s.execute(
            select(
                DbObject.target_id,
                DbObject.engine,
                DbObject.server,
                DbObject.database,
                DbObject.kind,
                DbObject.key,
                DbObject.filegroup,
                DbObject.tablespace,
            ).where(DbObject.id == object_id)
        ).one_or_none()
        if o is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no object #{object_id}")
        uk = unit_key_of(o)
        snap = _snapshot(state, s, o.target_id, (o.key,) if uk == o.key else (o.key, uk))
    if snap is None:
        return None
    own = snap.objects.get((o.server, o.key))
    unit = snap.objects.get((o.server, uk)) if uk != o.key else None
    if own is None and unit is None:
        return None
    if own is not None:
        text = str(own.get("explanation") or "")
    else:
        assert unit is not None
        text = _member_sentence(o.kind, unit)
    return Evidence(snap.evaluated_at, text, own, unit)


def evidence_json(e: Evidence | None) -> dict[str, Any] | None:
    if e is None:
        return None
    src = e.advice or e.unit or {}
    return {
        "evaluated_at": _iso(e.evaluated_at),
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


@router.get("/api/objects/{object_id}/evidence")
def object_evidence_json(
    object_id: int = Path(ge=1, le=MAX_ID),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """What the last advice run decided for this object and the numbers it used, moved or not;
    a file or partition that moves with its filegroup / table space also gets the unit's."""
    e = object_evidence(state, object_id)
    if e is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"object #{object_id} has no evidence yet: the advice has not covered it",
        )
    return {"object_id": object_id, **(evidence_json(e) or {})}


@dataclass(frozen=True)
class DatabaseFlash:
    target: str
    evaluated_at: datetime
    curve: dict[str, Any]  # AdviceSnapshot.flash_curve item


def flash_curves(state: AppState, target: str | None) -> list[DatabaseFlash]:
    """The stored flash curves of one target (by name, or its numeric id) or of the whole fleet."""
    with state.store.session() as s:
        q = select(Target.name, AdviceSnapshot.evaluated_at, AdviceSnapshot.flash_curve).join(
            AdviceSnapshot, AdviceSnapshot.target_id == Target.id
        )
        if target:
            found = find_target(s, target)
            if found is None:
                raise HTTPException(status.HTTP_404_NOT_FOUND, f"no target named {target[:200]!r}")
            q = q.where(Target.id == found.id)
        rows = s.execute(q.order_by(Target.name)).all()
    return [DatabaseFlash(r.name, r.evaluated_at, c) for r in rows for c in (r.flash_curve or [])]


@router.get("/api/targets/{target}/flash-curve")
def flash_curve_json(
    target: str, user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    """How much flash each database of a target could use: [flash GB, share of I/O wait saved]
    points and the recommended placement's predicted savings, from the last advice run."""
    curves = flash_curves(state, target)
    return {
        "target": curves[0].target if curves else target,
        "evaluated_at": _iso(curves[0].evaluated_at) if curves else None,
        "flash_tier": _policy(state).tiers[0].name,
        "databases": [c.curve for c in curves],
    }
