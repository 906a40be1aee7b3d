"""Benchmark: the placement optimiser against greedy heat-density (what array auto-tiering does).

Random, seeded, capacity-tight instances of 200, 2,000 and 20,000 objects on three tiers: flash
(small, fast, RAID 5), FC (RAID 10) and SATA (large, slow, RAID 6). Flash holds 7 % of the data,
FC 38 %, SATA 100 % (total 145 %). Flash's IOPS limit binds (RAID 5 write factor 4 on a hot set)
and so does its daily write budget (flash endurance: by default 60 % of what a placement by heat
alone would write there; at 70 % it hardly binds); the flash and FC capacities bind too. Sizes
are log-normal, I/O density heavy-tailed (a small hot set), capped at 40 IOPS/GB; each object
writes 16-64 KB per write, so ``write_gb_day = write_iops x KB x 86400 / 2^20``.

Prints, side by side: n, optimiser objective, its lower bound (MILP dual bound or LP relaxation),
gap %, greedy objective (or 'infeasible' when heat density alone breaks a limit, as auto-tiering
would), greedy's gap to the same bound, both times, status/method, and which limits the
optimiser's answer uses to >= 99.5 % (gb: capacity, iops: max_iops, wr: max_write_gb_day). Once
with the default gap tolerance (0.01 %: prove near-optimality) and once with 0.5 % (stop as soon
as the answer is within 0.5 %).

Run: .venv/bin/python -m bench.placement [--sizes 200,2000,20000] [--time-limit 10] [--seed 7]
     [--gap-tolerance 0.005 ...] [--write-share 0.6]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from advisors.placement import PlacementObject, PlacementTier, greedy_heat_density, place
from app.cli_placement import native_stdout_silenced


def make_instance(
    n: int, seed: int, write_share: float = 0.6
) -> tuple[list[PlacementObject], list[PlacementTier]]:
    rng = np.random.default_rng(seed)
    size = rng.lognormal(mean=2.0, sigma=1.2, size=n)  # GB; median ~7 GB, a long tail of big ones
    density = np.minimum(rng.pareto(1.4, size=n) + 0.05, 40.0)  # IOPS per GB: most cold, a few hot
    host = size * density
    read_share = rng.uniform(0.5, 0.95, size=n)
    hit = rng.uniform(0.0, 0.4, size=n)
    write_kb = rng.uniform(16.0, 64.0, size=n)  # average write size
    per_day = 86_400 / 2**20  # KB per second -> GB per day
    objects = [
        PlacementObject(
            id=f"obj{i:05d}",
            size_gb=round(float(size[i]), 3),
            read_iops=round(float(host[i] * read_share[i]), 3),
            write_iops=round(float(host[i] * (1 - read_share[i])), 3),
            read_hit_ratio=round(float(hit[i]), 3),
            write_gb_day=round(float(host[i] * (1 - read_share[i]) * write_kb[i] * per_day), 3),
        )
        for i in range(n)
    ]
    total_gb = float(size.sum())
    shape = [("flash", 0.07, 4, 0.4, 0.6), ("fc", 0.38, 2, 5.5, 2.0), ("sata", 1.00, 6, 12.5, 4.0)]
    # IOPS limits from a reference placement by capacity alone (hottest per GB first): flash gets
    # 80 % of what that placement puts there, FC and SATA 130 % -> flash's binds, and so do the
    # flash and FC capacities. Flash's write budget: ``write_share`` of what that placement
    # writes there.
    unlimited = [PlacementTier(nm, c * total_gb, 1e15, rf, rl, wl) for nm, c, rf, rl, wl in shape]
    ref = greedy_heat_density(objects, unlimited).assignment
    load = dict.fromkeys(ref.values(), 0.0)
    written = dict.fromkeys(ref.values(), 0.0)
    for o in objects:
        t = next(t for t in unlimited if t.name == ref[o.id])
        load[t.name] += o.read_iops * (1 - o.read_hit_ratio) + o.write_iops * t.raid_factor
        written[t.name] += o.write_gb_day
    share = {"flash": 0.80, "fc": 1.30, "sata": 1.30}
    tiers = [
        PlacementTier(nm, round(c * total_gb, 1), round(share[nm] * load.get(nm, 0.0), 1), rf, rl, wl)
        for nm, c, rf, rl, wl in shape
    ]
    tiers[0] = replace(tiers[0], max_write_gb_day=round(write_share * written.get("flash", 0.0), 1))
    return objects, tiers


def binding(objects: list[PlacementObject], tiers: list[PlacementTier], assignment: dict[str, str]) -> str:
    """Limits the answer uses to >= 99.5 %: e.g. 'flash gb+iops+wr, fc gb'."""
    used = {t.name: [0.0, 0.0, 0.0] for t in tiers}
    by_name = {t.name: t for t in tiers}
    for o in objects:
        t = by_name[assignment[o.id]]
        used[t.name][0] += o.size_gb
        used[t.name][1] += o.read_iops * (1 - o.read_hit_ratio) + o.write_iops * t.raid_factor
        used[t.name][2] += o.write_gb_day
    parts = []
    for t in tiers:
        limits = (("gb", t.capacity_gb), ("iops", t.max_iops), ("wr", t.max_write_gb_day))
        kinds = [
            k
            for (k, lim), u in zip(limits, used[t.name], strict=True)
            if lim is not None and u >= 0.995 * lim
        ]
        if kinds:
            parts.append(f"{t.name} {'+'.join(kinds)}")
    return ", ".join(parts) or "none"


def run(sizes: list[int], seed: int, time_limit: float, gap_tolerance: float, write_share: float) -> None:
    print(
        f"\ntime limit {time_limit:g} s, gap tolerance {gap_tolerance * 100:g} %, seed {seed}, flash write "
        f"budget {write_share * 100:g} % of the reference's; objective = total I/O time, ms per second"
    )
    head = (
        f"{'n':>7} {'objective':>14} {'bound':>14} {'gap %':>7} {'greedy':>14} {'greedy gap %':>12} "
        f"{'opt s':>6} {'greedy s':>8}  status/method  binding limits"
    )
    print(head)
    print("-" * len(head))
    for n in sizes:
        objects, tiers = make_instance(n, seed, write_share)
        t = time.monotonic()
        with native_stdout_silenced():  # HiGHS 1.12's stray debug line
            res = place(objects, tiers, time_limit_s=time_limit, gap_tolerance=gap_tolerance)
        opt_s = time.monotonic() - t
        t = time.monotonic()
        gr = greedy_heat_density(objects, tiers)
        gr_s = time.monotonic() - t
        if gr.status != "infeasible":
            greedy = f"{gr.objective:>14,.1f} {(gr.objective - res.lower_bound) / gr.objective * 100:>12.2f}"
        else:  # heat density alone breaks a limit (what auto-tiering would do)
            greedy = f"{'infeasible':>14} {'-':>12}"
        limits = binding(objects, tiers, res.assignment) if res.assignment else "-"
        print(
            f"{n:>7} {res.objective:>14,.1f} {res.lower_bound:>14,.1f} {res.gap * 100:>7.3f} "
            f"{greedy} {opt_s:>6.2f} {gr_s:>8.2f}  "
            f"{res.status + '/' + res.method:<14} {limits}"
        )
        for note in res.notes:
            print(f"{'':>9}note: {note}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200,2000,20000")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--gap-tolerance",
        type=float,
        action="append",
        help="stop once proven within this fraction of the bound (repeatable; default 0.0001 and 0.005)",
    )
    ap.add_argument(
        "--write-share",
        type=float,
        default=0.6,
        help="flash's max_write_gb_day as a share of what the reference placement writes there",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for tol in args.gap_tolerance or [1e-4, 5e-3]:
        run(sizes, args.seed, args.time_limit, tol, args.write_share)


if __name__ == "__main__":
    main()
