"""Evidence for every object, moved or not: which stage decided, the numbers it used, one sentence.

The decision is read off what the pipeline already produced (the rule verdict, the placement,
the hysteresis hold, the policy's pins); nothing here changes a recommendation. Stages:

- ``rule``: the classification rule alone decided (the tier it prefers is the one recommended);
- ``minimum_benefit``: rule TW705, flash would gain less per read than the policy's minimum;
- ``placement_limits``: the rules prefer another tier, but its capacity or IOPS limits leave more
  I/O wait saved by placing other objects there;
- ``hysteresis``: the move is held (heat not high/low enough for long enough, minimum residency);
- ``pinned``: the policy's pins leave a single tier for the object;
- ``moves_with_unit``: a partition (or member) is not placed on its own; it moves with the
  filegroup / table space that holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisors.classify import Verdict
from advisors.features import Features, ObjectInfo
from policies.model import Policy

UNKNOWN = "its location matches no tier in the policy"
STAGES = ("rule", "minimum_benefit", "placement_limits", "hysteresis", "pinned", "moves_with_unit")


@dataclass(frozen=True, slots=True)
class TierPrediction:
    tier: str
    read_ms: float | None
    write_ms: float | None
    io_ms_per_s: float | None  # reads/s x read ms + writes/s x write ms
    measured: bool  # the current tier: measured latency, not the tier's service time


@dataclass(frozen=True, slots=True)
class Decision:
    stage: str  # one of STAGES
    rule: str
    moved: bool  # recommended differs from a known current tier
    current_tier: str | None
    preferred_tier: str  # where the rule alone would put it
    recommended_tier: str
    allowed_tiers: tuple[str, ...]  # what the rules and pins allow, fastest first
    detail: str  # the stage's own reason: the hold, the pin, the unit it moves with
    numbers: Mapping[str, float | None]
    predicted: tuple[TierPrediction, ...]
    unit: str | None = None  # the placement unit's key, for members

    def as_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "rule": self.rule,
            "moved": self.moved,
            "current_tier": self.current_tier,
            "preferred_tier": self.preferred_tier,
            "recommended_tier": self.recommended_tier,
            "allowed_tiers": list(self.allowed_tiers),
            "detail": self.detail,
            "unit": self.unit,
            "numbers": {k: _round(v) for k, v in self.numbers.items()},
            "predicted": [
                {
                    "tier": p.tier,
                    "read_ms": _round(p.read_ms),
                    "write_ms": _round(p.write_ms),
                    "io_ms_per_s": _round(p.io_ms_per_s),
                    "measured": p.measured,
                }
                for p in self.predicted
            ],
        }


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _kb(b: float | None) -> str:
    return "n/a" if b is None else f"{b / 1024:,.0f} KB" if b >= 10 * 1024 else f"{b / 1024:,.1f} KB"


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v:,.1f} ms"


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:,.0f} %"


def _ratio(v: float) -> str:
    return "under 0.01x" if v < 0.01 else f"{v:,.2f}x"


def _rate(v: float) -> str:
    return f"{v:,.1f}" if v < 10 else f"{v:,.0f}"


def numbers(f: Features, io_now: float | None, io_after: float | None) -> dict[str, float | None]:
    """The figures a decision rests on (None: the engine does not show it for this object)."""
    random_share = None
    if f.prefetch_share is not None:
        random_share = 1 - f.prefetch_share
    elif f.singleton_share is not None:
        random_share = f.singleton_share
    return {
        "read_iops": f.read_iops,
        "write_iops": f.write_iops,
        "read_pct": f.read_pct,
        "avg_read_kb": None if f.avg_read_bytes is None else f.avg_read_bytes / 1024,
        "avg_write_kb": None if f.avg_write_bytes is None else f.avg_write_bytes / 1024,
        "read_miss_ratio": f.read_miss_ratio,
        "instance_read_miss_ratio": f.instance_read_miss_ratio,
        "prefetch_share": f.prefetch_share,
        "random_share": random_share,
        "est_cache_hit_share": f.est_cache_hit_share,
        "heat": f.heat,
        "heat_ratio": f.heat_ratio,
        "avg_read_ms": f.avg_read_ms,
        "avg_write_ms": f.avg_write_ms,
        "io_ms_per_s_now": io_now,
        "io_ms_per_s_after": io_after,
        "io_ms_per_s_saved": None if io_now is None or io_after is None else io_now - io_after,
    }


def predictions(f: Features, current: str | None, policy: Policy) -> tuple[TierPrediction, ...]:
    """I/O wait per second on every tier: measured where it is, the tier's service time elsewhere."""
    out = []
    for t in policy.tiers:
        if t.name == current and (f.avg_read_ms is not None or not f.read_iops):
            r, w = f.avg_read_ms, f.avg_write_ms
            io = f.read_iops * (r or 0.0) + f.write_iops * (w or 0.0)
            out.append(TierPrediction(t.name, r, w, io, True))
        else:
            io = f.read_iops * t.read_latency_ms + f.write_iops * t.write_latency_ms
            out.append(TierPrediction(t.name, t.read_latency_ms, t.write_latency_ms, io, False))
    return tuple(out)


