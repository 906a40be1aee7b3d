"""Storage pools: which objects each pool's placement sees, and which locations no tier explains.

Tiers belong to a pool (an array, or a server's local disks) and a pool's capacity, IOPS and
write budget serve only its own objects, so each pool is placed on its own (design.md). The
caller has put every object in its pool (`ObjectInfo.pool`, from `Policy.pool_of`) and on the
tier its location matches (`current_tier`). Here the objects are split by pool, a placement unit
(a filegroup with its files and partitions, tempdb, a table space) staying whole, and the units
whose location matches no tier of their pool are kept out of the placement: what they would free
or need is unknown. They are returned as a task, one entry per unmatched directory or DB2
storage group, with their GB and I/O, so that an administrator can map the location to a tier.

An object that two pools both take (two server patterns overlapping on its name) is left out
the same way, listed with both pools, instead of failing the whole advice run: the policy must
say which array it is on, and until it does the rest of the fleet is still advised.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from advisors.features import GB, ObjectInfo, ObjectWindow
from advisors.units import PLACEABLE, unit_key
from policies.model import DEFAULT_POOL, Policy

CONFLICT_SEP = "+"  # ObjectInfo.pool of an object two pools take: "array-a+array-b" (no pool name has "+")


@dataclass(frozen=True, slots=True)
class UnknownLocation:
    """A directory (path prefix) or DB2 storage group of one server that matches no tier of its
    pool: the objects there are left out of the placement until the policy maps it."""

    server: str
    engine: str
    pool: str
    location: str  # the directory (up to its last separator) or the storage group
    location_kind: str  # "path" or "storage_group"
    objects: int
    size_gb: float
    reads_per_s: float
    writes_per_s: float
    examples: tuple[str, ...]  # a few of the objects' names, the busiest first
    reason: str  # "matches no tier of the policy" / "... of pool X" / why the unit is split
    pools: tuple[str, ...] = ()  # the two (or more) pools that all take these objects: a conflict
    databases: tuple[str, ...] = ()  # the databases with objects there, the busiest first

    @property
    def conflict(self) -> bool:
        """Two pools take the location: mapping it to a tier cannot fix it, narrowing a pool can."""
        return bool(self.pools)

    @property
    def io_per_s(self) -> float:
        return self.reads_per_s + self.writes_per_s

    @property
    def text(self) -> str:
        return f"{self.location} {self.reason}"


@dataclass(frozen=True, slots=True)
class PoolSplit:
    """The windows each pool's placement sees (in input order; context windows such as instance
    and buffer-pool counters go to every pool), and the locations left out."""

    by_pool: dict[str, list[ObjectWindow]]
    unknown: tuple[UnknownLocation, ...]


def conflict_pools(pool: str) -> tuple[str, ...]:
    """The pools an object's `pool` names when two pools take it (empty: one pool)."""
    return tuple(pool.split(CONFLICT_SEP)) if CONFLICT_SEP in pool else ()


def placed(
    policy: Policy, *, server: str, engine: str, physical_name: str | None, storage_group: str | None
) -> tuple[str, str | None]:
    """(pool, current tier) of an object, as `ObjectInfo.pool` / `current_tier` take them. An
    object that two pools take is not an error here: its pool names them all, joined by
    CONFLICT_SEP, and its tier is None, so `split_by_pool` leaves it out and lists it."""
    takers = policy.pools_taking(server=server, physical_name=physical_name, storage_group=storage_group)
    if len(takers) > 1:
        return CONFLICT_SEP.join(takers), None
    pool = takers[0] if takers else DEFAULT_POOL
    tier = policy.tier_of_location(
        engine=engine, physical_name=physical_name, storage_group=storage_group, pool=pool
    )
    return pool, tier


def conflict_reason(pools: Sequence[str]) -> str:
    """The words of a conflict, naming both pools (as Policy.pool_of's PoolConflict does)."""
    return (
        f"matched by pools {pools[0]!r} and {pools[1]!r}: a location may be in one pool only "
        "(narrow their servers, sqlserver_path_prefixes or db2_storage_groups)"
    )


def directory(path: str) -> str:
    """A file's directory, its separator kept: D:\\MSSQL\\DATA\\x.mdf -> D:\\MSSQL\\DATA\\."""
    cut = max(path.rfind("\\"), path.rfind("/"))
    return path[: cut + 1] if cut >= 0 else path


def location_of(info: ObjectInfo) -> tuple[str, str] | None:
    """(location, kind) as the policy matches it: a DB2 storage group first, else the file's
    directory; None for an object that names no location at all."""
    if info.engine == "db2" and info.storage_group:
        return info.storage_group, "storage_group"
    if info.physical_name:
        return directory(info.physical_name), "path"
    return None


def unmatched(info: ObjectInfo) -> bool:
    """An object whose location the policy was asked about and matched to no tier (an object
    with no location at all is advised as before, its current tier unknown)."""
    return info.current_tier is None and info.kind != "partition" and location_of(info) is not None


