"""Regression pin: the simulator's counters for a fixed seed are exactly what they were.

The expected digests below were computed from connectors/simulator.py BEFORE it was split into
workload model and counter generation (issue #18), and hard-coded then. The advice-vs-truth
tests (tests/advisors/test_advise_truth.py, test_issue9_truth.py) and the demo assume this exact
fleet, so the digest fails on ANY change to the workload model or the counter generation: every
row, every column (object identity and location, core counters, engine extras), the instance
start times, the ground truth and the cache truth. Counters are compared exactly; the truth's
floats to 12 significant digits (the last bit of a sum used to depend on PYTHONHASHSEED). If you change the model on purpose, say so in
the CHANGELOG, re-check the truth tests and docs/demo-fleet.md, then update the digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from connectors.simulator import SimulatedFleet, demo_fleet

ORIGIN = datetime(2025, 6, 12, 8, 30, tzinfo=UTC)
# five-minute polls, a nightly backup window, past the demo restart, and a month end
POLLS = [
    *(ORIGIN + timedelta(minutes=5 * k) for k in range(6)),
    datetime(2025, 6, 13, 1, 30, tzinfo=UTC),
    ORIGIN + timedelta(hours=30, minutes=5),
    datetime(2025, 6, 30, 12, 0, tzinfo=UTC),
    datetime(2025, 7, 1, 18, 0, tzinfo=UTC),
]

# Issue #28 moved the demo onto the shipped policy's locations (E:\MSSQL\FLASH\, SG_SAS, /db2/sas/, ...)
# and changed four objects' truth (TS_SCAN and Staging/file/3 to flash, Sales/file/7 to sata, the write
# budget's note from Staging/file/3 to Staging/file/1): with those put back as they were, the three
# digests before it (4d2c478f..., d3f2cb96..., b5014984...) are reproduced, so no counter changed.
# Issue #30 (N13) put each demo table space's containers on every storage path of its tier (two on
# SG_SAS's /db2/sas/data1 and data2): only the DB2 paths and the containers changed; every other
# sample is identical, and each table space's containers add up to the same counters as before
# (c581a204... and 293339cb... before it).
DEMO_DIGEST = "117e1b7c2ffca41a6c9bcbf63fdb17920c10005f2a22ad4bf9d7608d1d011694"
GENERIC_DIGEST = "78ab908b54e1bb134951d66a18cd2125a81d2d06e66905c7b5e9763c9d962368"
RESTARTED_DIGEST = "6ae74f5b1da0ff9a1683029911bfa244717fcf08838a297be944420e57fe5eb1"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):  # truth ratios: summation order may move the last bit
        return float(f"{value:.12g}")
    return value


def digest(fleet: SimulatedFleet) -> str:
    """SHA-256 of every snapshot at POLLS plus each instance's truth, cache truth and restarts."""
    doc = {
        "snapshots": [_plain(fleet.snapshots(at)) for at in POLLS],
        "instances": [
            {
                "name": i.name,
                "truth": _plain(i.truth()),
                "cache_truth": _plain(i.cache_truth()),
                "restarts": _plain(i.restarts()),
            }
            for i in fleet.instances
        ],
    }
    text = json.dumps(doc, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def test_demo_fleet_counters_are_unchanged() -> None:
    assert digest(demo_fleet(ORIGIN)) == DEMO_DIGEST


def test_generic_fleet_counters_are_unchanged() -> None:
    fleet = SimulatedFleet(seed=3, origin=ORIGIN, instances=3, files_per_instance=6)
    assert digest(fleet) == GENERIC_DIGEST


def test_injected_restart_counters_are_unchanged() -> None:
    fleet = demo_fleet(ORIGIN)
    fleet.instance("DB2PROD01").restart(ORIGIN + timedelta(minutes=12))
    assert digest(fleet) == RESTARTED_DIGEST
