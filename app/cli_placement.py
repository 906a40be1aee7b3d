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

OBJECT_FIELDS = ("id", "size_gb", "read_iops", "write_iops", "pinned_tier", "allowed_tiers", "read_hit_ratio")
TIER_FIELDS = ("name", "capacity_gb", "max_iops", "raid_factor", "read_latency_ms", "write_latency_ms")


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


def read_tiers(path: Path) -> list[PlacementTier]:
    tiers: list[PlacementTier] = []
    seen: dict[str, int] = {}
    for k, row in enumerate(_load(path), start=1):
        where = f"{path}: tier {k}"
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object, got {json.dumps(row)}")
        name = _name(where, row, "name")
        where = f'{path}: tier {k} ("{name}")'
        if name in seen:
            raise InputError(f"{where}: duplicate name (also tier {seen[name]})")
        seen[name] = k
        _unknown(where, row, TIER_FIELDS)
        rf = row.get("raid_factor")
        if isinstance(rf, float) and rf.is_integer():
            rf = int(rf)
        if isinstance(rf, bool) or not isinstance(rf, int) or rf < 1:
            got = "nothing" if "raid_factor" not in row else json.dumps(row["raid_factor"])
            raise InputError(
                f"{where}: raid_factor must be an integer >= 1 (RAID 0: 1, 1/10: 2, 5: 4, 6: 6), got {got}"
            )
        tiers.append(
            PlacementTier(
                name=name,
                capacity_gb=_number(where, row, "capacity_gb"),
                max_iops=_number(where, row, "max_iops"),
                raid_factor=rf,
                read_latency_ms=_number(where, row, "read_latency_ms"),
                write_latency_ms=_number(where, row, "write_latency_ms"),
            )
        )
    if not tiers:
        raise InputError(f"{path}: no tiers (give at least one)")
    return tiers


def read_objects(path: Path, tier_file: Path, tier_names: list[str]) -> list[PlacementObject]:
    objects: list[PlacementObject] = []
    seen: dict[str, int] = {}
    known = ", ".join(tier_names)
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
        objects.append(
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
    return objects


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
    """Place objects on tiers: least total I/O time within each tier's capacity and IOPS."""
    if not (math.isfinite(time_limit) and time_limit > 0):
        _fail(f"--time-limit must be a number of seconds > 0, got {time_limit:g}")
    try:
        tier_list = read_tiers(tiers)
        object_list = read_objects(objects, tiers, [t.name for t in tier_list])
    except InputError as exc:
        _fail(str(exc))
    with native_stdout_silenced():
        result = place(object_list, tier_list, time_limit_s=time_limit)
    typer.echo(json.dumps(result_json(result), indent=2))


def size_command(
    host_iops: float = typer.Option(..., "--host-iops", help="host (front-end) I/Os per second"),
    read_pct: float = typer.Option(..., "--read-pct", help="reads as a percentage of host I/Os (0-100)"),
    raid: int = typer.Option(..., "--raid", help="RAID level: 0, 1, 5, 6 or 10"),
    read_hit_pct: float = typer.Option(
        0.0, "--read-hit-pct", help="reads served by the array cache, % (0-100)"
    ),
    device_iops: float = typer.Option(
        None, "--device-iops", help="random IOPS one device sustains, e.g. 180"
    ),
    capacity_gb: float = typer.Option(
        None, "--capacity-gb", help="usable capacity needed (with --device-gb)"
    ),
    device_gb: float = typer.Option(None, "--device-gb", help="usable GB per device (with --capacity-gb)"),
    max_utilisation: float = typer.Option(
        1.0, "--max-utilisation", help="plan devices to this busy share, e.g. 0.7"
    ),
) -> None:
    """Back-end IOPS (RAID write factor, array read hits) and the devices they need."""
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
    typer.echo(json.dumps({"physical_iops": phys, "devices": devices, "raid_factor": raid_factor(raid)}))


def register(app: typer.Typer) -> None:
    """Add `place` and `size` to a typer application."""
    app.command("place")(place_command)
    app.command("size")(size_command)
