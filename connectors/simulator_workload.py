"""The simulated fleet's workload model: which objects the demo instances hold, the workload
profiles and mixes they are drawn from, and the tier each object should end up on (its truth).

Every object is a small workload model: the mean per-second rates of a few independent event
streams ("atoms"), all modulated by one daily sine, plus recurring bursts (a nightly backup, a
month-end re-read). Per-object parameters are drawn once from `random.Random(seed)` in a fixed
order, so the seed alone fixes every parameter: objects added later draw nothing (`jitter=False`,
fixed numbers) so that every other object stays what it was. Turning the rates into cumulative
counters is connectors/simulator_counters.py; the contents of the demo fleet and why each object
belongs where it does: docs/demo-fleet.md.
"""

from __future__ import annotations

import math
import ntpath
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from connectors.db2 import with_container_locations
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample
from connectors.simulator_counters import (
    _DAY_S,
    _DB2_PASSTHROUGH,
    _OMEGA,
    _SQL_PAGE,
    CacheTruth,
    ObjectTruth,
    SimulatedInstance,
    _add_months,
    _Burst,
    _Db2BufferPool,
    _Db2Container,
    _Db2LogModel,
    _Db2SpaceModel,
    _Derived,
    _Model,
    _SqlBufferManager,
    _SqlFileModel,
)
from connectors.sqlserver import BUFFER_MANAGER_KEY

_GB = 1024**3

_READ_MS = {"flash": (0.5, 1.0), "fc": (5.0, 8.0), "sata": (12.0, 20.0)}
_HOT_FC_READ_MS = (12.0, 17.0)  # hot random reads queue up on FC spindles (EMC 2009: 17 ms)
_LOG_WRITE_MS = (1.0, 2.0)  # sequential log writes land in the array's write cache
_TB = 1024 * 1024**3
_TIERS = ("flash", "fc", "sata")
# The policy tierwise ships (policies/loader.py's DEFAULT_POLICY), read as plain data: the demo sits
# where its tiers are, so the demo is advised by the policy it ships with; connectors import
# nothing of the policy model.
SHIPPED_POLICY = Path(__file__).resolve().parents[1] / "policies" / "default.yaml"


def _shipped_locations() -> dict[str, dict[str, Any]]:
    """Each tier's `locations` in the shipped policy (a tier without a SQL Server directory, a DB2
    storage group or a DB2 path prefix is a mistake in policies/default.yaml)."""
    doc = yaml.safe_load(SHIPPED_POLICY.read_text(encoding="utf-8"))
    locations = {t["name"]: t.get("locations") or {} for t in doc["tiers"]}
    for name in _TIERS:
        loc = locations.get(name, {})
        if not (
            loc.get("sqlserver_directory") and loc.get("db2_storage_group") and loc.get("db2_path_prefixes")
        ):
            raise ValueError(
                f"{SHIPPED_POLICY}: tier {name!r} needs sqlserver_directory, db2_storage_group and "
                "db2_path_prefixes for the demo fleet"
            )
    return locations


_LOCATIONS = _shipped_locations()
_SQL_DIR = {t: str(_LOCATIONS[t]["sqlserver_directory"]).rstrip("\\") for t in _TIERS}
_DB2_DIR = {t: str(_LOCATIONS[t]["db2_path_prefixes"][0]).rstrip("/") for t in _TIERS}
_STORAGE_GROUPS = {t: str(_LOCATIONS[t]["db2_storage_group"]) for t in _TIERS}
# each tier's storage group's storage paths: the policy's db2_paths (what the scripts plan for it),
# else its path prefix; a table space has a container on each (automatic storage)
_DB2_PATHS = {
    t: [str(p).rstrip("/") for p in _LOCATIONS[t].get("db2_paths") or [_DB2_DIR[t]]] for t in _TIERS
}
# tier -> (volume, total bytes): SQL Server volumes (the directory's drive) and DB2 file systems (FS_ID)
_SIZES = {"flash": 4 * _TB, "fc": 40 * _TB, "sata": 80 * _TB}
_SQL_VOLUMES = {t: (ntpath.splitdrive(_SQL_DIR[t])[0] + "\\", _SIZES[t]) for t in _TIERS}
_DB2_FILE_SYSTEMS = {
    "flash": ("64769", _SIZES["flash"]),
    "fc": ("64770", _SIZES["fc"]),
    "sata": ("64771", _SIZES["sata"]),
}
_OTHER_USE = 0.25  # share of each volume used by things other than the simulated objects


# issue #9: maintenance, a business period and flash endurance in the demo (docs/demo-fleet.md)
_BACKUP_READS, _BACKUP_START_H = 150.0, 1
_MONTH_END_AGE, _MONTH_END_READS, _MONTH_END_DAYS = 15, 120.0, (2, 1)


