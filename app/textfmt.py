"""How the service writes numbers, sizes, moments and names as text: the one set of template
filters, shared by the web pages (app/web/templating) and the report email (app/mail/render).

The two differ only in how an unknown value reads (`missing`): "–" on a page, "n/a" in a
plain-text email, where a lone dash is easily lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import quote


def size(n: float | None, missing: str = "–") -> str:
    """Sizes in binary units with one decimal: "1.5 GB"."""
    if n is None:
        return missing
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n = n / 1024
    return str(n)


def fixed(v: float | None, digits: int = 1, missing: str = "–") -> str:
    """A number with `digits` decimals and thousands separators: "1,234.5"."""
    return missing if v is None else f"{v:,.{digits}f}"


def when(t: datetime | None) -> str:
    """Times in UTC, minute precision, as the collectors and the reports write them."""
    return "never" if t is None else t.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def url_part(s: object) -> str:
    """One path segment: a database or target name may hold "/" or spaces."""
    return quote(str(s), safe="")


def filters(missing: str = "–") -> dict[str, Callable[..., Any]]:
    """The template filters, an unknown value written as `missing`."""
    return {
        "bytes": partial(size, missing=missing),
        "fixed": partial(fixed, missing=missing),
        "when": when,
        "path": url_part,
    }
