"""Workload profiles: what an object's measured I/O mix looks like, in DBA words.

Profiles describe; they never decide a tier (the benefit model and the placement do, see
advise.py). The names follow the published evidence (design.md): random reads are what flash is
for, scans stream well from disks, logs are sequential writes the array cache absorbs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from advisors.features import Features, ObjectInfo
from advisors.quantities import latency, pct, rate, ratio, size
from policies.model import Policy

# The profile vocabulary, defined once: profile_of returns only these (mypy checks it), and the
# scenario corpus and the simulator's ground truth are tested against it.
Profile = Literal[
    "random_read", "random_mixed", "sequential_read", "log_write", "write_heavy", "tempdb", "cold"
]
PROFILES: tuple[Profile, ...] = get_args(Profile)

# Codes of the notes on I/O left out of an object's figures (docs/reading-advice.md); the binding
# reasons' codes are advisors.binding.CODES.
MAINTENANCE_DECLARED = "TW101"  # hours in a declared maintenance window
MAINTENANCE_DETECTED = "TW102"  # hours of very large reads nobody declared (a backup or DBCC)
GOVERNOR_QUEUEING = "TW103"  # Resource Governor held I/Os back: a pool's cap, not the storage
NOTE_CODES = (MAINTENANCE_DECLARED, MAINTENANCE_DETECTED, GOVERNOR_QUEUEING)
# the governor's queueing is shown as its own finding from this share of the measured stall on
GOVERNOR_NOTE_SHARE = 0.1


@dataclass(frozen=True, slots=True)
class Verdict:
    """The advice for one placement unit before limits: its profile, the code of the reason that
    decided (docs/reading-advice.md), where pins, kinds and the move rules let it go, and the tier
    the benefit model alone prefers among those."""

    profile: str
    rule: str  # the binding reason's permanent code, e.g. "TW700"
    allowed_tiers: tuple[str, ...]  # fastest first
    preferred_tier: str
    reasons: tuple[str, ...]


# every figure reads as advisors.quantities says; an unknown one as "n/a" (the sentences are plain text)
NA = "n/a"


def _size(b: float | None) -> str:
    return size(b, NA)


def _ms(v: float | None) -> str:
    return latency(v, NA)


def _pct(v: float | None) -> str:
    return pct(v, NA)


def describe(f: Features) -> str:
    """The numbers a DBA checks first, in one line."""
    parts = [
        f"{_size(f.avg_read_bytes)} average read",
        rate(f.read_iops, "reads/s"),
        f"{_ms(f.avg_read_ms)} average read latency",
        rate(f.write_iops, "writes/s"),
    ]
    if f.prefetch_share is not None:
        parts.append(f"{_pct(f.prefetch_share)} prefetch")
    if f.read_miss_ratio is not None:
        parts.append(f"{_pct(f.read_miss_ratio)} read-miss")
    elif f.instance_read_miss_ratio is not None:
        parts.append(f"instance buffer read-miss {_pct(f.instance_read_miss_ratio)}")
    if f.heat_ratio is not None:
        parts.append(f"heat {rate(f.heat, 'I/O per GB-hour')} ({ratio(f.heat_ratio)} the database average)")
    return ", ".join(parts)


def describe_partition(f: Features) -> str:
    """A partition's own numbers: engines give no file-level I/O per partition, only proxies."""
    parts = [rate(f.io_rate, f"{f.heat_basis} per second")]
    if f.singleton_share is not None:
        parts.append(f"{_pct(f.singleton_share)} of accesses are singleton lookups")
    if f.read_miss_ratio is not None:
        parts.append(f"{_pct(f.read_miss_ratio)} read-miss")
    against = f" ({ratio(f.heat_ratio)} the database average)" if f.heat_ratio is not None else ""
    parts.append(f"heat {rate(f.heat, 'per GB-hour')}{against}")
    return ", ".join(parts)


def latency_for_tier(info: ObjectInfo, f: Features, policy: Policy) -> tuple[str | None, bool]:
    """Judge latency against the band expected of the tier the object is on, not one global
    threshold: (the finding in words, whether it is slow for its tier)."""
    tier = next((t for t in policy.tiers if t.name == info.current_tier), None)
    if tier is None:
        return None, False
    slow: list[str] = []
    parts: list[str] = []
    for what, value, queued, band in (
        ("read", f.avg_read_ms, f.governor_read_ms, tier.read_latency_band_ms),
        ("write", f.avg_write_ms, f.governor_write_ms, tier.write_latency_band_ms),
    ):
        if value is None or band is None:
            continue
        normal = f"{band[0]:g}-{band[1]:g} ms"  # echo: the policy's band, as the policy file writes it
        if queued:  # the tier is judged on what its storage answered, not on the pool's queue
            value -= queued
            parts.append(f"{latency(value)} per {what} from storage, {latency(queued)} more queued by "
                         f"Resource Governor (normal on {tier.name}: {normal})")  # fmt: skip
        else:
            parts.append(f"{latency(value)} per {what} (normal on {tier.name}: {normal})")
        if value > band[1]:
            slow.append(what)
    if not parts:
        return None, False
    if slow:
        return f"slow for its tier: {'; '.join(parts)}", True
    return f"normal for its tier: {'; '.join(parts)}", False


