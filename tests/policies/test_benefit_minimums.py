"""The policy's minimum saving per move (issue #32, item 5), beside the minimum per I/O: its
default, the shipped policy's value, and the validation that names the field."""

from __future__ import annotations

import pytest

from policies.loader import DEFAULT_POLICY, PolicyError, load_policy, parse_policy
from tests.fixture_policy import reference_policy

LINE = "  min_saving_ms_per_s_per_move: 10"


def test_the_shipped_policy_asks_10_ms_per_s_per_move_and_a_policy_without_it_too() -> None:
    assert LINE in DEFAULT_POLICY.read_text(encoding="utf-8")
    assert load_policy().benefit.min_saving_ms_per_s_per_move == 10.0
    # the frozen reference policy predates the key: the default applies
    assert reference_policy().benefit.min_saving_ms_per_s_per_move == 10.0
    assert reference_policy().benefit.min_saving_ms_per_io == 2.0


@pytest.mark.parametrize("value", ["0", "25.5"])
def test_a_policy_sets_its_own_minimum_per_move(value: str) -> None:
    text = DEFAULT_POLICY.read_text(encoding="utf-8").replace(
        LINE, f"  min_saving_ms_per_s_per_move: {value}"
    )
    assert parse_policy(text, source="mine.yaml").benefit.min_saving_ms_per_s_per_move == float(value)


@pytest.mark.parametrize("value", ["-1", "lots"])
def test_a_bad_minimum_per_move_is_refused_with_its_field(value: str) -> None:
    text = DEFAULT_POLICY.read_text(encoding="utf-8").replace(
        LINE, f"  min_saving_ms_per_s_per_move: {value}"
    )
    with pytest.raises(PolicyError) as err:
        parse_policy(text, source="mine.yaml")
    assert "mine.yaml" in str(err.value) and "benefit.min_saving_ms_per_s_per_move" in str(err.value)
