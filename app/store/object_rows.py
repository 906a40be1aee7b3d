"""A target's objects with their last day of I/O, the tier each is on and its unit's advice: the
rows of the target and database pages, and the orders they can be sorted in.

Sums are computed in SQL (grouped by object, from the roll-ups and the intervals not rolled up
yet); the policy's tier of a location and the ordering are applied in Python over one row per
object.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.features import GB
from app.store.dialect import dialect_of
from app.store.io_window import NOT_STORAGE, SUM_COLUMNS, Metrics, metrics_from, usage
from app.store.models import DbObject, Target
from app.store.placement import tier_of_object, unit_of_fields
from app.store.rec_list import RecSummary, current_recs
from app.store.rollup import rolled_up_mark
from policies.model import Policy


@dataclass(slots=True)
class ObjectRow:
    id: int
    database: str
    kind: str
    name: str
    key: str
    size_bytes: int | None
    location: str | None  # physical name or storage group
    current_tier: str | None
    unit_key: str
    recommendation: RecSummary | None
    m: Metrics

    @property
    def recommended_tier(self) -> str | None:
        return None if self.recommendation is None else self.recommendation.to_tier

    @property
    def profile(self) -> str | None:
        return None if self.recommendation is None else self.recommendation.profile


@dataclass(frozen=True)
class DatabaseSummary:
    name: str
    objects: int
    size_bytes: int | None  # None: no object that holds capacity (e.g. only the instance)
    iops: float | None
    heat: float | None


def tier_names(policy: Policy) -> list[str]:
    """Every tier an object can be on, fastest first: the top-level ones, then each pool's (a name
    two pools share keeps its first place). The tier filter offers these; the tier sort ranks by
    them."""
    return list(
        dict.fromkeys([*(t.name for t in policy.tiers), *(t.name for p in policy.pools for t in p.tiers)])
    )


def _tier_order(policy: Policy) -> dict[str, int]:
    return {name: i for i, name in enumerate(tier_names(policy))}


def sort_keys(policy: Policy) -> dict[str, Callable[[ObjectRow], Any]]:
    """The whitelisted sort keys of the objects table (query string `sort=`)."""
    order = _tier_order(policy)
    return {
        "name": lambda r: r.name.lower(),
        "database": lambda r: r.database.lower(),
        "kind": lambda r: r.kind,
        "tier": lambda r: None if r.current_tier is None else order.get(r.current_tier, len(order)),
        "recommended": lambda r: None if r.recommended_tier is None else order.get(r.recommended_tier, 99),
        "size": lambda r: r.size_bytes,
        "read_iops": lambda r: r.m.read_iops,
        "write_iops": lambda r: r.m.write_iops,
        "iops": lambda r: r.m.iops,
        "avg_read_kb": lambda r: r.m.avg_read_kb,
        "avg_read_ms": lambda r: r.m.avg_read_ms,
        "avg_write_ms": lambda r: r.m.avg_write_ms,
        "heat": lambda r: r.m.heat,
    }


SORT_KEYS = (
    "name",
    "database",
    "kind",
    "tier",
    "recommended",
    "size",
    "read_iops",
    "write_iops",
    "iops",
    "avg_read_kb",
    "avg_read_ms",
    "avg_write_ms",
    "heat",
)


def order_rows(
    rows: Sequence[ObjectRow], key: Callable[[ObjectRow], Any], *, descending: bool
) -> list[ObjectRow]:
    """Sorted by `key`; rows without a value come last in either direction, by name."""
    base = sorted(rows, key=lambda r: (r.name.lower(), r.id))
    known = [r for r in base if key(r) is not None]
    unknown = [r for r in base if key(r) is None]
    return sorted(known, key=key, reverse=descending) + unknown


OBJECT_COLUMNS = (
    DbObject.id,
    DbObject.engine,
    DbObject.server,
    DbObject.database,
    DbObject.kind,
    DbObject.name,
    DbObject.key,
    DbObject.size_bytes,
    DbObject.physical_name,
    DbObject.storage_group,
    DbObject.filegroup,
    DbObject.tablespace,
)


def object_rows(
    session: Session, target: Target, database: str | None, since: datetime, until: datetime, policy: Policy
) -> list[ObjectRow]:
    """Every object of a target (or one database) with its I/O in [since, until], the tier of its
    pool it is on (a partition or container: where its filegroup / table space is) and its
    placement unit's current recommendation."""
    where = [DbObject.target_id == target.id]
    if database is not None:
        where.append(DbObject.database == database)
    ids = select(DbObject.id).where(*where)
    sub = usage(
        dialect_of(session), since=since, until=until, object_ids=ids, mark=rolled_up_mark(session)
    ).subquery()
    q = select(*OBJECT_COLUMNS, *[sub.c[c] for c in SUM_COLUMNS]).outerjoin(
        sub, sub.c.object_id == DbObject.id
    )
    raw = [tuple(r) for r in session.execute(q.where(*where))]
    recs = current_recs(session, target.id)
    tier_of, unit_of = [], []
    by_key: dict[str, str | None] = {}
    unit_tiers: dict[str, set[str | None]] = defaultdict(set)
    for _id, engine, server, database, kind, _name, key, _size, physical, group, fg, ts, *_ in raw:
        tier = tier_of_object(
            policy, server=server, engine=engine, physical_name=physical, storage_group=group
        )
        uk = unit_of_fields(engine, kind, database, fg, ts) or key
        tier_of.append(tier)
        unit_of.append(uk)
        by_key[key] = tier
        if kind not in NOT_STORAGE:
            unit_tiers[uk].add(tier)
    out: list[ObjectRow] = []
    n = len(OBJECT_COLUMNS)
    for r, tier, uk in zip(raw, tier_of, unit_of, strict=True):
        oid, _engine, _server, database, kind, name, key, size, physical, group = r[:10]
        if tier is None:  # a partition or container: where its filegroup / table space is
            members = unit_tiers.get(uk, set())
            tier = by_key.get(uk) or (next(iter(members)) if len(members) == 1 else None)
        m = metrics_from(r[n:], size)
        out.append(
            ObjectRow(oid, database, kind, name, key, size, physical or group, tier, uk, recs.get(uk), m)
        )
    return out


def database_summaries(rows: Sequence[ObjectRow]) -> list[DatabaseSummary]:
    """Per database: objects, the capacity and I/O of those that hold storage, and their heat."""
    groups: dict[str, list[ObjectRow]] = defaultdict(list)
    for r in rows:
        groups[r.database].append(r)
    out = []
    for name, members in sorted(groups.items()):
        storage = [r for r in members if r.kind not in NOT_STORAGE]
        size = sum(r.size_bytes or 0 for r in storage) if storage else None
        with_io = [r for r in storage if r.m.iops is not None]
        iops = sum(r.m.iops or 0.0 for r in with_io) if with_io else None
        io = sum(r.m.io or 0.0 for r in with_io)
        hours = max((r.m.seconds for r in with_io), default=0.0) / 3600
        gb = sum(max((r.size_bytes or 0) / GB, 1 / 1024) for r in with_io)
        heat = io / gb / hours if with_io and hours and gb else None
        out.append(DatabaseSummary(name, len(members), size, iops, heat))
    return out
