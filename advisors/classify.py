"""Workload profiles and tier candidacy, with reasons in numbers.

Each rule has a permanent code. The rules follow the published evidence (design.md): flash pays
for small random reads that miss cache at high rates; logs are sequential writes that array cache
absorbs; tempdb goes to flash only with evidence; cold, large objects go to the cheapest tier;
scans and write-heavy objects gain little from flash and wear it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from advisors.features import Features, ObjectInfo
from policies.model import Policy

# Wait statistics (sys.dm_os_wait_stats, MON_GET_* wait times) are not collected: say so rather
# than invent them.
WRITELOG_NOTE = ("WRITELOG waits are not collected by tierwise: judged on the log's own write "
                 "latency and rate (file statistics)")  # fmt: skip
TEMPDB_WAITS_NOTE = ("PAGEIOLATCH waits are not collected by tierwise: judged on tempdb's own "
                     "file latency and rate")  # fmt: skip

PROFILES = ("random_read", "random_mixed", "sequential_read", "log_write", "write_heavy", "tempdb", "cold")


@dataclass(frozen=True, slots=True)
class Verdict:
    profile: str
    rule: str  # permanent rule code, e.g. "TW104"
    allowed_tiers: tuple[str, ...]  # where the placement may put it, fastest first
    preferred_tier: str  # where the rule alone would put it
    reasons: tuple[str, ...]


def _kb(b: float | None) -> str:
    return "n/a" if b is None else f"{b / 1024:,.1f} KB"


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v:,.1f} ms"


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:,.0f} %"


def describe(f: Features) -> str:
    """The numbers a DBA checks first, in one line."""
    parts = [
        f"{_kb(f.avg_read_bytes)} average read",
        f"{f.read_iops:,.0f} reads/s",
        f"{_ms(f.avg_read_ms)} average read latency",
        f"{f.write_iops:,.0f} writes/s",
    ]
    if f.prefetch_share is not None:
        parts.append(f"{_pct(f.prefetch_share)} prefetch")
    if f.read_miss_ratio is not None:
        parts.append(f"{_pct(f.read_miss_ratio)} read-miss")
    elif f.instance_read_miss_ratio is not None:
        parts.append(f"instance buffer read-miss {100 * f.instance_read_miss_ratio:,.1f} %")
    if f.heat_ratio is not None:
        parts.append(f"heat {f.heat:,.1f} I/O per GB-hour ({f.heat_ratio:,.2f}x the database average)")
    return ", ".join(parts)


def describe_partition(f: Features) -> str:
    """A partition's own numbers: engines give no file-level I/O per partition, only proxies."""
    parts = [f"{f.io_rate:,.1f} {f.heat_basis} per second"]
    if f.singleton_share is not None:
        parts.append(f"{_pct(f.singleton_share)} of accesses are singleton lookups")
    if f.read_miss_ratio is not None:
        parts.append(f"{_pct(f.read_miss_ratio)} read-miss")
    ratio = f" ({f.heat_ratio:,.2f}x the database average)" if f.heat_ratio is not None else ""
    parts.append(f"heat {f.heat:,.1f} per GB-hour{ratio}")
    return ", ".join(parts)


def latency_for_tier(info: ObjectInfo, f: Features, policy: Policy) -> tuple[str | None, bool]:
    """Judge latency against the band expected of the tier the object is on, not one global
    threshold: (the finding in words, whether it is slow for its tier)."""
    tier = next((t for t in policy.tiers if t.name == info.current_tier), None)
    if tier is None:
        return None, False
    slow: list[str] = []
    parts: list[str] = []
    for what, value, band in (("read", f.avg_read_ms, tier.read_latency_band_ms),
                              ("write", f.avg_write_ms, tier.write_latency_band_ms)):  # fmt: skip
        if value is None or band is None:
            continue
        parts.append(f"{value:,.1f} ms per {what} (normal on {tier.name}: {band[0]:g}-{band[1]:g} ms)")
        if value > band[1]:
            slow.append(what)
    if not parts:
        return None, False
    if slow:
        return f"slow for its tier: {'; '.join(parts)}", True
    return f"normal for its tier: {'; '.join(parts)}", False


