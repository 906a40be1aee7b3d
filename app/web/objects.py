"""Object pages: a target's (or database's) objects, one object's I/O over time, the fleet heat map.

Each page has a JSON twin under /api with the same filters. The template context of each page is
one dataclass (DatabasePage, ObjectPage, HeatmapPage) passed as `page`; the charts are SVG strings
rendered here by app.web.charts, already escaped.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from advisors.quantities import pct, rate
from app.freshness import Freshness, target_freshness
from app.http.auth import CurrentUser, page_user
from app.http.objects import (
    DEFAULT_SORT,
    MAX_ID,
    cached_heat_map,
    curves,
    detail,
    evidence,
    object_filter,
    policy_in_force,
    unmatched,
)
from app.http.state import AppState, app_state
from app.store.anchor import OLD_AFTER, age
from app.store.heat_map import HeatMap, HeatWindow
from app.store.lookup import target_named
from app.store.object_detail import ObjectDetail
from app.store.object_evidence import Evidence
from app.store.object_flash import DatabaseFlash, curves_tier_label
from app.store.object_list import PAGE_SIZE, ObjectFilter, ObjectList, list_objects
from app.store.object_rows import SORT_KEYS, tier_names
from app.store.unmapped import UnmappedLocation, unknown_locations
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
    heat_grid,
    line_chart,
)
from app.web.templating import render

router = APIRouter()


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
    ends_at_data: bool = False  # the newest sample is over a day old: the 24 hours end there, not now
    unmapped: list[UnmappedLocation] = field(default_factory=list)  # its locations no tier names

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
    with state.store.session() as s:
        tid = target_named(s, target).id
        fresh = target_freshness(s, tid)
        # the 24 hours end at the newest sample (app/store/anchor.py); old data says so
        objects = list_objects(session=s, target=target, database=database, policy=policy, now=now, filters=f)
        unmapped = [u for u in unknown_locations(s, [tid]) if database is None or database in u.databases]
    ends_at_data = fresh.data_end is not None and fresh.data_end < now - OLD_AFTER
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
        unmapped=unmapped,
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
    unmatched: UnmappedLocation | None = None  # its location matches no tier: not advised


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
    d = detail(state, object_id)
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
        evidence(state, object_id),
        unmatched(state, d),
    )
    return render(request, "object.html", user, active="fleet", page=ctx)


# --- heat map ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeatGrid:
    """One window's grid: the targets whose data ends at the same hour (one for a polled fleet)."""

    window: HeatWindow | None  # None: no I/O at all
    svg: Markup
    rows: int


@dataclass
class HeatmapPage:
    """Context of heatmap.html."""

    map: HeatMap
    grids: list[HeatGrid]
    skew_chart: Markup
    flash_chart: Markup | None = None
    flash: list[DatabaseFlash] | None = None  # the stored curves, most I/O wait first
    flash_tier: str = "flash"
    now: datetime | None = None  # the request's clock: how old a window's data is

    def age(self, newest: datetime) -> str:
        return age(newest, self.now or datetime.now(UTC))


@router.get("/heatmap", response_class=HTMLResponse)
def heatmap_page(
    request: Request,
    target: str | None = None,
    user: CurrentUser = Depends(page_user),
    state: AppState = Depends(app_state),
) -> HTMLResponse:
    """Hourly heat of the 40 busiest objects over 7 days, the skew curve, the predicted savings."""
    m = cached_heat_map(state, target)
    grids = []
    for i, w in enumerate(m.windows):
        cols = [m.hours.index(h) for h in w.hours]
        rows = []
        for r in (r for r in m.rows if r.window == i):
            cells = [r.cells[c] for c in cols]
            peak = max((v for v in cells if v is not None), default=None)
            rows.append(
                GridRow(
                    label=r.name,
                    context=r.database if m.target else f"{r.database} · {r.target}",
                    href=f"/objects/{r.id}",
                    cells=cells,
                    tip=f"{r.target} · {r.database} · {r.kind} {r.name}: {rate(r.heat, 'I/O per GB-hour')} "
                    f"over the window, peak hour {rate(peak, '')}",
                )
            )
        title = "Heat by hour: the busiest objects" + (
            "" if len(m.windows) == 1 else f" of {', '.join(w.targets)}"
        )
        grids.append(HeatGrid(w, heat_grid(rows, w.hours, title=title, unit="I/O per GB-hour"), len(rows)))
    if not grids:
        grids.append(HeatGrid(None, heat_grid([], [], title="Heat by hour: the busiest objects",
                                              unit="I/O per GB-hour"), 0))  # fmt: skip
    marker = None
    if m.knee is not None:
        marker = (
            m.knee.capacity_share,
            m.knee.io_share,
            f"{pct(m.knee.capacity_share)} of capacity → {pct(m.knee.io_share)} of I/O",
        )
    skew = curve_chart(
        [(p.capacity_share, p.io_share) for p in m.skew],
        title="Skew: share of I/O against share of capacity, hottest objects first",
        x_label="share of capacity",
        y_label="share of I/O",
        marker=marker,
    )
    flash = sorted(
        curves(state, target),
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
    # each pool has its own fastest tier: the curves shown name theirs ("flash / nvme")
    tier = curves_tier_label(policy_in_force(state), flash)
    chart = flash_chart(
        lines, title=f"How much {tier}: share of I/O wait saved against GB of {tier}", flash_tier=tier
    )
    page = HeatmapPage(m, grids, skew, chart, flash, tier, now=m.ranked_at)
    return render(request, "heatmap.html", user, active="heatmap", page=page)
