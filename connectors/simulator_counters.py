"""Counter generation for the simulated fleet: a workload model's rates -> cumulative DMV and
monitor rows, as one poll of a live server would return them, with restarts.

A cumulative counter is the closed-form integral of its rate since the last restart, floored to
an int, so a snapshot depends only on (seed, origin, at) and never on call order; every reported
counter is a sum of such floors, so it never decreases between restarts. Derived objects (the SQL
Server Buffer Manager, DB2 buffer pools and containers) are functions of other objects' counters
at the same instant, so they agree with them exactly and draw nothing from the random generator.

What the objects are and why they belong where they do is the workload model's business
(connectors/simulator_workload.py); the truth records live here because an instance returns them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

from connectors.records import CORE_COUNTERS, Engine, ObjectRef, ObjectSample, Snapshot
from connectors.shapes import DB2_BUFFERPOOLS, DB2_TABLESPACES, ColumnType

_DAY_S = 86_400.0
_OMEGA = 2 * math.pi / _DAY_S
_DB2_LOG_PAGE = 4096
_SECTOR = 512
_SQL_PAGE = 8192

N = TypeVar("N", int, float)  # renderers run on int counters and, for the truth, on float rates


@dataclass(frozen=True)
class ObjectTruth:
    """What the workload model knows about one object: the answer the advisors should find.

    Rates are the daily means (the sine integrates to zero over a day). `read_miss_ratio` is
    physical ÷ logical reads as the object's own counters define it (DB2 table space: sync reads ÷
    logical reads, as db2mon; DB2 partition: object p ÷ l reads; SQL Server partition: page-I/O
    latch waits ÷ (singleton lookups + range scans)); `prefetch_share` is async ÷ physical pages
    (DB2 table spaces). Both are None where the counters cannot show them (SQL Server files, logs).
    A partition's rates are its container's (filegroup, table space) times its share of that I/O.
    """

    key: str
    profile: str
    intended_tier: str
    read_iops: float
    write_iops: float
    avg_read_bytes: int
    avg_write_bytes: int
    read_ms: float
    write_ms: float
    read_miss_ratio: float | None
    prefetch_share: float | None
    current_tier: str
    # issue #9: I/O outside the steady workload, which the rates above leave out
    maintenance: str | None = None  # e.g. "nightly backup 01:00-02:00 UTC, 1 MB reads"
    maintenance_read_iops: float = 0.0  # its reads, as a daily mean
    period: str | None = None  # a recurring business period in which the object is busy
    period_read_iops: float = 0.0  # extra reads/s during the period
    period_tier: str | None = None  # the tier it needs for that period (kept there in between)
    endurance: str | None = None  # why flash's write budget rules it out


@dataclass(frozen=True)
class CacheTruth:
    """The workload model's ratios for a buffer pool or the SQL Server instance (not placement
    objects, so not in `truth()`): `read_miss_ratio` = sync physical ÷ logical page reads (DB2, as
    db2mon) or page reads ÷ page lookups (SQL Server); `prefetch_share` = async ÷ physical pages
    (DB2) or read-ahead pages ÷ page reads (SQL Server). Daily means."""

    key: str
    read_miss_ratio: float
    prefetch_share: float


# --- object models: rates -> cumulative counters ----------------------------------------------


@dataclass(frozen=True, slots=True)
class _Burst:
    """Extra event streams at a flat rate inside a recurring window and nothing outside it: a
    nightly backup (`daily`: seconds after UTC midnight) or a month-end re-read (`month_end`: the
    last and first days of each month, UTC). Still closed-form: rate × covered seconds."""

    origin: datetime
    rates: tuple[tuple[str, float], ...]
    daily: tuple[float, float] | None = None
    month_end: tuple[int, int] | None = None

    def seconds(self, since: float, until: float) -> float:
        """Seconds of [since, until] (from origin) inside the window."""
        if self.daily is not None:
            start, end = self.daily
            tod = (
                self.origin - self.origin.replace(hour=0, minute=0, second=0, microsecond=0)
            ).total_seconds()

            def covered(x: float) -> float:
                days, rest = divmod(x + tod, _DAY_S)
                return days * (end - start) + min(max(rest - start, 0.0), end - start)

            return covered(until) - covered(since)
        assert self.month_end is not None
        last, first = self.month_end
        a, b = self.origin + timedelta(seconds=since), self.origin + timedelta(seconds=until)
        total, month = 0.0, _add_months(a.date(), -1)
        while month <= b.date():
            turn = datetime.combine(_add_months(month, 1), datetime.min.time(), UTC)
            lo, hi = max(a, turn - timedelta(days=last)), min(b, turn + timedelta(days=first))
            total += max((hi - lo).total_seconds(), 0.0)
            month = _add_months(month, 1)
        return total

    def daily_mean(self) -> float:
        """Share of an average day inside the window (a 30.4-day month for month-end)."""
        if self.daily is not None:
            return (self.daily[1] - self.daily[0]) / _DAY_S
        assert self.month_end is not None
        return sum(self.month_end) / (365.25 / 12)


@dataclass(frozen=True, slots=True)
class _Model:
    """One object: its identity, the mean rates of its atoms and its daily rhythm."""

    ref: ObjectRef
    rates: tuple[tuple[str, float], ...]
    amplitude: float  # < 1, so the instantaneous rate stays positive
    phase: float
    bursts: tuple[_Burst, ...] = field(default=(), kw_only=True)  # maintenance, business periods

    def activity(self, since: float, until: float) -> float:
        """∫ (1 + a·sin(ωt + φ)) dt over [since, until]: mean-rate seconds elapsed (t from origin)."""
        k = self.amplitude / _OMEGA
        return (until - since) + k * (
            math.cos(_OMEGA * since + self.phase) - math.cos(_OMEGA * until + self.phase)
        )

    def sample(self, since: float, until: float) -> ObjectSample:
        a = self.activity(since, until)
        atoms = {name: int(rate * a) for name, rate in self.rates}
        for burst in self.bursts:  # each stream floored on its own: the sum stays monotone
            b = burst.seconds(since, until)
            for name, rate in burst.rates:
                atoms[name] = atoms.get(name, 0) + int(rate * b)
        counters, extra = self.render(atoms)
        return ObjectSample(self.ref, counters, extra)

    def mean_counters(self) -> dict[str, float | None]:
        """The core counters' per-second means (renderers are linear, so render the rates)."""
        return self.render(dict(self.rates))[0]

    def render(self, v: Mapping[str, N]) -> tuple[dict[str, N | None], dict[str, N]]:
        """Atoms -> (core counters, engine extras)."""
        return dict.fromkeys(CORE_COUNTERS), dict(v)  # partitions: no file-level counters


