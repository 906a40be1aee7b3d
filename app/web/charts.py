"""Server-side SVG charts: line, bar, heat grid and curve. No JavaScript, no external resources.

Every piece of text (titles, names, labels, links) passes through markupsafe's escape; numbers
are formatted here. Each chart is an `<svg role="img">` with an aria-label and a `<title>`, sized
by its viewBox so it scales down with the page (objects.css).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from markupsafe import Markup, escape

from advisors.quantities import gb, pct

READ = "#2f6f9f"  # the page accent
WRITE = "#c0692b"
AXIS = "#616e7c"
GRID = "#e4e7eb"
NO_DATA = "#f0f2f5"
# A sequential palette (ColorBrewer OrRd, 9 classes), light = cool, dark = hot.
HEAT = ("#fff7ec", "#fee8c8", "#fdd49e", "#fdbb84", "#fc8d59", "#ef6548", "#d7301f", "#b30000", "#7f0000")
FONT = 'font-family="-apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif"'


def _t(text: object) -> str:
    """Escaped text for an SVG text node or attribute."""
    return str(escape(str(text)))


def _c(v: float) -> str:
    """A coordinate."""
    return f"{v:.1f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))


def fmt_num(v: float | None) -> str:
    """Compact, for an axis tick or a legend edge (whose unit the chart names): 0.25, 3.4, 42, 1.2k,
    15k, 3.1M. Text that reads a quantity (a tooltip, a page) uses advisors.quantities."""
    if v is None:
        return "–"
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.3g}G"
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.0f}k"
    if a >= 1e3:
        return f"{v / 1e3:.1f}k".replace(".0k", "k")
    if a >= 10 or a == 0:
        return f"{v:.0f}"
    if a >= 1:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2g}"


def nice_ceiling(v: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at or above v."""
    if v <= 0:
        return 1.0
    exp = 10.0 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * exp >= v * (1 - 1e-9):
            return m * exp
    return 10 * exp


def y_ticks(top: float, n: int = 4) -> list[float]:
    top = nice_ceiling(top)
    step = top / n
    return [step * i for i in range(n + 1)]


TIME_STEPS = (3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400)


def time_ticks(x0: float, x1: float, max_ticks: int = 8) -> list[tuple[float, str]]:
    """Round UTC instants between x0 and x1 (epoch seconds) with their labels."""
    span = max(x1 - x0, 1.0)
    step = next((s for s in TIME_STEPS if span / s <= max_ticks), TIME_STEPS[-1])
    first = math.ceil(x0 / step) * step
    out = []
    t = first
    last_day = None
    while t <= x1:
        d = datetime.fromtimestamp(t, UTC)
        day = d.strftime("%d %b")
        if step >= 86400:
            label = day
        elif day != last_day:
            label = f"{d:%H:%M}|{day}"
        else:
            label = f"{d:%H:%M}"
        last_day = day
        out.append((float(t), label))
        t += step
    return out


def _svg(width: int, height: int, title: str, body: Sequence[str], desc: str | None = None) -> Markup:
    t = _t(title)
    d = f"<desc>{_t(desc)}</desc>" if desc else ""
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="{t}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" {FONT} font-size="11">'
        f"<title>{t}</title>{d}{''.join(body)}</svg>"
    )


def _text(
    x: float,
    y: float,
    text: str,
    *,
    anchor: str = "start",
    fill: str = AXIS,
    size: int = 11,
    weight: str | None = None,
) -> str:
    w = f' font-weight="{weight}"' if weight else ""
    return (
        f'<text x="{_c(x)}" y="{_c(y)}" text-anchor="{anchor}" fill="{fill}" font-size="{size}"{w}>'
        f"{_t(text)}</text>"
    )


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float | None]]  # (x, y); y None = no data
    color: str = READ


def _legend(items: Sequence[tuple[str, str]], x: float, y: float) -> list[str]:
    out = []
    for name, color in items:
        out.append(f'<rect x="{_c(x)}" y="{_c(y - 8)}" width="14" height="3" fill="{color}"/>')
        out.append(_text(x + 19, y - 3, name, fill="#1f2933"))
        x += 24 + 7 * len(name)
    return out


