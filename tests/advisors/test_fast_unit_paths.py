"""The advisor's per-unit results against their definitions, on varied inputs (issue #14): combine
sets a unit's size to its members' sum whatever size it is given, split_maintenance leaves out
exactly the hours is_burst takes (asked of every hour), and Decision.as_json rounds as
round(v, 4). Each must give the same floats, the same text."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from advisors.explain import Decision, TierPrediction
from advisors.features import (
    ObjectInfo,
    ObjectWindow,
    Usage,
    combine,
)
from advisors.maintenance import is_burst, split_maintenance, sum_usage
from advisors.units import build_units
from policies.loader import load_policy
from policies.model import Policy
from policies.workload import MaintenanceWindow

POLICY = load_policy()
HOUR = 3600.0
INFO = ObjectInfo(key="Sales/file/1", engine="sqlserver", server="S", database="Sales", kind="data_file",
                  name="f1.ndf", size_bytes=8 * 1024**3, current_tier="fc", filegroup="FG1")  # fmt: skip


def test_combine_with_the_size_given_is_combine_without_it() -> None:
    """combine gives the unit its members' summed size whatever size the unit's info came with
    (the sum itself, None, another number), and build_units' units carry that sum."""
    start = datetime(2026, 3, 2, tzinfo=ZoneInfo("Europe/Berlin"))
    members = [
        ObjectWindow(
            replace(INFO, key=f"Sales/file/{i}", size_bytes=size),
            Usage(2 * HOUR, {"reads": 10 * i, "writes": None}),
            tuple(
                (start + timedelta(hours=h), Usage(HOUR, {"reads": 5 * i + h, "writes": None}))
                for h in range(2)
            ),
        )
        for i, size in enumerate([3 * 1024**3, None, 5])
    ]
    unit = ObjectInfo(key="Sales/filegroup/FG1", engine="sqlserver", server="S", database="Sales",
                      kind="filegroup", name="FG1")  # fmt: skip
    expected = combine(members, unit)
    assert expected.info.size_bytes == 3 * 1024**3 + 5
    for given in (3 * 1024**3 + 5, None, 0, 7):
        got = combine(members, replace(unit, size_bytes=given))
        assert got == expected
    units, _ = build_units(members)
    assert len(units) == 1 and units[0].info.size_bytes == 3 * 1024**3 + 5
    assert units[0].by_hour == expected.by_hour and units[0].total == expected.total


# --- split_maintenance: the hours is_burst takes ------------------------------------------------


def burst_policy(min_reads: int, *windows: MaintenanceWindow) -> Policy:
    rules = POLICY.burst_detection.model_copy(update={"enabled": True, "min_reads": min_reads})
    return POLICY.model_copy(update={"maintenance_windows": list(windows), "burst_detection": rules})


def random_hours(rng: random.Random, n: int, engine: str) -> list[tuple[datetime, Usage]]:
    """Hours around the burst thresholds: None and missing counters, zero reads, DB2 prefetch."""
    start = datetime(2026, 3, 2, tzinfo=UTC)
    out = []
    for h in range(n):
        reads = rng.choice([None, 0, 1, 99, 100, 101, rng.randrange(0, 50_000)])
        avg = rng.choice([8192, 524_287, 524_288, 2**20, 4 * 2**20])
        counters: dict[str, int | None] = {"writes": rng.randrange(0, 100)}
        if rng.random() < 0.9:
            counters["reads"] = reads
        if rng.random() < 0.9:
            counters["bytes_read"] = None if reads is None or rng.random() < 0.1 else reads * avg
        extra = {}
        if engine == "db2" and rng.random() < 0.7:
            extra = {"pool_data_p_reads": 1000, "pool_async_data_reads": rng.choice([0, 500, 800, 1000])}
        out.append((start + timedelta(hours=h), Usage(HOUR, counters, extra)))
    return out


@pytest.mark.parametrize("engine", ["sqlserver", "db2"])
@pytest.mark.parametrize("min_reads", [0, 1, 100])
def test_left_out_hours_are_those_is_burst_takes(engine: str, min_reads: int) -> None:
    rng = random.Random(min_reads * 7 + len(engine))
    p = burst_policy(min_reads)
    info = replace(INFO, engine=engine)
    found = 0
    for n in (1, 5, 48, 168):
        for _ in range(20):
            hours = random_hours(rng, n, engine)
            w = ObjectWindow(info, sum_usage([u for _, u in hours]), tuple(hours))
            bursts = [i for i, (_, u) in enumerate(hours) if is_burst(info, u, p.burst_detection)]
            got = split_maintenance(w, p)
            if not bursts:
                assert got is w
                continue
            found += 1
            assert got.maintenance is not None
            reads = sum_usage([hours[i][1] for i in bursts]).counters.get("reads") or 0
            assert [s.reads for s in got.maintenance.slices] == [reads]
            if len(bursts) == n:
                assert got.by_hour == w.by_hour and got.maintenance.note is not None
            else:
                assert got.by_hour == tuple(b for i, b in enumerate(hours) if i not in bursts)
    assert found > 10  # the inputs do find bursts


def test_declared_windows_still_see_every_hour() -> None:
    """A declared window takes its hours whatever their reads; bursts are judged on the rest."""
    window = MaintenanceWindow(name="etl", kind="etl", start=time(1), end=time(3))
    hours = random_hours(random.Random(5), 72, "sqlserver")
    w = ObjectWindow(INFO, sum_usage([u for _, u in hours]), tuple(hours))
    got = split_maintenance(w, burst_policy(100, window))
    assert got.maintenance is not None
    assert any(s.kind == "etl" for s in got.maintenance.slices)
    assert all(t.hour not in (1, 2) for t, _ in got.by_hour)


# --- Decision.as_json: rounding ---------------------------------------------------------


def test_decision_json_rounds_as_round_4() -> None:
    rng = random.Random(9)
    values = [None, 0.0, -0.0, 1, 2.00005, 1e-9, -3.14159265, 12345.678951, float("inf"), rng.random()]
    for _ in range(50):
        numbers = {f"n{i}": rng.choice(values) for i in range(8)}
        preds = tuple(
            TierPrediction(t, rng.choice(values), rng.choice(values), rng.choice(values), rng.random() < 0.5)
            for t in ("flash", "fc", "sata")
        )
        d = Decision("benefit", "TW700", True, "fc", "flash", "flash", ("flash", "fc"), "why", numbers, preds)
        got = d.as_json()
        assert got["numbers"] == {k: None if v is None else round(v, 4) for k, v in numbers.items()}
        assert [type(v) for v in got["numbers"].values()] == [
            type(None if v is None else round(v, 4)) for v in numbers.values()
        ]
        for p, j in zip(preds, got["predicted"], strict=True):
            for name in ("read_ms", "write_ms", "io_ms_per_s"):
                v = getattr(p, name)
                assert j[name] == (None if v is None else round(v, 4))
