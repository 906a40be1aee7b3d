"""How the service writes numbers, sizes, moments and names as text: the one set of template
filters, shared by the web pages (app/web/templating) and the report email (app/mail/render).

Every quantity (I/O wait, latency, sizes, rates, percentages, counts, money) is formatted by
advisors.quantities, the one definition the explanations and the command line use too: a filter
here only binds how an unknown value reads (`missing`): "–" on a page, "n/a" in a plain-text
email, where a lone dash is easily lost.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import quote

from advisors import quantities as q
from migrations.durations import minutes_text


def fixed(v: float | None, digits: int = 1, missing: str = "–") -> str:
    """A plain figure without a unit (a ratio, a factor): `digits` decimals, thousands separators."""
    return missing if v is None or not math.isfinite(v) else f"{v:,.{digits}f}"


def io_size(kb: float | None, missing: str = "–") -> str:
    """An average I/O size kept in KB, in the size rule: "8.0 KB", "1.0 MB"."""
    return missing if kb is None else q.size(kb * 1024, missing)


def duration(seconds: float | None, missing: str = "–") -> str:
    """A span (a poll interval, a change window): seconds under a minute ("30 s"), else in the
    scripts' words (migrations.durations): "5 min", "2 h 30 min"."""
    if seconds is None or not math.isfinite(seconds):
        return missing
    return f"{round(seconds)} s" if round(seconds) < 60 else minutes_text(round(seconds / 60))


def when(t: datetime | None) -> str:
    """Times in UTC, minute precision, as the collectors and the reports write them."""
    return "never" if t is None else t.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def url_part(s: object) -> str:
    """One path segment: a database or target name may hold "/" or spaces."""
    return quote(str(s), safe="")


def money(v: float | None, currency: str = "USD", missing: str = "–") -> str:
    """Money in the policy's currency (the filter's argument): {{ cost | money(currency) }}."""
    return q.money(v, currency, missing)


def filters(missing: str = "–") -> dict[str, Callable[..., Any]]:
    """The template filters, an unknown value written as `missing`: one per quantity."""
    quantities: dict[str, Callable[..., Any]] = {
        "io_wait": q.io_wait,  # ms/s below 1,000, s/s above
        "io_wait_per": q.io_wait_per,  # ms/s per GB (or per what the argument names)
        "latency": q.latency,
        "bytes": q.size,  # a size in bytes
        "gb": q.gb,  # a size kept in GB
        "io_size": io_size,  # an average I/O size kept in KB
        "rate": q.rate,  # I/O/s by default; rate("IOPS"), rate("MB/s"), rate("") bare
        "pct": q.pct,  # a share 0..1
        "change_pct": q.change_pct,  # a signed change already in percent
        "count": q.count,
        "figure": q.figure,  # a raw figure whose name says its unit
        "money": money,
        "duration": duration,  # seconds
        "fixed": fixed,  # a figure without a unit
    }
    return {
        **{name: partial(f, missing=missing) for name, f in quantities.items()},
        "when": when,
        "path": url_part,
    }