def _object_word(info: ObjectInfo) -> str:
    return {"filegroup": "filegroup", "tablespace": "table space", "partition": "partition",
            "tempdb": "tempdb", "log_file": "log"}.get(info.kind, "object")  # fmt: skip


def maintenance_notes(info: ObjectInfo, f: Features) -> tuple[str, ...]:
    """TW101 (declared window) / TW102 (detected burst): what was left out of the figures."""
    m = f.maintenance
    if m is None:
        return ()
    if m.note is not None:
        return (f"{MAINTENANCE_DECLARED} {m.note}",)
    out = []
    what = _object_word(info)
    for s in m.slices:
        if m.read_share is not None and s.reads:
            share, of = s.reads / (f.read_iops * f.hours * 3600 + sum(x.reads for x in m.slices)), "reads"
        else:
            total = f.io_rate * f.hours * 3600 + sum(x.requests for x in m.slices)
            share, of = (s.requests / total if total else 0.0), "I/O"
        per_read = f", avg {_size(s.avg_read_bytes)} per read" if s.avg_read_bytes is not None else ""
        if s.kind == "burst":
            where = f"hours of large sequential reads ({s.hours:,.0f} h{per_read}, e.g. a backup or DBCC)"
            code = MAINTENANCE_DETECTED
        else:
            where = f"the '{s.name}' {s.kind} window ({s.hours:,.0f} h{per_read})"
            code = MAINTENANCE_DECLARED
        out.append(
            f"{code} {_pct(share)} of this {what}'s {of} fell in {where} and were left out of its heat and rates"
        )
    return tuple(out)


def governor_notes(f: Features) -> tuple[str, ...]:
    """TW103: the part of the measured stall SQL Server reports as Resource Governor queueing
    (io_stall_queued_read_ms / io_stall_queued_write_ms), when it is a material share of it. The
    pool's MAX_IOPS_PER_VOLUME holds those I/Os back before they reach storage: flash cannot lift
    it, so the benefit model leaves it out of what a move could save."""
    out = []
    for what, total, queued in (("read", f.avg_read_ms, f.governor_read_ms),
                                ("write", f.avg_write_ms, f.governor_write_ms)):  # fmt: skip
        if not total or not queued or queued < GOVERNOR_NOTE_SHARE * total:
            continue
        out.append(
            f"{GOVERNOR_QUEUEING} Resource Governor queues {latency(queued)} of the {latency(total)} per "
            f"{what} ({_pct(queued / total)}); storage answers in {latency(total - queued)}: raise the "
            f"resource pool's MAX_IOPS_PER_VOLUME, not the tier (a pool's cap no tier lifts)"
        )
    return tuple(out)


def is_tempdb(info: ObjectInfo) -> bool:
    return info.kind == "tempdb" or (info.engine == "sqlserver" and info.database.lower() == "tempdb")


def profile_of(info: ObjectInfo, f: Features, policy: Policy) -> tuple[Profile, str]:
    """The profile from the measured mix alone, and the figures that name it."""
    c = policy.classification
    total = f.read_iops + f.write_iops
    if info.kind == "log_file" and not is_tempdb(info):
        return "log_write", (f"transaction log: {rate(f.write_iops, 'writes/s')} of {_size(f.avg_write_bytes)} "
                             f"at {_ms(f.avg_write_ms)}")  # fmt: skip
    if is_tempdb(info):
        return "tempdb", f"tempdb: {rate(total)}"
    if total <= c.cold_max_iops:
        return "cold", f"cold: {rate(total)}"
    if f.heat_ratio is not None and f.heat_ratio <= c.cold_max_heat_ratio:
        return "cold", f"cold: heat {ratio(f.heat_ratio)} the database average"
    write_share = f.write_iops / total
    moved = f.read_mb_s + f.write_mb_s
    byte_share = f.write_mb_s / moved if moved else write_share
    if max(write_share, byte_share) >= c.write_heavy_min_write_share:  # flash wears by the byte
        return "write_heavy", (f"write-heavy: {_pct(write_share)} of requests and {_pct(byte_share)} of "
                               f"bytes are writes")  # fmt: skip
    if f.avg_read_bytes is not None and f.avg_read_bytes >= c.sequential_min_read_bytes:
        return "sequential_read", f"sequential reads: {_size(f.avg_read_bytes)} average read"
    if f.prefetch_share is not None and f.prefetch_share >= c.sequential_min_prefetch_share:
        return "sequential_read", f"sequential reads: {_pct(f.prefetch_share)} of physical reads are prefetch"
    small = f.avg_read_bytes is None or f.avg_read_bytes <= c.random_max_read_bytes
    if small and (f.read_pct or 0) >= c.random_read_min_read_pct:
        return (
            "random_read",
            f"random reads: {_size(f.avg_read_bytes)} average read, {_pct(1 - write_share)} reads",
        )
    if not small:
        return (
            "random_mixed",
            f"mixed read sizes: {_size(f.avg_read_bytes)} average read, part scan, part seek",
        )
    return "random_mixed", f"random reads and writes: {_pct(1 - write_share)} of requests are reads"
