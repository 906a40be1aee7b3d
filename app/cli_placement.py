"""`tierwise place` and `tierwise size`: the placement optimiser and the sizing formula on files/flags.

`register(app)` adds both commands to a typer application. Results are JSON on stdout; bad input
is a message on stderr naming the file and the object/field, exit code 2, nothing on stdout.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from advisors.placement import PlacementObject, PlacementResult, PlacementTier, place
from advisors.sizing import devices_needed, physical_iops, raid_factor
from app.cli_runtime import fail as _fail
from policies.model import DEFAULT_POOL  # tiers and objects that name no pool

OBJECT_FIELDS = (
    "id", "size_gb", "read_iops", "write_iops", "pinned_tier", "allowed_tiers", "read_hit_ratio", "pool",
)  # fmt: skip
TIER_FIELDS = (
    "name",
    "capacity_gb",
    "max_iops",
    "raid_factor",
    "read_latency_ms",
    "write_latency_ms",
    "pool",
)


class InputError(Exception):
    """Bad input; the message names the file and the object/field."""


# ---------------------------------------------------------------------------------------------
# Reading and checking the JSON files


def _load(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the file: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, list):
        raise InputError(
            f"{path}: expected a JSON array (a list of {{...}} entries), got {type(data).__name__}"
        )
    return data


def _number(
    where: str, row: dict[str, Any], field: str, *, default: float | None = None, high: float | None = None
) -> float:
    if field not in row or row[field] is None:
        if default is not None:
            return default
        raise InputError(f"{where}: {field} is missing")
    value = row[field]
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (high is not None and value > high):
        rule = ">= 0" if high is None else f"between 0 and {high:g}"
        raise InputError(f"{where}: {field} must be a number {rule}, got {json.dumps(value)}")
    return float(value)


def _name(where: str, row: dict[str, Any], field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str) or not value.strip():
        got = "nothing" if field not in row else json.dumps(value)
        raise InputError(f"{where}: {field} must be a non-empty string, got {got}")
    return value


def _unknown(where: str, row: dict[str, Any], known: tuple[str, ...]) -> None:
    extra = [k for k in row if k not in known]
    if extra:
        raise InputError(f"{where}: unknown field {extra[0]!r} (expected: {', '.join(known)})")


def _pool(where: str, row: dict[str, Any]) -> str:
    """The storage pool an entry names (optional: `default`)."""
    return _name(where, row, "pool") if "pool" in row else DEFAULT_POOL


def read_tiers(path: Path) -> list[PlacementTier]:
    """The tiers of a file whose tiers name no pool (see read_pool_tiers)."""
    return [t for tiers in read_pool_tiers(path).values() for t in tiers]


def read_pool_tiers(path: Path) -> dict[str, list[PlacementTier]]:
    """The tiers per storage pool (a tier's optional `pool`; names unique within a pool), pools in
    the order their first tier comes: each pool's capacity and IOPS serve only its own objects."""
    pools: dict[str, list[PlacementTier]] = {}
    seen: dict[tuple[str, str], int] = {}
    for k, row in enumerate(_load(path), start=1):
        where = f"{path}: tier {k}"
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object, got {json.dumps(row)}")
        name = _name(where, row, "name")
        where = f'{path}: tier {k} ("{name}")'
        pool = _pool(where, row)
        if (pool, name) in seen:
            within = "" if pool == DEFAULT_POOL else f" in pool {pool}"
            raise InputError(f"{where}: duplicate name{within} (also tier {seen[(pool, name)]})")
        seen[(pool, name)] = k
        _unknown(where, row, TIER_FIELDS)
        rf = row.get("raid_factor")
        if isinstance(rf, float) and rf.is_integer():
            rf = int(rf)
        if isinstance(rf, bool) or not isinstance(rf, int) or rf < 1:
            got = "nothing" if "raid_factor" not in row else json.dumps(row["raid_factor"])
            raise InputError(
                f"{where}: raid_factor must be an integer >= 1 (RAID 0: 1, 1/10: 2, 5: 4, 6: 6), got {got}"
            )
        pools.setdefault(pool, []).append(
            PlacementTier(
                name=name,
                capacity_gb=_number(where, row, "capacity_gb"),
                max_iops=_number(where, row, "max_iops"),
                raid_factor=rf,
                read_latency_ms=_number(where, row, "read_latency_ms"),
                write_latency_ms=_number(where, row, "write_latency_ms"),
            )
        )
    if not pools:
        raise InputError(f"{path}: no tiers (give at least one)")
    return pools


def read_objects(path: Path, tier_file: Path, tier_names: list[str]) -> list[PlacementObject]:
    """The objects of a file whose objects name no pool (see read_pool_objects)."""
    return [
        o for objs in read_pool_objects(path, tier_file, {DEFAULT_POOL: tier_names}).values() for o in objs
    ]


def read_pool_objects(
    path: Path, tier_file: Path, pool_tiers: dict[str, list[str]]
) -> dict[str, list[PlacementObject]]:
    """The objects per storage pool (an object's optional `pool`, which must be a pool of the
    tiers file; its pinned and allowed tiers must be tiers of that pool)."""
    pools: dict[str, list[PlacementObject]] = {pool: [] for pool in pool_tiers}
    seen: dict[str, int] = {}
    for k, row in enumerate(_load(path), start=1):
        where = f"{path}: object {k}"
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object, got {json.dumps(row)}")
        oid = _name(where, row, "id")
        where = f'{path}: object {k} ("{oid}")'
        if oid in seen:
            raise InputError(f"{where}: duplicate id (also object {seen[oid]})")
        seen[oid] = k
        _unknown(where, row, OBJECT_FIELDS)
        pool = _pool(where, row)
        if pool not in pool_tiers:
            raise InputError(
                f"{where}: pool {json.dumps(pool)} has no tiers in {tier_file} (pools: {', '.join(pool_tiers)})"
            )
        tier_names = pool_tiers[pool]
        known = ", ".join(tier_names) + (
            "" if pool == DEFAULT_POOL or len(pool_tiers) == 1 else f" of pool {pool}"
        )
        pinned = row.get("pinned_tier")
        if pinned is not None and pinned not in tier_names:
            raise InputError(
                f"{where}: pinned_tier {json.dumps(pinned)} is not a tier in {tier_file} ({known})"
            )
        allowed = row.get("allowed_tiers")
        if allowed is not None:
            bad = [t for t in allowed if t not in tier_names] if isinstance(allowed, list) else [allowed]
            if bad:
                raise InputError(
                    f"{where}: allowed_tiers must be a list of tier names in {tier_file} ({known}); "
                    f"{json.dumps(bad[0])} is not one"
                )
        pools[pool].append(
            PlacementObject(
                id=oid,
                size_gb=_number(where, row, "size_gb"),
                read_iops=_number(where, row, "read_iops"),
                write_iops=_number(where, row, "write_iops"),
                pinned_tier=pinned,
                allowed_tiers=frozenset(allowed) if allowed is not None else None,
                read_hit_ratio=_number(where, row, "read_hit_ratio", default=0.0, high=1.0),
            )
        )
    return pools


def result_json(result: PlacementResult) -> dict[str, Any]:
    def num(x: float) -> float | None:
        return x if math.isfinite(x) else None  # infeasible: no objective, no gap

    return {
        "assignment": result.assignment,
        "objective": num(result.objective),
        "lower_bound": num(result.lower_bound),
        "status": result.status,
        "gap": num(result.gap),
        "method": result.method,
        "seconds": round(result.seconds, 3),
        "notes": list(result.notes),
    }


def pools_json(results: dict[str, PlacementResult]) -> dict[str, Any]:
    """Several pools placed one by one: the assignment of all, the totals (objective and bound
    summed, the worst status), and each pool's own answer under `pools`."""
    parts = [{"pool": pool, **result_json(r)} for pool, r in results.items()]
    statuses = [r.status for r in results.values()]
    status = next((s for s in ("infeasible", "feasible") if s in statuses), "optimal")
    objective = sum(r.objective for r in results.values())
    bound = sum(r.lower_bound for r in results.values())
    total = result_json(
        PlacementResult(
            assignment={k: v for r in results.values() for k, v in r.assignment.items()},
            objective=objective,
            lower_bound=bound,
            status=status,
            # an infeasible pool: no objective, so no gap either (printed null, as for one pool)
            gap=(objective - bound) / abs(objective)
            if math.isfinite(objective) and objective
            else (0.0 if math.isfinite(objective) else math.inf),
            method="+".join(dict.fromkeys(r.method for r in results.values())),
            seconds=sum(r.seconds for r in results.values()),
            notes=tuple(f"{pool}: {n}" for pool, r in results.items() for n in r.notes),
        )
    )
    return {**total, "pools": parts}


@contextlib.contextmanager
def native_stdout_silenced() -> Iterator[None]:
    """Send file descriptor 1 to /dev/null while HiGHS runs.

    HiGHS 1.12 (bundled with SciPy 1.17) prints a stray debug line straight to fd 1
    (ERGO-Code/HiGHS#2783), which would corrupt the JSON on stdout. Python-level output is
    unaffected. Only for the short-lived CLI process: it is process-wide.
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 at all
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


# ---------------------------------------------------------------------------------------------
# Commands

_SIZE_OPTIONS = {
    "host_iops": "--host-iops",
    "read_pct": "--read-pct",
    "read_hit_pct": "--read-hit-pct",
    "raid_level": "--raid",
    "device_iops": "--device-iops",
    "capacity_gb": "--capacity-gb",
    "device_gb": "--device-gb",
    "max_utilisation": "--max-utilisation",
}


def place_command(
    objects: Path = typer.Option(
        ..., "--objects", help="JSON array of {id, size_gb, read_iops, write_iops, pinned_tier?}"
    ),
    tiers: Path = typer.Option(
        ...,
        "--tiers",
        help="JSON array of {name, capacity_gb, max_iops, raid_factor, read_latency_ms, write_latency_ms}",
    ),
    time_limit: float = typer.Option(10.0, "--time-limit", help="seconds the optimiser may use"),
) -> None:
    """Place objects on tiers: least total I/O time within each tier's capacity and IOPS. Tiers and
    objects may name a storage `pool`: each pool is placed on its own tiers (time limit per pool)."""
    if not (math.isfinite(time_limit) and time_limit > 0):
        _fail(f"--time-limit must be a number of seconds > 0, got {time_limit:g}")
    try:
        tier_pools = read_pool_tiers(tiers)
        object_pools = read_pool_objects(
            objects, tiers, {p: [t.name for t in ts] for p, ts in tier_pools.items()}
        )
    except InputError as exc:
        _fail(str(exc))
    with native_stdout_silenced():
        results = {
            pool: place(object_pools[pool], ts, time_limit_s=time_limit) for pool, ts in tier_pools.items()
        }
    doc = result_json(next(iter(results.values()))) if len(results) == 1 else pools_json(results)
    typer.echo(json.dumps(doc, indent=2))


def size_command(
    host_iops: float = typer.Option(..., "--host-iops", help="host (front-end) I/Os per second"),
    read_pct: float = typer.Option(..., "--read-pct", help="reads as a percentage of host I/Os (0-100)"),
    raid: int = typer.Option(None, "--raid", help="RAID level: 0, 1, 5, 6 or 10 (default: the --tier's)"),
    read_hit_pct: float = typer.Option(
        0.0, "--read-hit-pct", help="reads served by the array cache, % (0-100)"
    ),
    device_iops: float = typer.Option(
        None, "--device-iops", help="random IOPS one device sustains, e.g. 180 (default: the --tier's)"
    ),
    capacity_gb: float = typer.Option(
        None, "--capacity-gb", help="usable capacity needed (with --device-gb)"
    ),
    device_gb: float = typer.Option(
        None, "--device-gb", help="usable GB per device (with --capacity-gb; default: the --tier's)"
    ),
    max_utilisation: float = typer.Option(
        1.0, "--max-utilisation", help="plan devices to this busy share, e.g. 0.7"
    ),
    tier: str = typer.Option(
        None, "--tier", help="size for this tier of the policy: its RAID level, device IOPS and GB per device"
    ),
    pool: str = typer.Option(
        None, "--pool", help="the storage pool whose --tier it is (default: the top-level tiers)"
    ),
    policy_file: Path = typer.Option(
        None, "--policy", help="policy YAML for --tier (default: the shipped policy)"
    ),
) -> None:
    """Back-end IOPS (RAID write factor, array read hits) and the devices they need; with --tier
    (and --pool), for that tier of the policy, compared with the devices it has."""
    spec = _tier_spec(tier, pool, policy_file) if tier is not None or pool is not None else None
    if spec is not None:
        raid = spec["raid_level"] if raid is None else raid
        device_iops = spec["device_iops"] if device_iops is None else device_iops
        if capacity_gb is not None and device_gb is None:
            device_gb = spec["device_gb"]
    if raid is None:
        _fail("--raid is required (or --tier, to take the RAID level of a tier of the policy)")
    try:
        phys = physical_iops(host_iops, read_pct, raid_level=raid, read_hit_pct=read_hit_pct)
        devices = devices_needed(
            phys,
            device_iops=device_iops,
            capacity_gb=capacity_gb,
            device_gb=device_gb,
            max_utilisation=max_utilisation,
        )
    except ValueError as exc:
        message = re.sub(
            r"\b(" + "|".join(_SIZE_OPTIONS) + r")\b", lambda mt: _SIZE_OPTIONS[mt.group(1)], str(exc)
        )
        _fail(message)
    doc: dict[str, Any] = {"physical_iops": phys, "devices": devices, "raid_factor": raid_factor(raid)}
    if spec is not None:
        doc.update({"pool": spec["pool"], "tier": spec["tier"], "tier_devices": spec["devices"]})
    typer.echo(json.dumps(doc))


def _tier_spec(tier: str | None, pool: str | None, policy_file: Path | None) -> dict[str, Any]:
    """The figures of one tier of one pool of the policy that `size` starts from."""
    from policies.loader import PolicyError, load_policy

    if tier is None:
        _fail("--pool needs --tier: which of the pool's tiers to size")
    try:
        policy = load_policy(policy_file)
    except PolicyError as exc:
        _fail(str(exc))
    name = pool or DEFAULT_POOL
    if name not in policy.pool_names():
        _fail(f"--pool: the policy has no pool {name!r} (pools: {', '.join(policy.pool_names())})")
    tiers = policy.pool_tiers(name)
    found = next((t for t in tiers if t.name == tier), None)
    if found is None:
        where = "the policy" if name == DEFAULT_POOL else f"pool {name}"
        _fail(f"--tier: {where} has no tier {tier!r} (tiers: {', '.join(t.name for t in tiers)})")
    return {
        "pool": name,
        "tier": found.name,
        "raid_level": found.raid_level,
        "device_iops": found.device_iops,
        "device_gb": found.capacity_gb / found.devices,
        "devices": found.devices,
    }


def register(app: typer.Typer) -> None:
    """Add `place` and `size` to a typer application."""
    app.command("place")(place_command)
    app.command("size")(size_command)
