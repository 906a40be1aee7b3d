"""How every quantity reads as text: one definition each, for the explanations (advisors, migrations),
the pages and the report email (app/textfmt's filters) and the command line's tables.

Pure and dependency-free so that the pure layers may use it: the pages must never show a number
in one form and the explanation beside it in another. The rules, for a DBA (docs/reading-advice.md):

- **I/O wait** (ms of waiting per second): ms/s with one decimal below 1,000 ms/s, then s/s with
  one decimal ("999.9 ms/s", "1.0 s/s", "59.1 s/s"), thousands separators throughout. The unit is
  chosen after rounding, so 999.96 ms/s reads "1.0 s/s", never "1,000.0 ms/s".
- **I/O wait per GB** (or per back-end I/O, per GB written a day) stays in ms/s: it is compared
  with the tiers' prices, which are small ("0.87 ms/s per GB", "0.045 ms/s per GB", "1,778 ms/s
  per GB").
- **Latency**: always ms (two latencies compare at a glance): one decimal below 100 ms, whole
  ms from there ("0.3 ms", "17.0 ms", "250 ms").
- **Sizes**: binary units (1 GB = 1,024 MB, 1 TB = 1,024 GB): the largest unit that keeps the
  figure below 1,024, one decimal below 100 of it, whole from there ("512 MB", "35.4 GB",
  "1.0 TB"); bytes whole.
- **Rates** (I/O per second, IOPS, MB/s, heat): one decimal below 100, whole from there, with
  thousands separators ("2.5 I/O/s", "2,850 IOPS").
- **Percentages** (of a share 0..1): one decimal below 10 %, whole from there ("3.4 %", "87 %");
  a change in percent is signed and whole ("+12 %", "-3 %").
- **Counts**: whole, thousands separators. A raw **figure** whose name says its unit (the advice's
  `numbers`): four significant digits below 1, one decimal from there.
- **Ratios** to a reference (heat against the database average): two decimals below 100, whole
  from there, with an ASCII "x" (the sentences reach the scripts' headers): "0.83x", "1.50x".
- **Durations** in whole minutes (copies, change windows): "18 min", "1 h", "2 h 30 min".
- **Money**: the policy's `currency`. A three-letter code goes before the amount with a space
  ("USD 4,500"), a symbol goes before it without one ("$4,500"); whole units from 100, cents below.

Common to all: a nonzero figure too small to show with the rule's decimals reads "<0.1 ms/s"
(never "0.0", which would say nothing is there); None, NaN and infinity read as `missing`.
"""

from __future__ import annotations

import math
import re
from typing import TypeGuard

MISSING = "–"
GIB = 1024**3
SIZE_UNITS = ("B", "KB", "MB", "GB", "TB")
CURRENCY_CODE = re.compile(r"^[A-Z]{3}$")  # ISO 4217's shape: USD, EUR, CHF
CURRENCY_SYMBOL = re.compile(r"^(?=.*[^\w\s])[^\d\s]{1,3}$")  # $, €, £, ¥, R$, CA$


def _known(v: float | None) -> TypeGuard[float]:
    """A figure to show: not None, NaN or infinite (those read as `missing`)."""
    return v is not None and math.isfinite(v)


def _digits(v: float, below: float = 100.0, digits: int = 1) -> str:
    """`v` with `digits` decimals while it rounds below `below`, whole from there; thousands
    separators; no "-0"; a nonzero figure that would read as zero reads "<0.1"."""
    if v == 0:
        return "0"
    a = abs(v)
    step = 10.0**-digits
    if a < step / 2:
        return f"<{step:.{digits}f}" if v > 0 else f">-{step:.{digits}f}"
    d = digits if round(a, digits) < below else 0
    text = f"{a:,.{d}f}"
    return f"-{text}" if v < 0 else text


def io_wait(ms_per_s: float | None, missing: str = MISSING) -> str:
    """I/O wait: "730.4 ms/s", "59.1 s/s"."""
    if not _known(ms_per_s):
        return missing
    if round(abs(ms_per_s), 1) >= 1000:
        return f"{_digits(ms_per_s / 1000, below=math.inf)} s/s"
    return f"{_digits(ms_per_s, below=math.inf)} ms/s"


