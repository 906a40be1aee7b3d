"""Benchmark of honesty: how close the benefit model's predicted savings land when the policy's tier
figures are wrong, with the tiers measured (`benefit.learn_tiers` on) and with the policy's figures
alone (off). No timing: the figures are prediction errors.

Seeded, simulated fleets on the shipped policy (flash 0.5 ms, fc 7.0 ms, sata 12.5 ms reads at
light load; 160,000 / 6,720 / 900 back-end IOPS), a week of hourly counters per filegroup, each
generated from a TRUE tier behaviour the advice does not see:

- `flash-4x-slow`: flash serves reads 4x slower than the policy says (a flash tier shared);
- `fc-saturated`: fc's spindles also serve other hosts (35 % of their IOPS, invisible to
  tierwise), so fc runs near 80 % and its latency rises with the load by the queueing law
  1 / (1 - U) at the true U, not the one the policy's IOPS give;
- `fc-array-cache`: fc sits behind a large array cache that serves 30-80 % of each object's
  random reads at 0.2 ms (the share is the object's locality; the cache stays with fc);
- `control`: the policy is right (every object has a small cache-hit share, 0-15 %, that goes
  with it, as the model assumes).

Everywhere: reads of 8 or 16 KB, 10-30 % writes at the tier's write latency, a daily cycle and
5 % hour noise; a read costs hits x 0.2 ms + misses x service(size) / (1 - U), U the tier's true
back-end load that hour (capped at 0.95). The advice (`advisors.advise.advise`, plain data, no
store) runs twice per fleet. For each unit it moves, its predicted saving (I/O wait now less I/O
wait predicted on the recommended tier, ms/s) is set against the true saving: the wait it measured
less the wait the true model gives it on the destination tier, hour by hour, at that tier's true
load with every recommended move made. Error = |predicted - true| / |true|.

"Policy off" per fleet: over the tiers, the largest factor (either way) between what the objects
on the tier measured and what the policy's figures give them at the tier's load (no cache hits).
The last line is

    calibration: prediction error <p> % with measurement vs <q> % with the policy's figures

with <p>, <q> the median error over the moves of the fleets where the policy is off by 2x or more
(pooled). Goal (issue #29): p under 15 %; on the control fleet, measurement no worse than policy.

Run: .venv/bin/python -m bench.calibration [--objects 60] [--days 7] [--seed 29]
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from advisors.advise import Advice, advise
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage
from advisors.maintenance import sum_usage
from policies.loader import load_policy
from policies.model import Policy

T0 = datetime(2026, 11, 1, tzinfo=UTC)
KB = 1024
MB = 2**20
HIT_MS = 0.2
U_CAP = 0.95  # the true queue does not grow without bound: outstanding I/Os are limited
TIERS = ("flash", "fc", "sata")
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Truth:
    """How a fleet's tiers really behave."""

    name: str
    read_factor: Mapping[str, float] = field(default_factory=dict)  # true service / policy's
    hidden_load: Mapping[str, float] = field(default_factory=dict)  # other hosts' share of the IOPS
    tier_cache: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # hit share range
    own_hits: tuple[float, float] = (0.0, 0.15)  # the object's own hit share, on disk tiers
    wrong: str = ""  # the tier the policy has wrong
    target_load: Mapping[str, float] = field(
        default_factory=lambda: {"flash": 0.04, "fc": 0.40, "sata": 0.30}
    )  # our back-end load / the tier's IOPS


FLEETS = (
    Truth("flash-4x-slow", read_factor={"flash": 4.0}, wrong="flash"),
    Truth(
        "fc-saturated",
        hidden_load={"fc": 0.35},
        wrong="fc",
        target_load={"flash": 0.04, "fc": 0.45, "sata": 0.30},
    ),
    Truth("fc-array-cache", tier_cache={"fc": (0.3, 0.8)}, own_hits=(0.0, 0.0), wrong="fc"),
    Truth("control"),
)


@dataclass(slots=True)
class Obj:
    """One simulated filegroup: its hourly I/O and what it is."""

    name: str
    tier: str
    size_gb: float
    read_kb: float
    reads: Floats  # per second, each hour
    writes: Floats
    own_hits: float
    cache_locality: float  # the share a tier's own cache would serve


