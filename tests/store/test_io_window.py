"""The object pages' rates are the advisors' (advisors.deltas.rates, advisors.features.heat_of),
and the heat map's per-hour heat is the same figure as the full metrics' heat."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from advisors.deltas import rates
from app.store.io_window import SUM_COLUMNS, heat_of_row, metrics_from, metrics_of

GIB = 2**30


def row(*values: Any) -> SimpleNamespace:
    return SimpleNamespace(**dict(zip(SUM_COLUMNS, values, strict=True)))


@pytest.mark.parametrize(
    "r",
    [
        row(3600.0, 9000, 9000 * 8192, 45000, 300, 300 * 65536, 600),
        row(3600.0, None, None, None, 300, 300 * 65536, 600),  # writes only
        row(3600.0, Decimal(9000), Decimal(9000 * 8192), Decimal(45000), None, None, None),  # PostgreSQL SUM
        row(3600.0, None, None, None, None, None, None),  # no file-level counters: no heat
        row(0.0, 10, 10, 10, 10, 10, 10),  # no covered time: no heat
    ],
    ids=["reads-and-writes", "writes-only", "decimal", "no-counters", "no-time"],
)
def test_heat_of_a_row_is_the_metrics_heat(r: SimpleNamespace) -> None:
    for size in (None, 0, 50 * GIB):
        assert heat_of_row(r, size) == metrics_of(r, size).heat


def test_postgresql_decimal_sums_give_the_same_rates_as_integers() -> None:
    ints = (900.0, 9000, 9000 * 8192, 45000, 300, 300 * 65536, 600)
    decs = (900.0, *(Decimal(v) for v in ints[1:]))
    a, b = metrics_from(ints, GIB), metrics_from(decs, GIB)
    assert a == b
    r = rates(dict(zip(SUM_COLUMNS[1:], ints[1:], strict=True)), 900.0)
    assert (a.avg_read_kb, a.avg_write_kb) == (
        (r.avg_read_bytes or 0) / 1024,
        (r.avg_write_bytes or 0) / 1024,
    )
    assert a.io == 9300.0 and a.iops == pytest.approx(9300 / 900)
