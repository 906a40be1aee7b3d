"""Benchmark: the error rates of verify after change as a DBA meets them, through the whole sequential
procedure: the early harm alarm every day, the verdict at 7 days and, inconclusive, at 14 days.
No timing: the figures are rates.

Seeded, simulated hour-by-hour counters through the pure functions (advisors/verify.py):

- the moved unit (412 reads/s and 40 writes/s of 8 KB, busier by day than by night) and, per
  row, its controls: busy (8 unmoved files of 40 to 400 I/O/s), weak (3 near-idle files of 2 I/O/s,
  twice as noisy), one near-idle control, or none;
- every object has its own day-level noise, log-normal with standard deviation `sigma` and AR(1)
  from day to day with correlation `rho` (0, 0.6, 0.85): correlated days are the rule (a month-end
  week, a reindex cycle), and they are *not* removed by the controls;
- the source array's own day factor (sigma 0.05) and its shift after the change (`array`) are shared
  by the controls and by the unit while it is there; a moved unit leaves them behind (the DiD
  assumption is not built in: an array-wide shift biases a moved unit's comparison);
- load shifts change the unit's I/O and its latency with it (queueing: latency x load^0.5);
- hours have noise of their own (sigma 0.05).

Placebo rows (nothing moved, judged as if it had): a false positive is "improved" or "regressed"
(the harm alarm included), at either look. Goal: at most 5 % in every row.
Power rows: a move that changes the unit's latency by -10, -20 or -50 % (its I/O unchanged), moved off
the array; detected is "improved" at either look. Printed per row: the share decided at 7 days.

Each row has its own seed (numpy SeedSequence.spawn), so rows are independent. The last line is

    verify: false positives <f> % (goal <= 5 %), power at -20 % sigma 0.2 <p> %

with <f> the worst placebo row and <p> the row with busy controls and independent days (rho 0).

Run: .venv/bin/python -m bench.verify_power [--runs 150] [--seed 19] [--jobs 2]
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np

from advisors.verify import (
    HARM_RATIO,
    IMPROVED,
    INCONCLUSIVE,
    REGRESSED,
    Change,
    HourTotals,
    harm_alarm,
    verify,
)
from policies.model import VerificationPolicy

CHANGE = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
BEFORE_DAYS = 14  # stored before the change (the 14-day look pairs with two weeks before)
AFTER_DAYS = 14
# busier by day: the hour-of-day profile of the I/O rate (mean 1)
PROFILE = np.array([0.4] * 6 + [1.0] * 3 + [1.6] * 9 + [1.0] * 3 + [0.5] * 3)
PROFILE = PROFILE / PROFILE.mean()
CONTROLS = {  # name -> (I/O per second of each control, its noise x the unit's)
    "busy": (tuple(float(x) for x in np.linspace(40, 400, 8)), 1.0),
    "weak": ((2.0, 2.0, 2.0), 2.0),
    "one idle": ((2.0,), 2.0),
    "none": ((), 1.0),
}


@dataclass(frozen=True)
class Scenario:
    """One simulated move. `effect` is the unit's latency change after the move (0: a placebo)."""

    name: str
    sigma: float = 0.1
    rho: float = 0.0
    controls: str = "busy"
    effect: float = 0.0  # -0.2: 20 % faster
    array: float = 1.0  # the source array's level after ÷ before (controls; the unit while there)
    load: float = 1.0  # the unit's I/O after ÷ before (its latency x load^0.5)
    moved: bool = False  # off the source array after the change
    want: str = ""  # the verdict a correct verifier gives ("": neither improved nor regressed)

    @property
    def placebo(self) -> bool:
        return not self.want


def _ar1(rng: np.random.Generator, sigma: float, rho: float, n: int) -> np.ndarray:
    """Day-level log noise, stationary AR(1) with marginal standard deviation `sigma`."""
    e = rng.normal(0, sigma, n)
    x = np.empty(n)
    x[0] = e[0]
    k = math.sqrt(1 - rho * rho)
    for i in range(1, n):
        x[i] = rho * x[i - 1] + k * e[i]
    return x


@lru_cache(maxsize=4)
def _keys(start: datetime, days: int) -> list[datetime]:
    return [start + timedelta(hours=i) for i in range(days * 24)]


def _hours(rng: np.random.Generator, start: datetime, days: int, *, iops: float, ms: np.ndarray,
           load: np.ndarray) -> dict[datetime, HourTotals]:  # fmt: skip
    """Hour counters of `days` days from `start`: `ms` and `load` per day."""
    rate = iops * PROFILE[None, :] * load[:, None] * 3600
    lat = ms[:, None] * np.exp(rng.normal(0, 0.05, (days, 24)))
    reads = np.rint(rate * 412 / 452).astype(np.int64).ravel()
    writes = np.rint(rate * 40 / 452).astype(np.int64).ravel()
    rtime = np.rint(reads * lat.ravel()).astype(np.int64)
    wtime = np.rint(writes * lat.ravel() * 0.3).astype(np.int64)
    return {
        t: HourTotals(3600.0, r, r * 8192, rt, w, w * 8192, wt)
        for t, r, rt, w, wt in zip(
            _keys(start, days), reads.tolist(), rtime.tolist(), writes.tolist(), wtime.tolist(), strict=True
        )
    }


