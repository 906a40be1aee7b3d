"""advisors.highs reuses one HighsOptions per set of option names and thread: LPs and MILPs in any
order, and in threads at the same time, give what each gives alone."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pytest

from advisors.placement import PlacementObject, PlacementTier, _build, _lp, _milp, _Model


def _model(seed: int):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    names = ["flash", "fc", "sata", "tape"][: rng.randint(1, 4)]
    tiers = [
        PlacementTier(
            name,
            rng.choice([rng.uniform(0, 1e4), 0.0]),
            rng.uniform(1e3, 1e5),
            rng.randint(1, 6),
            rng.uniform(0.1, 10),
            rng.uniform(0.1, 10),
            max_write_gb_day=rng.choice([None, rng.uniform(0, 1e3)]),
        )
        for name in names
    ]
    objects = []
    for i in range(rng.choice([0, 1, 3, 40, 200])):
        allowed = frozenset(rng.sample(names, rng.randint(1, len(names)))) if rng.random() < 0.5 else None
        objects.append(
            PlacementObject(
                f"o{i}",
                rng.choice([0.0, rng.uniform(0, 500)]),
                rng.choice([0.0, rng.uniform(0, 900)]),
                rng.choice([0.0, rng.uniform(0, 900)]),
                allowed_tiers=allowed,
                read_hit_ratio=rng.choice([0.0, 1.0, rng.random()]),
                write_gb_day=rng.choice([0.0, rng.uniform(0, 90)]),
            )
        )
    m = _build(objects, tiers)
    if rng.random() < 0.3:  # an unlimited resource on some tier: fewer inequality rows
        limit = m.limit.copy()
        limit[rng.randrange(len(tiers)), rng.randrange(3)] = np.inf
        m = replace(m, limit=limit)
    return m, rng


def _both(m: _Model) -> tuple[object, ...]:
    """The LP (bound, x, duals) and the whole-problem MILP (status, answer, dual bound) of a model."""
    lp = _lp(m, 5.0)
    every = np.arange(len(m.ids), dtype=np.intp)
    code, sol, dual = _milp(m, np.zeros_like(every), every, 5.0, 1e-4)
    return (
        lp.state,
        lp.bound,
        lp.x.tobytes(),
        lp.duals.tobytes(),
        code,
        None if sol is None else sol.tobytes(),
        dual,
    )


def _models() -> list[_Model]:
    return [m for m, _ in (_model(seed) for seed in range(30)) if 0 < len(m.ids) <= 40]


def test_order_does_not_matter() -> None:
    models = _models()
    assert len(models) >= 5
    forward = [_both(m) for m in models]
    backward = [_both(m) for m in reversed(models)][::-1]
    assert [repr(f) for f in forward] == [repr(b) for b in backward]


@pytest.mark.parametrize("workers", [2, 4])
def test_threads_give_what_each_gives_alone(workers: int) -> None:
    models = _models() * 3
    alone = [repr(_both(m)) for m in models]
    with ThreadPoolExecutor(workers) as pool:
        together = [repr(r) for r in pool.map(_both, models)]
    assert together == alone
