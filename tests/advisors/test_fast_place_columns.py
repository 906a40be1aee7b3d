"""placement._columns (the LP's and MILP's constraint matrix built directly in compressed sparse
columns) against the scipy.sparse stacking the LP and MILP used before (placement._matrices)."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from scipy import sparse

from advisors.placement import PlacementObject, PlacementTier, _build, _columns, _matrices


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


def _same(a: object, b: object) -> None:
    for name in ("indptr", "indices", "data"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and np.array_equal(x, y), name


@pytest.mark.parametrize("seed", range(40))
def test_columns_equal_scipy(seed: int) -> None:
    m, rng = _model(seed)
    n = len(m.ids)
    every = np.arange(n, dtype=np.intp)
    oi, ti, a_eq, a_ub, limited = _matrices(m, every)
    oi2, ti2, a, limited2 = _columns(m, every, eq_first=False)
    assert np.array_equal(oi, oi2) and np.array_equal(ti, ti2) and np.array_equal(limited, limited2)
    _same(a, sparse.csc_array(sparse.vstack((a_ub, a_eq))))  # what the LP used

    free = np.array(sorted(rng.sample(range(n), rng.randint(1, n))) if n else [], dtype=np.intp)
    oi, ti, a_eq, a_ub, limited = _matrices(m, free)
    oi2, ti2, a, limited2 = _columns(m, free, eq_first=True)
    assert np.array_equal(oi, oi2) and np.array_equal(ti, ti2) and np.array_equal(limited, limited2)
    if len(free):
        stacked = sparse.vstack([sparse.csc_array(a_eq), sparse.csc_array(a_ub)], format="csc")
        _same(a, stacked)  # what the MILP used
    assert a.data.dtype == np.float64


def test_explicit_zeros_are_kept() -> None:
    """Zero loads stay in the matrix as scipy kept them (a seed with zeros, checked directly)."""
    m, _ = _model(3)
    found = False
    for seed in range(40):
        m, _ = _model(seed)
        _, _, a, _ = _columns(m, np.arange(len(m.ids), dtype=np.intp), eq_first=False)
        found = found or bool((a.data == 0).any())
    assert found