@dataclass(frozen=True, slots=True)
class _SqlFileModel(_Model):
    """A sys.dm_io_virtual_file_stats row: bytes are requests times a fixed size, so exact."""

    read_bytes: int
    write_bytes: int
    extra_read_bytes: int = field(default=1024 * 1024, kw_only=True)  # size of `extra_reads` (bursts)

    def render(self, v: Mapping[str, N]) -> tuple[dict[str, N | None], dict[str, N]]:
        reads, writes = v["reads"], v["writes"]
        if "extra_reads" in v:  # a burst's reads, of another size than the workload's
            more = v["extra_reads"]
            counters: dict[str, N | None] = {
                "reads": reads + more,
                "bytes_read": reads * self.read_bytes + more * self.extra_read_bytes,
                "read_time_ms": v["read_time_ms"] + v["extra_read_time_ms"],
                "writes": writes,
                "bytes_written": writes * self.write_bytes,
                "write_time_ms": v["write_time_ms"],
            }
            return counters, {}
        counters = {
            "reads": reads,
            "bytes_read": reads * self.read_bytes,
            "read_time_ms": v["read_time_ms"],
            "writes": writes,
            "bytes_written": writes * self.write_bytes,
            "write_time_ms": v["write_time_ms"],
        }
        return counters, {}


