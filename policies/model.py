"""The tier catalog and placement policy: what tiers exist, what they can do, and the rules.

Validated on load so that a typo in a policy file is reported with the field's path, never
discovered later as odd advice.
"""

from __future__ import annotations

from datetime import time
from fnmatch import fnmatchcase
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from advisors.quantities import valid_currency
from policies.workload import (
    BurstDetection,
    CalendarPeriod,
    EndurancePolicy,
    MaintenanceWindow,
    Weekday,
    WeeklyTimes,
)

RAID_FACTORS: dict[int, int] = {0: 1, 1: 2, 10: 2, 5: 4, 6: 6}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TierLocations(_Strict):
    """Where a tier lives, for matching current locations and for writing scripts."""

    sqlserver_path_prefixes: list[str] = Field(default_factory=list)
    sqlserver_directory: str | None = None  # where new files on this tier go
    db2_storage_groups: list[str] = Field(default_factory=list)
    db2_storage_group: str | None = None  # the group new/moved table spaces use
    db2_paths: list[str] = Field(default_factory=list)
    # where this tier's DB2 files already are, for objects without a storage group (logs, SMS table
    # spaces): path prefixes, matched like sqlserver_path_prefixes (db2_paths and db2_log_path count too)
    db2_path_prefixes: list[str] = Field(default_factory=list)
    db2_overhead_ms: float | None = Field(default=None, ge=0)
    db2_device_read_rate_mb_s: float | None = Field(default=None, gt=0)
    db2_data_tag: int | None = Field(default=None, ge=1, le=9)
    # where a DB2 active log moved to this tier goes (NEWLOGPATH); `tierwise script --db2-log-path`
    # overrides it
    db2_log_path: str | None = Field(default=None, min_length=1)


class Tier(_Strict):
    name: str = Field(min_length=1, max_length=40, pattern=r"^[A-Za-z][A-Za-z0-9_-]*$")
    description: str = ""
    device_iops: float = Field(gt=0, description="random small-block IOPS per device")
    devices: int = Field(gt=0)
    raid_level: Literal[0, 1, 5, 6, 10]
    read_latency_ms: float = Field(gt=0, description="service time of a random 8 KB read at light load")
    write_latency_ms: float = Field(gt=0)
    read_latency_band_ms: tuple[float, float] | None = Field(
        default=None, description="expected average read latency (low, high); above high is slow for the tier"
    )
    write_latency_band_ms: tuple[float, float] | None = None
    capacity_gb: float = Field(gt=0, description="usable capacity after RAID")
    cost_per_gb: float = Field(ge=0)
    endurance_dwpd: float | None = Field(
        default=None, gt=0, description="rated drive writes per day (flash); None: not limited"
    )
    transfer_mb_s: float | None = Field(
        default=None,
        gt=0,
        description="sequential transfer rate of one stream, MB/s (default: locations.db2_device_read_rate_mb_s, "
        "else 100)",
    )
    incurs_seek_penalty: bool | None = Field(
        default=None,
        description="spinning disks: sequential reads skip most positioning time (as sys.dm_os_volume_stats "
        "calls it); default: true when read_latency_ms is above 2 ms",
    )
    locations: TierLocations = Field(default_factory=TierLocations)

    @property
    def raid_factor(self) -> int:
        return RAID_FACTORS[self.raid_level]

    @property
    def full_stripe_write_factor(self) -> float:
        """Back-end writes per host write when the array gathers sequential writes into full
        stripes: no read-modify-write, only the data plus the stripe's parity, n / (n - parity
        drives) over the tier's devices as one RAID group (raw_capacity_gb reads them so too);
        mirrors still write twice, RAID 0 once (docs/reading-advice.md, "Back-end I/O")."""
        parity = {0: 0, 5: 1, 6: 2}.get(self.raid_level)
        if parity is None:  # RAID 1 / 10
            return 2.0
        data = self.devices - parity
        return self.devices / data if data > 0 else float(self.raid_factor)

    @property
    def transfer_rate_mb_s(self) -> float:
        return self.transfer_mb_s or self.locations.db2_device_read_rate_mb_s or 100.0

    @property
    def seeks(self) -> bool:
        return self.read_latency_ms > 2.0 if self.incurs_seek_penalty is None else self.incurs_seek_penalty

    @property
    def raw_capacity_gb(self) -> float:
        """What the drives hold before RAID: mirrors twice the usable capacity, RAID 5 and 6 one or
        two drives' worth of parity more."""
        parity = {0: 0, 5: 1, 6: 2}.get(self.raid_level)
        if parity is None:  # RAID 1 / 10
            return 2 * self.capacity_gb
        data = self.devices - parity
        return self.capacity_gb * self.devices / data if data > 0 else self.capacity_gb

    @property
    def write_budget_gb_day(self) -> float | None:
        """Host writes per day the drives are rated for (None: not limited): DWPD is per drive, so
        DWPD x the drives' raw capacity, divided by what each host byte costs them in writes —
        the data and a mirror copy (RAID 1/10) or parity (RAID 5: 2 bytes, RAID 6: 3) for the
        small writes databases do."""
        if self.endurance_dwpd is None:
            return None
        per_host_byte = {0: 1, 1: 2, 10: 2, 5: 2, 6: 3}[self.raid_level]
        return self.endurance_dwpd * self.raw_capacity_gb / per_host_byte

    @property
    def max_iops(self) -> float:
        """Physical (back-end) IOPS the tier's devices can serve."""
        return self.device_iops * self.devices