def _y_axis(ticks: Sequence[float], y_of: Callable[[float], float], left: float, right: float) -> list[str]:
    out = []
    for v in ticks:
        y = y_of(v)
        out.append(f'<line x1="{_c(left)}" x2="{_c(right)}" y1="{_c(y)}" y2="{_c(y)}" stroke="{GRID}"/>')
        out.append(_text(left - 6, y + 4, fmt_num(v), anchor="end"))
    return out


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    unit: str,
    gap: float | None = None,
    width: int = 620,
    height: int = 210,
) -> Markup:
    """Lines over time (x in epoch seconds). Points further apart than `gap` are not joined."""
    left, right, top, bottom = 52, 14, 30, 34
    pw, ph = width - left - right, height - top - bottom
    xs = [x for s in series for x, y in s.points if y is not None]
    ys = [y for s in series for _, y in s.points if y is not None]
    body = [_text(4, 14, unit, fill="#1f2933")]
    body += _legend([(s.name, s.color) for s in series], max(left, 4 + 6.5 * len(unit) + 18), 14)
    if not xs:
        body.append(_text(left + pw / 2, top + ph / 2, "no data in this window", anchor="middle"))
        return _svg(width, height, title, body)
    x0, x1 = min(xs), max(xs)
    if x1 - x0 < 1:
        x0, x1 = x0 - 1800, x1 + 1800
    ticks = y_ticks(max(ys) if max(ys) > 0 else 1.0)
    ymax = ticks[-1]

    def x_of(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def y_of(y: float) -> float:
        return top + ph - (y / ymax) * ph

    body += _y_axis(ticks, y_of, left, left + pw)
    for t, label in time_ticks(x0, x1):
        x = x_of(t)
        body.append(f'<line x1="{_c(x)}" x2="{_c(x)}" y1="{top + ph}" y2="{top + ph + 4}" stroke="{AXIS}"/>')
        hhmm, _, day = label.partition("|")
        body.append(_text(x, top + ph + 15, hhmm, anchor="middle"))
        if day:
            body.append(_text(x, top + ph + 27, day, anchor="middle"))
    body.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="{AXIS}"/>')
    for s in series:
        d: list[str] = []
        prev: float | None = None
        for x, y in sorted(s.points):
            if y is None:
                prev = None
                continue
            joined = prev is not None and (gap is None or x - prev <= gap)
            d.append(f"{'L' if joined else 'M'}{_c(x_of(x))} {_c(y_of(y))}")
            if not joined:
                d.append("l0.01 0")  # an isolated point still shows (round caps)
            prev = x
        if d:
            body.append(
                f'<path d="{" ".join(d)}" fill="none" stroke="{s.color}" stroke-width="1.75" '
                f'stroke-linejoin="round" stroke-linecap="round"><title>{_t(s.name)}</title></path>'
            )
    return _svg(width, height, title, body)


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float | None],
    *,
    title: str,
    unit: str,
    color: str = READ,
    width: int = 620,
    height: int = 190,
) -> Markup:
    """One bar per label (e.g. 24 hours of the day); None is "no data", not zero."""
    left, right, top, bottom = 52, 14, 22, 24
    pw, ph = width - left - right, height - top - bottom
    body = [_text(4, 12, unit, fill="#1f2933")]
    known = [v for v in values if v is not None]
    if not known:
        body.append(_text(left + pw / 2, top + ph / 2, "no data in this window", anchor="middle"))
        return _svg(width, height, title, body)
    ticks = y_ticks(max(known) if max(known) > 0 else 1.0)
    ymax = ticks[-1]

    def y_of(y: float) -> float:
        return top + ph - (y / ymax) * ph

    body += _y_axis(ticks, y_of, left, left + pw)
    slot = pw / max(len(values), 1)
    bw = max(slot * 0.72, 1.0)
    every = max(1, math.ceil(len(labels) * 22 / pw))
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        x = left + i * slot + (slot - bw) / 2
        tip = f"{label}: {'no data' if v is None else fmt_num(v) + ' ' + unit}"
        if v is not None:
            y = y_of(v)
            body.append(
                f'<rect x="{_c(x)}" y="{_c(y)}" width="{_c(bw)}" height="{_c(top + ph - y)}" fill="{color}">'
                f"<title>{_t(tip)}</title></rect>"
            )
        if i % every == 0:
            body.append(_text(left + i * slot + slot / 2, top + ph + 14, label, anchor="middle"))
    body.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="{AXIS}"/>')
    return _svg(width, height, title, body)


