"""The figures the scenarios take from the public block traces in shared/traces (SOURCES.md there).

Run `python -m tests.advisors.scenarios.trace_figures [traces_dir]` to print them (JSON), or with
`--write` to refresh trace_figures.json beside this file; tests/advisors/test_scenarios.py checks
that the committed JSON is what the traces give, when the traces are available.

Formats: tpcc-small.trace and wsrch-small.trace are DiskSim/MQSim ASCII lines `arrival_ns device
start_lba_512B size_sectors type` (type 1 = read, 0 = write); msr-cambridge-hm0-sample.csv is
`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` with times in 100 ns units.
A request is "sequential" when it starts exactly where the previous request on the same device
ended (the `exact_sequential_fraction` of the derived per-device CSVs).
"""

from __future__ import annotations

import csv
import json
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TRACES_DIRS = (REPO.parent / "shared" / "traces", REPO / "shared" / "traces", Path("/work/shared/traces"))
SECTOR = 512
KIB = 1024


@dataclass(frozen=True)
class Request:
    t_ns: float
    device: str
    offset: int  # bytes
    size: int  # bytes
    read: bool
    response_ms: float | None = None


def find_traces() -> Path | None:
    for d in TRACES_DIRS:
        if (d / "tpcc-small.trace").is_file():
            return d
    return None


def read_mqsim(path: Path) -> list[Request]:
    out = []
    for line in path.read_text(encoding="ascii").splitlines():
        if not line.strip():
            continue
        t, dev, lba, sectors, kind = line.split()
        out.append(Request(float(t), dev, int(lba) * SECTOR, int(sectors) * SECTOR, kind == "1"))
    return out


def read_msr(path: Path) -> list[Request]:
    out = []
    with path.open(encoding="ascii", newline="") as fh:
        for ts, _host, disk, kind, offset, size, response in csv.reader(fh):
            out.append(
                Request(int(ts) * 100.0, disk, int(offset), int(size), kind == "Read", int(response) / 1e4)
            )
    return out


def _r(v: float, digits: int = 3) -> float:
    return round(v, digits)


def summarise(reqs: Sequence[Request]) -> dict[str, Any]:
    """Counts, mix, sizes, sequential share, span and (where the trace has them) response times."""
    reads = [q for q in reqs if q.read]
    writes = [q for q in reqs if not q.read]
    ends: dict[str, int] = {}
    sequential = 0
    for q in sorted(reqs, key=lambda q: q.t_ns):
        if ends.get(q.device) == q.offset:
            sequential += 1
        ends[q.device] = q.offset + q.size
    seconds = (max(q.t_ns for q in reqs) - min(q.t_ns for q in reqs)) / 1e9
    out: dict[str, Any] = {
        "requests": len(reqs),
        "reads": len(reads),
        "writes": len(writes),
        "read_pct": _r(100 * len(reads) / len(reqs), 1),
        "avg_read_kib": _r(sum(q.size for q in reads) / len(reads) / KIB, 2) if reads else None,
        "avg_write_kib": _r(sum(q.size for q in writes) / len(writes) / KIB, 2) if writes else None,
        "sequential_fraction": _r(sequential / len(reqs)),
        "seconds": _r(seconds, 3),
        "requests_per_s": _r(len(reqs) / seconds, 1) if seconds else None,
        "reads_per_s": _r(len(reads) / seconds, 1) if seconds else None,
    }
    if reqs and reqs[0].response_ms is not None:
        for label, part in (("read", reads), ("write", writes)):
            ms = sorted(q.response_ms or 0.0 for q in part)
            out[f"{label}_ms_mean"] = _r(statistics.fmean(ms))
            out[f"{label}_ms_median"] = _r(statistics.median(ms))
            out[f"{label}_ms_p90"] = _r(ms[int(0.9 * len(ms))])
            out[f"{label}_kib_median"] = _r(statistics.median(q.size for q in part) / KIB, 2)
    return out


def by_device(reqs: Iterable[Request]) -> dict[str, list[Request]]:
    out: dict[str, list[Request]] = {}
    for q in reqs:
        out.setdefault(q.device, []).append(q)
    return out


def compute_figures(traces: Path) -> dict[str, Any]:
    tpcc = read_mqsim(traces / "tpcc-small.trace")
    devices = by_device(tpcc)
    # the log LUN is the one device whose writes are larger than 8 KB and mostly sequential
    log_dev = max(devices, key=lambda d: summarise(devices[d])["sequential_fraction"])
    data = [q for q in tpcc if q.device != log_dev]
    per_dev_read_pct = [summarise(v)["read_pct"] for d, v in devices.items() if d != log_dev]
    wsrch = read_mqsim(traces / "wsrch-small.trace")
    wdev = by_device(wsrch)
    busy = sorted(d for d, v in wdev.items() if len(v) > 1000)
    per_busy = {d: summarise(wdev[d]) for d in busy}
    msr = read_msr(traces / "msr-cambridge-hm0-sample.csv")
    return {
        "tpcc-small": {
            "data_devices": len(devices) - 1,
            "log_device": log_dev,
            "data": summarise(data),
            "data_read_pct_min": min(per_dev_read_pct),
            "data_read_pct_max": max(per_dev_read_pct),
            "log": summarise(devices[log_dev]),
        },
        "wsrch-small": {
            "busy_devices": busy,
            "busy": summarise([q for q in wsrch if q.device in busy]),
            "reads_per_s_per_busy_device": _r(
                statistics.fmean(s["reads_per_s"] for s in per_busy.values()), 1
            ),
            "reads_per_s_busiest_device": max(s["reads_per_s"] for s in per_busy.values()),
            "span_gib_per_busy_device": _r(
                statistics.fmean(
                    (max(q.offset + q.size for q in wdev[d]) - min(q.offset for q in wdev[d])) / 2**30
                    for d in busy
                ),
                1,
            ),
        },
        "msr-cambridge-hm0-sample": summarise(msr),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    args = [a for a in args if a != "--write"]
    traces = Path(args[0]) if args else find_traces()
    if traces is None:
        print("traces not found; pass the directory holding tpcc-small.trace", file=sys.stderr)
        return 2
    text = json.dumps(compute_figures(traces), indent=2, sort_keys=True) + "\n"
    if write:
        (HERE / "trace_figures.json").write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