def simulate(s: Scenario, rng: np.random.Generator) -> Change:
    """The unit and its controls over 14 days before and 14 after; judged as a 7-day window (the
    caller widens it for the 14-day look with `at_look`)."""
    n_b, n_a = BEFORE_DAYS, AFTER_DAYS
    n = n_b + n_a
    b_start = CHANGE - timedelta(days=n_b)
    array = np.exp(rng.normal(0, 0.05, n))
    array[n_b:] *= s.array
    own = np.exp(_ar1(rng, s.sigma, s.rho, n))
    ms = 17.0 * own
    ms[:n_b] *= array[:n_b]
    load = np.ones(n)
    load[n_b:] = s.load
    after_level = (1 + s.effect) * s.load**0.5
    if s.moved:  # on another array after the change: its own day factor, not the source's
        ms[n_b:] *= np.exp(rng.normal(0, 0.05, n_a)) * after_level
    else:
        ms[n_b:] *= array[n_b:] * after_level
    unit = _hours(rng, b_start, n, iops=452, ms=ms, load=load)
    iops, noise = CONTROLS[s.controls]
    objects = []
    for each in iops:
        cms = 15.0 * array * np.exp(_ar1(rng, s.sigma * noise, s.rho, n))
        c = _hours(rng, b_start, n, iops=each, ms=cms, load=np.ones(n))
        objects.append(
            ({t: h for t, h in c.items() if t < CHANGE}, {t: h for t, h in c.items() if t >= CHANGE})
        )
    before = {t: h for t, h in unit.items() if t < CHANGE}
    after = {t: h for t, h in unit.items() if t >= CHANGE}
    return Change(before=before, after=after, start=CHANGE, end=CHANGE + timedelta(days=7), lag=timedelta(days=7),
                  predicted_gain_ms_per_s=4600.0, from_tier="fc", to_tier="flash", promotion=True,
                  controls=len(objects), window_days=7, control_objects=tuple(objects))  # fmt: skip


def at_look(change: Change, days: int, window_days: int) -> Change:
    """The change as the service sees it `days` days after the move, in a window of `window_days`
    (the lag: whole weeks of it)."""
    return replace(change, end=change.start + timedelta(days=days), window_days=window_days,
                   lag=timedelta(days=7 * math.ceil(window_days / 7)))  # fmt: skip


def _harm_possible(change: Change) -> bool:
    """False when no look can raise the harm alarm: no after hour's latency (per read or per write)
    reaches HARM_RATIO x the fastest before hour's (the alarm's reference is at least that). Saves
    the daily looks' time, changes no outcome."""
    slowest = max(
        max(a.read_time_ms / a.reads if a.reads else 0.0, a.write_time_ms / a.writes if a.writes else 0.0)
        for a in change.after.values()
    )
    fastest = min((b.read_time_ms + b.write_time_ms) / b.ios for b in change.before.values() if b.ios)
    return slowest >= HARM_RATIO * fastest


def sequential(change: Change, p: VerificationPolicy) -> tuple[str, int]:
    """The verdict the service would reach, and on which day: the harm alarm each day, the verdict at
    the window's end and, inconclusive there, at the extension's."""
    windows = [p.window_days] + ([p.extend_to_days] if p.extend_to_days > p.window_days else [])
    day = 1
    possible = _harm_possible(change)
    for window in windows:
        while day < window:
            if possible and harm_alarm(at_look(change, day, window), p) is not None:
                return REGRESSED, day
            day += 1
        status = verify(at_look(change, window, window), p).status
        if status != INCONCLUSIVE:
            return status, window
        day = window + 1
    return INCONCLUSIVE, windows[-1]


