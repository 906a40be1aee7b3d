"""Per-object features over a window: rates, sizes, latency, read mix, heat, read-miss, randomness.

Inputs are summed interval deltas (plain numbers); every figure that cannot be known from what the
engine exposes stays None rather than being guessed (domain.md §2 "Cannot be known from DMVs").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from operator import eq, itemgetter, lt
from types import MappingProxyType
from typing import overload

import numpy as np
import numpy.typing as npt

GB = 1024**3


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    key: str
    engine: str
    server: str
    database: str
    kind: str
    name: str
    size_bytes: int | None = None
    current_tier: str | None = None
    # where it lives: the object vocabulary (connectors.records.LOCATION_FIELDS, which advisors
    # may not import), same names, types and order; tests/advisors/test_vocabulary.py checks it
    physical_name: str | None = None
    logical_name: str | None = None
    file_id: int | None = None
    filegroup: str | None = None
    storage_group: str | None = None
    tablespace: str | None = None
    table_name: str | None = None
    schema_name: str | None = None  # the schema of table_name on its own (names may contain ".")
    partition_number: int | None = None
    partition_scheme: str | None = None
    partition_function: str | None = None
    range_low: str | None = None
    range_high: str | None = None
    range_right: bool | None = None  # SQL Server RANGE RIGHT (True) / LEFT (False); None for DB2
    low_inclusive: bool | None = None  # the range's low bound belongs to the partition
    high_inclusive: bool | None = None
    files: tuple[ObjectInfo, ...] = ()  # member files of a filegroup / tempdb (scripts move each)
    location_since: datetime | None = None  # when it was last seen to move (None: unknown)
    pool: str = "default"  # the storage pool whose tiers it is on (policies.model.Policy.pool_of)


@dataclass(frozen=True, slots=True)
class Usage:
    """Summed deltas over `seconds` of covered time."""

    seconds: float
    counters: Mapping[str, int | None]
    extra: Mapping[str, int] = field(default_factory=dict)

    def __add__(self, other: Usage) -> Usage:
        counters: dict[str, int | None] = {}
        for k in set(self.counters) | set(other.counters):
            a, b = self.counters.get(k), other.counters.get(k)
            counters[k] = None if a is None and b is None else (a or 0) + (b or 0)
        extra = dict(self.extra)
        for k, v in other.extra.items():
            extra[k] = extra.get(k, 0) + v
        return Usage(max(self.seconds, other.seconds), counters, extra)

    @classmethod
    def from_columns(
        cls,
        seconds: Sequence[float],
        counters: Sequence[Mapping[str, int | None]],
        extra: Sequence[Mapping[str, int]],
    ) -> list[Usage]:
        """`Usage(seconds[i], counters[i], extra[i])` for every i, the same objects, built faster
        for the advice window read's hundreds of thousands of hours: the frozen __init__ sets each
        field through object.__setattr__ (measured: 460 ns a Usage, 180 ns here), where this sets
        the slots column by column in C loops. The type stays frozen for everyone else."""
        if not len(seconds) == len(counters) == len(extra):
            raise ValueError("Usage.from_columns: columns of different lengths")
        made: list[Usage] = list(map(object.__new__, [cls] * len(seconds)))
        columns: tuple[tuple[str, Sequence[object]], ...] = (
            ("seconds", seconds),
            ("counters", counters),
            ("extra", extra),
        )
        for name, values in columns:
            # the slot's own descriptor; its __set__ returns None, so any() runs the map to its end
            any(map(getattr(cls, name).__set__, made, values))
        return made


NO_EXTRA: Mapping[str, int] = MappingProxyType({})  # shared by every hour without extra counters
_INT = frozenset((int, type(None)))


def _int_columns(
    columns: Mapping[str, Sequence[int | None]],
) -> tuple[dict[str, npt.NDArray[np.int64]], dict[str, npt.NDArray[np.bool_]]] | None:
    """Counter columns as int64 arrays (0 where unknown) and, for a column with an unknown hour,
    its mask; None when a value is no int (a float would be truncated) or does not fit."""
    counters: dict[str, npt.NDArray[np.int64]] = {}
    unknown: dict[str, npt.NDArray[np.bool_]] = {}
    for k, col in columns.items():
        if not set(map(type, col)) <= _INT:
            return None
        try:
            try:
                counters[k] = np.array(col, dtype=np.int64)
            except TypeError:  # an unknown (None) hour
                unknown[k] = np.array([v is None for v in col], dtype=np.bool_)
                counters[k] = np.array([0 if v is None else v for v in col], dtype=np.int64)
        except OverflowError:
            return None
    return counters, unknown


@dataclass(frozen=True, slots=True, eq=False)
class Hours(Sequence[tuple[datetime, Usage]]):
    """A window's hours by column, in the order they were given (hour order, from the store): what
    an evaluation holds for every object of a pool. As a (time, Usage) pair each, a week of hours
    took ~570 B an hour, most of a worker's memory; by column they take ~70 B. It reads as the
    sequence of pairs it stands for (each Usage built when asked for, equal to the one it was made
    from); `take` and `parallel_sum` stay by column."""

    times: tuple[datetime, ...]
    seconds: npt.NDArray[np.float64]
    counters: Mapping[str, npt.NDArray[np.int64]]  # in the hours' key order; 0 where unknown
    unknown: Mapping[str, npt.NDArray[np.bool_]]  # only the counters with an unknown (None) hour
    extra: tuple[Mapping[str, int], ...] | None = None  # per hour; None when no hour has any

    @classmethod
    def of(cls, pairs: Sequence[tuple[datetime, Usage]]) -> Hours | None:
        """The pairs by column; None when they cannot be held exactly that way (no hours, hours
        with other counter keys, seconds that are no float, counters that are no int64)."""
        if isinstance(pairs, Hours):
            return pairs
        if not pairs:
            return None
        usages = [u for _, u in pairs]
        keys = tuple(usages[0].counters)
        if any(tuple(u.counters) != keys for u in usages[1:]):
            return None
        return cls.by_column(
            tuple(t for t, _ in pairs),
            [u.seconds for u in usages],
            {k: [u.counters[k] for u in usages] for k in keys},
            tuple(u.extra for u in usages),
        )

    @classmethod
    def by_column(
        cls,
        times: tuple[datetime, ...],
        seconds: Sequence[float],
        counters: Mapping[str, Sequence[int | None]],
        extra: Sequence[Mapping[str, int]] = (),
    ) -> Hours | None:
        """Hours from their columns (`extra`: per hour, or none at all); None when they cannot be
        held exactly by column (seconds that are no float, counters that are no int64)."""
        if any(len(c) != len(times) for c in (seconds, *counters.values())) or (
            extra and len(extra) != len(times)
        ):
            raise ValueError("Hours.by_column: columns of different lengths")
        if set(map(type, seconds)) != {float}:
            return None
        columns = _int_columns(counters)
        if columns is None:
            return None
        return cls(times, np.array(seconds, dtype=np.float64), *columns, tuple(extra) if any(extra) else None)

    def column(self, name: str) -> list[int | None]:
        """One counter's hours as plain values, None where unknown (and everywhere if not held)."""
        values = self.counters.get(name)
        if values is None:
            return [None] * len(self.times)
        out: list[int | None] = values.tolist()
        mask = self.unknown.get(name)
        if mask is not None:
            out = [None if u else v for v, u in zip(out, mask.tolist(), strict=True)]
        return out

    def _usages(self) -> list[Usage]:
        n = len(self.times)
        keys = list(self.counters)
        if keys:
            rows = zip(*map(self.column, keys), strict=True)
            counters: list[Mapping[str, int | None]] = [dict(zip(keys, r, strict=True)) for r in rows]
        else:
            counters = [{} for _ in range(n)]
        extra = self.extra if self.extra is not None else [NO_EXTRA] * n
        return Usage.from_columns(self.seconds.tolist(), counters, extra)

    def _usage(self, i: int) -> Usage:
        counters: dict[str, int | None] = {}
        for k, values in self.counters.items():
            mask = self.unknown.get(k)
            counters[k] = None if mask is not None and mask[i] else int(values[i])
        extra = self.extra[i] if self.extra is not None else NO_EXTRA
        return Usage(float(self.seconds[i]), counters, extra)

    def __len__(self) -> int:
        return len(self.times)

    def __iter__(self) -> Iterator[tuple[datetime, Usage]]:
        return zip(self.times, self._usages(), strict=True)

    @overload
    def __getitem__(self, i: int) -> tuple[datetime, Usage]: ...
    @overload
    def __getitem__(self, i: slice) -> Hours: ...
    def __getitem__(self, i: int | slice) -> tuple[datetime, Usage] | Hours:
        if isinstance(i, slice):
            return self.take(range(len(self.times))[i])
        i = range(len(self.times))[i]  # IndexError out of range; negative from the end
        return self.times[i], self._usage(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(map(eq, self, other))

    __hash__ = None  # type: ignore[assignment]

    def take(self, positions: Sequence[int]) -> Hours:
        """The hours at these positions, in that order."""
        at = np.asarray(positions, dtype=np.intp)
        unknown = {k: m[at] for k, m in self.unknown.items()}
        extra = None
        if self.extra is not None:
            kept = tuple(self.extra[i] for i in positions)
            extra = kept if any(kept) else None
        return Hours(
            tuple(self.times[i] for i in positions),
            self.seconds[at],
            {k: v[at] for k, v in self.counters.items()},
            {k: m for k, m in unknown.items() if m.any()},
            extra,
        )

    @staticmethod
    def parallel_sum(members: Sequence[Hours]) -> Hours | None:
        """Files of one unit over the same hours (the caller checks), hour by hour as
        `_sum_parallel` adds them: seconds the longest, a counter unknown only where every file's
        is. None when the members hold other counter keys or extra counters, or sums that might
        not fit an int64."""
        first = members[0]
        keys = tuple(first.counters)
        if any(tuple(h.counters) != keys or h.extra is not None for h in members):
            return None
        largest = max((max(int(c.max(initial=0)), -int(c.min(initial=0))) for h in members
                       for c in h.counters.values()), default=0)  # fmt: skip
        if largest * len(members) >= 2**63:  # a sum int64 might not hold: the caller adds the pairs
            return None
        unknown: dict[str, npt.NDArray[np.bool_]] = {}
        for k in keys:
            masks = [m for h in members if (m := h.unknown.get(k)) is not None]
            if len(masks) == len(members):
                every = np.logical_and.reduce(masks)
                if every.any():
                    unknown[k] = every
        return Hours(
            first.times,
            np.maximum.reduce([h.seconds for h in members]),
            {k: np.add.reduce([h.counters[k] for h in members]) for k in keys},
            unknown,
        )


def hour_times(by_hour: Sequence[tuple[datetime, Usage]]) -> Sequence[datetime]:
    """The hours' times, without building their Usage."""
    return by_hour.times if isinstance(by_hour, Hours) else [t for t, _ in by_hour]


def hour_columns(by_hour: Sequence[tuple[datetime, Usage]], *names: str) -> list[list[int | None]]:
    """Counter columns of the hours (None where unknown), without building their Usage."""
    if isinstance(by_hour, Hours):
        return [by_hour.column(n) for n in names]
    return [[u.counters.get(n) for _, u in by_hour] for n in names]


def hour_extras(by_hour: Sequence[tuple[datetime, Usage]]) -> Sequence[Mapping[str, int]]:
    """The hours' extra counters, without building their Usage."""
    if isinstance(by_hour, Hours):
        return by_hour.extra if by_hour.extra is not None else (NO_EXTRA,) * len(by_hour.times)
    return [u.extra for _, u in by_hour]


def hour_seconds(by_hour: Sequence[tuple[datetime, Usage]]) -> list[float]:
    if isinstance(by_hour, Hours):
        out: list[float] = by_hour.seconds.tolist()
        return out
    return [u.seconds for _, u in by_hour]


def keep_hours(
    by_hour: Sequence[tuple[datetime, Usage]], positions: Sequence[int]
) -> Sequence[tuple[datetime, Usage]]:
    """The hours at these positions: by column when they are."""
    if isinstance(by_hour, Hours):
        return by_hour.take(positions)
    return tuple(by_hour[i] for i in positions)


@dataclass(frozen=True, slots=True)
class MaintenanceSlice:
    """I/O of one maintenance source (a declared window, or detected bursts) left out of heat."""

    name: str  # the window's name, or "large sequential reads" for detected bursts
    kind: str  # backup | dbcc | index | etl | burst
    hours: float
    reads: int
    writes: int
    bytes_read: int
    requests: float  # on the object's heat basis (file I/O or the partition's proxy)

    @property
    def avg_read_bytes(self) -> float | None:
        return self.bytes_read / self.reads if self.reads else None


@dataclass(frozen=True, slots=True)
class MaintenanceShare:
    """What was left out of an object's heat as maintenance, and its share of the object's I/O."""

    slices: tuple[MaintenanceSlice, ...]
    io_share: float  # of all requests in the window (heat basis)
    read_share: float | None  # of all reads (None: no read counters)
    hours: float
    note: str | None = None  # e.g. why nothing was excluded after all


@dataclass(frozen=True, slots=True)
class PeriodSplit:
    """The hours of a window that fall in a declared business period's latest occurrence."""

    name: str
    kind: str
    occurrence: date  # the period's first day in that occurrence
    window: ObjectWindow
    hot_min_ratio: float


@dataclass(frozen=True, slots=True)
class ObjectWindow:
    info: ObjectInfo
    total: Usage
    by_hour: Sequence[tuple[datetime, Usage]] = ()
    # set by advisors.maintenance.prepare_window: what was left out of `total` / `by_hour`
    maintenance: MaintenanceShare | None = None
    period: PeriodSplit | None = None


@dataclass(frozen=True, slots=True)
class Features:
    read_iops: float
    write_iops: float
    read_mb_s: float
    write_mb_s: float
    avg_read_bytes: float | None
    avg_write_bytes: float | None
    avg_read_ms: float | None
    avg_write_ms: float | None
    read_pct: float | None  # share of requests that are reads, 0-100
    heat: float  # I/O requests per GB per hour
    heat_ratio: float | None  # heat relative to the database's average (Veritas IOTEMP "Average")
    heat_basis: str  # "file I/O" or the proxy used for partitions
    io_rate: float  # requests per second on heat_basis (file I/O, or the partition's proxy)
    read_miss_ratio: float | None
    read_miss_basis: str | None
    prefetch_share: float | None  # DB2: share of physical reads done by prefetchers
    singleton_share: float | None  # SQL Server partitions: lookups / (lookups + range scans)
    est_cache_hit_share: float | None  # random reads the array cache serves (advisors.benefit)
    trend_pct_per_day: float | None
    # SQL Server shows read-miss only instance-wide (Buffer Manager page reads / page lookups):
    # context for a file, not its own figure (its file reads are already the misses)
    instance_read_miss_ratio: float | None
    # I/O per second by hour of day of the buckets' own labels (UTC from the store; 24 values;
    # empty if unknown)
    by_hour_of_day: tuple[float, ...]
    hours: float
    maintenance: MaintenanceShare | None = None  # I/O left out of every figure above as maintenance
    period: PeriodView | None = None  # the latest occurrence of a declared business period
    # of avg_read_ms / avg_write_ms: SQL Server Resource Governor queueing (io_stall_queued_*_ms),
    # time an I/O waited for the pool's MAX_IOPS_PER_VOLUME before it was issued (None: not reported)
    governor_read_ms: float | None = None
    governor_write_ms: float | None = None


@dataclass(frozen=True, slots=True)
class PeriodView:
    """An object's figures in the latest occurrence of a business period (month-end...), and how
    its I/O rate then compares with the other days' (`ratio`; None when the other days have none)."""

    name: str
    kind: str
    occurrence: date
    features: Features
    ratio: float | None
    hot_min_ratio: float

    @property
    def hot(self) -> bool:
        return self.features.io_rate > 0 and (self.ratio is None or self.ratio >= self.hot_min_ratio)


def _n(v: int | None) -> int:
    return v or 0


def _sum(extra: Mapping[str, int], names: Sequence[str]) -> int:
    return sum(extra.get(n, 0) for n in names)


DB2_P_READS = (
    "pool_data_p_reads",
    "pool_index_p_reads",
    "pool_xda_p_reads",
    "pool_col_p_reads",
    "pool_temp_data_p_reads",
    "pool_temp_index_p_reads",
)
DB2_L_READS = (
    "pool_data_l_reads",
    "pool_index_l_reads",
    "pool_xda_l_reads",
    "pool_col_l_reads",
    "pool_temp_data_l_reads",
    "pool_temp_index_l_reads",
)
DB2_ASYNC_READS = (
    "pool_async_data_reads",
    "pool_async_index_reads",
    "pool_async_xda_reads",
    "pool_async_col_reads",
)


def io_requests(info: ObjectInfo, usage: Usage) -> tuple[float, str]:
    """Physical I/O requests in the usage, or the best proxy the engine gives for a partition."""
    c, x = usage.counters, usage.extra
    if c.get("reads") is not None or c.get("writes") is not None:
        return float(_n(c.get("reads")) + _n(c.get("writes"))), "file I/O"
    if "page_io_latch_wait_count" in x:
        return float(x["page_io_latch_wait_count"]), "page I/O latch waits (physical-read proxy)"
    if "object_data_p_reads" in x:
        return float(x["object_data_p_reads"]), "object physical reads"
    return 0.0, "no I/O counters"


def heat_of(info: ObjectInfo, usage: Usage) -> float:
    """I/O per GB per hour (a zero-size object is treated as 1 MB so heat stays finite)."""
    requests, _ = io_requests(info, usage)
    gb = max((info.size_bytes or 0) / GB, 1 / 1024)
    hours = usage.seconds / 3600 if usage.seconds else 0
    return requests / gb / hours if hours else 0.0


def database_heat(windows: Sequence[ObjectWindow]) -> dict[tuple[str, str], float]:
    """Average heat per (server, database) over objects with file-level counters, weighted by size."""
    io: dict[tuple[str, str], float] = {}
    gb: dict[tuple[str, str], float] = {}
    hours: dict[tuple[str, str], float] = {}
    for w in windows:
        if w.info.kind == "partition":
            continue  # their I/O is already in their files / table spaces
        k = (w.info.server, w.info.database)
        req, basis = io_requests(w.info, w.total)
        if basis != "file I/O":
            continue
        io[k] = io.get(k, 0.0) + req
        gb[k] = gb.get(k, 0.0) + max((w.info.size_bytes or 0) / GB, 1 / 1024)
        hours[k] = max(hours.get(k, 0.0), w.total.seconds / 3600)
    return {k: io[k] / gb[k] / hours[k] for k in io if gb[k] and hours[k]}


def _read_miss(info: ObjectInfo, x: Mapping[str, int]) -> tuple[float | None, str | None]:
    if info.engine == "db2" and "pool_data_l_reads" in x:
        logical = _sum(x, DB2_L_READS)
        if logical <= 0:
            return None, None
        sync = max(_sum(x, DB2_P_READS) - _sum(x, DB2_ASYNC_READS), 0)
        return min(
            sync / logical, 1.0
        ), "buffer pool: synchronous physical / logical reads (prefetch not a miss)"
    if "object_data_l_reads" in x and x["object_data_l_reads"] > 0:
        return min(
            x.get("object_data_p_reads", 0) / x["object_data_l_reads"], 1.0
        ), "table: physical / logical reads"
    if "page_io_latch_wait_count" in x:
        accesses = x.get("singleton_lookup_count", 0) + x.get("range_scan_count", 0)
        if accesses > 0:
            return min(
                x["page_io_latch_wait_count"] / accesses, 1.0
            ), "page I/O latch waits per access (proxy)"
    return None, None


def _bucket_requests(u: Usage) -> float:
    """`io_requests(info, u)[0]` without the basis text: the hourly loops ask it for every bucket."""
    c = u.counters
    r, w = c.get("reads"), c.get("writes")
    if r is not None or w is not None:
        return float((r or 0) + (w or 0))
    return _proxy_requests(u.extra)


def _proxy_requests(x: Mapping[str, int]) -> float:
    """A bucket's requests on the partition's proxy, when it has no file counters (`io_requests`)."""
    if "page_io_latch_wait_count" in x:
        return float(x["page_io_latch_wait_count"])
    if "object_data_p_reads" in x:
        return float(x["object_data_p_reads"])
    return 0.0


def _hourly_profile(by_hour: Sequence[tuple[datetime, Usage]]) -> tuple[tuple[float, ...], float | None]:
    """The I/O rate by hour of day and the daily trend (`_trend`) in one pass over the buckets,
    each bucket's requests worked out once: this runs for every hour of every unit."""
    if not by_hour:
        return (), None
    req = [0.0] * 24
    secs = [0.0] * 24
    days: dict[float, float] = {}  # day ordinal -> I/O rate, for days at least 90 % covered
    times = hour_times(by_hour)
    reads, writes = hour_columns(by_hour, "reads", "writes")
    tz = times[0].tzinfo
    # days by date ordinal while the buckets share one fixed-offset zone (days are then exactly
    # 86,400 s apart) and come day after day; otherwise by midnight datetimes, as `_trend` does
    by_ordinal = tz is None or type(tz) is timezone
    day, day_io, day_secs = -1, 0.0, 0.0
    extras = hour_extras(by_hour)
    for t, r, w, s, x in zip(times, reads, writes, hour_seconds(by_hour), extras, strict=True):
        # no file counters: the partition's proxy
        n = float((r or 0) + (w or 0)) if r is not None or w is not None else _proxy_requests(x)
        h = t.hour
        req[h] += n
        secs[h] += s
        if not by_ordinal:
            continue
        d = t.toordinal()
        if t.tzinfo is not tz or d < day:  # another zone, or out of order: the general way
            by_ordinal = False
            continue
        if d != day:
            if day_secs >= 0.9 * 86400:
                days[float(day)] = day_io / day_secs
            day, day_io, day_secs = d, 0.0, 0.0
        day_io += n
        day_secs += s
    profile = tuple(r / s if s else 0.0 for r, s in zip(req, secs, strict=True))
    if not by_ordinal:
        return profile, _trend([(t, _bucket_requests(u), u.seconds) for t, u in by_hour])
    if day_secs >= 0.9 * 86400:
        days[float(day)] = day_io / day_secs
    return profile, _slope(days)


def _trend(hourly: Sequence[tuple[datetime, float, float]]) -> float | None:
    """Least-squares slope of daily I/O rate, as % of the mean per day (None with under 2 days
    that are at least 90 % covered: a partial day would read as a trend)."""
    io: dict[datetime, float] = {}
    covered: dict[datetime, float] = {}
    day: datetime | None = None
    last: tuple[int, int, int] | None = None
    for t, requests, seconds in hourly:
        if (t.year, t.month, t.day) != last or day is None or day.tzinfo is not t.tzinfo:
            day, last = t.replace(hour=0, minute=0, second=0, microsecond=0), (t.year, t.month, t.day)
        io[day] = io.get(day, 0.0) + requests
        covered[day] = covered.get(day, 0.0) + seconds
    days = {d: io[d] / covered[d] for d in io if covered[d] >= 0.9 * 86400}
    if len(days) < 2:
        return None
    first = min(days)
    return _slope({(d - first).total_seconds() / 86400: days[d] for d in days})


def _slope(days: Mapping[float, float]) -> float | None:
    """Least-squares slope of the rate by day (days counted from any origin: only differences
    matter), as % of the mean rate per day."""
    if len(days) < 2:
        return None
    origin = min(days)
    xs = [d - origin for d in sorted(days)]
    ys = [days[d] for d in sorted(days)]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    if den == 0 or my == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den
    return 100 * slope / my


def instance_read_miss(windows: Sequence[ObjectWindow]) -> dict[str, float]:
    """Per SQL Server instance: Δ page reads / Δ page lookups from the Buffer Manager counters."""
    out: dict[str, float] = {}
    for w in windows:
        x = w.total.extra
        if w.info.kind == "instance" and x.get("page_lookups"):
            out[w.info.server] = min(x.get("page_reads", 0) / x["page_lookups"], 1.0)
    return out


def compute_features(
    window: ObjectWindow,
    *,
    db_heat: float | None,
    instance_miss: float | None = None,
) -> Features:
    info, u = window.info, window.total
    c, x = u.counters, u.extra
    secs = u.seconds or 1.0
    reads, writes = _n(c.get("reads")), _n(c.get("writes"))
    br, bw = c.get("bytes_read"), c.get("bytes_written")
    rt, wt = c.get("read_time_ms"), c.get("write_time_ms")
    avg_read_ms = rt / reads if rt is not None and reads else None
    heat = heat_of(info, u)
    requests, basis = io_requests(info, u)
    by_hour_of_day, trend = _hourly_profile(window.by_hour)
    miss, miss_basis = _read_miss(info, x)
    p_reads = _sum(x, DB2_P_READS)
    prefetch = _sum(x, DB2_ASYNC_READS) / p_reads if info.engine == "db2" and p_reads > 0 else None
    lookups, scans = x.get("singleton_lookup_count"), x.get("range_scan_count")
    singleton = (
        lookups / (lookups + scans) if lookups is not None and scans is not None and lookups + scans else None
    )
    return Features(
        read_iops=reads / secs,
        write_iops=writes / secs,
        read_mb_s=_n(br) / 2**20 / secs,
        write_mb_s=_n(bw) / 2**20 / secs,
        avg_read_bytes=br / reads if br is not None and reads else None,
        avg_write_bytes=bw / writes if bw is not None and writes else None,
        avg_read_ms=avg_read_ms,
        avg_write_ms=wt / writes if wt is not None and writes else None,
        read_pct=100 * reads / (reads + writes) if reads + writes else None,
        heat=heat,
        heat_ratio=heat / db_heat if db_heat else None,
        heat_basis=basis,
        io_rate=requests / secs,
        read_miss_ratio=miss,
        read_miss_basis=miss_basis,
        prefetch_share=prefetch,
        singleton_share=singleton,
        est_cache_hit_share=None,  # the benefit model's array-cache hits, set by advisors.units
        trend_pct_per_day=trend,
        instance_read_miss_ratio=instance_miss if info.engine == "sqlserver" else None,
        by_hour_of_day=by_hour_of_day,
        hours=u.seconds / 3600,
        maintenance=window.maintenance,
        period=_period_view(window, db_heat, instance_miss, requests / secs),
        governor_read_ms=governor_per_io(x.get(GOVERNOR_READ), rt, reads),
        governor_write_ms=governor_per_io(x.get(GOVERNOR_WRITE), wt, writes),
    )


# SQL Server 2014+: Resource Governor's share of the stall (sys.dm_io_virtual_file_stats)
GOVERNOR_READ = "io_stall_queued_read_ms"
GOVERNOR_WRITE = "io_stall_queued_write_ms"


def governor_per_io(queued: int | None, stall: int | None, ios: int) -> float | None:
    """Resource Governor queueing per I/O, never more than the stall it is part of (None: the
    engine reports none, or no I/O)."""
    if queued is None or not ios:
        return None
    return min(max(queued, 0), stall if stall is not None else queued) / ios


def _period_view(
    window: ObjectWindow,
    db_heat: float | None,
    instance_miss: float | None,
    other_rate: float,
) -> PeriodView | None:
    p = window.period
    if p is None or p.window.total.seconds <= 0:
        return None
    pf = compute_features(p.window, db_heat=db_heat, instance_miss=instance_miss)
    ratio = pf.io_rate / other_rate if other_rate > 0 else None
    return PeriodView(p.name, p.kind, p.occurrence, pf, ratio, p.hot_min_ratio)


_COLUMNS = 8  # from this many dicts on, summing column by column beats the loop over items


def add_counters(dicts: Sequence[Mapping[str, int | None]]) -> dict[str, int | None]:
    """Counters summed key by key, in first-seen key order: a counter is None only when every
    dict's is. Column by column, in C, when many dicts share their keys and have no None."""
    if len(dicts) >= _COLUMNS and (n := len(first := dicts[0])) > 1 and all(map(n.__eq__, map(len, dicts))):
        try:
            columns = zip(*map(itemgetter(*first), dicts), strict=True)
            return dict(zip(first, map(sum, columns), strict=True))
        except (KeyError, TypeError):  # other keys (same sizes), or a None counter
            pass
    counters: dict[str, int | None] = {}
    for d in dicts:
        for k, v in d.items():
            if v is not None:
                counters[k] = (counters.get(k) or 0) + v
            elif k not in counters:
                counters[k] = None
    return counters


def add_extra(dicts: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """Engine-specific counters summed key by key, in first-seen key order."""
    if not any(dicts):
        return {}
    if len(dicts) >= _COLUMNS and (n := len(first := dicts[0])) > 1 and all(map(n.__eq__, map(len, dicts))):
        try:
            columns = zip(*map(itemgetter(*first), dicts), strict=True)
            return dict(zip(first, map(sum, columns), strict=True))
        except KeyError:  # other keys, same sizes
            pass
    extra: dict[str, int] = {}
    for d in dicts:
        for k, x in d.items():
            extra[k] = extra.get(k, 0) + x
    return extra


def _sum_parallel(usages: Sequence[Usage]) -> Usage:
    """``usages[0] + usages[1] + ...`` (files of one unit over the same time) in one pass: a
    counter is None only when every file's is, seconds are the longest."""
    if len(usages) == 1:
        return usages[0]
    if len(usages) >= _COLUMNS:
        return Usage(
            max(u.seconds for u in usages),
            add_counters([u.counters for u in usages]),
            add_extra([u.extra for u in usages]),
        )
    counters: dict[str, int | None] = {}
    extra: dict[str, int] = {}
    for u in usages:
        for k, v in u.counters.items():
            if v is not None:
                counters[k] = (counters.get(k) or 0) + v
            elif k not in counters:
                counters[k] = None
        for k, x in u.extra.items():
            extra[k] = extra.get(k, 0) + x
    return Usage(max(u.seconds for u in usages), counters, extra)


def _same_hours(windows: Sequence[ObjectWindow]) -> bool:
    """Whether every member has the same hours, each once and in order (the usual case): then the
    hours line up by position, with no dict and no sort."""
    hours = hour_times(windows[0].by_hour)
    if not all(map(lt, hours, hours[1:])):
        return False
    return all(
        len(w.by_hour) == len(hours) and all(map(eq, hour_times(w.by_hour), hours)) for w in windows[1:]
    )


def combine(windows: Sequence[ObjectWindow], info: ObjectInfo) -> ObjectWindow:
    """One window for a group of objects that move together (a filegroup's files, tempdb's files)."""
    total = _sum_parallel([w.total for w in windows])
    size = sum(w.info.size_bytes or 0 for w in windows)
    by_hour: Sequence[tuple[datetime, Usage]]
    if not _same_hours(windows):
        hours: dict[datetime, list[Usage]] = {}
        for w in windows:
            for t, usage in w.by_hour:
                hours.setdefault(t, []).append(usage)
        by_hour = tuple((t, _sum_parallel(us)) for t, us in sorted(hours.items(), key=lambda h: h[0]))
    elif len(windows) == 1:
        by_hour = windows[0].by_hour if isinstance(windows[0].by_hour, Hours) else tuple(windows[0].by_hour)
    else:
        members = [w.by_hour for w in windows]
        summed = None
        if all(isinstance(m, Hours) for m in members):
            summed = Hours.parallel_sum(members)  # type: ignore[arg-type]
        by_hour = (
            summed
            if summed is not None
            else tuple(
                (hour[0][0], _sum_parallel([u for _, u in hour])) for hour in zip(*members, strict=True)
            )
        )
    return ObjectWindow(replace(info, size_bytes=size), total, by_hour)
