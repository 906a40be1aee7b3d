"""Benchmark: one poll cycle of 1,000 simulated instances x 50 files into PostgreSQL.

Prints the rate of tierwise's ingest path (per target: load series, insert samples and intervals,
one transaction each, as the scheduler does) and, measured in the same run on the same rows, the
rate of a plain COPY into an equivalent table; and their ratio.

Run: make bench   (or: .venv/bin/python -m bench.poll_cycle --instances 1000 --files 50)
"""

from __future__ import annotations

import argparse
import io
import json
import time
import uuid
from datetime import UTC, datetime, timedelta

import psycopg
from sqlalchemy import create_engine, text

from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import Target
from app.store.targets import add_target
from connectors.simulator import SimulatedFleet

ADMIN_URL = "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--admin-url", default=ADMIN_URL)
    args = ap.parse_args()

    admin = create_engine(args.admin_url, isolation_level="AUTOCOMMIT")
    name = f"tierwise_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = args.admin_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        run(url, args.instances, args.files)
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def run(url: str, instances: int, files: int) -> None:
    origin = datetime(2026, 1, 5, tzinfo=UTC)
    fleet = SimulatedFleet(seed=1, origin=origin, instances=instances, files_per_instance=files)
    store = Store(url)
    ids: list[int] = []
    with store.session() as s:
        for inst in fleet.instances:
            ids.append(
                add_target(
                    s,
                    name=inst.name,
                    engine=str(inst.engine),
                    source="simulator",
                    connection_encrypted=None,
                    password_env=None,
                    poll_interval_s=300,
                    now=origin,
                ).id
            )

    def cycle(at: datetime) -> tuple[float, int, float]:
        t_sim = time.perf_counter()
        snaps = fleet.snapshots(at)
        sim_s = time.perf_counter() - t_sim
        rows = 0
        t0 = time.perf_counter()
        for tid, snap in zip(ids, snaps, strict=True):
            with store.session() as s:
                r = ingest_snapshots(s, s.get(Target, tid), [snap])  # type: ignore[arg-type]
                rows += r.samples + r.intervals
        return time.perf_counter() - t0, rows, sim_s

    first_s, first_rows, _ = cycle(origin + timedelta(minutes=5))
    steady_s, steady_rows, sim_s = cycle(origin + timedelta(minutes=10))

    # Reference: the same number of rows, same columns, by a plain COPY into an unindexed twin table.
    raw = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    with raw, raw.cursor() as cur:
        cur.execute("CREATE UNLOGGED TABLE copy_ref (LIKE sample INCLUDING DEFAULTS)")
        cur.execute("SELECT min(id) FROM object")
        base_obj = cur.fetchone()[0]  # type: ignore[index]
        buf = io.StringIO()
        n_objects = instances * files
        ts = (origin + timedelta(minutes=15)).replace(tzinfo=None).isoformat()
        extra = json.dumps({})
        for i in range(steady_rows):
            buf.write(
                f"{i + 1}\t{base_obj + (i % n_objects)}\t{ts}\t{ts}\t{10**10}\t{i}\t{i * 8192}\t{i * 5}\t"
                f"{i}\t{i * 8192}\t{i * 2}\t{extra}\n"
            )
        data = buf.getvalue()
        t0 = time.perf_counter()
        with cur.copy(
            "COPY copy_ref (id, object_id, sample_time, instance_start, size_bytes, reads, bytes_read, "
            "read_time_ms, writes, bytes_written, write_time_ms, extra) FROM STDIN"
        ) as cp:
            cp.write(data)
        copy_s = time.perf_counter() - t0
    store.dispose()

    ours = steady_rows / steady_s
    ref = steady_rows / copy_s
    print(f"poll cycle: {instances} instances x {files} files into PostgreSQL")
    print(f"  first cycle (creates objects): {first_rows} rows in {first_s:.2f} s")
    print(
        f"  steady cycle: {steady_rows} rows (samples + intervals) in {steady_s:.2f} s = {ours:,.0f} rows/s"
    )
    print(f"  simulator snapshot of the whole fleet: {sim_s:.2f} s (not included above)")
    print(f"  plain COPY of {steady_rows} rows: {copy_s:.2f} s = {ref:,.0f} rows/s")
    print(f"  ratio ours/COPY: {ours / ref:.3f}")


if __name__ == "__main__":
    main()