@dataclass(frozen=True)
class LogScale:
    """Values binned on a log scale into len(HEAT) colours; zero falls into the first bin."""

    lo: float
    hi: float

    @classmethod
    def of(cls, values: Sequence[float | None]) -> LogScale:
        pos = [v for v in values if v is not None and v > 0]
        if not pos:
            return cls(1.0, 10.0)
        lo, hi = min(pos), max(pos)
        return cls(lo, hi if hi > lo else lo * 10)

    def edges(self) -> list[float]:
        a, b = math.log10(self.lo), math.log10(self.hi)
        return [10 ** (a + (b - a) * k / len(HEAT)) for k in range(len(HEAT) + 1)]

    def bin(self, v: float) -> int:
        if v <= self.lo:
            return 0
        a, b = math.log10(self.lo), math.log10(self.hi)
        return min(int((math.log10(v) - a) / (b - a) * len(HEAT)), len(HEAT) - 1)


@dataclass(frozen=True)
class GridRow:
    label: str  # the object's name
    context: str  # where it is (target · database), drawn muted after the name
    href: str | None
    cells: Sequence[float | None]
    tip: str  # one line about the whole row (name, total, peak)


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else s[: max(n - 1, 0)] + "…"


def _grid_label(r: GridRow, x: float, y: float, budget: int = 48) -> str:
    name = _short(r.label, 32)
    ctx = _short(r.context, budget - len(name) - 3) if r.context and budget - len(name) > 6 else ""
    tail = f'<tspan fill="{AXIS}"> · {_t(ctx)}</tspan>' if ctx else ""
    text = (
        f'<text x="{_c(x)}" y="{_c(y)}" text-anchor="end" fill="#1f2933" font-size="11">'
        f"<tspan>{_t(name)}</tspan>{tail}</text>"
    )
    return f'<a href="{_t(r.href)}">{text}</a>' if r.href else text