@dataclass(frozen=True, slots=True)
class _Db2LogModel(_Model):
    """MON_GET_TRANSACTION_LOG mapped to the core counters (log pages are 4 KB)."""

    def render(self, v: Mapping[str, N]) -> tuple[dict[str, N | None], dict[str, N]]:
        counters: dict[str, N | None] = {
            "reads": v["num_log_read_io"],
            "bytes_read": v["log_reads"] * _DB2_LOG_PAGE,
            "read_time_ms": v["log_read_time"],
            "writes": v["num_log_write_io"],
            "bytes_written": v["log_writes"] * _DB2_LOG_PAGE,
            "write_time_ms": v["log_write_time"],
        }
        return counters, {}


# Atoms of a DB2 table space that are reported unchanged under their MON_GET_TABLESPACE names.
_DB2_PASSTHROUGH = (
    "pool_data_writes",
    "pool_index_writes",
    "pool_write_time",
    "vectored_ios",
    "pages_from_vectored_ios",
    "block_ios",
    "pages_from_block_ios",
    "direct_reads",
    "direct_read_reqs",
    "direct_read_time",
    "direct_writes",
    "direct_write_reqs",
    "direct_write_time",
)


def _total(values: list[N]) -> N:
    out = values[0]
    for value in values[1:]:
        out = out + value
    return out


def db2_core_counters(extra: Mapping[str, N], page_size: int) -> dict[str, N | None]:
    """The core counters of a DB2 table space from its MON_GET_TABLESPACE elements (records.py)."""
    p_reads = _total([n for k, n in extra.items() if k.endswith("_p_reads")])
    async_reads = _total(
        [n for k, n in extra.items() if k.startswith("pool_async_") and k.endswith("_reads")]
    )
    pool_writes = _total([n for k, n in extra.items() if k.startswith("pool_") and k.endswith("_writes")])
    sync_reads = p_reads - async_reads
    return {
        "reads": sync_reads + extra["vectored_ios"] + extra["block_ios"] + extra["direct_read_reqs"],
        "bytes_read": p_reads * page_size + extra["direct_reads"] * _SECTOR,
        "read_time_ms": extra["pool_read_time"] + extra["direct_read_time"],
        "writes": pool_writes + extra["direct_write_reqs"],
        "bytes_written": pool_writes * page_size + extra["direct_writes"] * _SECTOR,
        "write_time_ms": extra["pool_write_time"] + extra["direct_write_time"],
    }


@dataclass(frozen=True, slots=True)
class _Db2SpaceModel(_Model):
    """MON_GET_TABLESPACE: logical = sync + async + hits and physical = sync + async, so the
    counters stay consistent (async <= p <= l) at every instant, not only on average."""

    page_size: int

    def render(self, v: Mapping[str, N]) -> tuple[dict[str, N | None], dict[str, N]]:
        extra: dict[str, N] = {}
        for kind, prefix in (("data", "pool_data"), ("index", "pool_index")):
            sync, prefetch = v[f"{kind}_sync"], v[f"{kind}_async"]
            extra[f"{prefix}_l_reads"] = sync + prefetch + v[f"{kind}_hit"]
            extra[f"{prefix}_p_reads"] = sync + prefetch
            extra[f"pool_async_{kind}_reads"] = prefetch
        extra["pool_temp_data_l_reads"] = v["temp_sync"] + v["temp_hit"]
        extra["pool_temp_data_p_reads"] = v["temp_sync"]
        extra["pool_read_time"] = v["sync_time"] + v["async_time"]
        extra["pool_async_read_time"] = v["async_time"]
        for name in _DB2_PASSTHROUGH:
            extra[name] = v[name]
        return db2_core_counters(extra, self.page_size), extra


