"""The review service (app/review.py) on SQLite and PostgreSQL: the status transitions it allows
and refuses, the audit of each step, a selection that holds an already-approved row, and an
approved move whose scripts were refused: flagged, never planned, never "executed"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from app import review as reviews
from app.change_windows import approved, plan
from app.store.db import Store
from app.store.models import AuditEvent, Recommendation, ScriptRecord, Target
from app.store.recommendations import TRANSITIONS, Status, actions_for
from policies.loader import load_policy

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
POLICY = load_policy(None)


def _rec(target_id: int, name: str, *, status: str = "open") -> Recommendation:
    # evidence without the fields a script needs: the generator refuses it (as for a filegroup it
    # cannot move), so approving it records the reason instead of scripts
    return Recommendation(target_id=target_id, key=f"Sales/filegroup/{name}", engine="sqlserver", server="SQL1",
                          database="Sales", kind="filegroup", name=name, from_tier="fc", to_tier="flash",
                          profile="random_read", rule="R1", size_bytes=10 * 2**30, io_ms_per_s_now=50.0,
                          io_ms_per_s_after=5.0, evidence={"reasons": ["hot"]}, status=status, created_at=NOW,
                          updated_at=NOW)  # fmt: skip


@pytest.fixture
def ids(store: Store) -> dict[str, int]:
    with store.session() as s:
        t = Target(name="SQL1", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        recs = {n: _rec(t.id, n) for n in ("FG_A", "FG_B")}
        recs["FG_DONE"] = _rec(t.id, "FG_DONE", status="executed")
        s.add_all(recs.values())
        s.flush()
        return {n: r.id for n, r in recs.items()}


def test_transitions_are_one_table() -> None:
    assert Status.EXECUTED in TRANSITIONS[Status.APPROVED]
    assert Status.EXECUTED not in TRANSITIONS[Status.OPEN]
    for final in (Status.EXECUTED, Status.SUPERSEDED, Status.WITHDRAWN):
        assert TRANSITIONS[final] == frozenset()
    assert actions_for("open") == ["approve", "reject", "defer"]
    assert actions_for("approved") == ["reject", "defer", "reopen"]
    assert actions_for("executed") == []


def test_review_is_audited_and_refuses_what_the_status_does_not_allow(
    store: Store, ids: dict[str, int]
) -> None:
    with store.session() as s:
        rec = reviews.review(s, ids["FG_A"], action="reject", username="abe", comment="vendor app", now=NOW,
                             policy=POLICY)  # fmt: skip
        assert rec.status == Status.REJECTED and rec.reviewed_by == "abe"
    with store.session() as s, pytest.raises(reviews.ReviewError, match="already rejected"):
        reviews.review(s, ids["FG_A"], action="reject", username="abe", comment=None, now=NOW, policy=POLICY)
    with (
        store.session() as s,
        pytest.raises(reviews.ReviewError, match="executed and can no longer be reviewed"),
    ):
        reviews.review(
            s, ids["FG_DONE"], action="reopen", username="abe", comment=None, now=NOW, policy=POLICY
        )
    with store.session() as s, pytest.raises(reviews.RecommendationNotFound):
        reviews.review(s, 9999, action="approve", username="abe", comment=None, now=NOW, policy=POLICY)
    with store.session() as s:
        events = list(s.scalars(select(AuditEvent).where(AuditEvent.subject_id == str(ids["FG_A"]))))
        assert [(e.action, e.comment) for e in events] == [("reject", "vendor app")]
        assert "(open -> rejected)" in events[0].summary


def test_a_selection_with_an_approved_row_approves_the_rest(store: Store, ids: dict[str, int]) -> None:
    with store.session() as s:
        reviews.review(s, ids["FG_A"], action="approve", username="abe", comment=None, now=NOW, policy=POLICY)
    with store.session() as s:
        out = reviews.review_many(s, [ids["FG_A"], ids["FG_B"]], action="approve", username="ada", comment=None,
                                  now=NOW, policy=POLICY)  # fmt: skip
        assert [r.name for r in out.done] == ["FG_B"]
        assert [r.name for r in out.unchanged] == ["FG_A"]
    with store.session() as s:
        assert s.get(Recommendation, ids["FG_A"]).reviewed_by == "abe"  # type: ignore[union-attr]


def test_refused_scripts_are_flagged_never_planned_nor_executed(store: Store, ids: dict[str, int]) -> None:
    with store.session() as s:
        rec = reviews.review(
            s, ids["FG_A"], action="approve", username="abe", comment=None, now=NOW, policy=POLICY
        )
        assert rec.status == Status.APPROVED
        why = reviews.refusal(rec)
        assert why is not None and why.startswith("scripts refused: ") and rec.script_error in why
        assert not reviews.executable(rec)
        assert s.scalars(select(ScriptRecord)).first() is None
    with store.session() as s:
        assert approved(s) == []  # the change-window query leaves it out ...
        recs = list(s.scalars(select(Recommendation).where(Recommendation.status == Status.APPROVED)))
        assert [r.name for r in recs] == ["FG_A"]
        schedule = plan(recs, POLICY, now=NOW)  # ... and so does the plan, whoever asks
        assert [p for w in schedule.windows for p in w.moves] + [*schedule.unfit, *schedule.waiting] == []
    with store.session() as s, pytest.raises(reviews.ScriptsRefused, match="its scripts were refused"):
        reviews.mark_executed(
            s, ids["FG_A"], username="ops", when=NOW, now=NOW + timedelta(hours=1), policy=POLICY
        )
    with store.session() as s:
        rec2 = s.get(Recommendation, ids["FG_A"])
        assert rec2 is not None and rec2.status == Status.APPROVED and rec2.executed_by is None


def test_only_approved_moves_are_marked_executed(store: Store, ids: dict[str, int]) -> None:
    with store.session() as s, pytest.raises(reviews.ReviewError, match="only approved moves"):
        reviews.mark_executed(s, ids["FG_B"], username="ops", when=NOW, now=NOW)
    with store.session() as s, pytest.raises(reviews.RecommendationNotFound):
        reviews.mark_executed(s, 9999, username="ops", when=NOW, now=NOW)
