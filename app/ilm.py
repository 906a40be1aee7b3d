"""ILM plans from advice: partitions with their measured heat -> advisors.ilm -> JSON / table,
and the plan's scripts (one forward and one rollback file per month of moves, migrations.ilm)."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from advisors.advise import Advice, AdviceReport
from advisors.ilm import IlmPlan, PartitionInput, plan_ilm
from app.script_spots import object_pool
from migrations import EXTENSION, AdviceError, Dialect, Move, Options, Skipped, TierSpot
from migrations.header import GENERATOR_REVISION, timestamp
from migrations.ilm import IlmMonth, IlmSelection, ilm_moves, month_check, month_pair
from policies.model import DEFAULT_POOL, Policy

GB = 1024**3


def partition_inputs(report: AdviceReport) -> list[PartitionInput]:
    """The partitions of the advice, each on the tier of the filegroup / table space that holds it."""
    return [p for parts in partition_inputs_by_pool(report).values() for p in parts]


def partition_inputs_by_pool(report: AdviceReport) -> dict[str, list[PartitionInput]]:
    """partition_inputs per storage pool (a partition is in the pool of its filegroup / table
    space), pools in the order their first partition comes."""
    out: dict[str, list[PartitionInput]] = {}
    units = {(a.info.server, a.info.key): a for a in report.objects if a.placement_unit == a.info.key}
    # SQL Server lists each partition once per index; aligned indexes move together, so a table's
    # partition is the sum of its indexes' (size, and I/O = heat x size)
    grouped: dict[tuple[str, str, str, int], list[Advice]] = defaultdict(list)
    for a in report.objects:
        i = a.info
        if i.kind == "partition" and i.table_name and i.partition_number is not None:
            grouped[(i.server, i.database, i.table_name, i.partition_number)].append(a)
    for (_server, _db, table, number), parts in grouped.items():
        first = min(parts, key=lambda a: a.info.key).info
        size = sum((a.info.size_bytes or 0) / GB for a in parts)
        io = sum(a.features.heat * (a.info.size_bytes or 0) / GB for a in parts)
        unit = units.get((first.server, parts[0].placement_unit))
        read_pct = unit.features.read_pct if unit is not None else None
        # a partition hot in a recurring business period (month-end...) keeps that heat in the plan
        in_period = [a for a in parts if a.features.period is not None and a.features.period.hot]
        period_io = sum(
            a.features.period.features.heat * (a.info.size_bytes or 0) / GB
            for a in in_period
            if a.features.period is not None
        )
        period = in_period[0].features.period if in_period else None
        io_s = (unit.features.read_iops + unit.features.write_iops) if unit is not None else 0.0
        ms_per_io = {t: w.wait_ms_per_s / io_s for t, w in unit.waits.items()} if unit and io_s > 0 else None
        out.setdefault(first.pool, []).append(
            PartitionInput(
                engine=first.engine,
                server=first.server,
                database=first.database,
                table=table,
                partition=number,
                key=first.key,
                range_low=first.range_low,
                range_high=first.range_high,
                size_gb=size,
                heat=io / size if size > 0 else 0.0,
                read_share=(read_pct / 100) if read_pct is not None else 0.9,
                current_tier=first.current_tier,
                location=first.filegroup or first.tablespace,
                period_heat=(period_io / size if size > 0 else 0.0) if period is not None else None,
                period=period.name if period is not None else None,
                advised_tier=unit.recommended_tier if unit is not None else None,
                ms_per_io=ms_per_io,
            )
        )
    return out


def make_plan(report: AdviceReport, policy: Policy, *, now: datetime, months: int | None) -> IlmPlan:
    """The ILM plan, each storage pool's partitions planned on its own tiers and capacity. With
    several pools the forecast is keyed `pool/tier` and each note starts with its pool (as the
    advice's utilisation); one pool plans exactly as a policy without pools."""
    by_pool = partition_inputs_by_pool(report)
    if not policy.pools or len(by_pool) <= 1:
        pool = next(iter(by_pool), DEFAULT_POOL)
        return plan_ilm(by_pool.get(pool, []), policy.for_pool(pool), now=now, months=months)
    plans = {
        pool: plan_ilm(parts, policy.for_pool(pool), now=now, months=months)
        for pool, parts in by_pool.items()
    }
    return IlmPlan(
        tables=tuple(t for p in plans.values() for t in p.tables),
        not_date_partitioned=tuple(n for p in plans.values() for n in p.not_date_partitioned),
        forecast={f"{pool}/{tier}": v for pool, p in plans.items() for tier, v in p.forecast.items()},
        notes=tuple(f"{pool}: {n}" for pool, p in plans.items() for n in p.notes),
    )


def plan_json(plan: IlmPlan) -> dict[str, Any]:
    return {
        "tables": [
            {
                "engine": t.engine,
                "server": t.server,
                "database": t.database,
                "table": t.table,
                "period_months": t.period_months,
                "fit": {
                    "method": t.fit.method,
                    "half_life_months": round(t.fit.half_life_months, 2),
                    "decay_per_month": round(t.fit.decay_per_month, 4),
                    "r2": None if t.fit.r2 is None else round(t.fit.r2, 3),
                    "mae_log": None if t.fit.mae_log is None else round(t.fit.mae_log, 3),
                    "points": t.fit.points,
                    "why": t.fit.why,
                },
                "partitions": [
                    {
                        "partition": p.partition,
                        "key": p.key,
                        "new": p.new,
                        "location": p.location,
                        "range_start": p.range_start.isoformat() if p.range_start else None,
                        "range_end": p.range_end.isoformat() if p.range_end else None,
                        "age_months": p.age_months,
                        "size_gb": round(p.size_gb, 2),
                        "heat": round(p.heat, 3),
                        "current_tier": p.current_tier,
                        "moves": [
                            {
                                "date": m.date.isoformat(),
                                "to_tier": m.to_tier,
                                "read_only": m.read_only,
                                "reason": m.reason,
                            }
                            for m in p.moves
                        ],
                    }
                    for p in t.partitions
                ],
            }
            for t in plan.tables
        ],
        "not_date_partitioned": list(plan.not_date_partitioned),
        "forecast": plan.forecast,
        "notes": list(plan.notes),
    }


def _first_moves(doc: dict[str, Any]) -> dict[str, tuple[str, str] | None]:
    out: dict[str, tuple[str, str] | None] = {}
    for t in doc.get("tables", []):
        for p in t["partitions"]:
            if p.get("new"):
                continue
            label = f"{t['server']}/{t['database']}/{t['table']} p{p['partition']}"
            out[label] = (p["moves"][0]["date"], p["moves"][0]["to_tier"]) if p["moves"] else None
    return out


def plan_changes(previous: dict[str, Any] | None, current: dict[str, Any]) -> list[dict[str, Any]]:
    """What changed since the previous plan, per partition: its next move (date, tier) — e.g. a
    partition that stayed hot is no longer demoted on schedule."""
    if previous is None:
        return []
    before, after = _first_moves(previous), _first_moves(current)
    changes = []
    for label in sorted(set(before) | set(after)):
        a, b = before.get(label), after.get(label)
        if a != b:
            changes.append({
                "partition": label,
                "before": None if a is None else {"date": a[0], "to_tier": a[1]},
                "after": None if b is None else {"date": b[0], "to_tier": b[1]},
            })  # fmt: skip
    return changes


def ilm_script_files(
    advice: dict[str, Any],
    plan: dict[str, Any],
    *,
    tiers: Sequence[TierSpot] | Mapping[str, Sequence[TierSpot]],
    dialect: Dialect,
    options: Options,
    now: datetime,
    policy_name: str,
    source: str = "tierwise ilm",
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """One forward and one rollback script per month of moves, and plan.json (run order, sha256
    of each file): name -> bytes, and the plan.json document. `tiers`: the tiers' locations, or
    per storage pool (each partition then moves within its own pool's paths and storage groups).
    Raises migrations.PlanError."""
    selection = pool_ilm_moves(advice, plan, source=source, tiers=tiers, dialect=dialect)
    files: dict[str, bytes] = {}
    months: list[dict[str, Any]] = []
    skipped = list(selection.skipped)
    for month in selection.months:
        forward, rollback, moves, unsupported = month_pair(month, dialect, options, now)
        skipped.extend(unsupported)
        if not moves:
            continue
        order = len(months) + 1
        entry: dict[str, Any] = {
            "order": order,
            "month": month.month,
            "restart_required": forward.restart_required,
            "moves": [
                {
                    "server": m.target.server,
                    "database": m.target.database,
                    "key": m.key,
                    "kind": m.kind,
                    "name": m.name,
                    "from_tier": m.from_tier,
                    "to_tier": m.to_tier,
                    "action": type(m.action).__name__,
                    "plan_sha256": m.checksum(),
                }
                for m in moves
            ],
        }
        check = month_check(month, dialect, options, now)  # DB2: the month's check-only file
        for script in (forward, rollback, *([check] if check is not None else [])):
            name = f"{order:02d}-ilm-{month.month}.{script.direction}{EXTENSION[dialect]}"
            data = script.text.encode("utf-8")
            files[name] = data
            entry[script.direction] = {"path": name, "sha256": hashlib.sha256(data).hexdigest()}
        months.append(entry)
    index = {
        "generator": f"{options.generator} ({GENERATOR_REVISION})",
        "generated_at": timestamp(now),
        "dialect": dialect,
        "policy": policy_name,
        "run": "run each month's forward file in `order`, at the start of its month (the leading edge "
        "before the period begins); roll a month back with its rollback file, newest month first; "
        "see docs/ilm.md",
        "months": months,
        "skipped": [{"server": s.server, "key": s.key, "reason": s.reason} for s in skipped],
    }
    files["plan.json"] = (json.dumps(index, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return files, index


def pool_ilm_moves(
    advice: dict[str, Any],
    plan: dict[str, Any],
    *,
    source: str,
    tiers: Sequence[TierSpot] | Mapping[str, Sequence[TierSpot]],
    dialect: Dialect,
) -> IlmSelection:
    """ilm_moves per storage pool: the advice's objects and the plan's tables split by the pool of
    their objects, each with its pool's tiers, the months merged (a month's moves pool by pool)."""
    if not isinstance(tiers, Mapping):
        return ilm_moves(advice, plan, source=source, tiers=tiers, dialect=dialect)
    objects = advice.get("objects") if isinstance(advice, dict) else None
    tables = plan.get("tables") if isinstance(plan, dict) else None
    if not isinstance(objects, list) or not isinstance(tables, list):
        return ilm_moves(advice, plan, source=source, tiers=tiers.get(DEFAULT_POOL, ()), dialect=dialect)
    pool_of_object = {id(o): object_pool(o) for o in objects}
    table_pool = {(o.get("server"), o.get("database"), o.get("table_name")): object_pool(o)
                  for o in objects if isinstance(o, dict) and o.get("kind") == "partition"}  # fmt: skip
    pool_of_table = {id(t): table_pool.get((t.get("server"), t.get("database"), t.get("table")), DEFAULT_POOL)
                     for t in tables if isinstance(t, dict)}  # fmt: skip
    pools = list(dict.fromkeys([*pool_of_object.values(), *pool_of_table.values()])) or [DEFAULT_POOL]
    if len(pools) == 1 and pools[0] in tiers:  # one pool: exactly as without pools
        return ilm_moves(advice, plan, source=source, tiers=tiers[pools[0]], dialect=dialect)
    months: dict[str, list[Move]] = {}
    skipped: list[Skipped] = []
    for pool in pools:
        if pool not in tiers:
            raise AdviceError(
                f"{source}: the advice has objects of pool {pool!r}, which the policy does not have"
            )
        mine = {**advice, "objects": [o for o in objects if pool_of_object[id(o)] == pool]}
        own = [t for t in tables if pool_of_table.get(id(t)) == pool]
        part = ilm_moves(mine, {**plan, "tables": own}, source=source, tiers=tiers[pool], dialect=dialect)
        for m in part.months:
            months.setdefault(m.month, []).extend(m.moves)
        skipped += part.skipped
    return IlmSelection(
        tuple(IlmMonth(m, tuple(moves)) for m, moves in sorted(months.items())), tuple(skipped)
    )
