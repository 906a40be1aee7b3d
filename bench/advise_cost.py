"""Benchmark: the pure advisor's cost per object, no database.

Builds a seeded in-memory fleet of SQL Server and DB2 instances (filegroups of several files,
logs, tempdb, partitions, DB2 table spaces with buffer-pool counters, instance counters; a week of
hourly buckets with a daily cycle, a trend and nightly backup bursts), runs `advise` plus the
per-database flash curves the hourly evaluation stores, and prints the milliseconds per object.
`fleet()` is also the input of tests/advisors/test_advise_equal_fast.py.

Run: .venv/bin/python -m bench.advise_cost [--servers 20] [--runs 3] [--profile]
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import UTC, datetime, timedelta

from advisors.advise import AdviceReport, DatabaseCurve, advise, database_curves
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage
from policies.loader import load_policy
from policies.model import Policy

T0 = datetime(2026, 11, 13, tzinfo=UTC)
HOURS = 7 * 24
NOW = T0 + timedelta(hours=HOURS)
TIERS = ("flash", "fc", "sata")


def _hours(rng: random.Random, rate: float, read_share: float, read_kb: float, read_ms: float,
           *, burst: bool, trend: float) -> tuple[Usage, tuple[tuple[datetime, Usage], ...]]:  # fmt: skip
    """A week of hourly file counters: a daily cycle, a trend, noise and nightly backup bursts."""
    total = dict.fromkeys(
        ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms"), 0
    )
    buckets = []
    for h in range(HOURS):
        t = T0 + timedelta(hours=h)
        cycle = 0.3 + (1.4 if 8 <= t.hour < 18 else 0.2) * (1 + trend * h / HOURS)
        per_s = rate * cycle * rng.uniform(0.8, 1.2)
        n = int(per_s * 3600)
        r, w = int(n * read_share), n - int(n * read_share)
        kb = read_kb
        if burst and t.hour == 2:
            r, kb = r + 400_000, 512.0
        c = {
            "reads": r,
            "bytes_read": int(r * kb * 1024),
            "read_time_ms": int(r * read_ms * rng.uniform(0.9, 1.1)),
            "writes": w,
            "bytes_written": w * 8192,
            "write_time_ms": int(w * 1.5),
        }
        for k, v in c.items():
            total[k] += v
        buckets.append((t, Usage(3600.0, dict(c))))
    return Usage(3600.0 * HOURS, dict(total)), tuple(buckets)


def _sqlserver(rng: random.Random, server: str, path: dict[str, str]) -> list[ObjectWindow]:
    out: list[ObjectWindow] = []
    for db in ("Sales", "Stock"):
        for g in range(3):
            fg = f"FG{g}"
            tier = rng.choice(TIERS)
            rate = rng.choice((0.5, 5.0, 40.0, 150.0)) * rng.uniform(0.5, 1.5)
            for f in range(rng.randint(1, 3)):
                total, by_hour = _hours(rng, rate, rng.uniform(0.5, 0.95), rng.choice((8.0, 64.0)),
                                        {"flash": 0.5, "fc": 6.0, "sata": 12.0}[tier] * rng.uniform(0.8, 1.5),
                                        burst=g == 0, trend=rng.uniform(-0.3, 0.3))  # fmt: skip
                info = ObjectInfo(
                    key=f"{db}/file/{g}{f}",
                    engine="sqlserver",
                    server=server,
                    database=db,
                    kind="data_file",
                    name=f"{db}_{fg}_{f}",
                    size_bytes=int(rng.lognormvariate(3.5, 1.0) * GB),
                    current_tier=tier,
                    physical_name=f"{path[tier]}{db}_{fg}_{f}.ndf",
                    logical_name=f"{db}_{fg}_{f}",
                    file_id=10 * g + f + 3,
                    filegroup=fg,
                    location_since=T0 - timedelta(days=rng.choice((3, 60, 60, 60, 60))),
                )
                out.append(ObjectWindow(info, total, by_hour))
            if g == 1:
                for p in range(1, 4):
                    x = {"page_io_latch_wait_count": int(rate * 900 * p), "singleton_lookup_count": 5000 * p,
                         "range_scan_count": 700}  # fmt: skip
                    info = ObjectInfo(
                        key=f"{db}/partition/dbo.Orders/1/{p}",
                        engine="sqlserver",
                        server=server,
                        database=db,
                        kind="partition",
                        name=f"dbo.Orders p{p}",
                        size_bytes=int(rng.uniform(2, 20) * GB),
                        filegroup=fg,
                        table_name="dbo.Orders",
                        schema_name="dbo",
                        partition_number=p,
                    )
                    out.append(ObjectWindow(info, Usage(3600.0 * HOURS, {}, x)))
        tier = rng.choice(TIERS)
        total, by_hour = _hours(rng, rng.uniform(5, 60), 0.05, 60.0, 2.0, burst=False, trend=0.0)
        info = ObjectInfo(key=f"{db}/file/2", engine="sqlserver", server=server, database=db, kind="log_file",
                          name=f"{db}_log", size_bytes=int(rng.uniform(5, 50) * GB), current_tier=tier,
                          physical_name=f"{path[tier]}{db}_log.ldf", file_id=2)  # fmt: skip
        out.append(ObjectWindow(info, total, by_hour))
    for f in range(2):
        total, by_hour = _hours(rng, 30.0, 0.5, 64.0, 4.0, burst=False, trend=0.1)
        info = ObjectInfo(key=f"tempdb/file/{f + 1}", engine="sqlserver", server=server, database="tempdb",
                          kind="tempdb", name=f"tempdev{f}", size_bytes=8 * GB, current_tier="fc",
                          physical_name=f"{path['fc']}tempdev{f}.ndf", file_id=f + 1)  # fmt: skip
        out.append(ObjectWindow(info, total, by_hour))
    x = {"page_lookups": 10_000_000, "page_reads": rng.randint(10_000, 900_000)}
    info = ObjectInfo(
        key="instance", engine="sqlserver", server=server, database="", kind="instance", name=server
    )
    out.append(ObjectWindow(info, Usage(3600.0 * HOURS, {}, x)))
    return out


def _db2(rng: random.Random, server: str, groups: dict[str, str]) -> list[ObjectWindow]:
    out: list[ObjectWindow] = []
    for ts in range(6):
        tier = rng.choice(TIERS)
        total, by_hour = _hours(rng, rng.choice((1.0, 20.0, 120.0)), rng.uniform(0.6, 0.95), 32.0,
                                {"flash": 0.4, "fc": 5.0, "sata": 11.0}[tier], burst=ts == 1,
                                trend=rng.uniform(-0.2, 0.4))  # fmt: skip
        reads = total.counters["reads"] or 0
        x = {"pool_data_l_reads": reads * 20, "pool_data_p_reads": reads, "pool_async_data_reads": reads // 3}
        total = Usage(total.seconds, total.counters, x)
        sg = groups[tier]
        info = ObjectInfo(key=f"PROD/tablespace/TS{ts}", engine="db2", server=server, database="PROD",
                          kind="tablespace", name=f"TS{ts}", size_bytes=int(rng.lognormvariate(3.0, 1.0) * GB),
                          current_tier=tier, storage_group=sg, tablespace=f"TS{ts}")  # fmt: skip
        out.append(ObjectWindow(info, total, by_hour))
        if ts == 2:
            for p in range(2):
                px = {"object_data_l_reads": 90_000 * (p + 1), "object_data_p_reads": 3_000 * (p + 1)}
                info = ObjectInfo(key=f"PROD/partition/APP.EVENTS/{p}", engine="db2", server=server,
                                  database="PROD", kind="partition", name=f"APP.EVENTS p{p}",
                                  size_bytes=4 * GB, tablespace=f"TS{ts}", table_name="APP.EVENTS",
                                  schema_name="APP", partition_number=p)  # fmt: skip
                out.append(ObjectWindow(info, Usage(3600.0 * HOURS, {}, px)))
    return out


def fleet(servers: int = 15, seed: int = 14, policy: Policy | None = None) -> list[ObjectWindow]:
    """A seeded fleet: three SQL Server instances for every DB2 one (~30 objects per instance), its
    files and table spaces in the tiers' directories and storage groups of `policy` (default: the
    shipped one)."""
    tiers = {t.name: t.locations for t in (policy or load_policy()).tiers}
    path = {t: tiers[t].sqlserver_directory or "" for t in TIERS}
    groups = {t: tiers[t].db2_storage_group or "" for t in TIERS}
    rng = random.Random(seed)
    out: list[ObjectWindow] = []
    for s in range(servers):
        out.extend(_db2(rng, f"DB2P{s:03d}", groups) if s % 4 == 3 else _sqlserver(rng, f"SQLP{s:03d}", path))
    return out


def fleet_policy(windows: list[ObjectWindow], base: Policy | None = None) -> Policy:
    """`base` (default: the shipped policy) with flash sized to a fifth of the fleet's GB (so
    capacity binds) and the slowest tier with six times the devices (it serves what the fleet puts
    there today)."""
    policy = base or load_policy()
    gb = sum((w.info.size_bytes or 0) for w in windows if w.info.kind != "partition") / GB
    tiers = [
        t.model_copy(update={"capacity_gb": round(gb * share, 1), "devices": t.devices * more})
        for t, share, more in zip(policy.tiers, (0.2, 0.6, 2.0), (1, 1, 6), strict=True)
    ]
    return policy.model_copy(update={"tiers": tiers})


def run(windows: list[ObjectWindow], policy: Policy) -> tuple[AdviceReport, list[DatabaseCurve]]:
    """What the hourly evaluation runs on one pool: the advice, then the per-database curves."""
    report = advise(windows, policy, now=NOW)
    return report, database_curves(report, policy)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    windows = fleet(a.servers)
    policy = fleet_policy(windows)
    if a.profile:
        import cProfile
        import pstats

        cProfile.runctx("run(windows, policy)", globals(), locals(), "/tmp/advise_cost.prof")
        pstats.Stats("/tmp/advise_cost.prof").sort_stats("cumulative").print_stats(40)
        pstats.Stats("/tmp/advise_cost.prof").sort_stats("tottime").print_stats(30)
    best, cpu = float("inf"), float("inf")
    for _ in range(a.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        run(windows, policy)
        best, cpu = min(best, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    n = len(windows)
    print(f"advise: {n} objects in {best:.3f} s wall, {cpu:.3f} s CPU (best of {a.runs}); "
          f"{1000 * best / n:.2f} ms per object wall, {1000 * cpu / n:.2f} ms CPU")  # fmt: skip


if __name__ == "__main__":
    main()