class Fleet:
    """A simulated fleet: objects, their true latencies, and the true model for any placement."""

    def __init__(self, truth: Truth, policy: Policy, objects: int, hours: int, seed: int) -> None:
        self.truth, self.policy, self.hours = truth, policy, hours
        self.tiers = {t.name: t for t in policy.tiers}
        rng = np.random.default_rng(seed)
        self.rng = rng
        split = {"flash": 0.15, "fc": 0.55, "sata": 0.30}
        hour_of_day = (np.arange(hours) % 24).astype(float)
        self.objs: list[Obj] = []
        for tier, share in split.items():
            n = max(3, round(objects * share))
            rates = rng.lognormal(0.0, 0.8, n)
            made = []
            for i in range(n):
                phase = rng.uniform(-2, 2)
                cycle = 1 + 0.35 * np.sin(2 * np.pi * (hour_of_day - 8 - phase) / 24)
                noise = rng.uniform(0.9, 1.1, hours)
                write_share = rng.uniform(0.1, 0.3)
                lo, hi = truth.tier_cache.get("fc", (0.0, 0.0))
                o = Obj(
                    name=f"FG_{tier.upper()}_{i:02d}",
                    tier=tier,
                    size_gb=float(rng.lognormal(math.log(60), 0.8)),
                    read_kb=float(rng.choice((8.0, 8.0, 8.0, 16.0))),
                    reads=rates[i] * cycle * noise * (1 - write_share),
                    writes=rates[i] * cycle * noise * write_share,
                    own_hits=float(rng.uniform(*truth.own_hits)),
                    cache_locality=float(rng.uniform(lo, hi)) if hi > 0 else 0.0,
                )
                made.append(o)
            # scale the tier's objects so that their back-end load is the target share of its IOPS
            backend = sum(self.backend(o, tier).mean() for o in made)
            k = truth.target_load[tier] * self.tiers[tier].max_iops / backend
            for o in made:
                o.reads, o.writes = o.reads * k, o.writes * k
            self.objs += made
        self.noise = {o.name: rng.lognormal(0.0, 0.05, hours) for o in self.objs}

    def hits(self, o: Obj, tier: str) -> float:
        """The share of the object's reads an array cache serves on this tier."""
        if not self.tiers[tier].seeks:
            return 0.0
        cache = o.cache_locality if tier in self.truth.tier_cache else 0.0
        return 1 - (1 - o.own_hits) * (1 - cache)

    def backend(self, o: Obj, tier: str) -> Floats:
        """Back-end IOPS each hour: reads the cache misses, writes x the RAID write penalty."""
        return o.reads * (1 - self.hits(o, tier)) + o.writes * self.tiers[tier].raid_factor

    def load(self, placement: Mapping[str, str]) -> dict[str, Floats]:
        """Each tier's true utilisation each hour with the objects where `placement` puts them."""
        out = {}
        for name, t in self.tiers.items():
            ours = sum(
                (self.backend(o, name) for o in self.objs if placement[o.name] == name), np.zeros(self.hours)
            )
            out[name] = np.minimum(ours / t.max_iops + self.truth.hidden_load.get(name, 0.0), U_CAP)
        return out

    def read_ms(self, o: Obj, tier: str, u: Floats) -> Floats:
        """The true average read latency each hour on a tier at utilisation `u`."""
        t = self.tiers[tier]
        service = t.read_latency_ms * self.truth.read_factor.get(tier, 1.0)
        service += max(o.read_kb * KB - 8 * KB, 0) / (t.transfer_rate_mb_s * MB) * 1000
        h = self.hits(o, tier)
        return h * HIT_MS + (1 - h) * service / (1 - u)

    def wait(self, o: Obj, tier: str, u: Floats) -> float:
        """The true I/O wait (ms/s) over the window on a tier at utilisation `u`."""
        w = o.reads * self.read_ms(o, tier, u) + o.writes * self.tiers[tier].write_latency_ms
        return float(w.mean())

    def windows(self) -> list[ObjectWindow]:
        """The objects as the advice reads them: hourly counters from the true behaviour."""
        now = self.load({o.name: o.tier for o in self.objs})
        out = []
        for o in self.objs:
            read_ms = self.read_ms(o, o.tier, now[o.tier]) * self.noise[o.name]
            write_ms = self.tiers[o.tier].write_latency_ms * self.noise[o.name]
            hours = []
            for h in range(self.hours):
                r, w = int(o.reads[h] * 3600), int(o.writes[h] * 3600)
                c: dict[str, int | None] = {
                    "reads": r,
                    "bytes_read": int(r * o.read_kb * KB),
                    "read_time_ms": int(r * read_ms[h]),
                    "writes": w,
                    "bytes_written": w * 8 * KB,
                    "write_time_ms": int(w * write_ms[h]),
                }
                hours.append(Usage(3600.0, c))
            info = ObjectInfo(key=f"Shop/filegroup/{o.name}", engine="sqlserver", server="SQLCAL01",
                              database="Shop", kind="filegroup", name=o.name, size_bytes=int(o.size_gb * GB),
                              current_tier=o.tier, filegroup=o.name)  # fmt: skip
            by_hour = [(T0 + timedelta(hours=h), u) for h, u in enumerate(hours)]
            out.append(ObjectWindow(info, sum_usage(hours), by_hour))
        return out

    def measured_wait(self, o: Obj) -> float:
        """The I/O wait the object measured where it is (ms/s), noise included."""
        now = self.load({x.name: x.tier for x in self.objs})
        r = self.read_ms(o, o.tier, now[o.tier]) * self.noise[o.name]
        w = self.tiers[o.tier].write_latency_ms * self.noise[o.name]
        return float((o.reads * r + o.writes * w).mean())

    def policy_off(self) -> float:
        """The largest factor, over the tiers, between what the objects on a tier measured (reads,
        I/O-weighted) and what the policy's figures give them at the tier's load by its IOPS."""
        now = self.load({o.name: o.tier for o in self.objs})
        worst = 1.0
        for name, t in self.tiers.items():
            on = [o for o in self.objs if o.tier == name]
            reads = sum(o.reads.sum() for o in on)
            measured = sum((o.reads * self.read_ms(o, name, now[name])).sum() for o in on) / reads
            ours = sum((self.backend(o, name) for o in on), np.zeros(self.hours)) / t.max_iops
            cap = self.policy.benefit.max_queue_utilisation
            model = sum((o.reads * t.read_latency_ms / (1 - np.minimum(ours, cap))).sum() for o in on) / reads
            worst = max(worst, measured / model, model / measured)
        return worst