class Pin(_Strict):
    """Keep objects off (or on) some tiers, e.g. logs never on SATA. Every given condition must
    match; `database` and `name` are shell-style patterns, case-insensitive."""

    kind: Literal["data_file", "log_file", "filegroup", "partition", "tablespace", "tempdb"] | None = None
    engine: Literal["sqlserver", "db2"] | None = None
    database: list[str] | None = None
    name: list[str] | None = None
    forbid: list[str] = Field(default_factory=list)
    only: list[str] = Field(default_factory=list)
    reason: str = ""

    @field_validator("database", "name", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v

    def matches(self, *, kind: str, engine: str, database: str, name: str) -> bool:
        def any_of(patterns: list[str] | None, value: str) -> bool:
            return patterns is None or any(fnmatchcase(value.lower(), p.lower()) for p in patterns)

        return (
            (self.kind is None or self.kind == kind)
            and (self.engine is None or self.engine == engine)
            and any_of(self.database, database)
            and any_of(self.name, name)
        )


DEFAULT_POOL = "default"  # the implicit pool of the top-level tiers: servers in no listed pool


class PoolConflict(ValueError):
    """An object that two pools both take: the policy must say which array it is on."""


def _windows_path(path: str) -> str:
    return path.replace("/", "\\").lower()


class Pool(_Strict):
    """A storage array, or a server's local disks: its tiers serve only the objects of its servers.
    `servers` are names or shell patterns (case-insensitive); a pool that lists path prefixes or
    storage groups takes only the objects of its servers that are under them."""

    name: str = Field(min_length=1, max_length=60, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    servers: list[str] = Field(min_length=1)
    sqlserver_path_prefixes: list[str] = Field(default_factory=list)
    db2_storage_groups: list[str] = Field(default_factory=list)
    tiers: list[Tier] = Field(min_length=1)

    @field_validator("servers", "sqlserver_path_prefixes", "db2_storage_groups", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v

    @field_validator("name")
    @classmethod
    def _not_default(cls, v: str) -> str:
        if v.lower() == DEFAULT_POOL:
            raise ValueError(f"{v!r} is the implicit pool of the top-level tiers: choose another name")
        return v

    @model_validator(mode="after")
    def _unique_tiers(self) -> Pool:
        names = [t.name for t in self.tiers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"tier names must be unique within the pool: {', '.join(dupes)}")
        return self

    @property
    def splits(self) -> bool:
        """Whether the pool takes only part of its servers' objects."""
        return bool(self.sqlserver_path_prefixes or self.db2_storage_groups)

    def names_server(self, server: str) -> bool:
        """Whether `servers` names the server (a pool that splits may still take none of its objects)."""
        return any(fnmatchcase(server.lower(), p.lower()) for p in self.servers)

    def takes(self, *, server: str, physical_name: str | None, storage_group: str | None) -> bool:
        if not self.names_server(server):
            return False
        if not self.splits:
            return True
        if storage_group and storage_group.upper() in (g.upper() for g in self.db2_storage_groups):
            return True
        path = _windows_path(physical_name or "")
        return bool(path) and any(path.startswith(_windows_path(p)) for p in self.sqlserver_path_prefixes)


class ServerPools:
    """Which pools take the objects of one server, as `Pool.takes` decides it (same verdicts, same
    order), for a caller that checks many objects of the server: the server patterns are matched
    once, and the pools' storage groups and path prefixes are normalised once, so an object costs
    one set lookup and one `str.startswith` per pool that splits the server."""

    __slots__ = ("_checks", "names", "prefix_width")

    def __init__(self, pools: list[Pool], server: str) -> None:
        named = [p for p in pools if p.names_server(server)]
        self.names: list[str] = [p.name for p in named]  # the pools whose `servers` name it
        self._checks = [
            (
                p.name,
                p.splits,
                frozenset(g.upper() for g in p.db2_storage_groups),
                tuple(_windows_path(x) for x in p.sqlserver_path_prefixes),
            )
            for p in named
        ]
        # the longest prefix: no verdict depends on more of a path's (normalised) characters
        self.prefix_width = max((len(x) for *_, prefixes in self._checks for x in prefixes), default=0)

    def taking(self, physical_name: str | None, storage_group: str | None) -> list[str]:
        group = storage_group.upper() if storage_group else None
        path: str | None = None
        out = []
        for name, splits, groups, prefixes in self._checks:
            if not splits or (group is not None and group in groups):
                out.append(name)
                continue
            if path is None:
                path = _windows_path(physical_name or "")
            if path and path.startswith(prefixes):
                out.append(name)
        return out


class Classification(_Strict):
    """How a workload profile is named from the measured mix. Profiles describe; they never decide
    a tier (the benefit model does), except that the sizes split reads into random and sequential."""

    random_max_read_bytes: int = Field(default=16384, gt=0)
    sequential_min_read_bytes: int = Field(default=65536, gt=0)
    sequential_min_prefetch_share: float = Field(default=0.5, ge=0, le=1)
    random_read_min_read_pct: float = Field(default=80, ge=0, le=100)
    write_heavy_min_write_share: float = Field(default=0.7, ge=0, le=1)
    cold_max_heat_ratio: float = Field(default=0.1, ge=0)
    cold_max_iops: float = Field(default=5.0, ge=0)

    @model_validator(mode="after")
    def _sizes(self) -> Classification:
        if self.sequential_min_read_bytes <= self.random_max_read_bytes:
            raise ValueError("sequential_min_read_bytes must be larger than random_max_read_bytes")
        return self


class Benefit(_Strict):
    """The benefit model and what a move must clear (docs/reading-advice.md)."""

    min_saving_ms_per_io: float = Field(
        default=2.0, ge=0, description="a promotion must save this much I/O wait per I/O, on every window"
    )
    min_saving_ms_per_s_per_move: float = Field(
        default=10.0,
        ge=0,
        description="a promotion must save at least this much I/O wait in all (ms/s), on every window: "
        "less is not worth the change it costs; 0: no minimum",
    )
    price_weight: float = Field(
        default=0.1,
        ge=0,
        description="ms of I/O wait per second that one unit of a tier's cost_per_gb is worth, per GB",
    )
    move_cost_ms_per_s_per_gb: float = Field(
        default=0.1, ge=0, description="a move must gain more than this per GB moved (ties: no move)"
    )
    array_cache_hit_ms: float = Field(
        default=0.2, gt=0, description="latency of a read the array cache serves"
    )
    sequential_positioning_share: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="share of a seek-bound tier's positioning time a sequential read pays",
    )
    sequential_wait_share: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="share of a read-ahead / prefetch read's latency sessions wait for (the rest overlaps)",
    )
    max_planned_utilisation: float = Field(
        default=0.7,
        gt=0,
        le=1,
        description="the placement plans each tier's back-end load up to this share of what its devices serve",
    )
    max_queue_utilisation: float = Field(
        default=0.9, gt=0, lt=1, description="utilisation cap in the queueing factor 1 / (1 - U)"
    )
    learn_tiers: bool = Field(
        default=True,
        description="weigh each tier's service times measured from the objects on it against the tiers' "
        "read_latency_ms / write_latency_ms (advisors.tier_curves); false: the policy's figures alone",
    )
    learn_min_object_hours: int = Field(
        default=48,
        ge=1,
        description="object-hours a tier's measured figure needs for its full weight (fewer: less weight)",
    )


class Hysteresis(_Strict):
    """Stability: a promotion must pay on the short and the long window, a demotion on every window;
    nothing moves again within the minimum residency."""

    short_window_hours: float = Field(default=24, gt=0)
    min_residency_days: float = Field(default=14, ge=0)


class AgeRule(_Strict):
    older_than_months: float = Field(gt=0)
    tier: str
    read_only: bool = False


class IlmPolicy(_Strict):
    """Partition lifecycle: how heat is judged as partitions age (docs/ilm.md)."""

    months: int = Field(default=12, ge=1, le=120)
    default_half_life_months: float = Field(default=3.0, gt=0)
    flash_io_share: float = Field(
        default=0.7, gt=0, le=1, description="hottest partitions carrying this share of I/O"
    )
    middle_io_share: float = Field(
        default=0.97, gt=0, le=1, description="the rest up to this share: middle tier"
    )
    capacity_share: float = Field(
        default=1.0, gt=0, le=1, description="share of each tier's capacity for ILM"
    )
    age_rules: list[AgeRule] = Field(
        default_factory=lambda: [AgeRule(older_than_months=24, tier="sata", read_only=True)]
    )


class VerificationPolicy(_Strict):
    """Verify after change: how a move's before and after windows are compared (docs/verification.md)."""

    window_days: int = Field(default=7, ge=1, le=60, description="days compared on each side of the change")
    min_hours: float = Field(
        default=24, gt=0, description="paired hours needed in all (same weekday and hour on both sides)"
    )
    min_ios: int = Field(default=1000, ge=1, description="I/Os a side needs before its latency is judged")
    regression_pct: float = Field(default=20, ge=0, description="object latency rise that is a regression, %")
    regression_ms: float = Field(default=1.0, ge=0, description="... and at least this many ms")
    tier_regression_pct: float = Field(default=20, ge=0, description="joined tier's latency rise, %")
    tier_regression_ms: float = Field(default=1.0, ge=0)
    max_volume_change_pct: float = Field(
        default=50, gt=0, description="no longer used: the per-day load guards replace it"
    )
    max_io_size_change_pct: float = Field(
        default=30, gt=0, description="a day whose average I/O size changed more is not blamed"
    )
    max_read_share_change_points: float = Field(
        default=20, gt=0, description="no longer used: latency is compared at the before read/write mix"
    )
    success_share: float = Field(
        default=0.8, gt=0, le=1, description="share of the predicted gain a successful move achieves"
    )
    min_days: int = Field(default=4, ge=2, le=60, description="paired days the interval needs")
    min_day_hours: int = Field(
        default=12, ge=1, le=24, description="paired hours (same weekday and hour) a day needs to count"
    )
    interval_level: float = Field(default=0.95, gt=0.5, lt=1, description="two-sided level of the interval")
    equivalence_pct: float = Field(
        default=10, gt=0, description="an interval within ±this % of no change: no measurable effect"
    )
    credit_min_load: float = Field(
        default=0.8, gt=0, le=1, description="a gain counts only from days with >= this x the before load"
    )
    blame_max_load: float = Field(
        default=1.25, ge=1, description="a regression counts only from days with <= this x the before load"
    )
    warmup_hours: float = Field(
        default=6, ge=0, le=72, description="hours after the move left out (caches warming up)"
    )
    extend_to_days: int = Field(
        default=14, ge=1, le=60, description="days an inconclusive verdict is measured on before it is final"
    )


MoveAction = Literal["emptyfile", "rebuild", "rebalance", "offline_copy", "restart"]


class ChangeWindow(WeeklyTimes):
    """A recurring window in which approved moves may run, e.g. Saturday 01:00-05:00. `end` at or
    before `start` crosses midnight; `days` are the days the window starts, in `time_zone`."""

    name: str = Field(default="", max_length=80)
    days: list[Weekday] = Field(min_length=1)
    start: time
    end: time
    time_zone: str = "UTC"


def _saturday_night() -> list[ChangeWindow]:
    return [ChangeWindow(name="Saturday night", days=["sat"], start=time(1, 0), end=time(5, 0))]


def _overheads() -> dict[MoveAction, float]:
    return {"emptyfile": 0.5, "rebuild": 1.0, "rebalance": 0.3, "offline_copy": 0.1}


def _restart_kinds() -> list[Literal["tempdb", "log_file"]]:
    return ["tempdb"]


class ChangeWindowPolicy(_Strict):
    """When approved moves run and how long they take (docs/change-windows.md): copy time is
    size ÷ copy rate, plus an overhead share for the way the move is made."""

    windows: list[ChangeWindow] = Field(default_factory=_saturday_night, min_length=1)
    copy_rate_mb_s: float = Field(default=200, gt=0, description="default copy rate, MB/s")
    copy_rate_by_action: dict[MoveAction, float] = Field(
        default_factory=dict, description="copy rate for one kind of move, MB/s (overrides the default)"
    )
    copy_rate_by_tiers: dict[str, float] = Field(
        default_factory=dict, description="copy rate from one tier to another, 'fc->flash': MB/s (wins)"
    )
    overhead: dict[MoveAction, float] = Field(
        default_factory=_overheads,
        description="share added to the copy time: 0.5 = +50 %",
    )
    cap_gb_per_window: float = Field(default=500, gt=0, description="most data moved in one window, GB")
    restart_needed: list[Literal["tempdb", "log_file"]] = Field(
        default_factory=_restart_kinds, description="object kinds whose move needs an instance restart"
    )
    restart_minutes: float = Field(default=15, ge=0, description="time a restart takes out of the window")
    horizon_windows: int = Field(default=12, ge=1, le=100, description="how many coming windows to plan")

    @field_validator("overhead")
    @classmethod
    def _overhead(cls, v: dict[str, float]) -> dict[str, float]:
        for k, x in v.items():
            if x < 0:
                raise ValueError(f"{k}: an overhead share must not be negative")
        return v

    @field_validator("copy_rate_by_action", "copy_rate_by_tiers")
    @classmethod
    def _rates(cls, v: dict[str, float]) -> dict[str, float]:
        for k, x in v.items():
            if x <= 0:
                raise ValueError(f"{k}: a copy rate must be more than 0 MB/s")
        return v

    @field_validator("copy_rate_by_tiers")
    @classmethod
    def _pairs(cls, v: dict[str, float]) -> dict[str, float]:
        for k in v:
            a, sep, b = k.partition("->")
            if not sep or not a or not b:
                raise ValueError(f"{k!r}: write a tier pair as 'from->to', e.g. 'fc->flash'")
        return v


# Settings of the rule-based advice (before the benefit model): older policy files still load; the
# setting is ignored and named in `retired_settings` (shown with the advice). Value: why.
RETIRED: dict[tuple[str, str], str] = {
    ("classification", "flash_min_read_iops"): "flash is decided by the I/O wait it saves",
    (
        "classification",
        "flash_min_read_miss_ratio",
    ): "a buffer-pool hit ratio does not make physical reads cheap",
    ("classification", "min_benefit_ms"): "read as benefit.min_saving_ms_per_io",
    ("classification", "log_flash_min_write_iops"): "logs follow their measured benefit",
    ("classification", "log_flash_min_write_ms"): "logs follow their measured benefit",
    ("classification", "tempdb_flash_min_iops"): "tempdb follows its measured benefit",
    ("classification", "tempdb_flash_min_latency_ms"): "tempdb follows its measured benefit",
    ("classification", "cache_hit_fraction_of_service_time"): "array-cache hits come from the benefit model",
    ("hysteresis", "move_in_heat_ratio"): "relative heat is shown, never a move criterion",
    ("hysteresis", "move_out_heat_ratio"): "relative heat is shown, never a move criterion",
    ("hysteresis", "long_window_hours"): "the long window is the policy's window_days",
    ("endurance", "object_max_budget_share"): "the write budget is one constraint on all units placed",
    (
        "endurance",
        "write_dominated_min_write_share",
    ): "the write budget is one constraint on all units placed",
}


class Policy(_Strict):
    """Tiers are listed fastest first."""

    name: str = "default"
    currency: str = Field(
        default="USD",
        description="how money reads on the pages and in the report (what cost_per_gb is in): an ISO 4217 "
        "code such as USD, EUR or CHF, or a symbol of up to 3 characters such as $, €, £ or R$",
    )
    retired_settings: list[str] = Field(
        default_factory=list, description="settings of older policy files that no longer apply (set on load)"
    )
    tiers: list[Tier] = Field(min_length=1)
    window_days: float = Field(default=7, gt=0)
    pins: list[Pin] = Field(default_factory=list)
    classification: Classification = Field(default_factory=Classification)
    benefit: Benefit = Field(default_factory=Benefit)
    hysteresis: Hysteresis = Field(default_factory=Hysteresis)
    ilm: IlmPolicy = Field(default_factory=IlmPolicy)
    verification: VerificationPolicy = Field(default_factory=VerificationPolicy)
    maintenance_windows: list[MaintenanceWindow] = Field(default_factory=list)
    burst_detection: BurstDetection = Field(default_factory=BurstDetection)
    endurance: EndurancePolicy = Field(default_factory=EndurancePolicy)
    business_calendar: list[CalendarPeriod] = Field(default_factory=list)
    change_windows: ChangeWindowPolicy = Field(default_factory=ChangeWindowPolicy)
    pools: list[Pool] = Field(default_factory=list)

    @field_validator("currency")
    @classmethod
    def _currency(cls, v: str) -> str:
        if not valid_currency(v):
            raise ValueError(
                f"{v!r} is not a currency: use an ISO 4217 code of three capital letters (USD, EUR, CHF) "
                "or a symbol of up to 3 characters, not only letters or digits ($, €, £, R$)"
            )
        return v

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        notes: list[str] = []
        for (section, key), why in RETIRED.items():
            part = data.get(section)
            if not isinstance(part, dict) or key not in part:
                continue
            part = dict(part)
            value = part.pop(key)
            data[section] = part
            if (section, key) == ("classification", "min_benefit_ms"):
                benefit = dict(data.get("benefit") or {})
                benefit.setdefault("min_saving_ms_per_io", value)
                data["benefit"] = benefit
                notes.append(f"{section}.{key} is retired: {why}")
                continue
            notes.append(f"{section}.{key} is retired ({why}): ignored")
        data["retired_settings"] = notes
        return data

    @model_validator(mode="after")
    def _names(self) -> Policy:
        own = [t.name for t in self.tiers]
        dupes = {n for n in own if own.count(n) > 1}
        if dupes:
            raise ValueError(f"tier names must be unique: {', '.join(sorted(dupes))}")
        self._check_pools()
        names = list(dict.fromkeys([*own, *(t.name for p in self.pools for t in p.tiers)]))
        for i, pin in enumerate(self.pins):
            for tier in (*pin.forbid, *pin.only):
                if tier not in names:
                    raise ValueError(f"pins[{i}] names unknown tier {tier!r} (tiers: {', '.join(names)})")
            for pool in self.pool_names():
                tiers = [t.name for t in self.pool_tiers(pool)]
                if _pin_in(pin, tiers) is None:
                    continue
                left = [t for t in (pin.only or tiers) if t in tiers and t not in pin.forbid]
                if not left:
                    where = "" if not self.pools else f" in pool {pool!r}"
                    raise ValueError(f"pins[{i}] leaves no tier{where} for the objects it matches")
        for what, items in (("maintenance_windows", self.maintenance_windows),
                             ("business_calendar", self.business_calendar)):  # fmt: skip
            seen = [w.name for w in items]
            twice = sorted({n for n in seen if seen.count(n) > 1})
            if twice:
                raise ValueError(f"{what}: names must be unique ({', '.join(twice)} used twice)")
        for pair in self.change_windows.copy_rate_by_tiers:
            for tier in pair.split("->"):
                if tier not in names:
                    raise ValueError(f"change_windows.copy_rate_by_tiers: {pair!r} names unknown tier {tier!r} "
                                     f"(tiers: {', '.join(names)})")  # fmt: skip
        for i, rule in enumerate(self.ilm.age_rules):
            if rule.tier not in names:
                raise ValueError(
                    f"ilm.age_rules[{i}] names unknown tier {rule.tier!r} (tiers: {', '.join(names)})"
                )
        return self

    def _check_pools(self) -> None:
        """Pool names unique; two pools listing the same server (or one's pattern matching the
        other's name) must split it by different path prefixes or storage groups."""
        seen: dict[str, int] = {}
        for i, p in enumerate(self.pools):
            if p.name.lower() in seen:
                raise ValueError(
                    f"pools[{i}].name: {p.name!r} is also the name of pools[{seen[p.name.lower()]}]"
                )
            seen[p.name.lower()] = i
        for i, a in enumerate(self.pools):
            for j in range(i + 1, len(self.pools)):
                b = self.pools[j]
                server = _shared_server(a, b)
                if server is None:
                    continue
                shared = _shared_split(a, b)
                if shared is not None:
                    raise ValueError(
                        f"pools[{i}] ({a.name}) and pools[{j}] ({b.name}) both take server {server!r}{shared}: "
                        "split the server with sqlserver_path_prefixes / db2_storage_groups, or list it once"
                    )

    def pool_names(self) -> list[str]:
        """The implicit pool of the top-level tiers first, then the listed pools in order."""
        return [DEFAULT_POOL, *(p.name for p in self.pools)]

    def pool_tiers(self, pool: str) -> list[Tier]:
        if pool == DEFAULT_POOL:
            return list(self.tiers)
        for p in self.pools:
            if p.name == pool:
                return list(p.tiers)
        raise KeyError(f"no pool named {pool!r} (pools: {', '.join(self.pool_names())})")

    def pools_taking(self, *, server: str, physical_name: str | None, storage_group: str | None) -> list[str]:
        """The listed pools that take an object (in policy order): one, none, or a conflict."""
        return [p.name for p in self.pools
                if p.takes(server=server, physical_name=physical_name, storage_group=storage_group)]  # fmt: skip

    def pool_of(
        self, *, server: str, engine: str, physical_name: str | None, storage_group: str | None
    ) -> str:
        """The pool whose tiers an object is on: the one listed pool that takes it, else the
        implicit pool of the top-level tiers. Two pools taking it is a PoolConflict naming both."""
        takers = self.pools_taking(server=server, physical_name=physical_name, storage_group=storage_group)
        if len(takers) > 1:
            where = physical_name or storage_group or "(no location)"
            raise PoolConflict(
                f"{engine} {server} {where}: matched by pools {takers[0]!r} and {takers[1]!r}; "
                "a location may be in one pool only (narrow their servers, sqlserver_path_prefixes or "
                "db2_storage_groups)"
            )
        return takers[0] if takers else DEFAULT_POOL

    def for_pool(self, pool: str) -> Policy:
        """This policy as one pool sees it: the pool's tiers as `tiers`, no other pools, and the
        pins that concern its tiers (a pin naming only tiers the pool lacks does not apply there).
        Everything else is shared. Not re-validated: the whole policy was."""
        if pool == DEFAULT_POOL and not self.pools:
            return self
        tiers = self.pool_tiers(pool)
        names = [t.name for t in tiers]
        pins = [p for p in (_pin_in(pin, names) for pin in self.pins) if p is not None]
        return self.model_copy(update={"tiers": tiers, "pins": pins, "pools": []})

    def tier(self, name: str) -> Tier:
        for t in self.tiers:
            if t.name == name:
                return t
        raise KeyError(name)

    def allowed_tiers(self, kind: str, engine: str, *, database: str = "", name: str = "") -> list[str]:
        """Tiers the pins allow (fastest first); never empty: pins that exclude everything are
        reported by validation, not silently applied."""
        allowed = [t.name for t in self.tiers]
        for pin in self.pins:
            if not pin.matches(kind=kind, engine=engine, database=database, name=name):
                continue
            if pin.only:
                allowed = [t for t in allowed if t in pin.only]
            allowed = [t for t in allowed if t not in pin.forbid]
        return allowed

    def tier_of_location(
        self, *, engine: str, physical_name: str | None, storage_group: str | None, pool: str | None = None
    ) -> str | None:
        """Which tier an object's current location is on (None when the policy does not say): the
        DB2 storage group, else the longest path prefix that matches (SQL Server paths are
        case-insensitive and take either slash; DB2 paths are compared as written). Among the
        tiers of `pool` when given, else the top-level tiers."""
        tiers = self.tiers if pool is None else self.pool_tiers(pool)
        if engine == "db2" and storage_group:
            for t in tiers:
                if storage_group.upper() in (g.upper() for g in t.locations.db2_storage_groups):
                    return t.name
        if not physical_name:
            return None
        best: tuple[int, str] | None = None
        for t in tiers:
            for prefix, path in self._prefixes(engine, t.locations, physical_name):
                if path.startswith(prefix) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), t.name)
        return None if best is None else best[1]

    @staticmethod
    def _prefixes(engine: str, loc: TierLocations, physical_name: str) -> list[tuple[str, str]]:
        """(prefix, path) pairs to compare: Windows-style prefixes (sqlserver_path_prefixes, also for
        DB2 on Windows), and for DB2 its own directories."""
        path = physical_name.replace("/", "\\").lower()
        out = [(p.replace("/", "\\").lower(), path) for p in loc.sqlserver_path_prefixes]
        if engine == "db2":
            dirs = [*loc.db2_path_prefixes, *loc.db2_paths, *([loc.db2_log_path] if loc.db2_log_path else [])]
            out += [(d if d.endswith("/") else d + "/", physical_name) for d in dirs]
        return out


