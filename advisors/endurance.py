"""Flash endurance across a placement: the fastest tier's projected daily writes against its
daily write budget (DWPD × usable capacity, policy `endurance_dwpd`). Per-object rules are in
classify.py (TW502/TW503); this is the fleet check (TW504)."""

from __future__ import annotations

from collections.abc import Iterable

from advisors.classify import daily_write_gb, write_budget_gb
from advisors.features import Features
from policies.model import Policy


def endurance_note(on_flash: Iterable[tuple[str, Features]], policy: Policy) -> str | None:
    """TW504 when the objects placed on the fastest tier would write more per day than the share
    of its budget the policy allows (`endurance.tier_max_budget_share`); the top writers named."""
    budget = write_budget_gb(policy)
    if budget is None:
        return None
    writers = sorted(((daily_write_gb(f), name) for name, f in on_flash), reverse=True)
    total = sum(gb for gb, _ in writers)
    allowed = budget * policy.endurance.tier_max_budget_share
    if total <= allowed:
        return None
    flash = policy.tiers[0]
    top = ", ".join(f"{name} {gb:,.0f} GB" for gb, name in writers[:3] if gb > 0)
    return (
        f"TW504 the placement would write {total:,.0f} GB per day to {flash.name}, "
        f"{100 * total / budget:,.0f} % of its daily write budget ({flash.endurance_dwpd:g} DWPD x "
        f"{flash.capacity_gb:,.0f} GB = {budget:,.0f} GB/day; the policy allows "
        f"{100 * policy.endurance.tier_max_budget_share:,.0f} %): the drives would wear out early. "
        f"Largest writers: {top}"
    )
