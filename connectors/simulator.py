"""A deterministic simulated fleet with known ground truth: the demo default and the test oracle.

The public face of the simulator; the work is in two modules:
- connectors/simulator_workload.py, the workload model: profiles, mixes, the demo instances'
  objects and the tier each should be on (the ground truth it fills in);
- connectors/simulator_counters.py, the counter generation: rates -> cumulative DMV / monitor
  rows (files, table spaces, partitions, logs, the Buffer Manager, buffer pools, containers),
  restarts and fault injection (`SimulatedInstance`), and the truth records an instance returns
  (`ObjectTruth`, `CacheTruth`).

A snapshot depends only on (seed, origin, at), never on call order, and no counter decreases
between restarts. The contents of the demo fleet and why each object belongs where it does:
docs/demo-fleet.md.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from connectors.records import Snapshot
from connectors.simulator_counters import CacheTruth, ObjectTruth, SimulatedInstance, db2_core_counters
from connectors.simulator_workload import db2prod01, generic_sqlserver, sqlprod01

__all__ = [
    "CacheTruth",
    "ObjectTruth",
    "SimulatedFleet",
    "SimulatedInstance",
    "db2_core_counters",
    "demo_fleet",
]


class SimulatedFleet:
    """The demo fleet (SQLPROD01 + DB2PROD01) or, given a size, generic OLTP SQL Server instances."""

    def __init__(
        self,
        *,
        seed: int = 7,
        origin: datetime,
        instances: int | None = None,
        files_per_instance: int | None = None,
    ) -> None:
        if origin.tzinfo is None:
            raise ValueError("origin must be a time-zone-aware datetime")
        self.seed = seed
        self.origin = origin.astimezone(UTC)
        rng = random.Random(seed)
        if instances is None and files_per_instance is None:
            self.instances = [sqlprod01(rng, self.origin), db2prod01(rng, self.origin)]
            return
        count = 10 if instances is None else instances
        files = 8 if files_per_instance is None else files_per_instance
        if count < 1 or files < 1:
            raise ValueError("a simulated fleet needs at least one instance with at least one file")
        self.instances = [generic_sqlserver(rng, n, files, self.origin) for n in range(1, count + 1)]

    def snapshots(self, at: datetime) -> list[Snapshot]:
        return [instance.snapshot(at) for instance in self.instances]

    def instance(self, name: str) -> SimulatedInstance:
        for instance in self.instances:
            if instance.name == name:
                return instance
        raise KeyError(name)


def demo_fleet(origin: datetime) -> SimulatedFleet:
    """The built-in demo fleet (fixed seed); see docs/demo-fleet.md."""
    return SimulatedFleet(seed=7, origin=origin)