# --- derived objects: the SQL Server Buffer Manager, DB2 buffer pools and containers ----------


@dataclass(frozen=True, slots=True)
class _Derived:
    """An object whose counters are functions of other objects' counters at the same instant.

    Every function is a sum, or a floor of a non-negative multiple, of the parts' counters, so it
    never decreases when they do not, and it agrees with them exactly at every sample."""

    ref: ObjectRef
    parts: tuple[str, ...]  # keys of the objects it is derived from

    def derive(self, parts: Sequence[ObjectSample], since: float, until: float) -> ObjectSample:
        raise NotImplementedError  # pragma: no cover - every derived kind overrides it


@dataclass(frozen=True, slots=True)
class _SqlBufferManager(_Derived):
    """'Page reads/sec' = the data and tempdb files' bytes read in 8 KB pages (log reads do not go
    through the buffer pool); 'Readahead pages/sec' = those of files read in requests larger than
    a page; 'Page writes/sec' = their bytes written in pages; 'Page lookups/sec' = page reads plus
    buffer hits, an event stream of its own."""

    readahead: frozenset[str]
    hits: _Model

    def derive(self, parts: Sequence[ObjectSample], since: float, until: float) -> ObjectSample:
        def pages(counter: str, only: frozenset[str] | None = None) -> int:
            return sum(
                (p.counters[counter] or 0) // _SQL_PAGE for p in parts if only is None or p.ref.key in only
            )

        page_reads = pages("bytes_read")
        hits = self.hits.sample(since, until).extra["page_hits"]
        extra = {
            "page_reads": page_reads,
            "page_lookups": page_reads + hits,
            "readahead_pages": pages("bytes_read", self.readahead),
            "page_writes": pages("bytes_written"),
        }
        return ObjectSample(self.ref, dict.fromkeys(CORE_COUNTERS), extra)


_TABLESPACE_COLUMNS = {c.name for c in DB2_TABLESPACES.columns}
# MON_GET_BUFFERPOOL elements that are the sums of the same MON_GET_TABLESPACE elements
_POOL_SUMS = tuple(
    c.name for c in DB2_BUFFERPOOLS.columns if c.type is ColumnType.COUNTER and c.name in _TABLESPACE_COLUMNS
)


@dataclass(frozen=True, slots=True)
class _Db2BufferPool(_Derived):
    """MON_GET_BUFFERPOOL = the sums over the pool's table spaces, plus three elements a table
    space does not report: 5 % of the prefetcher's pages were already in the pool
    (POOL_ASYNC_DATA_LBP_PAGES_FOUND), every logical data read that needed no synchronous read
    found its page (so db2mon's local hit ratio equals its data hit ratio), and 2 % of prefetched
    pages are evicted unread (UNREAD_PREFETCH_PAGES)."""

    def derive(self, parts: Sequence[ObjectSample], since: float, until: float) -> ObjectSample:
        extra: dict[str, int] = {}
        for name in _POOL_SUMS:
            values = [p.extra[name] for p in parts if name in p.extra]
            if values:
                extra[name] = sum(values)
        logical = extra["pool_data_l_reads"] + extra.get("pool_temp_data_l_reads", 0)
        physical = extra["pool_data_p_reads"] + extra.get("pool_temp_data_p_reads", 0)
        prefetched = extra["pool_async_data_reads"]
        already_cached = prefetched // 20
        extra["pool_async_data_lbp_pages_found"] = already_cached
        extra["pool_data_lbp_pages_found"] = logical - physical + prefetched + already_cached
        extra["unread_prefetch_pages"] = (prefetched + extra["pool_async_index_reads"]) // 50
        return ObjectSample(self.ref, dict.fromkeys(CORE_COUNTERS), extra)


