"""Suppressions in the store, on SQLite and PostgreSQL: validation, expiry at read time, audit,
approval refused, open counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from app.store.db import Store
from app.store.models import AuditEvent, Recommendation, Suppression, Target
from app.store.recommendations import ReviewError, open_counts, review, sync_recommendations
from app.store.suppressions import (
    SuppressionError,
    SuppressionNotFound,
    active_for,
    describe,
    lift,
    list_suppressions,
    state_of,
    suppress,
)

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _rec(target_id: int, name: str, *, status: str = "open", to_tier: str = "flash") -> Recommendation:
    return Recommendation(target_id=target_id, key=f"Sales/filegroup/{name}", engine="sqlserver", server="SQL1",
                          database="Sales", kind="filegroup", name=name, from_tier="fc", to_tier=to_tier,
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
        return {"target": t.id, **{n: r.id for n, r in recs.items()}}


def _suppress(store: Store, rec_id: int, **kw: object) -> int:
    args: dict[str, object] = {"reason": "vendor app, moved by its own tool", "expires_at": NOW + timedelta(days=30),
                               "username": "abe", "now": NOW, **kw}  # fmt: skip
    with store.session() as s:
        return suppress(s, rec_id, **args).id  # type: ignore[arg-type]


def test_suppress_is_audited_and_in_force_until_expiry_at_read_time(
    store: Store, ids: dict[str, int]
) -> None:
    sup_id = _suppress(store, ids["FG_A"])
    with store.session() as s:
        event = s.scalars(select(AuditEvent).where(AuditEvent.action == "suppress")).one()
        assert (event.username, event.subject_type, event.subject_id) == (
            "abe",
            "recommendation",
            str(ids["FG_A"]),
        )
        assert "FG_A" in event.summary and "suppressed until 2026-12-20 09:00 UTC" in event.summary
        assert event.comment == "vendor app, moved by its own tool"
        sup = active_for(s, NOW)[(ids["target"], "Sales/filegroup/FG_A")]
        assert sup.id == sup_id and state_of(sup, NOW) == "active"
        assert (
            describe(sup)
            == "suppressed until 2026-12-20 09:00 UTC by abe (vendor app, moved by its own tool)"
        )
        assert open_counts(s, now=NOW) == {ids["target"]: 1}  # FG_B only
        # one second before expiry it still holds; at expiry the advice is back, no job involved
        just_before = NOW + timedelta(days=30) - timedelta(seconds=1)
        assert (ids["target"], "Sales/filegroup/FG_A") in active_for(s, just_before)
        at_expiry = NOW + timedelta(days=30)
        assert active_for(s, at_expiry) == {}
        assert state_of(sup, at_expiry) == "expired"
        assert open_counts(s, now=at_expiry) == {ids["target"]: 2}
        assert [x.id for x in list_suppressions(s, now=at_expiry)] == []
        assert [x.id for x in list_suppressions(s, now=at_expiry, include_ended=True)] == [sup_id]


def test_approval_is_refused_while_suppressed_and_allowed_after_lift(
    store: Store, ids: dict[str, int]
) -> None:
    sup_id = _suppress(store, ids["FG_A"])
    with store.session() as s, pytest.raises(ReviewError) as exc:
        review(s, ids["FG_A"], action="approve", username="abe", comment=None, now=NOW + timedelta(hours=1))
    assert str(exc.value) == (
        f"recommendation #{ids['FG_A']} (FG_A) is suppressed until 2026-12-20 09:00 UTC by abe: "
        "lift the suppression before approving it"
    )
    with store.session() as s:  # rejecting or deferring a suppressed one is fine
        assert (
            review(s, ids["FG_A"], action="defer", username="abe", comment=None, now=NOW).status == "deferred"
        )
    later = NOW + timedelta(days=1)
    with store.session() as s:
        sup = lift(s, sup_id, username="ada", now=later)
        assert (sup.lifted_by, sup.lifted_at) == ("ada", later)
        event = s.scalars(select(AuditEvent).where(AuditEvent.action == "lift_suppression")).one()
        assert (event.username, event.subject_type, event.subject_id) == ("ada", "suppression", str(sup_id))
        assert "FG_A: lifted the suppression by abe" in event.summary
    with store.session() as s:
        assert active_for(s, later) == {}
        assert (
            review(s, ids["FG_A"], action="approve", username="abe", comment=None, now=later).status
            == "approved"
        )


def test_approval_allowed_again_after_expiry(store: Store, ids: dict[str, int]) -> None:
    _suppress(store, ids["FG_B"], expires_at=NOW + timedelta(days=1))
    with store.session() as s:
        rec = review(
            s, ids["FG_B"], action="approve", username="abe", comment=None, now=NOW + timedelta(days=2)
        )
        assert rec.status == "approved"


def test_suppression_follows_the_object_across_re_evaluation(store: Store, ids: dict[str, int]) -> None:
    """A new answer for the object supersedes the recommendation; the suppression still holds."""
    _suppress(store, ids["FG_A"])
    advice = {"placement_unit": "Sales/filegroup/FG_A", "key": "Sales/filegroup/FG_A", "engine": "sqlserver",
              "server": "SQL1", "database": "Sales", "kind": "filegroup", "name": "FG_A", "current_tier": "fc",
              "recommended_tier": "sata", "profile": "cold", "rule": "C1", "size_bytes": 1,
              "predicted": {"io_ms_per_s_now": 1.0, "io_ms_per_s_after": 2.0}}  # fmt: skip
    with store.session() as s:
        sync_recommendations(s, {("sqlserver", "SQL1"): ids["target"]}, [advice], NOW + timedelta(hours=1))
    with store.session() as s:
        new = s.scalars(select(Recommendation).where(Recommendation.to_tier == "sata")).one()
        assert new.status == "open" and new.id != ids["FG_A"]
        with pytest.raises(ReviewError, match="is suppressed until"):
            review(s, new.id, action="approve", username="abe", comment=None, now=NOW + timedelta(hours=2))


@pytest.mark.parametrize(
    ("rec", "kw", "message"),
    [
        ("FG_A", {"reason": "  "}, "a reason is required to suppress a recommendation"),
        ("FG_A", {"expires_at": NOW}, "the expiry 2026-11-20 09:00 UTC is not in the future (now 2026-11-20 09:00 UTC)"),
        ("FG_A", {"expires_at": NOW - timedelta(days=1)}, "the expiry 2026-11-19 09:00 UTC is not in the future"),
        ("FG_A", {"expires_at": NOW + timedelta(days=366)},
         "the expiry 2027-11-21 is more than 365 days away; suppress for at most 365 days and review it then"),
        ("FG_A", {"expires_at": datetime(2026, 12, 1)}, "the expiry needs a time zone"),
        ("FG_A", {"reason": "x" * 4001}, "the reason is too long (4001 characters, at most 4000)"),
        ("FG_DONE", {}, "is executed and cannot be suppressed"),
    ],
)  # fmt: skip
def test_suppress_validation(
    store: Store, ids: dict[str, int], rec: str, kw: dict[str, object], message: str
) -> None:
    with pytest.raises(SuppressionError) as exc:
        _suppress(store, ids[rec], **kw)
    assert message in str(exc.value)
    with store.session() as s:
        assert s.scalars(select(Suppression)).all() == []
        assert s.scalars(select(AuditEvent)).all() == []


def test_no_double_suppression_unknown_ids_and_lift_rules(store: Store, ids: dict[str, int]) -> None:
    sup_id = _suppress(store, ids["FG_A"])
    with pytest.raises(
        SuppressionError, match=r"FG_A is already suppressed until 2026-12-20 09:00 UTC by abe"
    ):
        _suppress(store, ids["FG_A"], username="ada")
    with pytest.raises(SuppressionNotFound, match="no recommendation #999999"):
        _suppress(store, 999999)
    with store.session() as s, pytest.raises(SuppressionNotFound, match="no suppression #999999"):
        lift(s, 999999, username="ada", now=NOW)
    with store.session() as s, pytest.raises(SuppressionError, match=r"expired on 2026-12-20 09:00 UTC"):
        lift(s, sup_id, username="ada", now=NOW + timedelta(days=31))
    with store.session() as s:
        lift(s, sup_id, username="ada", now=NOW)
    with store.session() as s, pytest.raises(SuppressionError, match="was already lifted by ada"):
        lift(s, sup_id, username="abe", now=NOW)
    # after the lift the object can be suppressed again; the old row stays for the record
    _suppress(store, ids["FG_A"], reason="second thoughts")
    with store.session() as s:
        rows = list_suppressions(s, now=NOW, include_ended=True)
        assert sorted(state_of(r, NOW) for r in rows) == ["active", "lifted"]
