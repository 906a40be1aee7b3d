"""Maintenance and business periods: which hours of a window count towards an object's heat.

A nightly backup reads a whole cold filegroup in MB-sized requests; DBCC CHECKDB, index rebuilds
and ETL loads do the same kind of thing on a schedule. None of it is the workload the tier must
serve, so those hours are left out of every figure heat and the rules use, and kept beside them
(`ObjectWindow.maintenance` -> `Features.maintenance`) so the advice can say what was left out.
An hour is maintenance when it overlaps a window the policy declares (`maintenance_windows`) or
when its reads are very large (`burst_detection`: backup reads are 1-4 MB, read-ahead at most
~1 MB).

Declared business periods (`business_calendar`: month-end, quarter-end, year-end, seasons) are
split off the same way: the other days give the object's everyday figures, the latest
occurrence of the period is judged on its own (`ObjectWindow.period` -> `Features.period`), so a
partition re-read at every month-end is neither made hot by it mid-month nor demoted between
month-ends.

Pure: every time comes from the data's own hour buckets and the policy; no clock is read.
"""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from fnmatch import fnmatchcase
from functools import lru_cache
from operator import attrgetter
from zoneinfo import ZoneInfo

from advisors.features import (
    DB2_ASYNC_READS,
    DB2_P_READS,
    MaintenanceShare,
    MaintenanceSlice,
    ObjectInfo,
    ObjectWindow,
    PeriodSplit,
    Usage,
    add_counters,
    add_extra,
    hour_columns,
    hour_seconds,
    hour_times,
    io_requests,
    keep_hours,
)
from policies.model import Policy
from policies.workload import WEEKDAYS, BurstDetection, CalendarPeriod, MaintenanceWindow

BURST = "large sequential reads"
HOUR = timedelta(hours=1)
MIN_PERIOD_HOURS = 12  # an occurrence with fewer covered hours is too little to judge


@lru_cache(maxsize=64)
def _zone(name: str) -> tzinfo:
    return UTC if name == "UTC" else ZoneInfo(name)


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _matches(patterns: list[str] | None, *values: str | None) -> bool:
    if patterns is None:
        return True
    return any(v and fnmatchcase(v.lower(), p.lower()) for p in patterns for v in values)


def applies_to(w: MaintenanceWindow, info: ObjectInfo) -> bool:
    """Whether a declared window covers this object (database and object patterns)."""
    names = (info.name, info.key, info.filegroup, info.tablespace, info.table_name)
    return _matches(w.database, info.database) and _matches(w.objects, *names)


def bucket_span(hour: datetime) -> tuple[datetime, datetime]:
    """When a bucket's I/O may have happened. Buckets are labelled with the hour their intervals
    *ended* in, so with polls every few minutes the I/O is in [hour, hour + 1 h), with hourly polls
    on the hour it is in [hour - 1 h, hour): both are taken, so maintenance is never counted as heat
    (at the cost of up to one ordinary hour on each side of a window)."""
    t = _aware(hour)
    return t - HOUR, t + HOUR


def in_window(w: MaintenanceWindow, hour: datetime) -> bool:
    """Whether a bucket's possible span overlaps an occurrence of the window (in its time zone)."""
    lo, hi = bucket_span(hour)
    tz = _zone(w.time_zone)
    first = lo.astimezone(tz).date() - timedelta(days=1)
    last = hi.astimezone(tz).date()
    day = first
    while day <= last:
        if WEEKDAYS[day.weekday()] in w.days:
            start = datetime.combine(day, w.start, tz)
            end_day = day + timedelta(days=1) if w.end <= w.start else day
            end = datetime.combine(end_day, w.end, tz)
            if lo < end and start < hi:
                return True
        day += timedelta(days=1)
    return False


