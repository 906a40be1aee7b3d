"""Benchmark: `tierwise import` of one large file_stats.csv (about 50 MB by default).

Generates the file (one server, 200 database files, 5-minute samples), imports it into a fresh
SQLite store (or the given --url) and prints rows/s and the process's peak RSS, which should
stay far below the file's size times ten (the import streams: issue #16).

Run: .venv/bin/python -m bench.import_file [--mb 50] [--url postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.importer import import_file
from app.store.db import Store
from connectors.shapes import SQLSERVER_FILE_STATS

HEADER = [c.name for c in SQLSERVER_FILE_STATS.columns]


def generate(path: Path, megabytes: int, files: int = 200) -> int:
    """Write a file_stats file of about `megabytes`; returns its number of rows."""
    start = datetime(2024, 5, 1, tzinfo=UTC)
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(HEADER)
        sample = 0
        while fh.tell() < megabytes * 1_000_000:
            when = (start + timedelta(minutes=5 * sample)).isoformat()
            for f in range(1, files + 1):
                n = sample * (f * 37 + 11)
                w.writerow(
                    [when, "SQLBENCH01", "2024-04-28T03:12:45Z", f"db{f % 20}", f, f"file{f}", "ROWS",
                     "PRIMARY", rf"E:\data\db{f % 20}\file{f}.ndf", 1 << 34, n, n * 8192, n // 3, n // 5,
                     n * 4096, n // 7, 0, 0, "E:\\", 1 << 42, 1 << 41]
                )  # fmt: skip
                rows += 1
            sample += 1
    return rows


def peak_rss_mb() -> float:
    """Peak resident set size of this process (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=50, help="size of the generated file, MB")
    parser.add_argument("--url", help="store URL (default: a new SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "file_stats.csv"
        rows = generate(path, args.mb)
        size_mb = path.stat().st_size / 1e6
        rss_before = peak_rss_mb()
        store = Store(args.url or f"sqlite:///{Path(tmp) / 'bench.db'}")
        began = time.perf_counter()
        out = import_file(store, path, now=datetime(2030, 1, 1, tzinfo=UTC))
        seconds = time.perf_counter() - began
        store.dispose()
    print(
        json.dumps(
            {
                "file_mb": round(size_mb, 1),
                "rows": rows,
                "samples_stored": out.result.samples,
                "seconds": round(seconds, 1),
                "rows_per_s": round(rows / seconds),
                "peak_rss_mb_before_import": round(rss_before, 1),
                "peak_rss_mb": round(peak_rss_mb(), 1),
            }
        )
    )


if __name__ == "__main__":
    main()