def io_wait_per(ms_per_s: float | None, per: str = "GB", missing: str = MISSING) -> str:
    """I/O wait per GB (per back-end I/O, per GB written a day), always in ms/s: three decimals
    below 0.1, two below 10, whole from there: "0.045 ms/s per GB", "1.50 ms/s per GB"."""
    if not _known(ms_per_s):
        return missing
    a = abs(ms_per_s)
    digits = 3 if a < 0.1 else 2
    return f"{_digits(ms_per_s, below=10, digits=digits)} ms/s per {per}"


def latency(ms: float | None, missing: str = MISSING) -> str:
    """Latency of one I/O: "1.1 ms", "17.0 ms", "250 ms"."""
    if not _known(ms):
        return missing
    return f"{_digits(ms)} ms"


def size(n_bytes: float | None, missing: str = MISSING) -> str:
    """A size in binary units: "812 B", "8.0 KB", "512 MB", "35.4 GB", "1.0 TB"."""
    if not _known(n_bytes):
        return missing
    sign = "-" if n_bytes < 0 else ""
    n = abs(float(n_bytes))
    for k, unit in enumerate(SIZE_UNITS):
        x = n / 1024**k
        if unit == "B":
            if round(x) < 1024:
                return f"{sign}{x:,.0f} B"
            continue
        d = 1 if round(x, 1) < 100 else 0
        if round(x, d) < 1024 or unit == SIZE_UNITS[-1]:
            return f"{sign}{x:,.{d}f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def gb(v: float | None, missing: str = MISSING) -> str:
    """A size kept in GB (capacities, the advice's sizes), in the size rule: "0 GB", "35.4 GB", "2.0 TB"."""
    if not _known(v):
        return missing
    return "0 GB" if v == 0 else size(v * GIB)


def rate(v: float | None, unit: str = "I/O/s", missing: str = MISSING) -> str:
    """A rate: "2.5 I/O/s", "2,850 IOPS", "12.0 MB/s"; with unit "" the bare figure (a table
    column whose heading names the unit)."""
    if not _known(v):
        return missing
    return f"{_digits(v)} {unit}".rstrip()


def pct(share: float | None, missing: str = MISSING) -> str:
    """A share (0..1) in percent: "0.4 %", "3.4 %", "87 %", "100 %"."""
    if not _known(share):
        return missing
    return f"{_digits(100 * share, below=10)} %"


def change_pct(percent: float | None, missing: str = MISSING) -> str:
    """A change already in percent, signed and whole (a change is judged against intervals of
    several percent): "+12 %", "-3 %", "0 %", "<1 %"."""
    if not _known(percent):
        return missing
    text = _digits(percent, digits=0)
    return f"{'+' if percent > 0 and text[0] != '<' else ''}{text} %"


def count(n: float | None, missing: str = MISSING) -> str:
    """A count: "1,234"."""
    if not _known(n):
        return missing
    return f"{round(n):,}"


def figure(v: float | None, missing: str = MISSING) -> str:
    """A raw figure whose name says its unit (the advice's `numbers`, a ratio): four significant
    digits below 1, one decimal from there: "0.04432", "5,699.6"."""
    if not _known(v):
        return missing
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.4g}" if abs(v) < 1 else f"{v:,.1f}"


def ratio(v: float | None, missing: str = MISSING) -> str:
    """A ratio to a reference: "0.83x", "1.50x the database average", "618x"."""
    if not _known(v):
        return missing
    return f"{_digits(v, digits=2)}x"


def duration_minutes(minutes: int) -> str:
    """A span in whole minutes: "18 min", "1 h", "2 h 30 min" (the scripts' headers, the pages'
    impacts and the change windows' plan say a duration this way)."""
    if minutes < 60:
        return f"{minutes} min"
    h, m = divmod(minutes, 60)
    return f"{h} h {m} min" if m else f"{h} h"


def valid_currency(currency: str) -> bool:
    """A three-letter ISO 4217 code (USD, EUR) or a short symbol ($, €, R$): see `money`."""
    return bool(CURRENCY_CODE.match(currency) or CURRENCY_SYMBOL.match(currency))


def money(v: float | None, currency: str = "USD", missing: str = MISSING) -> str:
    """An amount in the policy's currency: "USD 4,500", "USD 12.50", "$4,500", "-$12.50"."""
    if not _known(v):
        return missing
    amount = _digits(v, digits=2)
    sign, amount = ("-", amount[1:]) if amount.startswith("-") else ("", amount)
    if CURRENCY_CODE.match(currency):
        return f"{currency} {sign}{amount}"
    return f"{sign}{currency}{amount}"
