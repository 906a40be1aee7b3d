"""Where a stored object is placed, in the advisors' words: the unit it moves with and the tier of
its pool it is on. Thin adapters from a store row to the rules in advisors/units.py and
policies/model.py, so the pages never judge placement differently from the advice."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from advisors.features import ObjectInfo
from advisors.pools import placed
from advisors.units import unit_key
from policies.model import Policy


@lru_cache(maxsize=4096)
def unit_of_fields(
    engine: str, kind: str, database: str, filegroup: str | None, tablespace: str | None
) -> str | None:
    """advisors.units.unit_key of the fields it reads (None: its own unit). Cached: a big target
    has thousands of rows sharing a few hundred answers."""
    info = ObjectInfo(key="", engine=engine, server="", database=database, kind=kind, name="",
                      filegroup=filegroup, tablespace=tablespace)  # fmt: skip
    return unit_key(info)


def unit_key_of(o: Any) -> str:
    """The placement unit an object row (a DbObject or a selected row with its engine, kind,
    database, key, filegroup and tablespace) moves with: its own key when it is its own unit."""
    return unit_of_fields(o.engine, o.kind, o.database, o.filegroup, o.tablespace) or o.key


def tier_of_object(
    policy: Policy, *, server: str, engine: str, physical_name: str | None, storage_group: str | None
) -> str | None:
    """The tier of its pool an object's location is on (None: the policy does not say). An object
    two pools take is on an unknown tier here: the page lists it rather than fail; the advice
    leaves it out and names both pools."""
    return placed(
        policy, server=server, engine=engine, physical_name=physical_name, storage_group=storage_group
    )[1]