def classify(info: ObjectInfo, f: Features, policy: Policy) -> Verdict:
    """The rule verdict, with the latency judged against the current tier's band; an object that
    is slow on the fastest tier is a storage problem to report (TW801), not a placement to change.
    Flash endurance (TW502/TW503) and business periods (TW901) may change the rules' verdict;
    maintenance left out of the figures is said (TW101/TW102)."""
    v = _with_endurance(info, f, policy, _classify(info, f, policy))
    v = _with_calendar(info, f, policy, v)
    finding, slow = latency_for_tier(info, f, policy)
    if finding is not None:
        if slow and info.current_tier == policy.tiers[0].name and info.current_tier in v.allowed_tiers:
            why = (f"TW801 {finding}: on the fastest tier already, so this is a storage problem to "
                   f"investigate (queueing, path, array), not a placement to change")  # fmt: skip
            v = Verdict(v.profile, "TW801", (info.current_tier,), info.current_tier, (why, *v.reasons))
        else:
            v = replace(v, reasons=(*v.reasons[:-1], finding, v.reasons[-1]))
    notes = maintenance_notes(info, f)
    return replace(v, reasons=(v.reasons[0], *notes, *v.reasons[1:])) if notes else v


def _object_word(info: ObjectInfo) -> str:
    return {"filegroup": "filegroup", "tablespace": "table space", "partition": "partition",
            "tempdb": "tempdb", "log_file": "log"}.get(info.kind, "object")  # fmt: skip


def maintenance_notes(info: ObjectInfo, f: Features) -> tuple[str, ...]:
    """TW101 (declared window) / TW102 (detected burst): what was left out of the figures."""
    m = f.maintenance
    if m is None:
        return ()
    if m.note is not None:
        return (f"TW101 {m.note}",)
    out = []
    what = _object_word(info)
    for s in m.slices:
        if m.read_share is not None and s.reads:
            share, of = s.reads / (f.read_iops * f.hours * 3600 + sum(x.reads for x in m.slices)), "reads"
        else:
            total = f.io_rate * f.hours * 3600 + sum(x.requests for x in m.slices)
            share, of = (s.requests / total if total else 0.0), "I/O"
        size = f", avg {_kb(s.avg_read_bytes)} per read" if s.avg_read_bytes is not None else ""
        if s.kind == "burst":
            where = f"hours of large sequential reads ({s.hours:,.0f} h{size}, e.g. a backup or DBCC)"
            code = "TW102"
        else:
            where = f"the '{s.name}' {s.kind} window ({s.hours:,.0f} h{size})"
            code = "TW101"
        out.append(
            f"{code} {_pct(share)} of this {what}'s {of} fell in {where} and were left out of its heat and rates"
        )
    return tuple(out)


def write_budget_gb(policy: Policy) -> float | None:
    """The fastest tier's daily write budget in GB: DWPD × usable capacity (None: not declared)."""
    flash = policy.tiers[0]
    return None if flash.endurance_dwpd is None else flash.endurance_dwpd * flash.capacity_gb


def daily_write_gb(f: Features) -> float:
    return f.write_mb_s * 86_400 / 1024


def _budget(policy: Policy) -> str:
    flash = policy.tiers[0]
    return (f"{flash.name}'s daily write budget ({flash.endurance_dwpd:g} DWPD x "
            f"{flash.capacity_gb:,.0f} GB = {write_budget_gb(policy):,.0f} GB/day)")  # fmt: skip