def is_burst(info: ObjectInfo, u: Usage, rules: BurstDetection) -> bool:
    """Very large reads in the hour: a backup or DBCC streaming the files, not the workload."""
    if not rules.enabled:
        return False
    reads, bytes_read = u.counters.get("reads"), u.counters.get("bytes_read")
    if not reads or bytes_read is None or reads < rules.min_reads:
        return False
    if bytes_read / reads < rules.min_avg_read_bytes:
        return False
    p_reads = sum(u.extra.get(n, 0) for n in DB2_P_READS)
    if info.engine == "db2" and p_reads > 0:
        prefetched = sum(u.extra.get(n, 0) for n in DB2_ASYNC_READS)
        return prefetched / p_reads >= rules.min_prefetch_share
    return True


def sum_usage(buckets: Sequence[Usage]) -> Usage:
    """Usage over consecutive hours (seconds add up, unlike Usage.__add__ for parallel files)."""
    counters = add_counters([u.counters for u in buckets])
    extra = add_extra([u.extra for u in buckets])
    return Usage(sum(map(attrgetter("seconds"), buckets)), counters, extra)


def _minus(total: Usage, part: Usage) -> Usage:
    counters: dict[str, int | None] = {}
    for k, v in total.counters.items():
        counters[k] = None if v is None else max(v - (part.counters.get(k) or 0), 0)
    extra = {k: max(v - part.extra.get(k, 0), 0) for k, v in total.extra.items()}
    return Usage(max(total.seconds - part.seconds, 0.0), counters, extra)


def _slice(info: ObjectInfo, name: str, kind: str, buckets: Sequence[Usage]) -> MaintenanceSlice:
    u = sum_usage(buckets)
    c = u.counters
    return MaintenanceSlice(
        name,
        kind,
        u.seconds / 3600,
        c.get("reads") or 0,
        c.get("writes") or 0,
        c.get("bytes_read") or 0,
        io_requests(info, u)[0],
    )


def split_maintenance(window: ObjectWindow, policy: Policy) -> ObjectWindow:
    """The window without its maintenance hours (declared windows first, then detected bursts),
    with what was left out in `maintenance`. Unchanged when nothing is maintenance or there are no
    hourly buckets; when every hour is maintenance nothing is left out (and the note says so)."""
    if not window.by_hour:
        return window
    info = window.info
    declared = [w for w in policy.maintenance_windows if applies_to(w, info)]
    rules = policy.burst_detection
    if not declared and not rules.enabled:
        return window
    min_reads, min_bytes = rules.min_reads, rules.min_avg_read_bytes
    by_hour = window.by_hour
    times = hour_times(by_hour)
    # the hours' reads and read bytes by column: no Usage is built for the many that fail
    reads_of, bytes_of = hour_columns(by_hour, "reads", "bytes_read") if rules.enabled else ((), ())
    taken: dict[tuple[str, str], list[int]] = {}  # the buckets left out, by position
    for i, t in enumerate(times):
        hit = next((w for w in declared if in_window(w, t)), None) if declared else None
        if hit is not None:
            taken.setdefault((hit.name, hit.kind), []).append(i)
            continue
        if not rules.enabled:
            continue
        # what is_burst asks first, inline: most hours fail on their reads or their read size
        reads, bytes_read = reads_of[i], bytes_of[i]
        if not reads or reads < min_reads or bytes_read is None or bytes_read / reads < min_bytes:
            continue
        if is_burst(info, by_hour[i][1], rules):
            taken.setdefault((BURST, "burst"), []).append(i)
    if not taken:
        return window
    usages = {key: [u for _, u in keep_hours(by_hour, at)] for key, at in taken.items()}
    out = {i for at in taken.values() for i in at}
    slices = tuple(_slice(info, name, kind, us) for (name, kind), us in usages.items())
    left_out = sum_usage([u for us in usages.values() for u in us])
    all_requests = io_requests(info, window.total)[0]
    all_reads = window.total.counters.get("reads")
    share = MaintenanceShare(
        slices,
        io_share=sum(s.requests for s in slices) / all_requests if all_requests else 0.0,
        read_share=sum(s.reads for s in slices) / all_reads if all_reads else None,
        hours=left_out.seconds / 3600,
    )
    normal = [i for i in range(len(times)) if i not in out]
    if not normal:
        note = "every hour of the window is maintenance: nothing was left out"
        return replace(window, maintenance=replace(share, note=note))
    rest = keep_hours(by_hour, normal)
    return replace(window, total=_minus(window.total, left_out), by_hour=rest, maintenance=share)


