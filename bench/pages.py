"""Benchmark: page and API latency on a big store, SQLite and PostgreSQL.

Synthesizes (bulk inserts, no simulator) 10,000 objects spread over `--targets` SQL Server targets
(data files, logs, tempdb files and partitions; sizes and I/O heavy-tailed), a day of hourly
io_interval rows for every object with file counters, 10,000 stored recommendations with
evidence and an advice snapshot per target (every object's decision and explanation, flash curves);
then times each route with TestClient, `--repeat` times after two warm-up requests, and
prints p50 / p95 per route and store. The target: p95 under 300 ms. Routes marked "cold" drop the
in-process caches before every request: the first load after a poll (or an advice run).

Run: .venv/bin/python -m bench.pages [--objects 10000] [--targets 10] [--repeat 50]
     [--stores sqlite,postgresql] [--admin-url postgresql+psycopg://...] [--only /targets,/heatmap]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, func, insert, select, text

from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.models import (
    AdviceSnapshot,
    DbObject,
    HourlyRollup,
    IoInterval,
    Recommendation,
    RollupProgress,
    Target,
)
from app.store.users import add_user
from policies.loader import load_policy

ADMIN_URL = "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"
USER, PASSWORD = "bench", "bench-password"
# the shipped policy's directories of fc (most files), sata and flash
TIERS = tuple(
    load_policy().tier(name).locations.sqlserver_directory or "" for name in ("fc", "sata", "flash")
)


def synthesize(
    store: Store, *, objects: int, targets: int, now: datetime, hours: int = 24, seed: int = 11
) -> str:
    """Fill an empty store; returns the name of the first target."""
    rng = random.Random(seed)
    per_target = objects // targets
    hour0 = now.replace(minute=0, second=0, microsecond=0)
    with store.session() as s:
        add_user(s, username=USER, password=PASSWORD, role="viewer", now=now)
        target_ids = []
        for t in range(targets):
            target = Target(name=f"bench:SQL{t:03d}", engine="sqlserver", source="import", created_at=now,
                            enabled=True, poll_interval_s=300, consecutive_failures=0)  # fmt: skip
            s.add(target)
            s.flush()
            target_ids.append(target.id)
    object_rows: list[dict[str, Any]] = []
    for t, tid in enumerate(target_ids):
        server = f"SQL{t:03d}"
        for i in range(per_target):
            db = f"DB{i % 8}"
            fg = f"FG_{i // 4 % 200:03d}"
            if i % 10 == 9:
                kind, name, key = "partition", f"Orders p{i}", f"{db}/partition/dbo.Orders/1/{i}"
            elif i % 50 == 1:
                kind, name, key = "log_file", f"{db}_log{i}", f"{db}/file/{i}"
            elif i % 100 == 2:
                kind, name, key, db = "tempdb", f"temp{i}", f"tempdb/file/{i}", "tempdb"
            else:
                kind, name, key = "data_file", f"{db}_{fg}_{i}", f"{db}/file/{i}"
            tier = TIERS[0] if rng.random() < 0.8 else rng.choice(TIERS)
            object_rows.append({
                "target_id": tid, "engine": "sqlserver", "server": server, "database": db, "kind": kind,
                "key": key, "name": name, "size_bytes": int(rng.lognormvariate(23, 1.3)),
                "physical_name": None if kind == "partition" else f"{tier}{db}\\{name}.ndf",
                "filegroup": None if kind in ("log_file", "tempdb") else fg, "file_id": i,
                "first_seen": now - timedelta(days=30), "last_seen": now,
            })  # fmt: skip
    with store.session() as s:
        for k in range(0, len(object_rows), 5000):
            s.execute(insert(DbObject), object_rows[k : k + 5000])
    with store.session() as s:
        objs = s.execute(select(DbObject.id, DbObject.target_id, DbObject.server, DbObject.kind, DbObject.key,
                                DbObject.database, DbObject.name, DbObject.size_bytes, DbObject.filegroup)).all()  # fmt: skip
    intervals: list[dict[str, Any]] = []
    for o in objs:
        if o.kind == "partition":
            continue
        base = 2000.0 / (1 + rng.paretovariate(1.2) * 50)  # IOPS: a few hot, most cold
        for h in range(hours):
            end = hour0 - timedelta(hours=h)
            load = base * (0.5 + abs(12 - (end.hour + 3) % 24) / 12)
            reads = int(load * 3600 * 0.8)
            writes = int(load * 3600 * 0.2)
            intervals.append({
                "object_id": o.id, "start_time": end - timedelta(hours=1), "end_time": end, "seconds": 3600.0,
                "reads": reads, "bytes_read": reads * 8192, "read_time_ms": reads * rng.randint(2, 20),
                "writes": writes, "bytes_written": writes * 8192, "write_time_ms": writes * rng.randint(1, 6),
                "extra": {}, "rolled_up": h > 0,
            })  # fmt: skip
    # as the scheduler leaves it: every hour but the current one rolled up (the same sums, exactly)
    rollups = [
        {"object_id": iv["object_id"], "hour": iv["end_time"], "intervals": 1,
         **{c: iv[c] for c in ("seconds", "reads", "bytes_read", "read_time_ms", "writes", "bytes_written",
                               "write_time_ms", "extra")}}
        for iv in intervals
        if iv["rolled_up"]
    ]  # fmt: skip
    done: list[dict[str, Any]] = []
    fresh: list[dict[str, Any]] = []
    for iv in intervals:
        (done if iv.pop("rolled_up") else fresh).append(iv)
    with store.session() as s:
        for k in range(0, len(done), 20000):
            s.execute(insert(IoInterval), done[k : k + 20000])
        # the roll-up's mark: every interval stored so far is in the roll-ups, the newer ones not
        s.merge(
            RollupProgress(name="hourly", last_interval_id=s.scalar(select(func.max(IoInterval.id))) or 0)
        )
        for k in range(0, len(fresh), 20000):
            s.execute(insert(IoInterval), fresh[k : k + 20000])
        for k in range(0, len(rollups), 20000):
            s.execute(insert(HourlyRollup), rollups[k : k + 20000])
    recs: list[dict[str, Any]] = []
    statuses = ["open"] * 6 + ["approved", "rejected", "deferred", "superseded"]
    for n in range(objects):
        o = objs[n % len(objs)]
        to = rng.choice(("flash", "sata"))
        unit = (
            f"{o.database}/filegroup/{o.filegroup}" if o.kind == "data_file" else o.key
        )  # as the advice keys it
        evidence = {
            "reasons": [
                "TW701 small random reads that miss cache at a high rate: flash candidate (would gain about "
                f"{rng.uniform(2, 15):.1f} ms per read)",
                f"8.0 KB average read, {rng.randint(100, 3000):,} reads/s, {rng.uniform(5, 20):.1f} ms average "
                "read latency",
            ],
            "metrics": {"read_iops": rng.uniform(1, 3000), "avg_read_ms": rng.uniform(1, 20),
                        "io_per_s_by_hour_of_day": [rng.uniform(0, 100) for _ in range(24)]},
        }  # fmt: skip
        now_ms = rng.uniform(1, 5000)
        recs.append({
            "target_id": o.target_id, "key": unit, "engine": "sqlserver", "server": o.server,
            "database": o.database, "kind": o.kind, "name": o.name, "from_tier": "fc", "to_tier": to,
            "profile": "random_read" if to == "flash" else "cold", "rule": "TW701", "size_bytes": o.size_bytes,
            "io_ms_per_s_now": now_ms, "io_ms_per_s_after": now_ms * rng.uniform(0.05, 1.5), "evidence": evidence,
            "status": rng.choice(statuses), "created_at": now, "updated_at": now,
        })  # fmt: skip
    with store.session() as s:
        for k in range(0, len(recs), 5000):
            s.execute(insert(Recommendation), recs[k : k + 5000])
    # the last advice run's evidence for every object (as app.evaluate stores it), per target
    by_target: dict[int, list[dict[str, Any]]] = {}
    for o in objs:
        reason = recs[o.id % len(recs)]["evidence"]["reasons"]
        by_target.setdefault(o.target_id, []).append({
            "engine": "sqlserver", "server": o.server, "database": o.database, "kind": o.kind, "name": o.name,
            "key": o.key, "placement_unit": o.key, "recommended_tier": "fc", "reasons": reason,
            "explanation": f"Not moved to flash: {reason[0]}; stays on fc.",
            "decision": {"stage": "rule", "rule": "TW703", "moved": False, "current_tier": "fc",
                         "preferred_tier": "fc", "recommended_tier": "fc", "allowed_tiers": ["fc", "sata"],
                         "detail": reason[0], "unit": None,
                         "numbers": {"read_iops": rng.uniform(1, 3000), "avg_read_kb": 8.0},
                         "predicted": [{"tier": t, "read_ms": 5.0, "write_ms": 2.0, "io_ms_per_s": 100.0,
                                        "measured": t == "fc"} for t in ("flash", "fc", "sata")]},
            "metrics": {"io_per_s_by_hour_of_day": [rng.uniform(0, 100) for _ in range(24)]},
        })  # fmt: skip
    with store.session() as s:
        for tid, docs in by_target.items():
            curve = [{"engine": "sqlserver", "server": docs[0]["server"], "database": f"DB{d}", "units": 100,
                      "points": [[g * 50.0, min(1.0, 0.4 + g * 0.07)] for g in range(8)],
                      "savings": {"flash_gb_recommended": 200.0, "io_ms_per_s_now": 5000.0,
                                  "io_ms_per_s_after": 2000.0, "io_ms_per_s_saved": 3000.0}}
                     for d in range(8)]  # fmt: skip
            s.add(AdviceSnapshot(target_id=tid, evaluated_at=now, objects=docs, flash_curve=curve, notes=[]))
    print(f"  synthesized {len(objs):,} objects on {targets} targets, {len(intervals):,} hourly intervals "
          f"({len(rollups):,} rolled up), {len(recs):,} recommendations")  # fmt: skip
    return "bench:SQL000"


def _login(client: TestClient) -> None:
    html = client.get("/login").text
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m is not None
    r = client.post("/login", data={"username": USER, "password": PASSWORD, "csrf_token": m.group(1)},
                    follow_redirects=False)  # fmt: skip
    assert r.status_code == 303, r.text


def time_routes(
    url: str, tmp: Path, routes: list[tuple[str, str, bool]], repeat: int
) -> list[tuple[str, float, float]]:
    """(label, path, cold): a cold route drops the cached heat-map totals, target rows and advice
    snapshots before each request (the first load after a poll or an advice run)."""
    from app.http.objects import heatmap_totals
    from app.store.object_evidence import snapshots
    from app.store.object_rows_cache import object_rows_cache

    settings = Settings(
        database_url=url, secret_key_file=tmp / "bench.key", demo=False, scheduler_enabled=False
    )
    out = []
    with TestClient(create_app(settings)) as client:
        _login(client)
        for label, route, cold in routes:
            for _ in range(2):
                r = client.get(route)
                assert r.status_code == 200, (route, r.status_code, r.text[:300])
            times = []
            for _ in range(repeat):
                if cold:
                    heatmap_totals.clear()
                    object_rows_cache.clear()
                    snapshots.clear()
                t0 = time.perf_counter()
                r = client.get(route)
                times.append((time.perf_counter() - t0) * 1000)
                assert r.status_code == 200
            p95 = statistics.quantiles(times, n=20, method="inclusive")[18]
            out.append((label, statistics.median(times), p95))
    return out


@contextmanager
def postgres_db(admin_url: str) -> Iterator[str]:
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"tierwise_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--targets", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument(
        "--hours", type=int, default=24, help="hourly intervals per object (168: the heat map's week)"
    )
    ap.add_argument("--stores", default="sqlite,postgresql")
    ap.add_argument("--admin-url", default=ADMIN_URL)
    ap.add_argument("--only", default="", help="time only routes containing one of these (comma-separated)")
    args = ap.parse_args()
    now = datetime.now(UTC)
    results: list[tuple[str, str, float, float]] = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for kind in args.stores.split(","):
            with postgres_db(args.admin_url) if kind == "postgresql" else _sqlite(tmp) as url:
                print(f"{kind}: building the store ...")
                store = Store(url)
                t0 = time.perf_counter()
                target = synthesize(
                    store, objects=args.objects, targets=args.targets, now=now, hours=args.hours
                )
                if kind == "postgresql":
                    with store.engine.connect() as c:
                        c.execute(text("ANALYZE"))
                        c.commit()
                store.dispose()
                print(f"  built in {time.perf_counter() - t0:.1f} s")
                quoted = target.replace(":", "%3A")
                paths = ["/recommendations", "/api/recommendations", f"/targets/{quoted}",
                         f"/targets/{quoted}?sort=name&dir=asc&page=3", f"/api/targets/{quoted}/objects",
                         "/heatmap", f"/heatmap?target={quoted}", "/api/heatmap", "/objects/1"]  # fmt: skip
                routes = [(p, p, False) for p in paths]
                routes += [("/heatmap (cold: totals re-read)", "/heatmap", True),
                           (f"/heatmap?target={quoted} (cold)", f"/heatmap?target={quoted}", True),
                           (f"/targets/{quoted} (cold: rows re-read)", f"/targets/{quoted}", True),
                           ("/objects/2 (cold: evidence re-read)", "/objects/2", True),
                           ("/api/objects/2/evidence", "/api/objects/2/evidence", False),
                           (f"/api/targets/{quoted}/flash-curve", f"/api/targets/{quoted}/flash-curve", False)]  # fmt: skip
                if args.only:
                    routes = [r for r in routes if any(w in r[0] for w in args.only.split(","))]
                for route, p50, p95 in time_routes(url, tmp, routes, args.repeat):
                    results.append((kind, route, p50, p95))
    per = args.objects // args.targets
    print(f"\n{args.objects:,} objects ({args.targets} targets x {per:,}), {args.hours} hourly intervals each, "
          f"{args.objects:,} recommendations; {args.repeat} requests per route (TestClient)")  # fmt: skip
    print(f"{'store':<11} {'route':<52} {'p50 ms':>8} {'p95 ms':>8}")
    for kind, route, p50, p95 in results:
        flag = "" if p95 < 300 else "  over 300 ms"
        print(f"{kind:<11} {route:<52} {p50:>8.1f} {p95:>8.1f}{flag}")


@contextmanager
def _sqlite(tmp: Path) -> Iterator[str]:
    path = tmp / f"bench-{uuid.uuid4().hex[:6]}.db"
    yield f"sqlite:///{path}"


if __name__ == "__main__":
    main()
