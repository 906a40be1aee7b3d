"""PNG charts for report emails, drawn by matplotlib without a display (Agg)."""

from __future__ import annotations

import io

import matplotlib
from matplotlib.figure import Figure

from app.mail.content import ReportContent

matplotlib.use("Agg")  # no display: set before pyplot is imported
import matplotlib.pyplot as plt

TIER_COLOURS = {"flash": "#6b3fa0", "fc": "#2f6f9f", "sata": "#8a94a0"}


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def skew_chart(content: ReportContent) -> bytes:
    """Share of I/O against share of capacity, hottest objects first: the knee shows how little
    capacity carries most of the I/O (what flash is for)."""
    fig, ax = plt.subplots(figsize=(5.6, 3.4))
    xs = [100 * c for c, _ in content.skew]
    ys = [100 * i for _, i in content.skew]
    ax.plot(xs, ys, color="#2f6f9f", linewidth=2, label="objects, hottest first")
    ax.plot([0, 100], [0, 100], color="#cbd2d9", linestyle="--", linewidth=1, label="uniform")
    ax.set_xlabel("share of capacity (%)")
    ax.set_ylabel("share of I/O (%)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.grid(color="#eef1f4")
    ax.legend(loc="lower right", frameon=False, fontsize=8)
    ax.set_title("I/O skew", fontsize=10)
    return _png(fig)


def tier_chart(content: ReportContent) -> bytes:
    """GB that the live recommendations move, by tier, now and after."""
    present: set[str] = set(content.gb_by_tier_now) | set(content.gb_by_tier_after)
    tiers: list[str] = [t for t in ("flash", "fc", "sata") if t in present]
    tiers += sorted(present - set(tiers))
    fig, ax = plt.subplots(figsize=(5.6, 3.0))
    width = 0.38
    for i, t in enumerate(tiers):
        colour = TIER_COLOURS.get(t, "#616e7c")
        ax.bar(i - width / 2, content.gb_by_tier_now.get(t, 0.0), width, color=colour, alpha=0.45)
        ax.bar(i + width / 2, content.gb_by_tier_after.get(t, 0.0), width, color=colour)
    ax.set_xticks(range(len(tiers)), tiers)
    ax.set_ylabel("GB")
    ax.set_title("Objects with recommendations: GB per tier now (light) and after (dark)", fontsize=9)
    ax.grid(axis="y", color="#eef1f4")
    return _png(fig)
