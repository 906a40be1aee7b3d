"""HiGHS called the way scipy's ``linprog`` / ``milp`` call it, without their per-call input and
option checks: a third of an LP's time on the small models the flash curves solve by the
thousand. Private scipy API, so scipy is pinned (pyproject.toml) and
tests/advisors/test_advise_equal_fast.py and test_placement.py fail if an upgrade changes what
it does; the public ``highspy`` package is the way out if a pin ever has to move."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.optimize._highspy import _core as _h
from scipy.optimize._linprog_highs import _highs_to_scipy_status_message, _replace_inf
from scipy.optimize._linprog_util import _check_result

Floats = npt.NDArray[np.float64]


def scipy_status(res: dict[str, Any]) -> int:
    """scipy's status code (0 optimal, 1 limit, 2 infeasible, 3 unbounded, 4 other) of a HiGHS run."""
    status, _ = _highs_to_scipy_status_message(res.get("status"), res.get("message"))
    return int(status)


_SOLVED = (_h.HighsModelStatus.kOptimal, _h.HighsModelStatus.kTimeLimit,
           _h.HighsModelStatus.kIterationLimit, _h.HighsModelStatus.kSolutionLimit)  # fmt: skip


_OPTIONS = threading.local()  # per thread: keys -> HighsOptions (see _options)


def _options(keys: tuple[str, ...]) -> Any:
    """A HighsOptions to set ``keys`` on, one per set of keys and thread, made once: making one
    costs a tenth of a small LP's run. Every use sets all its keys before passing it, and HiGHS
    copies the options it is passed, so each run sees HiGHS's defaults plus the options it is
    given, as with a new one; per thread, so that no other run sets them in between."""
    made: dict[tuple[str, ...], Any] | None = getattr(_OPTIONS, "made", None)
    if made is None:
        made = _OPTIONS.made = {}
    out = made.get(keys)
    if out is None:
        out = made[keys] = _h.HighsOptions()
    return out


def highs(
    c: Floats, a: Any, lhs: Floats, rhs: Floats, lb: Floats, ub: Floats, mip: bool, options: dict[str, Any]
) -> dict[str, Any]:
    """What scipy's ``_highs_wrapper`` does for ``linprog`` / ``milp``, without its per-call option
    checks and its per-variable Python loop for the bounds' marginals (which we never read):
    the same HiGHS model, options and run, and the same rule for when the answer may be read.
    ``options`` are valid HiGHS options (presolve as "on"/"off"). Private scipy API: scipy is
    pinned (pyproject.toml); tests/advisors/test_advise_equal_fast.py and test_placement.py fail
    if an upgrade changes what it does."""
    lp = _h.HighsLp()
    lp.num_col_ = c.size
    lp.num_row_ = rhs.size
    lp.a_matrix_.num_col_ = c.size
    lp.a_matrix_.num_row_ = rhs.size
    lp.a_matrix_.format_ = _h.MatrixFormat.kColwise
    lp.col_cost_ = c
    lp.col_lower_ = lb
    lp.col_upper_ = ub
    lp.row_lower_ = lhs
    lp.row_upper_ = rhs
    # as lists: pybind11 converts a list of Python numbers to a std::vector twice as fast as it
    # converts a numpy array element by element (the same values either way)
    matrix = lp.a_matrix_
    matrix.start_ = a.indptr.tolist()
    matrix.index_ = a.indices.tolist()
    matrix.value_ = a.data.tolist()
    if mip:
        lp.integrality_ = [_h.HighsVarType.kInteger] * c.size
    highs = _h._Highs()
    highs_options = _options(tuple(options))
    for key, value in options.items():
        setattr(highs_options, key, value)
    if highs.passOptions(highs_options) == _h.HighsStatus.kError:
        raise RuntimeError("HiGHS refused the options")
    if highs.passModel(lp) == _h.HighsStatus.kError:
        return {"status": _h.HighsModelStatus.kModelError, "message": "", "x": None, "fun": None}
    if highs.run() == _h.HighsStatus.kError:
        return {"status": highs.getModelStatus(), "message": "", "x": None, "fun": None}
    status = highs.getModelStatus()
    info = highs.getInfo()
    if mip:
        failed = status not in _SOLVED or (
            status != _h.HighsModelStatus.kOptimal and info.objective_function_value == _h.kHighsInf
        )
    else:
        failed = status != _h.HighsModelStatus.kOptimal
    if failed:
        return {"status": status, "message": "", "x": None, "fun": None}
    solution = highs.getSolution()
    out = {
        "status": status,
        "message": "",
        "x": np.array(solution.col_value),
        "slack": rhs - solution.row_value,
        "lambda": np.array(solution.row_dual),
        "fun": info.objective_function_value,
    }
    if mip:
        out["mip_dual_bound"] = info.mip_dual_bound
    return out


def linprog(
    c: Floats, a: Any, b_ub: Floats, b_eq: Floats, seconds: float
) -> tuple[int, Floats | None, float | None, Floats | None]:
    """``scipy.optimize.linprog(c, A_ub, b_ub, A_eq, b_eq, bounds=(0, 1), method="highs",
    options={"time_limit": seconds})`` without its input checks (a third of an LP's time on the
    small models the curves solve by the thousand), ``a`` being ``vstack((A_ub, A_eq))`` as CSC:
    the same HiGHS call with the same matrix, bounds and options, and the same check of the
    answer. Returns (scipy status, x, fun, the inequality rows' marginals)."""
    n = c.size
    bounds = np.empty((n, 2))
    bounds[:, 0], bounds[:, 1] = 0.0, 1.0
    lb, ub = bounds.T.copy()
    with np.errstate(invalid="ignore"):
        lhs_ub = -np.ones_like(b_ub) * np.inf
    lhs = _replace_inf(np.concatenate((lhs_ub, b_eq)))
    rhs = _replace_inf(np.concatenate((b_ub, b_eq)))
    options = {
        "presolve": "on",
        "time_limit": seconds,
        "highs_debug_level": _h.HighsDebugLevel.kHighsDebugLevelNone,
        "log_to_console": False,
        "output_flag": False,
        "simplex_strategy": _h.simplex_constants.SimplexStrategy.kSimplexStrategyDual,
    }
    res = highs(c, a, lhs, rhs, _replace_inf(lb), _replace_inf(ub), False, options)
    slack = con = marginals = None
    if "slack" in res:
        con, slack = np.array(res["slack"][len(b_ub) :]), np.array(res["slack"][: len(b_ub)])
    if "lambda" in res:
        marginals = np.array(res["lambda"][: len(b_ub)])
    status, message = _highs_to_scipy_status_message(res.get("status", None), res.get("message", None))
    x = res["x"]
    status, _ = _check_result(x, res.get("fun"), status, slack, con, bounds, 1e-9, message, None)
    return int(status), x, res.get("fun"), marginals