def heat_grid(
    rows: Sequence[GridRow], hours: Sequence[datetime], *, title: str, unit: str, width: int = 1180
) -> Markup:
    """Rows x hourly columns coloured on a log scale, with a legend. Runs of equal colour in a row
    are drawn as one rectangle, so a week of 40 rows stays small."""
    label_w, right, top, row_h = 300, 12, 34, 14
    if not rows or not hours:
        return _svg(
            width, 80, title, [_text(width / 2, 40, "no I/O recorded in this window", anchor="middle")]
        )
    ncols = len(hours)
    cell = max(min((width - label_w - right) / ncols, 32.0), 2.0)
    pw = cell * ncols
    box = 46
    legend_w = len(HEAT) * box + 140
    width = int(label_w + max(pw, legend_w) + right)
    grid_bottom = top + row_h * len(rows)
    legend_y = grid_bottom + 26
    height = legend_y + 52
    scale = LogScale.of([v for r in rows for v in r.cells])
    body: list[str] = []
    # time axis: the day at midnight (and at the first column), hour marks every 6 h
    for i, h in enumerate(hours):
        x = label_w + i * cell
        if (h.hour == 0 or i == 0) and (x + 64 <= label_w + pw or i == 0):
            body.append(_text(x, 12, f"{h:%a %d %b}", fill="#1f2933"))
            body.append(f'<line x1="{_c(x)}" x2="{_c(x)}" y1="16" y2="{grid_bottom}" stroke="{GRID}"/>')
        if h.hour % 6 == 0 and cell * 6 >= 24:
            body.append(_text(x + 1, 27, f"{h:%H}h"))
    for j, r in enumerate(rows):
        y = top + j * row_h
        body.append(f"<g><title>{_t(r.tip)}</title>{_grid_label(r, label_w - 8, y + 10)}")
        bins = [None if v is None else scale.bin(v) for v in r.cells]
        i = 0
        while i < len(bins):  # one rectangle per run of equal colour
            k = i + 1
            while k < len(bins) and bins[k] == bins[i]:
                k += 1
            b = bins[i]
            body.append(
                f'<rect x="{_c(label_w + i * cell)}" y="{y}" width="{_c((k - i) * cell)}" '
                f'height="{row_h - 2}" fill="{NO_DATA if b is None else HEAT[b]}"/>'
            )
            i = k
        body.append("</g>")
    # legend: the colour steps with their edges, "no data", and what a step means
    edges = scale.edges()
    body.append(_text(label_w - 8, legend_y + 10, unit, anchor="end", fill="#1f2933"))
    for k, color in enumerate(HEAT):
        x = label_w + k * box
        body.append(f'<rect x="{x}" y="{legend_y}" width="{box - 2}" height="12" fill="{color}"/>')
    for k, edge in enumerate(edges):  # each edge under the boundary it marks
        body.append(_text(label_w + k * box - 1, legend_y + 25, fmt_num(edge), anchor="middle"))
    nx = label_w + len(HEAT) * box + 30
    body.append(
        f'<rect x="{nx}" y="{legend_y}" width="{box - 2}" height="12" fill="{NO_DATA}" stroke="{GRID}"/>'
    )
    body.append(_text(nx + box + 4, legend_y + 10, "no data"))
    step = fmt_num(edges[1] / edges[0])
    body.append(
        _text(label_w, legend_y + 44, f"log scale: each step is ×{step}; hover a row for its figures")
    )
    return _svg(width, height, title, body)


def curve_chart(
    points: Sequence[tuple[float, float]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    marker: tuple[float, float, str] | None = None,
    width: int = 460,
    height: int = 320,
) -> Markup:
    """A cumulative curve on 0..1 x 0..1 (drawn as percentages) with the diagonal for reference."""
    left, right, top, bottom = 48, 16, 16, 40
    pw, ph = width - left - right, height - top - bottom

    def x_of(x: float) -> float:
        return left + x * pw

    def y_of(y: float) -> float:
        return top + ph - y * ph

    body: list[str] = []
    for k in range(5):
        v = k / 4
        body.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{_c(y_of(v))}" y2="{_c(y_of(v))}" stroke="{GRID}"/>'
        )
        body.append(_text(left - 6, y_of(v) + 4, f"{v:.0%}", anchor="end"))
        body.append(_text(x_of(v), top + ph + 15, f"{v:.0%}", anchor="middle"))
    body.append(_text(left + pw / 2, height - 6, x_label, anchor="middle", fill="#1f2933"))
    body.append(
        f'<text transform="translate(12 {_c(top + ph / 2)}) rotate(-90)" text-anchor="middle" '
        f'fill="#1f2933" font-size="11">{_t(y_label)}</text>'
    )
    body.append(
        f'<path d="M{left} {top + ph} L{left + pw} {top}" stroke="{AXIS}" stroke-dasharray="4 4" fill="none">'
        "<title>no skew: every object equally hot</title></path>"
    )
    if not points:
        body.append(_text(left + pw / 2, top + ph / 2, "no I/O recorded in this window", anchor="middle"))
        return _svg(width, height, title, body)
    d = " ".join(f"{'M' if i == 0 else 'L'}{_c(x_of(x))} {_c(y_of(y))}" for i, (x, y) in enumerate(points))
    body.append(f'<path d="{d}" fill="none" stroke="{READ}" stroke-width="2" stroke-linejoin="round"/>')
    if marker is not None:
        mx, my, text = marker
        body.append(
            f'<path d="M{_c(x_of(mx))} {top + ph} V{_c(y_of(my))} H{left}" stroke="{WRITE}" '
            f'stroke-dasharray="2 3" fill="none"/>'
        )
        body.append(f'<circle cx="{_c(x_of(mx))}" cy="{_c(y_of(my))}" r="4" fill="{WRITE}"/>')
        anchor = "start" if mx < 0.6 else "end"
        dx = 8 if anchor == "start" else -8
        body.append(_text(x_of(mx) + dx, y_of(my) + 16, text, anchor=anchor, fill="#1f2933"))
    return _svg(width, height, title, body)


