"""What approving a recommendation will cost the applications (online, an offline copy and its
downtime, a restart), shown before approval on the Recommendations pages and in the API.

Derived from the move the scripts would carry out (app.scripts.planned_move) with the options they
would be written with (app.script_spots.script_options): the page and the script cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.script_spots import script_options
from app.scripts import planned_move
from app.store.models import Recommendation
from migrations import PlanError
from migrations.impact import Impact, impact_of, no_script
from policies.model import Policy


def recommendation_impact(rec: Recommendation, policy: Policy) -> Impact:
    try:
        move = planned_move(rec, policy)
    except PlanError as exc:  # AdviceError too: the reason the script would give
        return no_script(str(exc))
    return impact_of(move, script_options(policy, move))


def impacts(recs: Iterable[Recommendation], policy: Policy) -> dict[int, Impact]:
    """Each recommendation's impact, by id."""
    return {r.id: recommendation_impact(r, policy) for r in recs}