@dataclass(frozen=True, slots=True)
class Move:
    name: str
    source: str
    target: str
    predicted: float  # ms/s saved, as the advice predicts
    true: float  # ms/s saved, as the true model gives

    @property
    def error(self) -> float:
        return abs(self.predicted - self.true) / max(abs(self.true), 1e-9)


def judge(fleet: Fleet, advice: Sequence[Advice]) -> list[Move]:
    """Each recommended move's predicted saving against the true one, every move made."""
    placement = {o.name: o.tier for o in fleet.objs}
    by_name = {a.info.name: a for a in advice if a.info.kind == "filegroup"}
    for name, advised in by_name.items():
        placement[name] = advised.recommended_tier
    after = fleet.load(placement)
    moves = []
    for o in fleet.objs:
        a = by_name.get(o.name)
        if a is None or a.recommended_tier == o.tier or a.io_ms_per_s_now is None:
            continue
        predicted = a.io_ms_per_s_now - a.io_ms_per_s_after
        true = fleet.measured_wait(o) - fleet.wait(o, a.recommended_tier, after[a.recommended_tier])
        moves.append(Move(o.name, o.tier, a.recommended_tier, predicted, true))
    return moves


def run(
    policy: Policy, truth: Truth, objects: int, hours: int, seed: int
) -> tuple[float, dict[bool, list[Move]]]:
    fleet = Fleet(truth, policy, objects, hours, seed)
    windows = fleet.windows()
    now = T0 + timedelta(hours=hours)
    out: dict[bool, list[Move]] = {}
    for learn in (True, False):
        view = policy.model_copy(update={"benefit": policy.benefit.model_copy(update={"learn_tiers": learn})})
        report = advise(windows, view, now=now, curve_points=0)
        out[learn] = judge(fleet, report.objects)
    return fleet.policy_off(), out


def median_pct(moves: Sequence[Move]) -> float:
    return 100 * statistics.median(m.error for m in moves) if moves else math.nan


def by_pair(moves: Sequence[Move]) -> str:
    """e.g. "fc->flash 16 at 0.1 %, sata->fc 4 at 3.2 %": moves and median error by tier pair."""
    pairs = sorted({(m.source, m.target) for m in moves})
    parts = []
    for s, t in pairs:
        these = [m for m in moves if (m.source, m.target) == (s, t)]
        parts.append(f"{s}->{t} {len(these)} at {median_pct(these):.1f} %")
    return ", ".join(parts) or "none"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--objects", type=int, default=60, help="filegroups per fleet")
    p.add_argument("--days", type=int, default=7)
    p.add_argument("--seed", type=int, default=29)
    args = p.parse_args()
    policy = load_policy()
    off_moves: dict[bool, list[Move]] = {True: [], False: []}
    into_wrong: dict[bool, list[Move]] = {True: [], False: []}
    control: dict[bool, list[Move]] = {}
    for i, truth in enumerate(FLEETS):
        off, moves = run(policy, truth, args.objects, args.days * 24, args.seed + i)
        pairs = {learn: by_pair(ms) for learn, ms in moves.items()}
        print(
            f"{truth.name:15s} policy off x{off:.1f}: error {median_pct(moves[True]):.1f} % over "
            f"{len(moves[True])} moves with measurement ({pairs[True]}), "
            f"{median_pct(moves[False]):.1f} % over {len(moves[False])} moves with the policy's figures "
            f"({pairs[False]})"
        )
        if truth.name == "control":
            control = moves
        elif off >= 2.0:
            for learn in (True, False):
                off_moves[learn] += moves[learn]
                into_wrong[learn] += [m for m in moves[learn] if m.target == truth.wrong]
    p_, q_ = median_pct(off_moves[True]), median_pct(off_moves[False])
    c_learn, c_policy = median_pct(control[True]), median_pct(control[False])
    verdict = "no worse" if c_learn <= c_policy + 0.05 else "WORSE"
    print(f"control (policy right): {c_learn:.1f} % with measurement vs {c_policy:.1f} % with the policy's figures "
          f"({verdict})")  # fmt: skip
    print(f"moves into the tier the policy has wrong: {median_pct(into_wrong[True]):.1f} % over "
          f"{len(into_wrong[True])} with measurement vs {median_pct(into_wrong[False]):.1f} % over "
          f"{len(into_wrong[False])} with the policy's figures")  # fmt: skip
    print(
        f"calibration: prediction error {p_:.1f} % with measurement vs {q_:.1f} % with the policy's figures"
    )


if __name__ == "__main__":
    main()