def rows() -> list[Scenario]:
    """Placebos per day correlation: busy controls under every shift, weak ones under the array's,
    one near-idle control and none (the verdict: uncontrolled; only the harm alarm could fire).
    Power rows: busy controls at both noise levels, weak ones at sigma 0.2, and a move off an
    array that got faster (against staying, the move is +51 %: "regressed" is the right answer)."""
    out = []
    for rho in (0.0, 0.6, 0.85):
        out += [
            Scenario("no move sigma 0.1", sigma=0.1, rho=rho),
            Scenario("no move sigma 0.2", sigma=0.2, rho=rho),
            Scenario("array 17 -> 9 ms, sigma 0.2", sigma=0.2, array=9 / 17, rho=rho),
            Scenario("array 17 -> 30 ms, sigma 0.2", sigma=0.2, array=30 / 17, rho=rho),
            Scenario("unit load -45 %, sigma 0.2", sigma=0.2, load=0.55, rho=rho),
            Scenario("unit load +60 %, sigma 0.2", sigma=0.2, load=1.6, rho=rho),
            Scenario("no move sigma 0.2", sigma=0.2, controls="weak", rho=rho),
            Scenario("array 17 -> 9 ms, sigma 0.2", sigma=0.2, array=9 / 17, controls="weak", rho=rho),
            Scenario("array 17 -> 30 ms, sigma 0.2", sigma=0.2, array=30 / 17, controls="weak", rho=rho),
            Scenario("array 17 -> 9 ms, sigma 0.2", sigma=0.2, array=9 / 17, controls="one idle", rho=rho),
            Scenario("no move sigma 0.2", sigma=0.2, controls="none", rho=rho),
            Scenario("array 17 -> 9 ms, sigma 0.2", sigma=0.2, array=9 / 17, controls="none", rho=rho),
            Scenario("array 17 -> 30 ms, sigma 0.2", sigma=0.2, array=30 / 17, controls="none", rho=rho),
        ]
    for rho in (0.0, 0.6, 0.85):
        for sigma in (0.1, 0.2):
            for effect in (-0.1, -0.2, -0.5):
                out.append(Scenario(f"{effect * 100:+.0f} % sigma {sigma}", sigma=sigma, rho=rho, effect=effect,
                                    moved=True, want=IMPROVED))  # fmt: skip
        for effect in (-0.1, -0.2, -0.5):
            out.append(Scenario(f"{effect * 100:+.0f} % sigma 0.2", sigma=0.2, rho=rho, controls="weak",
                                effect=effect, moved=True, want=IMPROVED))  # fmt: skip
        out.append(Scenario("-20 % sigma 0.2 off an array 17 -> 9 ms", sigma=0.2, rho=rho, effect=-0.2,
                            moved=True, array=9 / 17, want=REGRESSED))  # fmt: skip
    return out


def run_row(job: tuple[Scenario, int, np.random.SeedSequence]) -> tuple[Counter[str], Counter[int]]:
    s, runs, seq = job
    rng = np.random.default_rng(seq)
    p = VerificationPolicy()
    statuses: Counter[str] = Counter()
    when: Counter[int] = Counter()
    for _ in range(runs):
        status, day = sequential(simulate(s, rng), p)
        statuses[status] += 1
        when[day] += 1
    return statuses, when


def report(scenarios: Sequence[Scenario], results: Sequence[tuple[Counter[str], Counter[int]]], runs: int) -> tuple[float, float]:  # fmt: skip
    """Print the rows; return (worst false-positive %, power at -20 % sigma 0.2, busy, rho 0)."""

    def shares(c: Counter[str]) -> str:
        return ", ".join(f"{k} {v / runs * 100:.1f} %" for k, v in c.most_common())

    worst, power = 0.0, math.nan
    print(f"placebo: share of {runs} simulated runs per row called improved or regressed (goal <= 5 %)")
    for s, (c, _) in zip(scenarios, results, strict=True):
        if not s.placebo:
            continue
        bad = (c[IMPROVED] + c[REGRESSED]) / runs * 100
        worst = max(worst, bad)
        mark = "" if bad <= 5 else "  ABOVE GOAL"
        print(f"  rho {s.rho:<4} {s.controls:<8} {s.name:<30} {bad:5.1f} %{mark}   ({shares(c)})")
    print(f"\npower: share of {runs} simulated runs per row with the right verdict (at 7 or 14 days)")
    for s, (c, when) in zip(scenarios, results, strict=True):
        if s.placebo:
            continue
        rate = c[s.want] / runs * 100
        early = sum(v for d, v in when.items() if d <= 7) / runs * 100
        print(f"  rho {s.rho:<4} {s.controls:<8} {s.name:<40} {s.want:<9} {rate:5.1f} %  decided by day 7: {early:5.1f} %"
              f"   ({shares(c)})")  # fmt: skip
        if (s.rho, s.controls, s.sigma, s.effect, s.array) == (0.0, "busy", 0.2, -0.2, 1.0):
            power = rate
    return worst, power


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=150, help="simulated runs per row")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--jobs", type=int, default=2, help="rows computed side by side (processes)")
    args = ap.parse_args()
    scenarios = rows()
    seeds = np.random.SeedSequence(args.seed).spawn(len(scenarios))  # one independent stream per row
    jobs = [(s, args.runs, q) for s, q in zip(scenarios, seeds, strict=True)]
    with ProcessPoolExecutor(args.jobs) if args.jobs > 1 else nullcontext() as pool:
        results = list(pool.map(run_row, jobs) if pool is not None else map(run_row, jobs))
    worst, power = report(scenarios, results, args.runs)
    print(f"\n{len(scenarios)} rows of {args.runs} simulated runs each")
    print(f"verify: false positives {worst:.1f} % (goal <= 5 %), power at -20 % sigma 0.2 {power:.1f} %")


if __name__ == "__main__":
    main()