class _Builder:
    """Draws one instance's objects in a fixed order, so the seed alone fixes every parameter."""

    def __init__(self, rng: random.Random, server: str, engine: Engine, origin: datetime) -> None:
        self.rng, self.server, self.engine, self.origin = rng, server, engine, origin
        self.models: list[_Model] = []
        self.truth: dict[str, ObjectTruth] = {}
        self.derived: list[_Derived] = []
        self.cache_truth: dict[str, CacheTruth] = {}
        self.tiers: dict[str, str] = {}  # key -> current tier of files and table spaces
        midnight = origin.replace(hour=0, minute=0, second=0, microsecond=0)
        self._origin_tod = (origin - midnight).total_seconds()

    def phase(self, peak_hour: float, *, jitter: bool = True) -> float:
        """φ such that the rate peaks at `peak_hour` UTC (± ~35 min), with t counted from origin.
        Without jitter nothing is drawn, for objects added after the seed's draws were fixed."""
        shift = self.rng.uniform(-0.15, 0.15) if jitter else 0.0
        return _OMEGA * (self._origin_tod - peak_hour * 3600) + math.pi / 2 + shift

    def ref(self, database: str, kind: ObjectKind, key: str, name: str, **location: Any) -> ObjectRef:
        return ObjectRef(self.engine, self.server, database, kind, key, name, **location)

    def instance(self, boot_s: float, restarts_s: list[float]) -> SimulatedInstance:
        return SimulatedInstance(
            self.server,
            self.engine,
            self.origin,
            boot_s,
            restarts_s,
            self.models,
            self.truth,
            self.derived,
            self.cache_truth,
        )

    def relocate(self, locations: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace ref fields of some models, by key (volumes are known once every object exists)."""
        self.models = [
            replace(m, ref=replace(m.ref, **locations[m.ref.key])) if m.ref.key in locations else m
            for m in self.models
        ]


def _truth(model: _Model, profile: str, intended: str, current: str, **ratios: float | None) -> ObjectTruth:
    """Ground truth of a model with core counters, read straight off its mean rates."""
    c = {k: float(v or 0.0) for k, v in model.mean_counters().items()}
    reads, writes = c["reads"], c["writes"]
    return ObjectTruth(
        key=model.ref.key,
        profile=profile,
        intended_tier=intended,
        read_iops=reads,
        write_iops=writes,
        avg_read_bytes=round(c["bytes_read"] / reads) if reads else 0,
        avg_write_bytes=round(c["bytes_written"] / writes) if writes else 0,
        read_ms=c["read_time_ms"] / reads if reads else 0.0,
        write_ms=c["write_time_ms"] / writes if writes else 0.0,
        read_miss_ratio=ratios.get("read_miss_ratio"),
        prefetch_share=ratios.get("prefetch_share"),
        current_tier=current,
    )


# --- SQL Server -------------------------------------------------------------------------------

Range = tuple[float, float]


@dataclass(frozen=True)
class _Profile:
    """Typical per-file numbers of one workload profile (rates per second, sizes in bytes)."""

    reads: Range
    writes: Range
    read_bytes: int
    write_bytes: int
    intended: str
    amplitude: float
    peak_hour: float  # UTC


_PROFILES: dict[str, _Profile] = {
    "random_read": _Profile((500, 900), (10, 40), 8192, 8192, "flash", 0.6, 14),
    "random_mixed": _Profile((100, 250), (70, 160), 8192, 8192, "fc", 0.6, 14),
    "sequential_read": _Profile((60, 120), (1, 5), 262_144, 65_536, "fc", 0.5, 2),
    "cold": _Profile((0.05, 0.5), (0.01, 0.05), 65_536, 8192, "sata", 0.2, 14),
    "write_heavy": _Profile((30, 80), (300, 500), 65_536, 65_536, "fc", 0.4, 22),
    "log_write": _Profile((1, 4), (200, 450), 61_440, 24_576, "fc", 0.6, 14),
    "tempdb": _Profile((50, 100), (60, 120), 32_768, 32_768, "fc", 0.4, 2),
}


@dataclass(frozen=True)
class _File:
    """One SQL Server database file; unset numbers are drawn from its profile (filegroup None = log)."""

    db: str
    file_id: int
    logical: str
    filegroup: str | None
    profile: str
    tier: str
    size_gb: float
    reads: float | Range | None = None
    writes: float | Range | None = None
    read_bytes: int | None = None
    read_ms: float | None = None
    intended: str | None = None


def _pick(rng: random.Random, value: float | Range) -> float:
    return rng.uniform(*value) if isinstance(value, tuple) else value


# fmt: off
_SQLPROD01_FILES = (
    _File("Sales", 1, "Sales", "PRIMARY", "random_mixed", "fc", 2, reads=6, writes=2, intended="flash"),
    _File("Sales", 2, "Sales_log", None, "log_write", "fc", 120),
    _File("Sales", 3, "Sales_HotIdx1", "FG_HOT_INDEX", "random_read", "fc", 60, reads=(700, 800)),
    _File("Sales", 4, "Sales_HotIdx2", "FG_HOT_INDEX", "random_read", "fc", 60, reads=(700, 800)),
    _File("Sales", 5, "Sales_Cust1", "FG_CUSTOMERS", "random_mixed", "fc", 250, reads=(160, 200), intended="flash"),
    _File("Sales", 6, "Sales_Archive1", "FG_ARCHIVE", "cold", "sata", 1600),
    _File("Sales", 7, "Sales_Rpt1", "FG_REPORTING", "sequential_read", "fc", 400, intended="sata"),
    # files 8-31: dbo.Orders, one filegroup per month (_SqlServer.orders)
    _File("Staging", 1, "Staging", "PRIMARY", "write_heavy", "fc", 150, writes=(120, 200)),
    _File("Staging", 2, "Staging_log", None, "log_write", "fc", 40, writes=(120, 180)),
    _File("tempdb", 1, "tempdev", "PRIMARY", "tempdb", "fc", 16, intended="flash"),
    _File("tempdb", 2, "templog", None, "tempdb", "fc", 8, reads=0.5, writes=(30, 50)),
    _File("tempdb", 3, "temp2", "PRIMARY", "tempdb", "fc", 16, intended="flash"),
    _File("tempdb", 4, "temp3", "PRIMARY", "tempdb", "fc", 16, intended="flash"),
    _File("tempdb", 5, "temp4", "PRIMARY", "tempdb", "fc", 16, intended="flash"),
)
# fmt: on


class _SqlServer(_Builder):
    def file(self, f: _File) -> ObjectTruth:
        """One sys.dm_io_virtual_file_stats row: rates, latencies and a path that names the tier."""
        p, rng, log = _PROFILES[f.profile], self.rng, f.filegroup is None
        reads = _pick(rng, p.reads if f.reads is None else f.reads)
        writes = _pick(rng, p.writes if f.writes is None else f.writes)
        hot_on_fc = f.profile == "random_read" and f.tier == "fc"
        read_ms = f.read_ms or rng.uniform(*(_HOT_FC_READ_MS if hot_on_fc else _READ_MS[f.tier]))
        write_ms = rng.uniform(*(_LOG_WRITE_MS if log else _READ_MS[f.tier]))
        kind = ObjectKind.TEMPDB if f.db == "tempdb" else ObjectKind.DATA_FILE
        kind, ext = (ObjectKind.LOG_FILE, ".ldf") if log else (kind, ".mdf" if f.file_id == 1 else ".ndf")
        ref = self.ref(
            f.db, kind, f"{f.db}/file/{f.file_id}", f.logical, size_bytes=int(f.size_gb * _GB),
            logical_name=f.logical, physical_name=f"{_SQL_DIR[f.tier]}\\{f.db}\\{f.logical}{ext}",
            file_id=f.file_id, filegroup=f.filegroup,
        )  # fmt: skip
        rates = (
            ("reads", reads),
            ("read_time_ms", reads * read_ms),
            ("writes", writes),
            ("write_time_ms", writes * write_ms),
        )
        phase = self.phase(p.peak_hour)
        model = _SqlFileModel(ref, rates, p.amplitude, phase, f.read_bytes or p.read_bytes, p.write_bytes)
        self.models.append(model)
        self.tiers[ref.key] = f.tier
        self.truth[ref.key] = _truth(model, f.profile, f.intended or p.intended, f.tier)
        return self.truth[ref.key]

    def orders(self, first_file_id: int, months: int = 24) -> None:
        """dbo.Orders on pf_OrderMonth (RANGE RIGHT, monthly): one filegroup and file per month,
        heat ∝ exp(-age/3 months). The newest 11 months (8 KB random reads, from ~16 reads/s per
        ~25 GB at age 10 up to 450 at age 0) save more than 2 ms/s of I/O wait per GB on flash,
        above flash's price of 1.5 ms/s per GB over fc, and the default flash tier has room:
        -> flash; the older ones, read in 64 KB requests a few times a second, are cold -> sata."""
        rng, origin = self.rng, self.origin
        month_fill = max(0.1, (origin.day - 1 + origin.hour / 24) / 31)
        for n in range(1, months + 1):
            age = months - n
            low, high = _add_months(origin.date(), -age), _add_months(origin.date(), 1 - age)
            profile, intended = ("random_read", "flash") if age <= 10 else ("cold", "sata")
            month_gb, fg = 26 * 0.985**age, f"FG_ORD_{low:%Y%m}"
            file_truth = self.file(_File(
                "Sales", first_file_id + n - 1, f"Sales_Ord_{low:%Y%m}", fg, profile, "fc", month_gb * 1.15,
                reads=450 * math.exp(-age / 3) * rng.uniform(0.95, 1.05),
                writes=(60, 8, 2)[age] if age < 3 else 0.02, read_bytes=8192 if age <= 10 else 65_536,
                read_ms=rng.uniform(*_READ_MS["fc"]) + 8 * math.exp(-age / 3), intended=intended,
            ))  # fmt: skip
            miss, scans = min(0.95, 0.55 + 0.04 * age), min(0.4, 0.03 + 0.02 * age)
            used = month_gb * _GB * (month_fill if age == 0 else 1.0)
            first, last = n == 1, n == months
            ref = self.ref(  # RANGE RIGHT: partition 1 has no low bound, the last one no high bound
                "Sales", ObjectKind.PARTITION, f"Sales/partition/dbo.Orders/1/{n}", f"Orders {low:%Y-%m}",
                size_bytes=int(used), filegroup=fg, table_name="dbo.Orders", partition_number=n,
                partition_scheme="ps_OrderMonth", partition_function="pf_OrderMonth", range_right=True,
                range_low=None if first else low.isoformat(), low_inclusive=None if first else True,
                range_high=None if last else high.isoformat(), high_inclusive=None if last else False,
                rows=int(used / 310),
            )  # fmt: skip
            r = file_truth.read_iops
            rates = (
                ("singleton_lookup_count", r / miss * (1 - scans)),
                ("range_scan_count", r / miss * scans),
                ("page_io_latch_wait_count", r),  # one wait per physical read
                ("page_io_latch_wait_in_ms", r * file_truth.read_ms),
                ("leaf_insert_count", 35.0 if age == 0 else 0.0),
                ("leaf_update_count", (12, 3, 0.5)[age] if age < 3 else 0.01),
                ("leaf_delete_count", 0.0),
            )
            file_model = self.models[-1]
            self.models.append(_Model(ref, rates, file_model.amplitude, file_model.phase))
            self.truth[ref.key] = replace(file_truth, key=ref.key, read_miss_ratio=miss)
            if age == _MONTH_END_AGE:
                self._month_end_reread(ref.key, file_truth)

    def _month_end_reread(self, partition_key: str, file_truth: ObjectTruth) -> None:
        """Issue #9: month-end closing re-reads this old month (and its filegroup's file): 120 more
        8 KB lookups per second in the last 2 and first day of every month (UTC), nothing else.
        Cold on the other days (sata), it needs fc in the period (120 reads/s: too few for flash)."""
        file_model, part_model = self.models[-2], self.models[-1]
        assert isinstance(file_model, _SqlFileModel)
        reads, miss = _MONTH_END_READS, 0.9
        file_burst = _Burst(self.origin, (("extra_reads", reads), ("extra_read_time_ms", reads * file_truth.read_ms)),
                            month_end=_MONTH_END_DAYS)  # fmt: skip
        part_burst = _Burst(self.origin, (("singleton_lookup_count", reads / miss), ("page_io_latch_wait_count", reads),
                            ("page_io_latch_wait_in_ms", reads * file_truth.read_ms)), month_end=_MONTH_END_DAYS)  # fmt: skip
        self.models[-2] = replace(file_model, bursts=(file_burst,), extra_read_bytes=_SQL_PAGE)
        self.models[-1] = replace(part_model, bursts=(part_burst,))
        for key in (file_model.ref.key, partition_key):
            self.truth[key] = replace(
                self.truth[key], period="month_end", period_read_iops=reads, period_tier="fc"
            )

    def nightly_backup(self, key: str) -> None:
        """Issue #9: a nightly full backup of a cold filegroup's file, 01:00-02:00 UTC every day:
        150 reads/s of 1 MB at 8 ms. Maintenance, not workload: the truth's rates leave it out."""
        i = next(i for i, m in enumerate(self.models) if m.ref.key == key)
        model = self.models[i]
        reads, start = _BACKUP_READS, _BACKUP_START_H * 3600
        burst = _Burst(self.origin, (("extra_reads", reads), ("extra_read_time_ms", reads * 8.0)),
                       daily=(start, start + 3600))  # fmt: skip
        self.models[i] = replace(model, bursts=(burst,))
        self.truth[key] = replace(
            self.truth[key],
            maintenance=f"nightly backup {_BACKUP_START_H:02d}:00-{_BACKUP_START_H + 1:02d}:00 UTC, 1 MB reads",
            maintenance_read_iops=reads * burst.daily_mean(),
        )

    def staging_load(self) -> None:
        """Issue #9: a write-hot staging table (Staging FG_LOAD, 40 GB, on fc): 185 random 8 KB
        reads/s at 13 ms (a flash candidate by its reads) under 60 bulk writes/s of 256 KB (95 % of
        its bytes): ~1.3 TB written per day, a third of the default flash tier's write budget
        (3,840 GB a day). Its reads earn it flash and the budget has room for it; Staging's PRIMARY,
        which writes ~0.6 TB a day and saves far less per GB written, is the writer left out.
        Fixed numbers, nothing drawn, so every other object is what it was."""
        reads, writes, read_ms, write_ms = 185.0, 60.0, 13.0, 6.0
        ref = self.ref(
            "Staging", ObjectKind.DATA_FILE, "Staging/file/3", "Staging_Load1", size_bytes=40 * _GB,
            logical_name="Staging_Load1", physical_name=f"{_SQL_DIR['fc']}\\Staging\\Staging_Load1.ndf",
            file_id=3, filegroup="FG_LOAD",
        )  # fmt: skip
        rates = (("reads", reads), ("read_time_ms", reads * read_ms), ("writes", writes),
                 ("write_time_ms", writes * write_ms))  # fmt: skip
        model = _SqlFileModel(ref, rates, 0.4, self.phase(22, jitter=False), _SQL_PAGE, 262_144)
        self.models.append(model)
        self.tiers[ref.key] = "fc"
        self.truth[ref.key] = _truth(model, "write_heavy", "flash", "fc")
        primary = self.truth["Staging/file/1"]
        written_gb = primary.write_iops * primary.avg_write_bytes * _DAY_S / _GB
        self.truth[primary.key] = replace(
            primary,
            endurance=f"writes ~{written_gb:,.0f} GB a day; flash's daily write budget (3,840 GB on the shipped "
            "policy) goes to the writers that save more per GB written",
        )

    def buffer_manager(self, miss: float) -> None:
        """The instance's Buffer Manager over its data and tempdb files, with `miss` = page reads
        ÷ page lookups on average (a well-cached OLTP instance: a few percent)."""
        files = [
            m for m in self.models if isinstance(m, _SqlFileModel) and m.ref.kind is not ObjectKind.LOG_FILE
        ]
        page_rate = {m.ref.key: dict(m.rates)["reads"] * m.read_bytes / _SQL_PAGE for m in files}
        for m in files:  # a nightly backup is in every whole day (simplified: counted as page reads)
            for burst in m.bursts:
                if burst.daily is not None:
                    more = dict(burst.rates)["extra_reads"] * burst.daily_mean()
                    page_rate[m.ref.key] += more * m.extra_read_bytes / _SQL_PAGE
        ahead = frozenset(m.ref.key for m in files if m.read_bytes > _SQL_PAGE)
        reads = sum(page_rate.values())
        ref = self.ref("", ObjectKind.INSTANCE, BUFFER_MANAGER_KEY, "Buffer Manager")
        hits = _Model(ref, (("page_hits", reads * (1 / miss - 1)),), 0.5, self.phase(14, jitter=False))
        self.derived.append(_SqlBufferManager(ref, tuple(page_rate), ahead, hits))
        read_ahead = sum(rate for k, rate in page_rate.items() if k in ahead)  # in file order
        self.cache_truth[ref.key] = CacheTruth(ref.key, miss, read_ahead / reads)

    def volumes(self) -> None:
        """Each file's volume (its tier's drive): total size, and what the simulated files and
        other use (a quarter) leave free."""
        used: dict[str, int] = {}
        for m in self.models:
            if m.ref.key in self.tiers:
                tier = self.tiers[m.ref.key]
                used[tier] = used.get(tier, 0) + (m.ref.size_bytes or 0)
        locations: dict[str, dict[str, Any]] = {}
        for key, tier in self.tiers.items():
            mount, total = _SQL_VOLUMES[tier]
            free = int(total * (1 - _OTHER_USE)) - used[tier]
            locations[key] = {"volume": mount, "volume_total_bytes": total, "volume_available_bytes": free}
        self.relocate(locations)


def sqlprod01(rng: random.Random, origin: datetime) -> SimulatedInstance:
    b = _SqlServer(rng, "SQLPROD01", Engine.SQLSERVER, origin)
    for f in _SQLPROD01_FILES:
        b.file(f)
        if f.db == "Sales" and f.file_id == 7:
            b.orders(first_file_id=8)
    b.nightly_backup("Sales/file/6")  # FG_ARCHIVE (issue #9; nothing drawn from the generator)
    b.staging_load()
    b.volumes()
    b.buffer_manager(miss=0.03)
    return b.instance(boot_s=-(9 * _DAY_S + 3 * 3600 + 17 * 60), restarts_s=[30 * 3600.0])


_GENERIC_MIX = {"random_read": 15, "random_mixed": 35, "sequential_read": 15, "cold": 30, "write_heavy": 5}
_MIX_PROFILES, _MIX_WEIGHTS = list(_GENERIC_MIX), list(_GENERIC_MIX.values())


def generic_sqlserver(rng: random.Random, number: int, files: int, origin: datetime) -> SimulatedInstance:
    """An OLTP-like instance whose database AppDB has `files` files (file 1 PRIMARY, file 2 its log)."""
    b = _SqlServer(rng, f"SQLSIM{number:04d}", Engine.SQLSERVER, origin)
    for file_id in range(1, files + 1):
        if file_id == 1:
            b.file(_File("AppDB", 1, "AppDB", "PRIMARY", "random_mixed", "fc", rng.uniform(1, 10)))
        elif file_id == 2:
            b.file(_File("AppDB", 2, "AppDB_log", None, "log_write", "fc", rng.uniform(20, 100)))
        else:
            profile = rng.choices(_MIX_PROFILES, weights=_MIX_WEIGHTS)[0]
            tier = "sata" if profile == "cold" and rng.random() < 0.5 else "fc"
            name, fg = f"AppDB_{file_id:03d}", f"FG_{file_id:03d}"
            b.file(_File("AppDB", file_id, name, fg, profile, tier, rng.uniform(20, 500)))
    b.volumes()
    return b.instance(boot_s=-rng.uniform(1, 30) * _DAY_S, restarts_s=[])


# --- DB2 --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Space:
    """A DB2 table space's workload: logical page reads split into sync misses, prefetched pages
    and buffer-pool hits, with `miss` = sync ÷ logical and `prefetch` = async ÷ physical pages."""

    name: str
    tbsp_id: int
    content: str  # ANY | LARGE | SYSTEMP | USRTEMP
    page: int
    tier: str
    used_gb: float
    profile: str
    intended: str
    l_reads: float | Range
    miss: float
    prefetch: float
    index_share: float
    page_writes: float | Range
    block_share: float = 0.0
    direct_reqs: float = 0.0  # LOB direct reads/s (half as many direct writes), 32 sectors each
    amplitude: float = 0.6
    peak_hour: float = 14
    pages_per_io: int = 16


# fmt: off
_DB2PROD01_SPACES = (
    #      name          id  content    page    tier    GB   profile            intended  logical/s
    _Space("TEMPSPACE1", 1, "SYSTEMP", 16_384, "fc", 20, "tempdb", "flash", (2500, 3500),
           miss=0.3, prefetch=0.0, index_share=0.0, page_writes=(500, 700), amplitude=0.4, peak_hour=2),
    _Space("TS_HOT_IDX", 3, "LARGE", 8192, "fc", 90, "random_read", "flash", (4500, 5500),
           miss=0.3, prefetch=0.03, index_share=0.8, page_writes=(40, 80)),
    _Space("TS_SCAN", 4, "LARGE", 16_384, "fc", 600, "sequential_read", "flash", (5000, 7000),
           miss=0.04, prefetch=0.95, index_share=0.1, page_writes=(2, 6), block_share=0.3,
           amplitude=0.5, peak_hour=2),
    _Space("TS_CUR", 5, "LARGE", 16_384, "fc", 300, "random_mixed", "flash", (11_000, 13_000),
           miss=0.025, prefetch=0.1, index_share=0.3, page_writes=(180, 220), direct_reqs=3),
)
# fmt: on


def _history_space(year: int, age: int) -> _Space:
    """A cold yearly history table space: heat halves per year of age; the oldest is already on SATA."""
    tier = "sata" if age == 6 else "fc"
    return _Space(
        f"TS_HIST_{year}", 12 - age, "LARGE", 16_384, tier, 340 - 20 * age, "cold", "sata",
        20 * 0.5 ** (age - 2), miss=0.15, prefetch=0.8, index_share=0.3, page_writes=0.001, amplitude=0.2,
    )  # fmt: skip


class _Db2(_Builder):
    def space(self, s: _Space) -> _Db2SpaceModel:
        """MON_GET_TABLESPACE atoms from the workload; latencies from the current tier."""
        rng = self.rng
        l_reads = _pick(rng, s.l_reads)
        sync = l_reads * s.miss
        prefetched = sync * s.prefetch / (1 - s.prefetch)
        hits = l_reads - sync - prefetched
        if hits < 0:
            raise ValueError(f"{s.name}: miss {s.miss} with prefetch {s.prefetch} exceeds the logical reads")
        hot_on_fc = s.profile == "random_read" and s.tier == "fc"
        sync_ms = rng.uniform(*(_HOT_FC_READ_MS if hot_on_fc else _READ_MS[s.tier]))
        async_ms, write_ms = sync_ms + rng.uniform(4, 6), rng.uniform(*_READ_MS[s.tier])
        page_writes = _pick(rng, s.page_writes)
        temp = s.content in ("SYSTEMP", "USRTEMP")
        rates = dict.fromkeys(("temp_sync", "temp_hit", *_DB2_PASSTHROUGH), 0.0)
        for kind, share in (("data", 1 - s.index_share), ("index", s.index_share)):
            rates |= {f"{kind}_sync": 0.0, f"{kind}_async": prefetched * share, f"{kind}_hit": 0.0}
            if not temp:
                rates |= {f"{kind}_sync": sync * share, f"{kind}_hit": hits * share}
        if temp:  # temporary tables are read through the pool_temp_* elements
            rates |= {"temp_sync": sync, "temp_hit": hits}
        vectored, block = prefetched * (1 - s.block_share), prefetched * s.block_share
        direct_writes = s.direct_reqs / 2
        rates |= {
            "pages_from_vectored_ios": vectored,
            "vectored_ios": vectored / s.pages_per_io,
            "pages_from_block_ios": block,
            "block_ios": block / s.pages_per_io,
            "sync_time": sync * sync_ms,
            "async_time": prefetched / s.pages_per_io * async_ms,
            "pool_data_writes": page_writes * 0.7,
            "pool_index_writes": page_writes * 0.3,
            "pool_write_time": page_writes * write_ms,
            "direct_read_reqs": s.direct_reqs,
            "direct_reads": s.direct_reqs * 32,
            "direct_read_time": s.direct_reqs * sync_ms,
            "direct_write_reqs": direct_writes,
            "direct_writes": direct_writes * 32,
            "direct_write_time": direct_writes * write_ms,
        }
        ref = self.ref(
            "ORDERS", ObjectKind.TEMPDB if temp else ObjectKind.TABLESPACE, f"ORDERS/tablespace/{s.name}",
            s.name, size_bytes=int(s.used_gb * _GB), tablespace=s.name, storage_group=_STORAGE_GROUPS[s.tier],
            physical_name=f"{_DB2_PATHS[s.tier][0]}/db2inst1/NODE0000/ORDERS/T{s.tbsp_id:07d}/",
        )  # fmt: skip
        model = _Db2SpaceModel(ref, tuple(rates.items()), s.amplitude, self.phase(s.peak_hour), s.page)
        self.models.append(model)
        self.tiers[ref.key] = s.tier
        ratios = {"read_miss_ratio": s.miss, "prefetch_share": s.prefetch if prefetched else None}
        self.truth[ref.key] = _truth(model, s.profile, s.intended, s.tier, **ratios)
        return model

    def partition(self, space: _Db2SpaceModel, part_id: int, year: int, share: float, changes: float) -> None:
        """A yearly data partition of ORDERS.ORDER_HIST with `share` of its table space's data I/O
        and `changes` row updates/s (twice as many inserts)."""
        r, size = dict(space.rates), (space.ref.size_bytes or 0) * share
        logical = (r["data_sync"] + r["data_async"] + r["data_hit"]) * share
        physical = (r["data_sync"] + r["data_async"]) * share
        ref = self.ref(
            "ORDERS", ObjectKind.PARTITION, f"ORDERS/partition/ORDERS.ORDER_HIST/{part_id}", f"P{year}",
            size_bytes=int(size), tablespace=space.ref.tablespace, storage_group=space.ref.storage_group,
            table_name="ORDERS.ORDER_HIST", partition_number=part_id, range_low=f"{year}-01-01",
            range_high=f"{year + 1}-01-01", low_inclusive=True, high_inclusive=False, rows=int(size / 180),
        )  # fmt: skip
        rates = (
            ("table_scans", physical / 20_000),  # a scan reads ~20,000 pages
            ("rows_read", logical * 40),
            ("rows_inserted", changes * 2),
            ("rows_updated", changes),
            ("rows_deleted", 0.0),
            ("object_data_l_reads", logical),
            ("object_data_p_reads", physical),
        )
        self.models.append(_Model(ref, rates, space.amplitude, space.phase))
        c = self.truth[space.ref.key]
        self.truth[ref.key] = replace(
            c, key=ref.key, read_iops=c.read_iops * share, write_iops=c.write_iops * share,
            read_miss_ratio=physical / logical, prefetch_share=None,
        )  # fmt: skip

    def log(self) -> None:
        """MON_GET_TRANSACTION_LOG: ~12 KB writes into the array cache, rare 64 KB reads."""
        rng = self.rng
        writes, reads = rng.uniform(250, 350), rng.uniform(0.3, 0.8)
        path = f"{_DB2_DIR['fc']}/db2log/ORDERS/NODE0000/LOGSTREAM0000/"
        ref = self.ref(
            "ORDERS", ObjectKind.LOG_FILE, "ORDERS/log", "ORDERS log", size_bytes=40 * _GB, physical_name=path
        )
        rates = (
            ("num_log_read_io", reads),
            ("log_reads", reads * 16),
            ("log_read_time", reads * rng.uniform(*_READ_MS["fc"])),
            ("num_log_write_io", writes),
            ("log_writes", writes * 3),
            ("log_write_time", writes * rng.uniform(*_LOG_WRITE_MS)),
        )
        model = _Db2LogModel(ref, rates, 0.6, self.phase(14))
        self.models.append(model)
        self.truth[ref.key] = _truth(model, "log_write", "fc", "fc")

    def containers(self) -> None:
        """A container per storage path of its storage group for each table space (automatic
        storage: <path>/db2inst1/NODE0000/<database>/T<id>/C<n>), on its tier's file system, the
        table space's pages (plus 10 %) split evenly; the table space's paths and volume follow
        from them by the live connector's rule."""
        spaces = [m for m in self.models if isinstance(m, _Db2SpaceModel)]
        pages = {m.ref.key: math.ceil((m.ref.size_bytes or 0) * 1.1 / m.page_size) for m in spaces}
        used: dict[str, int] = {}
        for m in spaces:
            tier = self.tiers[m.ref.key]
            used[tier] = used.get(tier, 0) + pages[m.ref.key] * m.page_size
        containers: list[ObjectSample] = []
        for m in spaces:
            tier, name = self.tiers[m.ref.key], m.ref.tablespace or m.ref.name
            fs_id, total = _DB2_FILE_SYSTEMS[tier]
            storage = _DB2_PATHS[tier]
            below = m.ref.physical_name.removeprefix(storage[0]) if m.ref.physical_name else ""
            for i, root in enumerate(storage):
                path = f"{root}{below}C{i:07d}.{'TMP' if m.ref.kind is ObjectKind.TEMPDB else 'LRG'}"
                ref = self.ref(
                    m.ref.database, ObjectKind.CONTAINER, f"{m.ref.database}/container/{name}/{path}", path,
                    size_bytes=(pages[m.ref.key] + len(storage) - 1 - i) // len(storage) * m.page_size,
                    physical_name=path, file_id=i, tablespace=name, volume=fs_id, volume_total_bytes=total,
                    volume_available_bytes=int(total * (1 - _OTHER_USE)) - used[tier],
                )  # fmt: skip
                self.derived.append(_Db2Container(ref, (m.ref.key,), index=i, of=len(storage)))
                containers.append(ObjectSample(ref, {}))
        located = with_container_locations([ObjectSample(m.ref, {}) for m in spaces], containers)
        fields = ("paths", "volume", "volume_total_bytes", "volume_available_bytes")
        self.relocate({s.ref.key: {f: getattr(s.ref, f) for f in fields} for s in located})

    def buffer_pools(self) -> None:
        """BP8K for the 8 KB hot index space, BPTEMP16K for the temporary space, BP16K for the
        rest; each pool's counters are the sums over its table spaces."""
        gigabytes = {"BP8K": 6, "BP16K": 24, "BPTEMP16K": 2}
        pools: dict[str, list[_Db2SpaceModel]] = {}
        for m in self.models:
            if isinstance(m, _Db2SpaceModel):
                name = "BPTEMP16K" if m.ref.kind is ObjectKind.TEMPDB else f"BP{m.page_size // 1024}K"
                pools.setdefault(name, []).append(m)
        for name, members in pools.items():
            db = members[0].ref.database
            ref = self.ref(
                db, ObjectKind.BUFFER_POOL, f"{db}/bufferpool/{name}", name, size_bytes=gigabytes[name] * _GB
            )
            self.derived.append(_Db2BufferPool(ref, tuple(m.ref.key for m in members)))
            r: dict[str, float] = {}
            for m in members:
                for atom, rate in m.rates:
                    r[atom] = r.get(atom, 0.0) + rate
            sync = r["data_sync"] + r["index_sync"] + r["temp_sync"]
            prefetched = r["data_async"] + r["index_async"]
            logical = sync + prefetched + r["data_hit"] + r["index_hit"] + r["temp_hit"]
            self.cache_truth[ref.key] = CacheTruth(ref.key, sync / logical, prefetched / (sync + prefetched))


def db2prod01(rng: random.Random, origin: datetime) -> SimulatedInstance:
    b = _Db2(rng, "DB2PROD01", Engine.DB2, origin)
    current = [b.space(s) for s in _DB2PROD01_SPACES][-1]
    for part_id, age in enumerate(range(6, 1, -1)):  # five cold history years, oldest first
        b.partition(b.space(_history_space(origin.year - age, age)), part_id, origin.year - age, 1.0, 0.0)
    b.partition(current, 5, origin.year - 1, 0.2, changes=0.5)  # TS_CUR: last year and this year
    b.partition(current, 6, origin.year, 0.8, changes=20.0)
    b.log()
    b.containers()
    b.buffer_pools()
    return b.instance(boot_s=-(4 * _DAY_S + 5 * 3600), restarts_s=[])
