"""Hysteresis: move in on a short window, move out on a long one, and not too soon after a move.

Veritas DST's rule (design.md): an object moves to a faster tier only when it has been at least
1.5x the average heat over a short recent window, and to a slower tier only when it has stayed
below 0.5x over a longer one, so that objects do not thrash between tiers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from advisors.features import GB, ObjectWindow, io_requests
from policies.model import Policy


@dataclass(frozen=True, slots=True)
class Hold:
    """Keep the object on its current tier, and why."""

    tier: str
    reason: str


def _end(units: Sequence[ObjectWindow]) -> datetime | None:
    ends = [w.by_hour[-1][0] for w in units if w.by_hour]
    return max(ends) + timedelta(hours=1) if ends else None


def window_heat_ratios(units: Sequence[ObjectWindow], hours: float) -> dict[tuple[str, str], float]:
    """Each unit's heat over the last `hours` of the input, relative to its database's average
    over the same hours. Units without hourly data or without file-level I/O are left out."""
    end = _end(units)
    if end is None:
        return {}
    start = end - timedelta(hours=hours)
    per_unit: dict[tuple[str, str], tuple[float, float, float]] = {}  # io, gb, seconds
    for w in units:
        if not w.by_hour:
            continue
        io = 0.0
        seconds = 0.0
        basis = ""
        for t, usage in w.by_hour:
            if t >= start:
                req, basis = io_requests(w.info, usage)
                io += req
                seconds += usage.seconds
        if seconds <= 0 or basis != "file I/O":
            continue
        per_unit[(w.info.server, w.info.key)] = (io, max((w.info.size_bytes or 0) / GB, 1 / 1024), seconds)
    db_io: dict[tuple[str, str], float] = {}
    db_gb: dict[tuple[str, str], float] = {}
    db_h: dict[tuple[str, str], float] = {}
    db_of = {(w.info.server, w.info.key): (w.info.server, w.info.database) for w in units}
    for k, (io, gb, seconds) in per_unit.items():
        d = db_of[k]
        db_io[d] = db_io.get(d, 0.0) + io
        db_gb[d] = db_gb.get(d, 0.0) + gb
        db_h[d] = max(db_h.get(d, 0.0), seconds / 3600)
    ratios: dict[tuple[str, str], float] = {}
    for k, (io, gb, seconds) in per_unit.items():
        d = db_of[k]
        avg = db_io[d] / db_gb[d] / db_h[d] if db_io[d] else 0.0
        if avg > 0:
            ratios[k] = (io / gb / (seconds / 3600)) / avg
    return ratios


def holds(
    units: Sequence[ObjectWindow],
    chosen: dict[tuple[str, str], str],
    allowed: dict[tuple[str, str], tuple[str, ...]],
    policy: Policy,
    *,
    now: datetime | None,
) -> dict[tuple[str, str], Hold]:
    """The proposed moves that hysteresis or minimum residency does not allow yet.

    Only moves the rules leave to the optimiser are held: an object the rules exclude from its
    current tier (a scan on flash, a log on SATA) moves whatever its heat."""
    h = policy.hysteresis
    order = {t.name: i for i, t in enumerate(policy.tiers)}
    short = window_heat_ratios(units, h.short_window_hours)
    long = window_heat_ratios(units, h.long_window_hours)
    out: dict[tuple[str, str], Hold] = {}
    for w in units:
        k = (w.info.server, w.info.key)
        current, target = w.info.current_tier, chosen.get(k)
        if current is None or target is None or target == current or current not in allowed.get(k, ()):
            continue
        since = w.info.location_since
        if now is not None and since is not None and now - since < timedelta(days=h.min_residency_days):
            days = (now - since).total_seconds() / 86400
            out[k] = Hold(
                current,
                f"held on {current}: moved there {days:,.1f} days ago, minimum residency is {h.min_residency_days:g} days",
            )
            continue
        if order[target] < order[current]:  # promotion
            ratio = short.get(k)
            if ratio is not None and ratio < h.move_in_heat_ratio:
                out[k] = Hold(
                    current,
                    f"held on {current}: heat {ratio:,.2f}x the database average over the last "
                    f"{h.short_window_hours:g} h, below the {h.move_in_heat_ratio:g}x needed to move to {target}",
                )
        else:  # demotion
            ratio = long.get(k)
            if ratio is not None and ratio >= h.move_out_heat_ratio:
                out[k] = Hold(
                    current,
                    f"held on {current}: heat {ratio:,.2f}x the database average over the last "
                    f"{h.long_window_hours:g} h, not below the {h.move_out_heat_ratio:g}x needed to move to {target}",
                )
    return out
