"""Feeding the advisors: snapshots (from import files) -> per-object windows -> advice JSON."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from advisors.advise import Advice, AdviceReport, PoolReport
from advisors.deltas import CounterPoint, interval_between
from advisors.document import (
    AdvisedObject,
    DecisionDoc,
    Maintenance,
    MaintenanceSlice,
    MemberFile,
    Metrics,
    Period,
    Predicted,
    split_table,
)
from advisors.features import MaintenanceShare, ObjectInfo, ObjectWindow, PeriodView, Usage
from advisors.maintenance import occurrence
from advisors.pools import UnknownLocation, placed
from advisors.quantities import latency, ratio
from advisors.tier_curves import Figure, TierFigures
from connectors.records import CORE_COUNTERS, LOCATION_FIELDS, MONITOR_ONLY_KINDS, ObjectRef, Snapshot
from policies.model import Policy
from policies.workload import CalendarPeriod

MONITOR_ONLY = {str(k) for k in MONITOR_ONLY_KINDS}


class AdviceInputError(Exception):
    pass


def object_info(ref: ObjectRef, policy: Policy) -> ObjectInfo:
    """The object with its pool and the tier of its pool its location is on (advisors.pools.placed:
    an object two pools take names both and is left out of the placement and listed)."""
    engine = str(ref.engine)
    pool, tier = placed(policy, server=ref.server, engine=engine, physical_name=ref.physical_name,
                        storage_group=ref.storage_group)  # fmt: skip
    return ObjectInfo(
        key=ref.key,
        engine=str(ref.engine),
        server=ref.server,
        database=ref.database,
        kind=str(ref.kind),
        name=ref.name,
        size_bytes=ref.size_bytes,
        current_tier=tier,
        pool=pool,
        **{f: getattr(ref, f) for f in LOCATION_FIELDS},
    )


def _hour(t: datetime) -> datetime:
    return t.replace(minute=0, second=0, microsecond=0)


def _add(a: dict[str, int | None], b: dict[str, int | None]) -> None:
    for k, v in b.items():
        if v is None:
            a.setdefault(k, None)
        else:
            a[k] = (a.get(k) or 0) + v


# --- business periods older than the window ------------------------------------------------------

HISTORY_DAYS = 400  # how far back a period's last occurrence is looked for (roll-ups' retention)


@dataclass(frozen=True)
class PastOccurrence:
    """The last completed occurrence of a declared business period: its first day and its span
    [start, end) in UTC (midnights in the period's time zone)."""

    period: CalendarPeriod
    first: date
    start: datetime
    end: datetime


def _zone(name: str) -> Any:
    return UTC if name == "UTC" else ZoneInfo(name)


def period_history(policy: Policy, now: datetime) -> list[PastOccurrence]:
    """The last completed occurrence of every declared business period before `now` (one that
    has ended, or is not the one `now` falls in), found with advisors.maintenance.occurrence within
    the last HISTORY_DAYS days. Pure: `now` is the only clock."""
    out: list[PastOccurrence] = []
    for p in policy.business_calendar:
        tz = _zone(p.time_zone)
        today = now.astimezone(tz).date()
        current = occurrence(p, today)
        day = today
        for _ in range(HISTORY_DAYS):
            first = occurrence(p, day)
            if first is not None and first != current:
                last = day
                while occurrence(p, last + timedelta(days=1)) == first:
                    last += timedelta(days=1)
                start = datetime.combine(first, datetime.min.time(), tz).astimezone(UTC)
                end = datetime.combine(last + timedelta(days=1), datetime.min.time(), tz).astimezone(UTC)
                out.append(PastOccurrence(p, first, start, min(end, now)))
                break
            day -= timedelta(days=1)
    return out


def in_history(history: Sequence[PastOccurrence], hour: datetime) -> bool:
    """Whether an hourly bucket belongs to one of these occurrences, by the rule split_period uses
    (the day its middle falls on, in the period's time zone)."""
    mid = hour + timedelta(minutes=30)
    return any(
        occurrence(o.period, mid.astimezone(_zone(o.period.time_zone)).date()) == o.first for o in history
    )


def windows_from_snapshots(snapshots: Iterable[Snapshot], policy: Policy) -> list[ObjectWindow]:
    """Interval deltas per object over the policy's window (the last `window_days` of the input),
    summed and per hour (by interval end).

    When the policy declares business periods, the hours of each period's last completed
    occurrence before the last sample are added from older input too (as windows_from_store
    does), so the period is judged on its own even when it is older than the window: the files
    given must then reach back to it. An object needs a sample in the window to be advised."""
    series: dict[tuple[str, str], list[tuple[Snapshot, int]]] = defaultdict(list)
    snaps = sorted(snapshots, key=lambda s: s.sample_time)
    history: list[PastOccurrence] = []
    opening: datetime | None = None
    if snaps:
        # the sample that opens the window's first interval is kept
        since = snaps[-1].sample_time - timedelta(days=policy.window_days)
        opening = max((s.sample_time for s in snaps if s.sample_time <= since), default=snaps[0].sample_time)
        history = [o for o in period_history(policy, snaps[-1].sample_time) if o.start < opening]
        first_kept = min([opening, *(o.start - timedelta(hours=2) for o in history)])
        snaps = [s for s in snaps if s.sample_time >= first_kept]
    for snap in snaps:
        for i, sample in enumerate(snap.samples):
            series[(snap.server, sample.ref.key)].append((snap, i))
    windows: list[ObjectWindow] = []
    for (_server, key), points in series.items():
        prev: CounterPoint | None = None
        counters: dict[str, int | None] = {}
        extra: dict[str, int] = {}
        hours: dict[datetime, tuple[float, dict[str, int | None], dict[str, int]]] = {}
        seconds = 0.0
        ref = points[-1][0].samples[points[-1][1]].ref
        assert opening is not None
        if points[-1][0].sample_time < opening:
            continue  # only in the older input kept for a business period: not in the window
        for snap, i in points:
            s = snap.samples[i]
            cur = CounterPoint(
                snap.sample_time,
                snap.instance_start,
                {c: s.counters.get(c) for c in CORE_COUNTERS},
                dict(s.extra),
            )
            judged = interval_between(prev, cur)
            iv = judged.interval
            if iv is not None and (iv.end > opening or in_history(history, _hour(iv.end))):
                seconds += iv.seconds
                _add(counters, iv.counters)
                for k, v in iv.extra.items():
                    extra[k] = extra.get(k, 0) + v
                h = _hour(iv.end)
                hs, hc, hx = hours.get(h, (0.0, {}, {}))
                _add(hc, iv.counters)
                for k, v in iv.extra.items():
                    hx[k] = hx.get(k, 0) + v
                hours[h] = (hs + iv.seconds, hc, hx)
            if judged.outcome.value != "duplicate":
                prev = cur
        if seconds <= 0:
            if str(ref.kind) in MONITOR_ONLY:
                continue  # instance / buffer-pool / container context: optional for the advice
            raise AdviceInputError(
                f"{ref.server}/{key}: needs at least two samples of one series (same instance start) to measure I/O"
            )
        windows.append(
            ObjectWindow(
                info=object_info(ref, policy),
                total=Usage(seconds, counters, extra),
                by_hour=tuple((h, Usage(v[0], v[1], v[2])) for h, v in sorted(hours.items())),
            )
        )
    return windows


def _round(v: float | None, digits: int = 3) -> float | None:
    return None if v is None else round(v, digits)


def advised_object(a: Advice) -> AdvisedObject:
    """The advice document's object (advisors.document) for one advised object."""
    i, f = a.info, a.features
    location: dict[str, Any] = {k: getattr(i, k) for k in LOCATION_FIELDS if getattr(i, k) is not None}
    if i.files:
        location["files"] = [
            MemberFile(
                key=m.key,
                file_id=m.file_id,
                logical_name=m.logical_name,
                physical_name=m.physical_name,
                size_bytes=m.size_bytes,
                current_tier=m.current_tier,
            )
            for m in i.files
        ]
    split = split_table(i.table_name, i.schema_name)
    if split is not None:
        location["schema"], location["table"] = split
    return AdvisedObject(
        engine=i.engine,
        server=i.server,
        database=i.database,
        kind=i.kind,
        name=i.name,
        key=i.key,
        size_bytes=i.size_bytes,
        profile=a.verdict.profile,
        rule=a.verdict.rule,
        current_tier=i.current_tier,
        recommended_tier=a.recommended_tier,
        placement_unit=a.placement_unit,
        pool=i.pool,
        metrics=Metrics(
            read_iops=_round(f.read_iops),
            write_iops=_round(f.write_iops),
            avg_read_bytes=_round(f.avg_read_bytes, 1),
            avg_write_bytes=_round(f.avg_write_bytes, 1),
            avg_read_ms=_round(f.avg_read_ms),
            avg_write_ms=_round(f.avg_write_ms),
            read_pct=_round(f.read_pct, 1),
            read_miss_ratio=_round(f.read_miss_ratio, 4),
            heat=_round(f.heat),
            heat_ratio=_round(f.heat_ratio),
            prefetch_share=_round(f.prefetch_share, 4),
            singleton_share=_round(f.singleton_share, 4),
            est_cache_hit_share=_round(f.est_cache_hit_share, 4),
            trend_pct_per_day=_round(f.trend_pct_per_day, 2),
            instance_read_miss_ratio=_round(f.instance_read_miss_ratio, 4),
            read_mb_s=_round(f.read_mb_s),
            write_mb_s=_round(f.write_mb_s),
            hours=_round(f.hours, 2),
            io_per_s_by_hour_of_day=[round(v, 3) for v in f.by_hour_of_day],
        ),
        predicted=Predicted(
            io_ms_per_s_now=_round(a.io_ms_per_s_now),
            io_ms_per_s_after=_round(a.io_ms_per_s_after),
        ),
        reasons=list(a.reasons),
        maintenance=maintenance_doc(f.maintenance),
        period=period_doc(f.period),
        decision=None if a.decision is None else DecisionDoc.model_validate(a.decision.as_json()),
        explanation=a.explanation,
        **location,
    )


def advice_json(a: Advice) -> dict[str, Any]:
    """One advised object as the advice JSON stores and prints it."""
    return advised_object(a).as_json()


def maintenance_doc(m: MaintenanceShare | None) -> Maintenance | None:
    """What was left out of the object's figures as maintenance (None: nothing)."""
    if m is None:
        return None
    return Maintenance(
        io_share=_round(m.io_share, 4),
        read_share=_round(m.read_share, 4),
        hours=_round(m.hours, 2),
        note=m.note,
        slices=[
            MaintenanceSlice(
                name=s.name,
                kind=s.kind,
                hours=_round(s.hours, 2),
                reads=s.reads,
                writes=s.writes,
                bytes_read=s.bytes_read,
                avg_read_bytes=_round(s.avg_read_bytes, 1),
                requests=_round(s.requests, 1),
            )
            for s in m.slices
        ],
    )


def period_doc(p: PeriodView | None) -> Period | None:
    """The object in the latest occurrence of a declared business period (None: none judged)."""
    if p is None:
        return None
    f = p.features
    return Period(
        name=p.name,
        kind=p.kind,
        occurrence=p.occurrence.isoformat(),
        hot=p.hot,
        ratio=_round(p.ratio),
        hot_min_ratio=p.hot_min_ratio,
        hours=_round(f.hours, 2),
        read_iops=_round(f.read_iops),
        write_iops=_round(f.write_iops),
        heat=_round(f.heat),
        io_rate=_round(f.io_rate),
    )


def _curve(points: tuple[tuple[float, float], ...]) -> list[dict[str, float]]:
    return [{"flash_gb": round(g, 2), "io_time_saved_share": round(v, 4)} for g, v in points]


def report_json(report: AdviceReport, policy: Policy) -> dict[str, Any]:
    units = [a for a in report.objects if a.placement_unit == a.info.key]
    moves = [
        a for a in units if a.info.current_tier is not None and a.recommended_tier != a.info.current_tier
    ]
    by_tier: dict[str, float] = defaultdict(float)
    for a in units:
        by_tier[a.recommended_tier] += (a.info.size_bytes or 0) / 1024**3
    pools = [pool_json(part, [a for a in units if a.info.pool == part.name]) for part in report.pools]
    fastest = {part.name: part.flash_tier for part in report.pools}
    flash_gb = sum(
        (a.info.size_bytes or 0) / 1024**3 for a in units if a.recommended_tier == fastest.get(a.info.pool)
    )
    now_ms = sum(a.io_ms_per_s_now or 0.0 for a in units)
    after_ms = sum(a.io_ms_per_s_after for a in units)
    profiles: dict[str, int] = defaultdict(int)
    for a in units:
        profiles[a.verdict.profile] += 1
    p = report.placement
    return {
        "objects": [advice_json(a) for a in report.objects],
        "summary": {
            "policy": policy.name,
            "objects": len(report.objects),
            "placement_units": len(units),
            "moves": len(moves),
            "profiles": dict(sorted(profiles.items())),
            "gb_by_recommended_tier": {t: round(v, 2) for t, v in sorted(by_tier.items())},
            "flash_gb_needed": round(by_tier.get(report.flash_tier, 0.0) if len(pools) <= 1 else flash_gb, 2),
            "io_ms_per_s_now": round(now_ms, 1),
            "io_ms_per_s_after": round(after_ms, 1),
            "placement": {
                "status": p.status,
                "objective": round(p.objective, 3),
                "lower_bound": round(p.lower_bound, 3),
                "gap": round(p.gap, 6),
                "method": p.method,
            },
            # back-end load / what the devices serve, by tier, for the recommended placement
            "utilisation": {t: round(u, 4) for t, u in report.utilisation.items()},
            "flash_curve": _curve(report.flash_curve),
            "flash_curve_by_database": [
                {"server": server, "database": database, "curve": _curve(points)}
                for (server, database), points in report.flash_curve_by_database.items()
            ],
            "notes": list(report.notes),
            "pools": pools,
            # objects that two pools both take, left out of the placement (also in unknown_locations)
            "pool_conflicts": [unknown_json(u) for u in report.unknown_locations if u.conflict],
        },
        # every location left out of the placement, with why (summary.pool_conflicts: those two pools take)
        "unknown_locations": [unknown_json(u) for u in report.unknown_locations],
    }


def pool_json(part: PoolReport, units: list[Advice]) -> dict[str, Any]:
    """One pool's placement in the advice JSON: its tiers, the solver's answer and gap, the load
    and GB per tier, its moves and flash curve."""
    p = part.placement
    gb: dict[str, float] = defaultdict(float)
    for a in units:
        gb[a.recommended_tier] += (a.info.size_bytes or 0) / 1024**3
    moved = [
        a for a in units if a.info.current_tier is not None and a.recommended_tier != a.info.current_tier
    ]
    # each tier's figures, policy against measured, and those the advice used (absent: learn_tiers off)
    figures = {} if part.tier_figures is None else {"tier_figures": tier_figures_json(part.tier_figures)}
    return {
        "name": part.name,
        "tiers": list(part.tiers),
        "flash_tier": part.flash_tier,
        "placement_units": len(units),
        "moves": len(moved),
        "gb_by_recommended_tier": {t: round(gb.get(t, 0.0), 2) for t in part.tiers},
        "io_ms_per_s_now": round(sum(a.io_ms_per_s_now or 0.0 for a in units), 1),
        "io_ms_per_s_after": round(sum(a.io_ms_per_s_after for a in units), 1),
        "placement": {
            "status": p.status,
            "objective": _finite(p.objective),
            "lower_bound": _finite(p.lower_bound),
            "gap": _finite(p.gap, 6),
            "method": p.method,
        },
        "utilisation": {t: round(u, 4) for t, u in part.utilisation.items()},
        "flash_curve": _curve(part.flash_curve),
        "notes": list(part.notes),
        **figures,
    }


WARN_RATIO = 2.0  # measured / policy beyond this (or below its inverse): the policy is another array


def tier_figure_warning(f: Figure) -> str | None:
    """Set where a tier's measured and policy figures differ by more than WARN_RATIO either way."""
    r = f.ratio
    if r is None or 1 / WARN_RATIO <= r <= WARN_RATIO:
        return None
    assert f.measured is not None
    return (
        f"{f.tier} {f.what}s measure {latency(f.measured.ms)}, {ratio(r)} the policy's "
        f"{latency(f.policy_ms)}: check the tier's figures in the policy"
    )


def tier_figures_json(figures: TierFigures) -> list[dict[str, Any]]:
    """A pool's tiers, reads and writes: the policy's figure, the measured one with its load,
    interval and evidence, the weight and the figure the benefit model used (advisors.tier_curves)."""
    out = []
    for t in figures.read:
        for f in (figures.read[t], figures.write[t]):
            m = f.measured
            out.append({
                "tier": f.tier,
                "direction": f.what,
                "policy_ms": f.policy_ms,
                "measured_ms": None if m is None else _finite(m.ms),
                "measured_ms_at_load": None if m is None else _finite(m.ms_at_load),
                "load": None if m is None else _finite(m.load, 4),
                "interval_ms": None if m is None or m.low is None or m.high is None
                else [_finite(m.low), _finite(m.high)],
                "object_hours": 0 if m is None else m.object_hours,
                "objects": 0 if m is None else m.objects,
                "r2": None if m is None or m.r2 is None else _finite(m.r2, 4),
                "weight": round(f.weight, 4),
                "used_ms": _finite(f.used_ms),
                "why": f.why,
                "warning": tier_figure_warning(f),
            })  # fmt: skip
    return out


def _finite(v: float, digits: int = 3) -> float | None:
    return round(v, digits) if math.isfinite(v) else None


def unknown_json(u: UnknownLocation) -> dict[str, Any]:
    """A location no tier of its pool explains, or that two pools take (`pools` names them): the
    objects there are left out of the placement."""
    return {
        "server": u.server,
        "engine": u.engine,
        "pool": u.pool,
        "location": u.location,
        "location_kind": u.location_kind,
        "objects": u.objects,
        "size_gb": round(u.size_gb, 2),
        "reads_per_s": round(u.reads_per_s, 3),
        "writes_per_s": round(u.writes_per_s, 3),
        "io_per_s": round(u.io_per_s, 3),
        "examples": list(u.examples),
        "databases": list(u.databases),
        "reason": u.reason,
        "text": u.text,
        "pools": list(u.pools),
    }
