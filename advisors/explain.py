"""Evidence for every object, moved or not: the binding reason, the numbers it used, one sentence.

The decision is read off what the pipeline produced (advisors/binding.py names the binding
reason); nothing here changes a recommendation. Stages: those of binding.py (``benefit``,
``price``, ``minimum_benefit``, ``capacity``, ``iops``, ``write_budget``, ``residency``,
``pinned``, ``period``, ``not_placed``) and ``moves_with_unit``: a partition (or member) is not
placed on its own; it moves with the filegroup / table space that holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisors.benefit import TierWait
from advisors.binding import CODES, Binding
from advisors.features import Features, ObjectInfo
from advisors.quantities import figure, io_wait, latency
from policies.model import Policy

UNKNOWN = "its location matches no tier in the policy"
STAGES = (*CODES, "moves_with_unit")


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


def numbers(
    f: Features, io_now: float | None, io_after: float | None, **more: float | None
) -> dict[str, float | None]:
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
        **more,
    }


def predictions(waits: Mapping[str, TierWait]) -> tuple[TierPrediction, ...]:
    """I/O wait per second on every tier (pins may forbid some): measured where it is, the model elsewhere."""
    return tuple(
        TierPrediction(w.tier, w.read_ms, w.write_ms, w.wait_ms_per_s, w.measured) for w in waits.values()
    )


def pin_reason(info: ObjectInfo, policy: Policy) -> str | None:
    """Why the policy's pins leave a single tier (None: they leave a choice)."""
    allowed = policy.allowed_tiers(info.kind, info.engine, database=info.database, name=info.name)
    if len(allowed) != 1:
        return None
    if len(policy.tiers) == 1:
        return f"{allowed[0]} is the only tier in the policy"
    why = [
        p.reason or f"pin on {p.kind or p.engine or 'objects'}"
        for p in policy.pins
        if p.matches(kind=info.kind, engine=info.engine, database=info.database, name=info.name)
    ]
    return f"pinned to {allowed[0]} by the policy ({'; '.join(why) or 'pins'})"


def decide(
    info: ObjectInfo,
    f: Features,
    *,
    binding: Binding,
    allowed: tuple[str, ...],
    recommended: str,
    waits: Mapping[str, TierWait],
    io_now: float | None,
    io_after: float | None,
    more: Mapping[str, float | None],
) -> tuple[Decision, str]:
    """The decision and its one-line explanation for a placement unit."""
    current = info.current_tier
    moved = current is not None and recommended != current
    what = f"{info.kind} {info.name}"
    if current is None:
        text = f"Recommended {recommended} ({UNKNOWN}): {binding.detail}."
    elif moved:
        text = f"Move {what} from {current} to {recommended}: {binding.detail}."
    else:
        text = f"Stays on {recommended}: {binding.detail}."
    decision = Decision(
        stage=binding.stage,
        rule=binding.rule,
        moved=moved,
        current_tier=current,
        preferred_tier=binding.preferred,
        recommended_tier=recommended,
        allowed_tiers=allowed,
        detail=binding.detail,
        numbers=numbers(f, io_now, io_after, **more),
        predicted=predictions(waits),
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
        f"best alone {d['preferred_tier']}, recommended {d['recommended_tier']}"
        f"{', moves' if d['moved'] else ', not moved'}"
    )
    lines.append(f"  allowed tiers: {', '.join(d['allowed_tiers'])}")
    if d.get("detail"):
        lines.append(f"  {d['detail']}")
    shown = [(k, v) for k, v in d.get("numbers", {}).items() if v is not None]
    if shown:
        lines.append("  numbers: " + ", ".join(f"{k}={figure(v)}" for k, v in shown))
    preds: Sequence[Mapping[str, Any]] = d.get("predicted", [])
    for p in preds:
        src = "measured" if p["measured"] else "predicted"
        lines.append(
            f"  on {p['tier']}: read {latency(p['read_ms'], 'n/a')}, write {latency(p['write_ms'], 'n/a')}, "
            f"I/O wait {io_wait(p['io_ms_per_s'], 'n/a')} ({src})"
        )
    return lines


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
