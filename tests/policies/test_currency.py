"""The policy's `currency:` key: how money reads on the pages and in the report."""

from __future__ import annotations

import pytest

from policies.loader import DEFAULT_POLICY, PolicyError, load_policy, parse_policy


def _with(line: str) -> str:
    return f"{line}\n{DEFAULT_POLICY.read_text(encoding='utf-8')}"


def test_the_currency_is_usd_unless_the_policy_says() -> None:
    assert load_policy().currency == "USD"
    assert parse_policy(_with("currency: EUR"), source="p.yaml").currency == "EUR"
    assert parse_policy(_with('currency: "$"'), source="p.yaml").currency == "$"


@pytest.mark.parametrize("bad", ["usd", "EURO", "dollars", "'12'"])
def test_a_bad_currency_names_the_field(bad: str) -> None:
    with pytest.raises(PolicyError, match=r"p\.yaml: currency: .*not a currency: use an ISO 4217 code"):
        parse_policy(_with(f"currency: {bad}"), source="p.yaml")