def _pool_words(pool: str, pooled: bool) -> str:
    return f"matches no tier of pool {pool}" if pooled else "matches no tier of the policy"


def split_by_pool(windows: Sequence[ObjectWindow], pools: Sequence[str]) -> PoolSplit:
    """Each pool's windows (`pools`: the policy's pool names; an object of another pool is a
    ValueError), the units on unmatched locations, and those two pools take, left out and summed
    per location."""
    known = set(pools)
    pooled = len(known) > 1
    context: list[ObjectWindow] = []
    groups: dict[tuple[str, str], list[ObjectWindow]] = defaultdict(list)
    order: list[tuple[str, str]] = []
    for w in windows:
        both = conflict_pools(w.info.pool)
        if both and known.issuperset(both):
            pass  # listed below as a conflict
        elif w.info.pool not in known:
            raise ValueError(
                f"{w.info.server}/{w.info.key}: unknown pool {w.info.pool!r} (pools: {', '.join(pools)})"
            )
        if w.info.kind not in PLACEABLE:
            context.append(w)
            continue
        key = (w.info.server, unit_key(w.info) or w.info.key)
        if key not in groups:
            order.append(key)
        groups[key].append(w)
    left_out: list[tuple[ObjectWindow, str, str]] = []  # (window, pool, reason)
    keep: dict[int, str] = {}  # id(window) -> pool
    for key in order:
        members = groups[key]
        files = [m for m in members if m.info.kind != "partition"]
        torn = [m for m in files if conflict_pools(m.info.pool)]
        if torn:  # the unit moves whole: none of it is placed until the pools are narrowed
            both = conflict_pools(torn[0].info.pool)
            along = f"moves whole with files matched by pools {both[0]} and {both[1]}"
            for m in files:
                mine = conflict_pools(m.info.pool)
                left_out.append((m, m.info.pool, conflict_reason(mine) if mine else along))
            continue
        owners = list(dict.fromkeys(m.info.pool for m in files))
        if len(owners) > 1:
            why = f"holds files in pools {owners[0]} and {owners[1]}: a unit moves whole, within one pool"
            left_out += [(m, m.info.pool, why) for m in files]
            continue
        lost = [m for m in files if unmatched(m.info)]
        if lost:
            left_out += [(m, m.info.pool, _pool_words(m.info.pool, pooled)) for m in lost]
            continue
        for m in members:
            keep[id(m)] = owners[0] if owners else m.info.pool
    used = set(keep.values())
    by_pool: dict[str, list[ObjectWindow]] = {pool: [] for pool in pools if pool in used} or {
        DEFAULT_POOL: []
    }
    is_context = {id(w) for w in context}
    for w in windows:  # input order, which the placement's answer may depend on
        if id(w) in is_context:
            for ws in by_pool.values():
                ws.append(w)
        elif (pool := keep.get(id(w))) is not None:
            by_pool[pool].append(w)
    return PoolSplit(by_pool, _summed(left_out))


def _summed(left_out: list[tuple[ObjectWindow, str, str]]) -> tuple[UnknownLocation, ...]:
    sums: dict[tuple[str, str, str, str, str, str], list[ObjectWindow]] = defaultdict(list)
    for w, pool, why in left_out:
        where = location_of(w.info) or ("(no location)", "path")
        sums[(w.info.server, w.info.engine, pool, where[0], where[1], why)].append(w)
    out: list[UnknownLocation] = []
    for (server, engine, pool, location, kind, why), found in sums.items():
        ws = sorted(found, key=lambda w: -_io_per_s(w))  # the busiest first (stable: input order on ties)

        def rate(counter: str, ws: list[ObjectWindow] = ws) -> float:
            return sum(
                (w.total.counters.get(counter) or 0) / w.total.seconds for w in ws if w.total.seconds > 0
            )

        by_db: dict[str, float] = defaultdict(float)
        for w in ws:
            by_db[w.info.database] += _io_per_s(w)

        out.append(
            UnknownLocation(
                server=server,
                engine=engine,
                pool=pool,
                location=location,
                location_kind=kind,
                objects=len(ws),
                size_gb=sum((w.info.size_bytes or 0) for w in ws) / GB,
                reads_per_s=rate("reads"),
                writes_per_s=rate("writes"),
                examples=tuple(w.info.name for w in ws[:3]),
                reason=why,
                pools=conflict_pools(pool),
                databases=tuple(sorted(by_db, key=lambda d: -by_db[d])),
            )
        )
    # the busiest first: the data a DBA most needs advised (ties: by server, size, location)
    out.sort(key=lambda u: (-u.io_per_s, u.server, -u.size_gb, u.location))
    return tuple(out)


def _io_per_s(w: ObjectWindow) -> float:
    """Reads and writes per second over the window (0 without covered time)."""
    c = w.total.counters
    return ((c.get("reads") or 0) + (c.get("writes") or 0)) / w.total.seconds if w.total.seconds > 0 else 0.0
