"""Write each scenario's import CSV files from its scenario.yaml (deterministic, no randomness).

Run `python -m tests.advisors.scenarios.generate` to regenerate every scenario, or pass scenario
directory names to regenerate some. The files follow docs/import-files.md exactly:
`file_stats.csv` (SQL Server), `tablespaces.csv` and `transaction_log.csv` (DB2), with cumulative
counters sampled at fixed UTC times (by default every 60 minutes for 48 hours, ending
2026-11-20T00:00Z).

How a scenario's rates become counters (README.md, "The scenario file"):

- counters count from the instance start, one day before the first sample, and grow at the
  object's rates integrated hour by hour (an `extra` entry adds I/O in the hours and dates it
  names, e.g. a nightly backup or month-end re-reads);
- SQL Server: a filegroup's size and I/O are spread evenly over its `files`; bytes = requests x
  size, stall = requests x latency; tempdb's data files are tempdev, temp2, ...;
- DB2 table space: `sync_reads_per_s` synchronous page reads (one request each) at `read_ms`,
  `prefetch_per_s` vectored prefetch requests of `prefetch_pages` pages at `prefetch_ms` each,
  logical reads = sync / (1 - hit_ratio) + prefetched pages, `writes_per_s` pages written at
  `write_ms`; SYSTEMP / USRTEMP table spaces count their reads in the pool_temp_* columns;
- DB2 log: `writes_per_s` log write requests of `write_kib` (4 KB log pages) at `write_ms`.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from policies.loader import DEFAULT_POLICY
from policies.model import Policy
from tests.fixture_policy import REFERENCE_POLICY

HERE = Path(__file__).resolve().parent
DEFAULT_END = datetime(2026, 11, 20, tzinfo=UTC)
GIB = 1024**3
KIB = 1024
LOG_PAGE = 4096
UPTIME_BEFORE_FIRST_SAMPLE = timedelta(days=1)
BASE_POLICIES = {"reference": REFERENCE_POLICY, "shipped": DEFAULT_POLICY}  # spec key `base_policy`

SQLSERVER_FILE_STATS_HEADER = (
    "sample_time",
    "server_name",
    "sqlserver_start_time",
    "database_name",
    "file_id",
    "file_name",
    "type_desc",
    "filegroup_name",
    "physical_name",
    "size_on_disk_bytes",
    "num_of_reads",
    "num_of_bytes_read",
    "io_stall_read_ms",
    "num_of_writes",
    "num_of_bytes_written",
    "io_stall_write_ms",
)
DB2_TABLESPACES_HEADER = (
    "sample_time",
    "server_name",
    "db_name",
    "db_conn_time",
    "tbsp_name",
    "tbsp_id",
    "tbsp_type",
    "tbsp_content_type",
    "storage_group_name",
    "tbsp_page_size",
    "tbsp_used_pages",
    "pool_data_l_reads",
    "pool_data_p_reads",
    "pool_async_data_reads",
    "pool_index_l_reads",
    "pool_index_p_reads",
    "pool_async_index_reads",
    "pool_temp_data_l_reads",
    "pool_temp_data_p_reads",
    "pool_temp_index_l_reads",
    "pool_temp_index_p_reads",
    "pool_read_time",
    "pool_async_read_time",
    "pool_data_writes",
    "pool_index_writes",
    "pool_write_time",
    "vectored_ios",
    "pages_from_vectored_ios",
    "block_ios",
    "pages_from_block_ios",
    "direct_reads",
    "direct_read_reqs",
    "direct_read_time",
    "direct_writes",
    "direct_write_reqs",
    "direct_write_time",
)
DB2_TRANSACTION_LOG_HEADER = (
    "sample_time",
    "server_name",
    "db_name",
    "db_conn_time",
    "log_path",
    "log_size_bytes",
    "log_writes",
    "log_write_time",
    "num_log_write_io",
    "log_reads",
    "log_read_time",
    "num_log_read_io",
)

# the rate keys an object (or one of its `extra` entries) may give, per engine and kind
SQLSERVER_RATES = ("reads_per_s", "read_kib", "read_ms", "writes_per_s", "write_kib", "write_ms",
                   "queued_read_ms", "queued_write_ms")  # fmt: skip
# Resource Governor's share of read_ms / write_ms (SQL Server 2014+): written only by scenarios
# that set it, so the other scenarios' files keep the 2008 shape
SQLSERVER_QUEUED_COLUMNS = ("io_stall_queued_read_ms", "io_stall_queued_write_ms")
DB2_TABLESPACE_RATES = (
    "sync_reads_per_s",
    "read_ms",
    "hit_ratio",
    "prefetch_per_s",
    "prefetch_pages",
    "prefetch_ms",
    "writes_per_s",
    "write_ms",
)
DB2_LOG_RATES = SQLSERVER_RATES
TEMP_CONTENT = ("SYSTEMP", "USRTEMP")


class ScenarioError(ValueError):
    """A scenario.yaml that the generator cannot use; the message names the scenario and field."""


# --- policy ------------------------------------------------------------------------------------


def deep_merge(base: Any, over: Any) -> Any:
    """`over` merged into `base`: mappings recursively; a list of mappings that all have a `name`
    (tiers) merged item by item by name (new names appended); any other value replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = deep_merge(base[k], v) if k in base else v
        return out
    if isinstance(base, list) and isinstance(over, list) and _named(base) and _named(over):
        merged = [dict(item) for item in base]
        index = {item["name"]: i for i, item in enumerate(merged)}
        for item in over:
            if item["name"] in index:
                merged[index[item["name"]]] = deep_merge(merged[index[item["name"]]], item)
            else:
                merged.append(item)
        return merged
    return over


