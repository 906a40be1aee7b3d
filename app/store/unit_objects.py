"""Which stored objects make up a recommendation's placement unit.

A recommendation is for a placement unit (a filegroup, tempdb's data files, a table space, a log),
and its key is the unit's key, which no file has: the files of a filegroup are keyed by file. The
members are the stored objects whose unit (app.store.placement.unit_key_of, the advisors' rule) is
the recommendation's key, or that are keyed like it (a log, a DB2 table space).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from advisors.units import HELD
from app.store.models import DbObject, Recommendation
from app.store.placement import unit_key_of


@dataclass(frozen=True)
class UnitObject:
    id: int
    kind: str
    name: str
    # its I/O is counted in another member (a partition in its filegroup's files, a container in
    # its table space): its page has no I/O charts of its own
    held: bool


def unit_objects(session: Session, rec: Recommendation) -> list[UnitObject]:
    """The stored objects of `rec`'s unit: those that carry the unit's I/O first (the unit's own
    object, then its files), then the ones held in them (partitions, containers); empty when none
    is stored any more."""
    evidence = rec.evidence or {}
    names = {
        n for n in (evidence.get("filegroup"), evidence.get("tablespace"), rec.name) if isinstance(n, str)
    }
    near = [DbObject.key == rec.key, DbObject.filegroup.in_(names), DbObject.tablespace.in_(names)]
    if rec.kind == "tempdb":
        near.append(DbObject.kind == "tempdb")
    rows = session.execute(
        select(
            DbObject.id, DbObject.engine, DbObject.kind, DbObject.database, DbObject.name, DbObject.key,
            DbObject.filegroup, DbObject.tablespace,
        ).where(DbObject.target_id == rec.target_id, DbObject.database == rec.database, or_(*near))
    )  # fmt: skip
    found = [r for r in rows if r.key == rec.key or unit_key_of(r) == rec.key]
    found.sort(key=lambda r: (r.key != rec.key, r.kind in HELD, r.kind, r.name, r.id))
    return [UnitObject(r.id, r.kind, r.name, r.kind in HELD) for r in found]