def rule_clause(rule: str, f: Features, policy: Policy, verdict: Verdict) -> str:
    """What the rule saw, in DBA words with its numbers."""
    c = policy.classification
    fastest = policy.tiers[0]
    total = f.read_iops + f.write_iops
    if rule == "TW701":
        gain = None if f.avg_read_ms is None else f.avg_read_ms - fastest.read_latency_ms
        return (
            f"small random reads that miss cache ({_kb(f.avg_read_bytes)} average read, "
            f"{_rate(f.read_iops)} reads/s, {_ms(f.avg_read_ms)} per read now, about "
            f"{_ms(gain)} less per read on {fastest.name})"
        )
    if rule == "TW702":
        return f"mixed read sizes ({_kb(f.avg_read_bytes)} average read): part scan, part seek"
    if rule == "TW703":
        return (
            f"random reads, but only {_rate(f.read_iops)} reads/s "
            f"({fastest.name} from {c.flash_min_read_iops:,.0f}/s)"
        )
    if rule == "TW704":
        served = None if f.read_miss_ratio is None else 1 - f.read_miss_ratio
        return f"the buffer pool already serves {_pct(served)} of reads; {fastest.name} would speed up few"
    if rule == "TW705":
        gain = None if f.avg_read_ms is None else f.avg_read_ms - fastest.read_latency_ms
        cached = ""
        if f.est_cache_hit_share is not None and f.est_cache_hit_share > 0.5:
            cached = f" (about {_pct(f.est_cache_hit_share)} of reads look like array-cache hits)"
        return (
            f"would gain {_ms(gain)} per read ({_ms(f.avg_read_ms)} now), below the "
            f"{c.min_benefit_ms:g} ms minimum benefit{cached}"
        )
    if rule == "TW601":
        parts = []
        if f.prefetch_share is not None:
            parts.append(f"{_pct(f.prefetch_share)} of reads are prefetch")
        parts.append(f"average read {_kb(f.avg_read_bytes)}")
        return f"{', '.join(parts)}: sequential scans, which disks stream well"
    if rule == "TW501":
        share = f.write_iops / total if total else 0.0
        return (
            f"{_pct(share)} of I/O are writes ({_rate(f.write_iops)} writes/s): no read latency to gain, "
            f"and every write would wear {fastest.name}"
        )
    if rule == "TW401":
        ratio = "" if f.heat_ratio is None else f", heat {_ratio(f.heat_ratio)} the database average"
        return f"cold: {_rate(total)} I/O per second{ratio}; the cheapest tier serves it"
    if rule == "TW801":
        return (
            f"{_ms(f.avg_read_ms)} per read is slow even for {verdict.preferred_tier}: a storage problem "
            f"to investigate (queueing, path, array), not a placement to change"
        )
    if rule == "TW201":
        return (
            f"log with sustained {_rate(f.write_iops)} writes/s at {_ms(f.avg_write_ms)} per write: "
            f"array cache is not absorbing them"
        )
    if rule == "TW202":
        return (
            f"transaction log: sequential writes ({_rate(f.write_iops)}/s at {_ms(f.avg_write_ms)}) that "
            f"array cache absorbs; {fastest.name} only above {c.log_flash_min_write_iops:,.0f} writes/s "
            f"and {c.log_flash_min_write_ms:g} ms"
        )
    worst = max(f.avg_read_ms or 0.0, f.avg_write_ms or 0.0)
    if rule == "TW301":
        return f"tempdb under load: {_rate(total)} I/O per second at up to {worst:,.1f} ms"
    if rule == "TW302":
        return (
            f"tempdb without evidence for {fastest.name}: {_rate(total)} I/O per second, worst "
            f"{worst:,.1f} ms (needs {c.tempdb_flash_min_iops:,.0f}/s and {c.tempdb_flash_min_latency_ms:g} ms)"
        )
    first = verdict.reasons[0] if verdict.reasons else rule
    return first.removeprefix(f"{rule} ")