# --- business calendar ---------------------------------------------------------------------------


def _last_day(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def occurrence(p: CalendarPeriod, day: date) -> date | None:
    """The first day of the occurrence of `p` that `day` falls in (None: outside the period)."""
    if p.kind == "custom":
        assert p.start is not None and p.end is not None  # validated
        sm, sd = (int(x) for x in p.start.split("-"))
        em, ed = (int(x) for x in p.end.split("-"))
        for year in (day.year - 1, day.year):
            start = _safe_date(year, sm, sd)
            end = _safe_date(year + 1 if (em, ed) < (sm, sd) else year, em, ed)
            if start is not None and end is not None and start <= day <= end:
                return start
        return None
    months = {"month_end": range(1, 13), "quarter_end": (3, 6, 9, 12), "year_end": (12,)}[p.kind]
    # the last days of a closing month, or the first days of the month after it
    candidates = [(day.year, day.month)]
    prev = day.replace(day=1) - timedelta(days=1)
    candidates.append((prev.year, prev.month))
    for year, month in candidates:
        if month not in months:
            continue
        last = _last_day(year, month)
        start = last - timedelta(days=p.last_days - 1) if p.last_days else last + timedelta(days=1)
        end = last + timedelta(days=p.first_days)
        if start <= day <= end:
            return start
    return None


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:  # 02-29 in a common year
        return date(year, 2, 28) if (month, day) == (2, 29) else None


def split_period(window: ObjectWindow, policy: Policy) -> ObjectWindow:
    """The window without the hours of declared business periods; the latest occurrence (with at
    least 12 covered hours) of the period in which the object was busiest goes to `period`."""
    if not window.by_hour or not policy.business_calendar:
        return window
    by_hour = window.by_hour
    normal: list[int] = []  # the buckets, by position
    occurrences: dict[tuple[int, date], list[int]] = {}
    for at, t in enumerate(hour_times(by_hour)):
        mid = _aware(t) + HOUR / 2
        hit = None
        for i, p in enumerate(policy.business_calendar):
            first = occurrence(p, mid.astimezone(_zone(p.time_zone)).date())
            if first is not None:
                hit = (i, first)
                break
        if hit is None:
            normal.append(at)
        else:
            occurrences.setdefault(hit, []).append(at)
    if not occurrences or not normal:
        return window
    seconds = hour_seconds(by_hour)
    latest: dict[int, tuple[date, list[int]]] = {}
    for (i, first), buckets in sorted(occurrences.items()):
        if sum(seconds[at] for at in buckets) >= MIN_PERIOD_HOURS * 3600:
            latest[i] = (first, buckets)
    usages = {key: [u for _, u in keep_hours(by_hour, at)] for key, at in occurrences.items()}
    in_period = sum_usage([u for us in usages.values() for u in us])
    rest = replace(window, total=_minus(window.total, in_period), by_hour=keep_hours(by_hour, normal))
    if not latest:
        return rest

    def rate(item: tuple[int, tuple[date, list[int]]]) -> float:
        u = sum_usage(usages[item[0], item[1][0]])
        return io_requests(window.info, u)[0] / u.seconds if u.seconds else 0.0

    i, (first, buckets) = max(latest.items(), key=rate)
    p = policy.business_calendar[i]
    pw = ObjectWindow(window.info, sum_usage(usages[i, first]), keep_hours(by_hour, buckets))
    return replace(rest, period=PeriodSplit(p.name, p.kind, first, pw, p.hot_min_ratio))


def prepare_window(window: ObjectWindow, policy: Policy) -> ObjectWindow:
    """Maintenance hours out, then business-period hours apart: what the rules should judge."""
    return split_period(split_maintenance(window, policy), policy)