def _with_endurance(info: ObjectInfo, f: Features, policy: Policy, v: Verdict) -> Verdict:
    """Keep write-dominated objects off flash unless their reads justify the wear (TW502/TW503);
    write-heavy, log and tempdb verdicts say how much of the budget they would use."""
    budget = write_budget_gb(policy)
    if budget is None or f.write_mb_s <= 0:
        return v
    e = policy.endurance
    gb = daily_write_gb(f)
    share = gb / budget
    figure = f"writes {gb:,.0f} GB per day: {_pct(share)} of {_budget(policy)}"
    fastest = policy.tiers[0].name
    if v.rule in ("TW501", "TW201", "TW202", "TW301", "TW302"):
        return replace(v, reasons=(v.reasons[0], figure, *v.reasons[1:]))
    if v.preferred_tier != fastest or v.rule != "TW701" or share <= e.object_max_budget_share:
        return v
    total = f.read_iops + f.write_iops
    request_share = f.write_iops / total if total else 0.0
    moved = f.read_mb_s + f.write_mb_s
    byte_share = f.write_mb_s / moved if moved else request_share
    # endurance is spent in bytes: an object is write-dominated by requests or by bytes
    write_share = max(request_share, byte_share)
    mix = f"{_pct(request_share)} of requests and {_pct(byte_share)} of bytes are writes"
    if write_share >= e.write_dominated_min_write_share or share > 1:
        allowed = tuple(t for t in v.allowed_tiers if t != fastest) or v.allowed_tiers
        preferred = allowed[0]  # the next fastest, as for the other not-flash rules
        why = (f"TW502 write-dominated ({mix}) and {figure}, more than the "
               f"{_pct(e.object_max_budget_share)} one object may use: its {f.read_iops:,.0f} reads/s "
               f"do not justify the wear, kept off {fastest}")  # fmt: skip
        return Verdict("write_heavy", "TW502", allowed, preferred, (why, *v.reasons))
    why = (f"TW503 {figure}, more than the {_pct(e.object_max_budget_share)} one object may use, "
           f"but reads dominate ({mix}): flash is justified by read latency; watch the wear")  # fmt: skip
    return replace(v, reasons=(v.reasons[0], why, *v.reasons[1:]))


def _with_calendar(info: ObjectInfo, f: Features, policy: Policy, v: Verdict) -> Verdict:
    """TW901: an object hot in a declared business period keeps the tier that period needs."""
    p = f.period
    if p is None or not p.hot:
        return v
    pv = _with_endurance(info, p.features, policy, _classify(info, p.features, policy))
    order = [t.name for t in policy.tiers]
    if order.index(pv.preferred_tier) >= order.index(v.preferred_tier):
        return v
    allowed = tuple(t for t in pv.allowed_tiers if order.index(t) <= order.index(pv.preferred_tier))
    ratio = f"{p.ratio:,.1f}x its other days" if p.ratio is not None else "none on its other days"
    why = (f"TW901 busy in the '{p.name}' period ({p.kind}, occurrence from {p.occurrence.isoformat()}, "
           f"{p.features.hours:,.0f} h): {p.features.io_rate:,.1f} {p.features.heat_basis} per second, "
           f"{ratio}; judged on that period it needs {pv.preferred_tier} ({pv.reasons[0]}), so it is "
           f"kept there between periods rather than moved to {v.preferred_tier}")  # fmt: skip
    return Verdict(v.profile, "TW901", allowed or (pv.preferred_tier,), pv.preferred_tier, (why, *v.reasons))