def _named(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(i, dict) and "name" in i for i in items)


def scenario_policy(spec: Mapping[str, Any]) -> Policy:
    """The frozen reference policy (tests/reference-policy.yaml, not the shipped one: the corpus's
    expectations are worked out by hand on its tier figures) with the scenario's `policy`
    deep-merged over it, validated. A spec outside the corpus may say `base_policy: shipped` to
    start from policies/default.yaml instead (tests/fixtures/own_collection: a DBA's collection on
    the shipped policy's locations); the corpus's own files may not (test_scenarios checks)."""
    base_name = spec.get("base_policy", "reference")
    if base_name not in BASE_POLICIES:
        raise ScenarioError(f"base_policy: expected one of {sorted(BASE_POLICIES)}, got {base_name!r}")
    base = yaml.safe_load(BASE_POLICIES[base_name].read_text(encoding="utf-8"))
    return Policy.model_validate(deep_merge(base, spec.get("policy") or {}))


# --- the scenario's collection -----------------------------------------------------------------


@dataclass(frozen=True)
class Collection:
    end: datetime
    hours: float
    interval_minutes: int

    @property
    def times(self) -> list[datetime]:
        step = timedelta(minutes=self.interval_minutes)
        n = round(self.hours * 60 / self.interval_minutes)
        return [self.end - step * (n - i) for i in range(n + 1)]

    @property
    def start(self) -> datetime:
        """When the counters started (the instance / database start)."""
        return self.times[0] - UPTIME_BEFORE_FIRST_SAMPLE


def _time(value: Any, where: str) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    try:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ScenarioError(f"{where}: expected an ISO-8601 time, got {value!r}") from None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def collection_of(spec: Mapping[str, Any], name: str) -> Collection:
    c = spec.get("collection") or {}
    end = _time(c.get("end", DEFAULT_END), f"{name}: collection.end")
    return Collection(end, float(c.get("hours", 48)), int(c.get("interval_minutes", 60)))


# --- rates as a function of time ---------------------------------------------------------------


@dataclass(frozen=True)
class Extra:
    """Additional I/O in some hours of the day (UTC) and/or on some dates."""

    hours: frozenset[int] | None
    dates: frozenset[date] | None
    rates: Mapping[str, float]

    def active(self, hour: datetime) -> bool:
        return (self.hours is None or hour.hour in self.hours) and (
            self.dates is None or hour.date() in self.dates
        )


def _extras(obj: Mapping[str, Any], where: str, keys: Sequence[str]) -> tuple[Extra, ...]:
    out = []
    for i, e in enumerate(obj.get("extra") or []):
        when = e.get("when") or {}
        unknown = set(e) - {"when", "note", *keys}
        if unknown:
            raise ScenarioError(f"{where}.extra[{i}]: unknown keys {sorted(unknown)}")
        hours = frozenset(int(h) for h in when["hours"]) if "hours" in when else None
        dates = frozenset(_date(d) for d in when["dates"]) if "dates" in when else None
        out.append(Extra(hours, dates, {k: float(v) for k, v in e.items() if k in keys}))
    return tuple(out)


def _date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


@dataclass
class Cumulative:
    """Cumulative float counters of one object, integrated hour by hour from the start."""

    values: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, amount: float) -> None:
        self.values[name] = self.values.get(name, 0.0) + amount

    def get(self, name: str) -> int:
        return math.floor(self.values.get(name, 0.0) + 1e-6)


# adds one segment's I/O at one set of rates (rates, seconds) to the cumulative counters
Adder = Callable[[Mapping[str, float], float, Cumulative], None]


