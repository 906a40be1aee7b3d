"""Unmatched locations as the last advice run found them: the directories and DB2 storage groups
that match no tier of their storage pool, with their databases, GB and I/O. The objects there are
left out of the placement, so they are the first thing the pages show (the fleet's "Needs
attention", the target page, each such object's page, the Policy page's mapping form)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.pools import directory
from app.store.models import AdviceSnapshot, Target


@dataclass(frozen=True)
class UnmappedLocation:
    """One row of the task list: a location of one target that no tier of its pool explains."""

    target_id: int
    target: str
    evaluated_at: datetime
    server: str
    engine: str
    pool: str
    location: str
    location_kind: str  # path | storage_group
    objects: int
    size_gb: float
    reads_per_s: float
    writes_per_s: float
    reason: str
    examples: tuple[str, ...]
    pools: tuple[str, ...] = ()  # two pools both take it: a conflict, fixed by narrowing a pool
    databases: tuple[str, ...] = ()  # the databases with objects there, the busiest first

    @property
    def io_per_s(self) -> float:
        return self.reads_per_s + self.writes_per_s

    @property
    def mappable(self) -> bool:
        """Whether a tier's location fixes it (a unit split over two pools, or a location two pools
        take, needs the pools fixed)."""
        return not self.pools and "matches no tier" in self.reason

    @property
    def pool_text(self) -> str:
        """The pool column: its pool, or both pools of a conflict."""
        return " and ".join(self.pools) if self.pools else self.pool


def unknown_locations(session: Session, target_ids: list[int] | None = None) -> list[UnmappedLocation]:
    """Every target's (or `target_ids`') unmatched locations as its last advice run found them,
    the busiest first."""
    q = select(Target.id, Target.name, AdviceSnapshot.evaluated_at, AdviceSnapshot.unknown_locations).join(
        AdviceSnapshot, AdviceSnapshot.target_id == Target.id
    )
    if target_ids is not None:
        q = q.where(Target.id.in_(target_ids))
    out: list[UnmappedLocation] = []
    for tid, name, at, items in session.execute(q.order_by(Target.name)):
        for u in items or []:
            keys = ("server", "engine", "pool", "location", "location_kind", "objects", "size_gb", "reads_per_s",
                    "writes_per_s", "reason")  # fmt: skip
            row: dict[str, Any] = {k: u[k] for k in keys}
            out.append(UnmappedLocation(tid, name, at, examples=tuple(u.get("examples") or ()),
                                        pools=tuple(u.get("pools") or ()),
                                        databases=tuple(u.get("databases") or ()), **row))  # fmt: skip
    out.sort(key=lambda u: (-u.io_per_s, u.target, u.location))
    return out


def by_target(rows: list[UnmappedLocation]) -> dict[int, list[UnmappedLocation]]:
    out: dict[int, list[UnmappedLocation]] = {}
    for r in rows:
        out.setdefault(r.target_id, []).append(r)
    return out


def unmatched_at(
    session: Session, *, target_id: int, engine: str, physical_name: str | None, storage_group: str | None
) -> UnmappedLocation | None:
    """The unmatched location an object of `target_id` sits in, as its target's last advice run
    listed it (the location as the policy matches it: advisors.pools.location_of); None when its
    location matched a tier, or the advice has not run."""
    if engine == "db2" and storage_group:
        where = storage_group
    elif physical_name:
        where = directory(physical_name)
    else:
        return None
    return next((u for u in unknown_locations(session, [target_id]) if u.location == where), None)
