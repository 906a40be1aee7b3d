"""Where the scripts of a move go and what their files are called: the policy's tiers (per pool) as
the script generators see them, and a script's file name. One definition for `tierwise script`
(app/cli_script.py), the scripts frozen at approval (app/scripts.py) and the impact shown before
approval (app/move_impact.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from advisors.change_windows import copy_rate
from migrations import EXTENSION, AdviceError, Move, Options, TierSpot
from migrations.quoting import file_stem
from policies.model import DEFAULT_POOL, Policy


def tier_spots(policy: Any) -> list[TierSpot]:
    """The policy's top-level tiers as the script generators see them (fastest first); for one
    pool's tiers pass `policy.for_pool(pool)` (see pool_spots)."""
    spots = []
    for t in policy.tiers:
        loc = t.locations
        spots.append(
            TierSpot(
                name=t.name,
                sqlserver_directory=loc.sqlserver_directory,
                db2_storage_group=loc.db2_storage_group,
                db2_paths=tuple(loc.db2_paths),
                db2_overhead_ms=loc.db2_overhead_ms,
                db2_device_read_rate_mb_s=loc.db2_device_read_rate_mb_s,
                db2_data_tag=loc.db2_data_tag,
                db2_log_path=loc.db2_log_path,
            )
        )
    return spots


def object_pool(obj: Any) -> str:
    """The pool an advice object (or a recommendation's evidence) names; `default` when it names none
    (advice written before pools)."""
    pool = obj.get("pool") if isinstance(obj, dict) else None
    return pool if isinstance(pool, str) and pool else DEFAULT_POOL


def pool_spots(policy: Policy, pool: str, log_paths: Mapping[str, str] | None = None) -> list[TierSpot]:
    """One pool's tiers as the script generators see them: a move on array B gets array B's
    directories and storage groups. `log_paths` (--db2-log-path) override a tier's db2_log_path,
    keyed `TIER` (that tier in every pool) or `POOL/TIER`. Raises AdviceError for a pool the
    policy does not have."""
    try:
        spots = tier_spots(policy.for_pool(pool))
    except KeyError:
        raise AdviceError(
            f"the advice has objects of pool {pool!r}, which the policy does not have "
            f"(pools: {', '.join(policy.pool_names())}): advise again with this policy"
        ) from None
    paths = log_paths or {}
    return [replace(t, db2_log_path=paths.get(f"{pool}/{t.name}", paths.get(t.name, t.db2_log_path)))
            for t in spots]  # fmt: skip


def file_name(order: int, move: Move, direction: str, dialect: str) -> str:
    uid = hashlib.sha256(f"{move.target.server}|{move.key}".encode()).hexdigest()[:6]
    stem = file_stem(move.target.server, move.target.database, move.kind, move.name, limit=70)
    return f"{order:02d}-{stem}-{uid}.{direction}{EXTENSION[dialect]}"


def script_options(policy: Policy, move: Move, options: Options | None = None) -> Options:
    """The scripts' options for one move: its offline copy at the policy's copy rate for the move's
    tiers (change_windows: copy_rate_by_tiers, copy_rate_by_action offline_copy, copy_rate_mb_s), so
    the downtime the script prints is the one the change-window plan and the pages use."""
    rate = copy_rate(policy.change_windows, "offline_copy", move.from_tier, move.to_tier)
    return replace(options or Options(generator="tierwise"), copy_rate_mb_s=rate)