def _segments(start: datetime, times: Sequence[datetime]) -> Iterator[tuple[datetime, float, int | None]]:
    """(hour the segment lies in, seconds, index of the sample taken at its end or None), from
    `start` through the last sample, cut at every hour boundary and every sample time."""
    cuts = sorted({*times, *_hours_between(start, times[-1])})
    sample_at = {t: i for i, t in enumerate(times)}
    prev = start
    for t in cuts:
        if t <= prev:
            continue
        hour = prev.replace(minute=0, second=0, microsecond=0)
        yield hour, (t - prev).total_seconds(), sample_at.get(t)
        prev = t


def _hours_between(a: datetime, b: datetime) -> list[datetime]:
    t = a.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    out = []
    while t < b:
        out.append(t)
        t += timedelta(hours=1)
    return out


def integrate(
    base: Mapping[str, float],
    extras: Sequence[Extra],
    counters: Adder,
    col: Collection,
) -> list[dict[str, int]]:
    """The object's counters at every sample time. `counters(rates, seconds, cum)` adds one
    segment's I/O for one set of rates (the base, then each active extra) to `cum`."""
    cum = Cumulative()
    out: list[dict[str, int]] = []
    times = col.times
    for hour, seconds, sample in _segments(col.start, times):
        counters(base, seconds, cum)
        for e in extras:
            if e.active(hour):
                counters(e.rates, seconds, cum)
        if sample is not None:
            out.append({k: cum.get(k) for k in cum.values})
    return out


def _sqlserver_counters(files: int) -> Adder:
    def add(r: Mapping[str, float], seconds: float, cum: Cumulative) -> None:
        reads = r.get("reads_per_s", 0.0) * seconds / files
        writes = r.get("writes_per_s", 0.0) * seconds / files
        cum.add("reads", reads)
        cum.add("bytes_read", reads * r.get("read_kib", 8.0) * KIB)
        cum.add("read_ms", reads * r.get("read_ms", 0.0))
        cum.add("writes", writes)
        cum.add("bytes_written", writes * r.get("write_kib", 8.0) * KIB)
        cum.add("write_ms", writes * r.get("write_ms", 0.0))
        cum.add("queued_read_ms", reads * r.get("queued_read_ms", 0.0))
        cum.add("queued_write_ms", writes * r.get("queued_write_ms", 0.0))

    return add


def _db2_tablespace_counters(defaults: Mapping[str, float]) -> Adder:
    def add(r: Mapping[str, float], seconds: float, cum: Cumulative) -> None:
        def v(k: str) -> float:
            return r.get(k, defaults.get(k, 0.0))

        sync = r.get("sync_reads_per_s", 0.0) * seconds
        prefetch = r.get("prefetch_per_s", 0.0) * seconds
        pages = prefetch * v("prefetch_pages")
        hit = v("hit_ratio")
        cum.add("sync", sync)
        cum.add("logical", sync / (1 - hit) + pages)
        cum.add("prefetch_pages", pages)
        cum.add("prefetch_requests", prefetch)
        cum.add("read_time", sync * v("read_ms") + prefetch * v("prefetch_ms"))
        cum.add("async_read_time", prefetch * v("prefetch_ms"))
        writes = r.get("writes_per_s", 0.0) * seconds
        cum.add("writes", writes)
        cum.add("write_time", writes * v("write_ms"))

    return add


# --- objects -------------------------------------------------------------------------------------


def _tier_location(policy: Policy, tier: str, where: str) -> tuple[str, str, str]:
    """(SQL Server directory, DB2 storage group, DB2 path) of a tier in the scenario's policy."""
    try:
        loc = policy.tier(tier).locations
    except KeyError:
        raise ScenarioError(f"{where}: unknown tier {tier!r}") from None
    return (loc.sqlserver_directory or "", loc.db2_storage_group or "", (loc.db2_paths or [""])[0])