# Distinct line colours for several databases on one chart (ColorBrewer Dark2).
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")


@dataclass(frozen=True)
class CurveLine:
    name: str
    points: Sequence[tuple[float, float]]  # (flash GB, share of I/O wait saved, 0..1)
    marker_gb: float | None = None  # the recommended amount of flash, marked on the line


def flash_chart(
    lines: Sequence[CurveLine], *, title: str, flash_tier: str, width: int = 560, height: int = 320
) -> Markup:
    """ "How much flash": share of I/O wait saved (0..100 %) against GB of flash, one line per
    database, with the recommended amount marked as a dot."""
    left, right, top, bottom = 48, 150, 16, 40
    pw, ph = width - left - right, height - top - bottom
    x_max = nice_ceiling(max((x for ln in lines for x, _ in ln.points), default=0.0) or 1.0)

    def x_of(x: float) -> float:
        return left + x / x_max * pw

    def y_of(y: float) -> float:
        return top + ph - y * ph

    body: list[str] = []
    for k in range(5):
        v = k / 4
        body.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{_c(y_of(v))}" y2="{_c(y_of(v))}" stroke="{GRID}"/>'
        )
        body.append(_text(left - 6, y_of(v) + 4, f"{v:.0%}", anchor="end"))
        body.append(_text(x_of(x_max * v), top + ph + 15, fmt_num(x_max * v), anchor="middle"))
    body.append(_text(left + pw / 2, height - 6, f"GB of {flash_tier}", anchor="middle", fill="#1f2933"))
    body.append(
        f'<text transform="translate(12 {_c(top + ph / 2)}) rotate(-90)" text-anchor="middle" '
        f'fill="#1f2933" font-size="11">share of I/O wait saved</text>'
    )
    if not any(ln.points for ln in lines):
        body.append(_text(left + pw / 2, top + ph / 2, "no flash curve yet", anchor="middle"))
        return _svg(width, height, title, body)
    for i, ln in enumerate(lines):
        colour = PALETTE[i % len(PALETTE)]
        pts = list(ln.points)
        if not pts:
            continue
        d = " ".join(f"{'M' if k == 0 else 'L'}{_c(x_of(x))} {_c(y_of(y))}" for k, (x, y) in enumerate(pts))
        tip = "; ".join(f"{gb(x)}: {pct(y)}" for x, y in pts)
        body.append(
            f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2" stroke-linejoin="round">'
            f"<title>{_t(ln.name)}: {_t(tip)}</title></path>"
        )
        if ln.marker_gb is not None:
            at = max((y for x, y in pts if x <= ln.marker_gb + 1e-9), default=pts[0][1])
            body.append(
                f'<circle cx="{_c(x_of(ln.marker_gb))}" cy="{_c(y_of(at))}" r="4" fill="{colour}">'
                f"<title>{_t(ln.name)}: recommended {gb(ln.marker_gb)} of {_t(flash_tier)}</title></circle>"
            )
        ly = top + 12 + 16 * i
        body.append(f'<rect x="{left + pw + 12}" y="{ly - 8}" width="10" height="10" fill="{colour}"/>')
        body.append(_text(left + pw + 26, ly + 1, _short(ln.name, 22), fill="#1f2933"))
    return _svg(width, height, title, body)
