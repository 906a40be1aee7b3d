"""`tierwise tiers`: each pool tier's service times, the policy's against the fleet's measurement.

The benefit model weighs the two (advisors.tier_curves, `benefit.learn_tiers`); this command shows
the evidence behind each weight, and warns where the two differ by more than `WARN_RATIO`, the
sign that the policy's figures describe another array than the one measured.
`register(app)` adds the command to a typer application.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from advisors.quantities import count, latency, pct
from advisors.tier_curves import Figure, TierFigures, measure_pools
from app.advice import tier_figure_warning, tier_figures_json
from app.cli_runtime import read_files


def _line(f: Figure) -> str:
    m = f.measured
    if m is None:
        return f"  {f.what:5}  policy {latency(f.policy_ms):>8}  measured {'-':>8}  ({f.why})"
    interval = f"{latency(m.low)}-{latency(m.high)}" if m.low is not None else "no interval"
    return (
        f"  {f.what:5}  policy {latency(f.policy_ms):>8}  measured {latency(m.ms):>8} "
        f"({latency(m.ms_at_load)} at {pct(m.load)} load; 90 % interval {interval}; "
        f"{count(m.object_hours)} object-hours on {count(m.objects)} objects)  "
        f"used {latency(f.used_ms)} ({pct(f.weight)} measured{'' if f.weight >= 0.95 else ': ' + f.why})"
    )


def print_tiers(pools: list[TierFigures]) -> list[str]:
    """The table, pool by pool and tier by tier; returns the warnings (also printed to stderr)."""
    warnings: list[str] = []
    for p in pools:
        if not p.read:
            continue
        typer.echo(f"pool {p.pool}")
        for tier, r in p.read.items():
            c = p.curves.get(tier)
            left = ""
            if c is not None and (c.cache_friendly or c.governed):
                left = f" (left out: {c.cache_friendly} mostly array-cache hits, {c.governed} held by Resource Governor)"
            typer.echo(f" {tier}{left}")
            for f in (r, p.write[tier]):
                typer.echo(_line(f))
                if (w := tier_figure_warning(f)) is not None:
                    warnings.append(f"pool {p.pool}: {w}")
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    return warnings


def tiers(
    input_files: list[Path] = typer.Option(
        ..., "--input", help="import CSV files (two or more samples per object); `--input a.csv b.csv` works"
    ),
    more_files: list[Path] = typer.Argument(None, hidden=True),
    policy_file: Path = typer.Option(None, "--policy", help="policy YAML (default: the shipped policy)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Each pool tier's read and write service times: the policy's against those measured from the
    objects on it, with the interval and the object-hours; warns where they differ by more than 2x."""
    policy, _, windows = read_files([*input_files, *(more_files or [])], policy_file)
    pools = measure_pools(windows, policy)
    if as_json:
        doc = {
            "learn_tiers": policy.benefit.learn_tiers,
            "pools": [{"pool": p.pool, "tiers": tier_figures_json(p)} for p in pools],
        }
        typer.echo(json.dumps(doc, indent=2))
        return
    if not policy.benefit.learn_tiers:
        typer.echo(
            "benefit.learn_tiers is off: the advice uses the policy's figures; measured shown for comparison"
        )
    print_tiers(pools)


def register(app: typer.Typer) -> None:
    app.command("tiers")(tiers)
