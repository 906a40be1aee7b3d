"""Back-end sizing: physical I/O with the RAID write factor, and device counts.

The standard back-end load formula (EMC's SQL Server flash paper, 2009; EMC ISM; Dell TR1050):

    PhysicalIO = (host_iops x read% - read_hits) + host_iops x write% x RAID factor

``read_hits`` are host reads served by the *array* cache (``read_hit_pct`` of the reads); the
database buffer pool is already out of the host figures when they come from
``dm_io_virtual_file_stats`` or Db2 ``P_READS``. Every front-end write costs ``RAID factor``
back-end I/Os (RAID 0 = 1, RAID 1/10 = 2, RAID 5 = 4, RAID 6 = 6).

Devices needed = max(ceil(physical / (device_iops x max_utilisation)), ceil(capacity / device_gb)).
ISM sizes spindles at <= 70 % utilisation for acceptable response times.

Pure functions: plain numbers in, plain numbers out. Invalid input raises ``ValueError`` naming
the field.
"""

from __future__ import annotations

import math

RAID_FACTORS: dict[int, int] = {0: 1, 1: 2, 10: 2, 5: 4, 6: 6}
"""Back-end I/Os per front-end write, by RAID level."""

_EPS = 1e-9


def raid_factor(level: int) -> int:
    """The RAID write factor (back-end I/Os per host write) for a RAID level."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in RAID_FACTORS:
        known = ", ".join(str(k) for k in sorted(RAID_FACTORS))
        raise ValueError(f"raid_level: unsupported RAID level {level!r} (supported: {known})")
    return RAID_FACTORS[level]


def _number(name: str, value: float, *, low: float = 0.0, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low:g}" if high is None else f"between {low:g} and {high:g}"
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return float(value)


def physical_iops(host_iops: float, read_pct: float, *, raid_level: int, read_hit_pct: float = 0.0) -> float:
    """Back-end (physical) IOPS for a host load.

    ``read_pct`` is the share of host I/Os that are reads, ``read_hit_pct`` the share of those
    reads served by the array cache; both in percent (0-100).

    >>> physical_iops(11_700, 80, raid_level=5)
    18720.0
    """
    host = _number("host_iops", host_iops)
    rpct = _number("read_pct", read_pct, high=100.0)
    hpct = _number("read_hit_pct", read_hit_pct, high=100.0)
    factor = raid_factor(raid_level)
    # Multiply before dividing by 100 so round figures stay exact (11,700 x 80 / 100 = 9,360).
    reads = host * rpct / 100.0
    read_hits = reads * hpct / 100.0
    writes = host * (100.0 - rpct) / 100.0
    return (reads - read_hits) + writes * factor


def devices_needed(
    physical_iops: float,
    *,
    device_iops: float | None = None,
    capacity_gb: float | None = None,
    device_gb: float | None = None,
    max_utilisation: float = 1.0,
) -> int | None:
    """Devices needed for a physical load and/or a capacity; ``None`` when neither is given.

    Performance: ceil(physical_iops / (device_iops x max_utilisation)).
    Capacity: ceil(capacity_gb / device_gb) (needs both). The answer is the larger of the two.

    >>> devices_needed(14_040, device_iops=180)
    78
    """
    phys = _number("physical_iops", physical_iops)
    util = _number("max_utilisation", max_utilisation, high=1.0)
    if util <= 0.0:
        raise ValueError(f"max_utilisation must be > 0 and <= 1, got {max_utilisation!r}")
    if (capacity_gb is None) != (device_gb is None):
        missing = "device_gb" if device_gb is None else "capacity_gb"
        raise ValueError(f"{missing} is required when sizing for capacity (give capacity_gb and device_gb)")

    counts: list[int] = []
    if device_iops is not None:
        dev = _number("device_iops", device_iops)
        if dev <= 0.0:
            raise ValueError(f"device_iops must be > 0, got {device_iops!r}")
        counts.append(_ceil(phys / (dev * util)))
    if capacity_gb is not None and device_gb is not None:
        cap = _number("capacity_gb", capacity_gb)
        size = _number("device_gb", device_gb)
        if size <= 0.0:
            raise ValueError(f"device_gb must be > 0, got {device_gb!r}")
        counts.append(_ceil(cap / size))
    return max(counts) if counts else None


def _ceil(x: float) -> int:
    """Ceiling that forgives floating-point dust (78.00000000001 -> 78)."""
    return max(0, math.ceil(x - _EPS * max(1.0, abs(x))))