def _classify(info: ObjectInfo, f: Features, policy: Policy) -> Verdict:
    rules = policy.classification
    allowed = tuple(policy.allowed_tiers(info.kind, info.engine, database=info.database, name=info.name))
    fastest, slowest = allowed[0], allowed[-1]
    middle = allowed[1] if len(allowed) > 2 else slowest
    not_fastest = tuple(t for t in allowed if t != fastest) or allowed
    flash = policy.tier(fastest)
    numbers = describe(f)

    def verdict(profile: str, rule: str, tiers: tuple[str, ...], preferred: str, *why: str) -> Verdict:
        return Verdict(profile, rule, tiers, preferred if preferred in tiers else tiers[0], (*why, numbers))

    is_tempdb = info.kind == "tempdb" or (info.engine == "sqlserver" and info.database.lower() == "tempdb")
    if info.kind == "log_file" and not is_tempdb:
        heavy = f.write_iops >= rules.log_flash_min_write_iops
        slow = f.avg_write_ms is not None and f.avg_write_ms >= rules.log_flash_min_write_ms
        if heavy and slow:
            return verdict(
                "log_write",
                "TW201",
                allowed,
                fastest,
                f"TW201 log with sustained {f.write_iops:,.0f} writes/s at {_ms(f.avg_write_ms)}: "
                f"array cache is not absorbing it, flash is justified",
                WRITELOG_NOTE,
            )
        return verdict(
            "log_write",
            "TW202",
            not_fastest,
            middle,
            f"TW202 transaction log: sequential writes that array cache absorbs "
            f"({_ms(f.avg_write_ms)} per write); flash only above "
            f"{rules.log_flash_min_write_iops:,.0f} writes/s and {rules.log_flash_min_write_ms} ms",
            WRITELOG_NOTE,
        )
    if is_tempdb:
        rate = f.read_iops + f.write_iops
        worst = max(f.avg_read_ms or 0.0, f.avg_write_ms or 0.0)
        if rate >= rules.tempdb_flash_min_iops and worst >= rules.tempdb_flash_min_latency_ms:
            return verdict(
                "tempdb",
                "TW301",
                allowed,
                fastest,
                f"TW301 tempdb under load: {rate:,.0f} I/O per second at up to {worst:,.1f} ms",
                TEMPDB_WAITS_NOTE,
            )
        return verdict(
            "tempdb",
            "TW302",
            not_fastest,
            middle,
            f"TW302 tempdb: no evidence for flash ({rate:,.0f} I/O per second, worst "
            f"{worst:,.1f} ms; needs {rules.tempdb_flash_min_iops:,.0f}/s and "
            f"{rules.tempdb_flash_min_latency_ms} ms)",
            TEMPDB_WAITS_NOTE,
        )
    total_iops = f.read_iops + f.write_iops
    cold_ratio = f.heat_ratio is not None and f.heat_ratio <= rules.cold_max_heat_ratio
    if total_iops <= rules.cold_max_iops or cold_ratio:
        why = (
            f"{total_iops:,.1f} I/O per second"
            if total_iops <= rules.cold_max_iops
            else f"heat {f.heat_ratio:,.2f}x the database average"
        )
        return verdict(
            "cold", "TW401", (slowest,), slowest, f"TW401 cold: {why}; the cheapest tier serves it"
        )
    write_share = f.write_iops / total_iops if total_iops else 0.0
    if write_share >= rules.write_heavy_min_write_share:
        return verdict(
            "write_heavy",
            "TW501",
            not_fastest,
            middle,
            f"TW501 write-heavy: {_pct(write_share)} of I/O are writes; flash would gain no read "
            f"latency and spend its endurance (RAID write penalty on every write)",
        )
    sequential_size = f.avg_read_bytes is not None and f.avg_read_bytes >= rules.sequential_min_read_bytes
    sequential_prefetch = (
        f.prefetch_share is not None and f.prefetch_share >= rules.sequential_min_prefetch_share
    )
    if sequential_size or sequential_prefetch:
        why = (
            f"{_kb(f.avg_read_bytes)} average read"
            if sequential_size
            else f"{_pct(f.prefetch_share)} of physical reads are prefetch"
        )
        return verdict(
            "sequential_read",
            "TW601",
            not_fastest,
            middle,
            f"TW601 sequential reads ({why}): disks stream scans well; flash adds little",
        )
    random = f.avg_read_bytes is not None and f.avg_read_bytes <= rules.random_max_read_bytes
    profile = "random_read" if (f.read_pct or 0) >= rules.random_read_min_read_pct else "random_mixed"
    if not random:
        return verdict(
            "random_mixed",
            "TW702",
            not_fastest,
            middle,
            f"TW702 mixed I/O sizes ({_kb(f.avg_read_bytes)} average read): "
            f"part scan, part seek; not a clear flash case",
        )
    if f.read_iops < rules.flash_min_read_iops:
        return verdict(
            profile,
            "TW703",
            not_fastest,
            middle,
            f"TW703 random but only {f.read_iops:,.0f} reads/s (flash from "
            f"{rules.flash_min_read_iops:,.0f}/s)",
        )
    if f.read_miss_ratio is not None and f.read_miss_ratio < rules.flash_min_read_miss_ratio:
        return verdict(
            profile,
            "TW704",
            not_fastest,
            middle,
            f"TW704 the buffer pool already serves {_pct(1 - f.read_miss_ratio)} of reads; "
            f"flash would speed up few of them",
        )
    gain = None if f.avg_read_ms is None else f.avg_read_ms - flash.read_latency_ms
    if gain is not None and gain < rules.min_benefit_ms:
        cached = ""
        if f.est_cache_hit_share is not None and f.est_cache_hit_share > 0.5:
            cached = f"; about {_pct(f.est_cache_hit_share)} of reads look like array-cache hits"
        return verdict(
            profile,
            "TW705",
            not_fastest,
            middle,
            f"TW705 would gain {gain:,.1f} ms per read on {fastest}, below the "
            f"{rules.min_benefit_ms} ms minimum benefit{cached}",
        )
    return verdict(
        profile,
        "TW701",
        allowed,
        fastest,
        f"TW701 small random reads that miss cache at a high rate: flash candidate "
        f"(would gain about {_ms(gain)} per read)",
    )
