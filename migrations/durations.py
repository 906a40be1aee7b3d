"""How long a copy takes, in the words both the scripts and the pages use: one definition, so the
downtime a recommendation shows before approval (migrations/impact.py) is the one its script's
header prints (tsql_offline). Imports only how a duration reads (advisors.quantities): the writers
and the impact both build on it."""

from __future__ import annotations

import math

from advisors.quantities import duration_minutes

MB = 1024**2
DEFAULT_COPY_RATE_MB_S = 200.0  # a planning figure for a file copy between arrays; real speed varies


def copy_minutes(size_bytes: int, rate_mb_s: float) -> int:
    """Whole minutes to copy `size_bytes` at `rate_mb_s`, rounded up (an estimate of downtime had
    better err long): to the minute up to an hour, to 5 minutes up to 10 hours, to 30 minutes
    beyond; at least 1."""
    if rate_mb_s <= 0:
        raise ValueError(f"a copy rate must be more than 0 MB/s, got {rate_mb_s}")
    minutes = max(1, math.ceil(size_bytes / MB / rate_mb_s / 60))
    step = 1 if minutes <= 60 else 5 if minutes <= 600 else 30
    return -(-minutes // step) * step


def minutes_text(minutes: int) -> str:
    """'18 min', '1 h', '2 h 30 min': how every duration reads (advisors.quantities)."""
    return duration_minutes(minutes)
