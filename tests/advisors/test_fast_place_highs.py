"""advisors.highs reuses one HighsOptions per set of option names and thread: LPs and MILPs in any
order, and in threads at the same time, give what each gives alone."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from advisors.placement import _lp, _milp, _Model
from tests.advisors.test_fast_place_columns import _model


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