def pin_reason(info: ObjectInfo, policy: Policy) -> str | None:
    """Why the policy's pins leave a single tier (None: they leave a choice)."""
    allowed = policy.allowed_tiers(info.kind, info.engine, database=info.database, name=info.name)
    if len(allowed) != 1:
        return None
    why = [
        p.reason or f"pin on {p.kind or p.engine or 'objects'}"
        for p in policy.pins
        if p.matches(kind=info.kind, engine=info.engine, database=info.database, name=info.name)
    ]
    return f"pinned to {allowed[0]} by the policy ({'; '.join(why) or 'pins'})"


def _wait(now: float | None, after: float | None) -> str:
    if now is None or after is None or abs(now - after) < 0.05:
        return ""
    if after < now:
        return f"; I/O wait {now:,.1f} -> {after:,.1f} ms per second ({now - after:,.1f} saved)"
    return (
        f"; I/O wait {now:,.1f} -> {after:,.1f} ms per second ({after - now:,.1f} more, on cheaper storage)"
    )


def decide(
    info: ObjectInfo,
    f: Features,
    verdict: Verdict,
    policy: Policy,
    *,
    recommended: str,
    hold: str | None = None,
    proposed: str | None = None,
    io_now: float | None = None,
    io_after: float | None = None,
) -> tuple[Decision, str]:
    """The decision and its one-line explanation for a placement unit (or a partition judged on
    its own). `hold` is the hysteresis reason, `proposed` the tier the placement wanted before it."""
    current = info.current_tier
    fastest = policy.tiers[0].name
    pinned = pin_reason(info, policy)
    what = f"{info.kind} {info.name}"
    why = rule_clause(verdict.rule, f, policy, verdict)
    moved = current is not None and recommended != current
    wait = _wait(io_now, io_after)
    if hold is not None:
        stage, detail = "hysteresis", hold
        held = hold.split(": ", 1)[-1]
        text = f"Not moved to {proposed or verdict.preferred_tier}: {held} (hysteresis); stays on {current}. The rule: {why}."
    elif pinned is not None:
        stage, detail = "pinned", pinned
        head = f"Move {what} from {current} to {recommended}" if moved else f"Stays on {recommended}"
        if current is None:
            head = f"Recommended {recommended} ({UNKNOWN})"
        text = f"{head}: {pinned}; the rule: {why}{wait}."
    elif recommended != verdict.preferred_tier:
        stage = "placement_limits"
        pred = {p.tier: p.io_ms_per_s for p in predictions(f, current, policy)}
        there, here = pred.get(verdict.preferred_tier), pred.get(recommended)
        could = ""
        if there is not None and here is not None and here > there:
            could = f" (it would save {here - there:,.1f} ms of I/O wait per second there)"
        detail = f"{verdict.preferred_tier}'s capacity or IOPS limits leave more I/O wait saved by other objects{could}"
        head = (
            f"Move {what} from {current} to {recommended} rather than {verdict.preferred_tier}"
            if moved
            else f"Not moved to {verdict.preferred_tier} although the rules prefer it"
        )
        tail = "" if moved else f"; stays on {recommended}"
        if current is None:
            head, tail = f"Recommended {recommended} rather than {verdict.preferred_tier} ({UNKNOWN})", ""
        text = f"{head}: {detail}{tail}. The rule: {why}{wait}."
    else:
        stage = "minimum_benefit" if verdict.rule == "TW705" else "rule"
        detail = why
        if moved:
            text = f"Move {what} from {current} to {recommended}: {why}{wait}."
        elif current is None:
            text = f"Recommended {recommended} ({UNKNOWN}): {why}."
        elif recommended == fastest:
            text = f"Stays on {recommended}: {why}."
        else:
            text = f"Not moved to {fastest}: {why}; stays on {recommended}."
    decision = Decision(
        stage=stage,
        rule=verdict.rule,
        moved=moved,
        current_tier=current,
        preferred_tier=verdict.preferred_tier,
        recommended_tier=recommended,
        allowed_tiers=verdict.allowed_tiers,
        detail=detail,
        numbers=numbers(f, io_now, io_after),
        predicted=predictions(f, current, policy),
    )
    return decision, text