def _check_keys(obj: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    unknown = set(obj) - set(allowed)
    if unknown:
        raise ScenarioError(f"{where}: unknown keys {sorted(unknown)}")


COMMON_KEYS = ("engine", "server", "database", "kind", "name", "size_gb", "tier", "extra", "note")


def _fmt_time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def sqlserver_rows(
    obj: Mapping[str, Any],
    policy: Policy,
    col: Collection,
    file_ids: dict[tuple[str, str], list[int]],
    where: str,
) -> list[tuple[Any, ...]]:
    """file_stats.csv rows of one SQL Server filegroup, tempdb or log file."""
    _check_keys(obj, (*COMMON_KEYS, "files", "directory", *SQLSERVER_RATES), where)
    kind, name, db = obj["kind"], str(obj["name"]), str(obj["database"])
    if kind not in ("filegroup", "tempdb", "log"):
        raise ScenarioError(f"{where}: SQL Server kind is filegroup, tempdb or log, not {kind!r}")
    if kind == "tempdb" and db != "tempdb":
        raise ScenarioError(f"{where}: tempdb's database is 'tempdb'")
    files = 1 if kind == "log" else int(obj.get("files", 1))
    # `directory` puts the files on a drive of the DBA's own, which the policy may not name
    directory = str(obj["directory"]) if "directory" in obj else _tier_location(policy, obj["tier"], where)[0]
    used = file_ids.setdefault((obj["server"], db), [])
    base = {k: float(obj[k]) for k in SQLSERVER_RATES if k in obj}
    series = integrate(base, _extras(obj, where, SQLSERVER_RATES), _sqlserver_counters(files), col)
    size = int(float(obj["size_gb"]) * GIB / files)
    rows: list[tuple[Any, ...]] = []
    members = []
    for i in range(files):
        if kind == "log":
            fid, logical, fg, ext, type_desc = 2, name, "", "ldf", "LOG"
        else:
            fid = next(n for n in range(1, 10_000) if n != 2 and n not in used)
            logical = ("tempdev" if i == 0 else f"temp{i + 1}") if kind == "tempdb" else f"{name}_{i + 1}"
            fg = "PRIMARY" if kind == "tempdb" else name
            ext, type_desc = ("mdf" if fid == 1 else "ndf"), "ROWS"
        if fid in used:
            raise ScenarioError(f"{where}: file_id {fid} used twice in {db}")
        used.append(fid)
        members.append((fid, logical, fg, f"{directory}{db}\\{logical}.{ext}", type_desc))
    for k, t in enumerate(col.times):
        c = series[k]
        for fid, logical, fg, path, type_desc in members:
            rows.append(
                (
                    t,
                    obj["server"],
                    _fmt_time(col.start),
                    db,
                    fid,
                    logical,
                    type_desc,
                    fg,
                    path,
                    size,
                    c["reads"],
                    c["bytes_read"],
                    c["read_ms"],
                    c["writes"],
                    c["bytes_written"],
                    c["write_ms"],
                    c["queued_read_ms"],
                    c["queued_write_ms"],
                )
            )
    return rows


def db2_tablespace_rows(
    obj: Mapping[str, Any], policy: Policy, col: Collection, ids: dict[tuple[str, str], int], where: str
) -> list[tuple[Any, ...]]:
    """tablespaces.csv rows of one DB2 table space."""
    _check_keys(obj, (*COMMON_KEYS, "content", "page_kib", "storage_group", *DB2_TABLESPACE_RATES), where)
    content = str(obj.get("content", "LARGE"))
    page = int(obj.get("page_kib", 8)) * KIB
    _, group, _ = _tier_location(policy, obj["tier"], where)
    group = str(obj.get("storage_group", group))
    key = (obj["server"], str(obj["database"]))
    tbsp_id = ids.get(key, 0)
    ids[key] = tbsp_id + 1
    defaults = {"hit_ratio": 0.9, "prefetch_pages": 32.0}
    base = {k: float(obj[k]) for k in DB2_TABLESPACE_RATES if k in obj}
    for rate in ("hit_ratio", "prefetch_pages", "read_ms", "prefetch_ms", "write_ms"):
        defaults[rate] = base.get(rate, defaults.get(rate, 0.0))
    series = integrate(
        base, _extras(obj, where, DB2_TABLESPACE_RATES), _db2_tablespace_counters(defaults), col
    )
    temp = content in TEMP_CONTENT
    rows: list[tuple[Any, ...]] = []
    for k, t in enumerate(col.times):
        c = series[k]
        sync, logical, pages = c.get("sync", 0), c.get("logical", 0), c.get("prefetch_pages", 0)
        data_l, data_p, temp_l, temp_p = (
            (0, 0, logical, sync + pages) if temp else (logical, sync + pages, 0, 0)
        )
        rows.append(
            (
                t,
                obj["server"],
                obj["database"],
                _fmt_time(col.start),
                obj["name"],
                tbsp_id,
                "SMS" if temp else "DMS",
                content,
                group,
                page,
                int(float(obj["size_gb"]) * GIB / page),
                data_l,
                data_p,
                0 if temp else pages,
                0,
                0,
                0,
                temp_l,
                temp_p,
                0,
                0,
                c.get("read_time", 0),
                c.get("async_read_time", 0),
                c.get("writes", 0),
                0,
                c.get("write_time", 0),
                c.get("prefetch_requests", 0),
                pages,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
            )
        )
    return rows


def db2_log_rows(
    obj: Mapping[str, Any], policy: Policy, col: Collection, where: str
) -> list[tuple[Any, ...]]:
    """transaction_log.csv rows of one DB2 database log."""
    _check_keys(obj, (*COMMON_KEYS, *DB2_LOG_RATES), where)
    _, _, path = _tier_location(policy, obj["tier"], where)
    base = {k: float(obj[k]) for k in DB2_LOG_RATES if k in obj}
    series = integrate(base, _extras(obj, where, DB2_LOG_RATES), _sqlserver_counters(1), col)
    rows: list[tuple[Any, ...]] = []
    for k, t in enumerate(col.times):
        c = series[k]
        rows.append(
            (
                t,
                obj["server"],
                obj["database"],
                _fmt_time(col.start),
                f"{path}/{obj['database']}/NODE0000/LOGSTREAM0000/",
                int(float(obj["size_gb"]) * GIB),
                c["bytes_written"] // LOG_PAGE,
                c["write_ms"],
                c["writes"],
                c["bytes_read"] // LOG_PAGE,
                c["read_ms"],
                c["reads"],
            )
        )
    return rows


# --- files -----------------------------------------------------------------------------------------


def load_spec(directory: Path) -> dict[str, Any]:
    spec = yaml.safe_load((directory / "scenario.yaml").read_text(encoding="utf-8"))
    if not isinstance(spec, dict):
        raise ScenarioError(f"{directory.name}: scenario.yaml is not a mapping")
    return spec


def render(directory: Path) -> dict[str, str]:
    """The scenario's CSV files (name -> text), computed from its scenario.yaml."""
    spec = load_spec(directory)
    name = directory.name
    policy = scenario_policy(spec)
    col = collection_of(spec, name)
    files: dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]] = {}
    file_ids: dict[tuple[str, str], list[int]] = {}
    tbsp_ids: dict[tuple[str, str], int] = {}
    for i, obj in enumerate(spec.get("objects") or []):
        where = f"{name}: objects[{i}] ({obj.get('name')})"
        engine, kind = obj.get("engine"), obj.get("kind")
        if engine == "sqlserver":
            rows = sqlserver_rows(obj, policy, col, file_ids, where)
            files.setdefault("file_stats.csv", (SQLSERVER_FILE_STATS_HEADER, []))[1].extend(rows)
        elif engine == "db2" and kind == "log":
            rows = db2_log_rows(obj, policy, col, where)
            files.setdefault("transaction_log.csv", (DB2_TRANSACTION_LOG_HEADER, []))[1].extend(rows)
        elif engine == "db2" and kind == "tablespace":
            rows = db2_tablespace_rows(obj, policy, col, tbsp_ids, where)
            files.setdefault("tablespaces.csv", (DB2_TABLESPACES_HEADER, []))[1].extend(rows)
        else:
            raise ScenarioError(f"{where}: unknown engine/kind {engine!r}/{kind!r}")
    if "file_stats.csv" in files:  # the queued columns only where a scenario sets them
        header, rows = files["file_stats.csv"]
        queued = any(
            k in o or any(k in e for e in o.get("extra") or [])
            for o in spec.get("objects") or []
            for k in ("queued_read_ms", "queued_write_ms")
        )
        width = len(SQLSERVER_FILE_STATS_HEADER)
        files["file_stats.csv"] = (
            (*header, *SQLSERVER_QUEUED_COLUMNS) if queued else header,
            [r if queued else r[:width] for r in rows],
        )
    out: dict[str, str] = {}
    for file_name, (header, rows) in sorted(files.items()):
        # samples in time order, then server, database and object (stable for objects)
        rows.sort(key=lambda r: (r[0], str(r[1]), str(r[2] if file_name != "file_stats.csv" else r[3])))
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(header)
        for r in rows:
            writer.writerow((_fmt_time(r[0]), *r[1:]))
        out[file_name] = buf.getvalue()
    return out


def scenario_dirs(root: Path = HERE) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "scenario.yaml").is_file())


def write(directory: Path) -> list[Path]:
    """Regenerate one scenario's CSV files (stale CSV files of the scenario are removed)."""
    files = render(directory)
    for old in directory.glob("*.csv"):
        if old.name not in files:
            old.unlink()
    written = []
    for file_name, text in files.items():
        path = directory / file_name
        path.write_text(text, encoding="utf-8", newline="")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    dirs = [HERE / n for n in names] if names else scenario_dirs()
    for d in dirs:
        for path in write(d):
            print(f"{path.relative_to(HERE)}  {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
