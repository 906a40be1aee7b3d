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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, status
from fastapi.responses import HTMLResponse
from markupsafe import Markup
from sqlalchemy import bindparam, select, text
from sqlalchemy.orm import Session

from app.errors import NotFound
from app.freshness import Freshness, target_freshness
from app.http.auth import CurrentUser, page_user
from app.http.state import AppState, app_state
from app.store.heat_map import HeatMap, IoTotals, heat_map, io_totals
from app.store.io_window import window_start
from app.store.models import AdviceSnapshot, DbObject, Target
from app.store.object_detail import ObjectDetail, object_detail
from app.store.object_list import PAGE_SIZE, ObjectFilter, ObjectList, list_objects
from app.store.object_rows import SORT_KEYS, tier_names
from app.store.placement import unit_key_of
from app.store.policies import current_policy_text
from app.store.targets import find_target
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
from app.web.templating import render
from policies.loader import parse_policy
from policies.model import Policy

router = APIRouter()

DEFAULT_SORT = "heat"
HEATMAP_DAYS = 7
MAX_ID = 2**31 - 1  # object ids are INTEGER columns


_policies: dict[str, Policy] = {}


def policy_in_force(state: AppState) -> Policy:
    """The policy in force (the newest stored version, as the advice uses), parsed once per text."""
    with state.store.session() as s:
        text, source = current_policy_text(s, state.settings.policy_file)
    policy = _policies.get(text)
    if policy is None:
        _policies.clear()
        policy = _policies[text] = parse_policy(text, source=source)
    return policy


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
    freshness: Freshness | None = None  # the target's newest sample, data-end note, hours of history
    ends_at_data: bool = False  # the figures are the 24 hours ending at the newest sample, not now

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


def object_filter(
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
    f = object_filter(
        kind,
        tier,
        name,
        sort or DEFAULT_SORT,
        direction,
        (max(page, 1) - 1) * PAGE_SIZE,
        PAGE_SIZE,
        clamp=True,
    )
    policy = policy_in_force(state)
    now = datetime.now(UTC)
    try:
        with state.store.session() as s:
            found = find_target(s, target)
            fresh = None if found is None else target_freshness(s, found.id)
            # data that ended days ago (an import) is shown as the 24 hours ending at its newest sample
            data_end = None if fresh is None else fresh.data_end
            ends_at_data = data_end is not None and data_end < window_start(now, 24)
            until = data_end if data_end is not None and ends_at_data else now
            objects = list_objects(
                session=s, target=target, database=database, policy=policy, now=until, filters=f
            )
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    query = {"kind": f.kind, "tier": f.tier, "name": f.name}
    if sort:
        query |= {"sort": f.sort, "dir": "desc" if f.descending else "asc"}
    ctx = DatabasePage(
        objects=objects,
        filters=f,
        tiers=tier_names(policy),
        base_url=_target_url(objects.target_id, database),
        query={k: v for k, v in query.items() if v},
        note=note,
        freshness=fresh,
        ends_at_data=ends_at_data,
    )
    return render(request, "database.html", user, active="fleet", page=ctx)


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
    d = detail_or_404(state, object_id)
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
    return render(request, "object.html", user, active="fleet", page=ctx)


def detail_or_404(state: AppState, object_id: int) -> ObjectDetail:
    try:
        with state.store.session() as s:
            return object_detail(
                session=s, object_id=object_id, policy=policy_in_force(state), now=datetime.now(UTC)
            )
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None


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


def cached_heat_map(state: AppState, target: str | None) -> HeatMap:
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
                policy=policy_in_force(state),
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
    m = cached_heat_map(state, target)
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
    tier = policy_in_force(state).tiers[0].name
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
    return render(request, "heatmap.html", user, active="heatmap", page=page)


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