def decide_member(
    info: ObjectInfo,
    f: Features,
    policy: Policy,
    *,
    unit: ObjectInfo,
    unit_decision: Decision,
    unit_explanation: str,
    own: str,
) -> tuple[Decision, str]:
    """A partition is not placed on its own: it moves with the filegroup / table space holding it."""
    where = (
        "filegroup" if unit.kind == "filegroup" else "table space" if unit.kind == "tablespace" else unit.kind
    )
    engine_rule = (
        "SQL Server places data by filegroup"
        if info.engine == "sqlserver"
        else "DB2 places data by table space"
    )
    current = info.current_tier or unit.current_tier
    target = unit_decision.recommended_tier
    moves = f"{current} -> {target}" if current is not None and current != target else f"stays on {target}"
    detail = f"moves with {where} {unit.name} ({moves})"
    text = (
        f"Moves with {where} {unit.name} ({moves}): {engine_rule}, so a partition cannot move alone; "
        f"its own figures: {own}. The {where}: {unit_explanation}"
    )
    decision = Decision(
        stage="moves_with_unit",
        rule=unit_decision.rule,
        moved=current is not None and target != current,
        current_tier=current,
        preferred_tier=unit_decision.preferred_tier,
        recommended_tier=target,
        allowed_tiers=unit_decision.allowed_tiers,
        detail=detail,
        numbers=numbers(f, None, None),
        predicted=(),
        unit=unit.key,
    )
    return decision, text


def evidence_lines(doc: Mapping[str, Any]) -> list[str]:
    """The evidence block of one object's advice JSON (`decision`, `explanation`), as text lines."""
    d = doc.get("decision") or {}
    lines = [
        f"{doc.get('server')}/{doc.get('database')} {doc.get('kind')} {doc.get('name')}  [{doc.get('key')}]"
    ]
    lines.append(f"  {doc.get('explanation', '')}")
    if not d:
        return lines
    lines.append(
        f"  decided by: {d['stage']} (rule {d['rule']}); current {d['current_tier'] or 'unknown'}, "
        f"rule prefers {d['preferred_tier']}, recommended {d['recommended_tier']}"
        f"{', moves' if d['moved'] else ', not moved'}"
    )
    lines.append(f"  allowed tiers: {', '.join(d['allowed_tiers'])}")
    if d.get("detail"):
        lines.append(f"  {d['detail']}")
    shown = [(k, v) for k, v in d.get("numbers", {}).items() if v is not None]
    if shown:
        lines.append("  numbers: " + ", ".join(f"{k}={_fmt(v)}" for k, v in shown))
    preds: Sequence[Mapping[str, Any]] = d.get("predicted", [])
    for p in preds:
        src = "measured" if p["measured"] else "tier service time"
        lines.append(
            f"  on {p['tier']}: read {_fmt(p['read_ms'])} ms, write {_fmt(p['write_ms'])} ms, "
            f"I/O wait {_fmt(p['io_ms_per_s'])} ms/s ({src})"
        )
    return lines


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1 else f"{v:,.1f}"
    return str(v)


def match_objects(docs: Sequence[Mapping[str, Any]], query: str) -> list[Mapping[str, Any]]:
    """Advice JSON objects matching `query`: a key (optionally `server|key`), a name, or
    `server/database/name`; case-insensitive. The first kind that matches anything wins."""
    q = query.strip().casefold()

    def full(d: Mapping[str, Any]) -> str:
        return f"{d.get('server')}/{d.get('database')}/{d.get('name')}".casefold()

    tests: tuple[Callable[[Mapping[str, Any]], bool], ...] = (
        lambda d: (
            str(d.get("key", "")).casefold() == q or f"{d.get('server')}|{d.get('key')}".casefold() == q
        ),
        lambda d: str(d.get("name", "")).casefold() == q,
        lambda d: full(d) == q,
    )
    for test in tests:
        found = [d for d in docs if test(d)]
        if found:
            return found
    return []