def _pin_in(pin: Pin, tiers: list[str]) -> Pin | None:
    """The pin within one pool's tiers: the names it lists that the pool has (None: its `only`
    names none of them, so it does not apply there)."""
    only = [t for t in pin.only if t in tiers]
    if pin.only and not only:
        return None
    forbid = [t for t in pin.forbid if t in tiers]
    if not only and not forbid:
        return None  # nothing left to keep it off or on in this pool
    if only == pin.only and forbid == pin.forbid:
        return pin
    return pin.model_copy(update={"only": only, "forbid": forbid})


def _shared_server(a: Pool, b: Pool) -> str | None:
    """A server both pools take by name: the same pattern, or one's pattern matching the other's
    plain name (overlaps of two patterns are found when an object meets both)."""
    for x in a.servers:
        for y in b.servers:
            if (
                x.lower() == y.lower()
                or fnmatchcase(y.lower(), x.lower())
                or fnmatchcase(x.lower(), y.lower())
            ):
                return y if fnmatchcase(y.lower(), x.lower()) else x
    return None


def _shared_split(a: Pool, b: Pool) -> str | None:
    """Why two pools that take the same server overlap on it (None: they split it apart)."""
    if not a.splits or not b.splits:
        return ""
    groups = {g.upper() for g in a.db2_storage_groups} & {g.upper() for g in b.db2_storage_groups}
    if groups:
        return f" and storage group {sorted(groups)[0]}"
    for x in a.sqlserver_path_prefixes:
        for y in b.sqlserver_path_prefixes:
            px, py = _windows_path(x), _windows_path(y)
            if px.startswith(py) or py.startswith(px):
                return f" and path {x if len(x) >= len(y) else y}"
    return None