@dataclass(frozen=True, slots=True)
class _Db2Container(_Derived):
    """MON_GET_CONTAINER of container `index` of a table space's `of` containers, one per storage
    path of its storage group (automatic storage stripes a table space over every path): its share
    of the table space's physical page reads, buffer pool page writes, direct I/O and read time.
    Container i takes floor((x + of - 1 - i) / of) of a counter x, so the shares never decrease
    and add up to x exactly."""

    index: int = 0
    of: int = 1

    def _share(self, v: int) -> int:
        return (v + self.of - 1 - self.index) // self.of

    def derive(self, parts: Sequence[ObjectSample], since: float, until: float) -> ObjectSample:
        (space,) = parts
        x = space.extra
        extra = {
            "pages_read": sum(v for k, v in x.items() if k.endswith("_p_reads")),
            "pages_written": sum(v for k, v in x.items() if k.startswith("pool_") and k.endswith("_writes")),
            "direct_reads": x["direct_reads"],
            "direct_writes": x["direct_writes"],
            "pool_read_time": x["pool_read_time"],
            "direct_read_time": x["direct_read_time"],
            "direct_write_time": x["direct_write_time"],
        }
        return ObjectSample(
            self.ref, dict.fromkeys(CORE_COUNTERS), {k: self._share(v) for k, v in extra.items()}
        )


# --- instances --------------------------------------------------------------------------------


class SimulatedInstance:
    """One simulated server: its objects' models, its boot time and its restarts."""

    def __init__(
        self,
        name: str,
        engine: Engine,
        origin: datetime,
        boot_s: float,
        restarts_s: list[float],
        models: list[_Model],
        truth: dict[str, ObjectTruth],
        derived: Sequence[_Derived] = (),
        cache_truth: Mapping[str, CacheTruth] | None = None,
    ) -> None:
        self.name = name
        self.engine = engine
        self._origin = origin
        self._starts = [boot_s, *sorted(restarts_s)]  # seconds from origin
        self._models = models
        self._truth = truth
        self._derived = tuple(derived)
        self._cache_truth = dict(cache_truth or {})

    def snapshot(self, at: datetime) -> Snapshot:
        """Cumulative counters at `at`, counted from the last (re)start at or before it."""
        until = _seconds_since(self._origin, at)
        since = max(s for s in self._starts if s <= until)
        samples = [m.sample(since, until) for m in self._models]
        if self._derived:
            by_key = {s.ref.key: s for s in samples}
            samples += [d.derive([by_key[k] for k in d.parts], since, until) for d in self._derived]
        start = self._origin + timedelta(seconds=since)
        return Snapshot(self.engine, self.name, at.astimezone(UTC), start, tuple(samples))

    def truth(self) -> dict[str, ObjectTruth]:
        """Ground truth of the placement objects (files, table spaces, partitions, logs)."""
        return dict(self._truth)

    def cache_truth(self) -> dict[str, CacheTruth]:
        """Ground truth of the buffer pools / the instance's Buffer Manager (demo instances)."""
        return dict(self._cache_truth)

    def restarts(self) -> list[datetime]:
        return [self._origin + timedelta(seconds=s) for s in self._starts[1:]]

    def restart(self, at: datetime) -> None:
        """Fault injection: the instance restarts at `at` (its counters start again from zero)."""
        self._starts = [self._starts[0], *sorted([*self._starts[1:], _seconds_since(self._origin, at)])]


def _seconds_since(origin: datetime, at: datetime) -> float:
    if at.tzinfo is None:
        raise ValueError(f"sample time {at.isoformat()} has no time zone; pass a UTC-aware datetime")
    if at < origin:
        raise ValueError(f"sample time {at.isoformat()} is before the fleet's origin {origin.isoformat()}")
    return (at - origin).total_seconds()


def _add_months(d: date, months: int) -> date:
    """The first day of the month `months` away from d's month."""
    index = d.year * 12 + d.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)
