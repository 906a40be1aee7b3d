"""Verify after change through the store, the controls and the hours left out: unmoved objects on
the source tier of the same target one by one (the week-level term), another target's quieter
array ignored, maintenance windows applied only to the objects they name, bursts of a control
left out of the controls' sums."""

from __future__ import annotations

from datetime import datetime, time, timedelta

import pytest
from sqlalchemy import select

from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import DbObject, Target
from app.store.targets import add_target
from app.verify import run_verification
from connectors.records import Snapshot
from policies.model import Policy
from policies.workload import MaintenanceWindow
from tests.app.test_verify import (
    CHANGE,
    END,
    POLICY,
    START,
    _setup,
    _verifications,
    snapshots,
    with_controls,
)

DRIFT = (0.85, 1.15, 0.9, 1.1, 1.0)  # each control's level after the change ÷ before: weeks drift
BURST_AT = CHANGE - timedelta(days=3, hours=-2)  # a backup of ctrl0, Thursday 02:00 before the change


def _with_controls(base: list[Snapshot], *, server: str = "SQL1", drift: tuple[float, ...] = DRIFT,
                   burst: bool = False) -> list[Snapshot]:  # fmt: skip
    return with_controls(base, server=server, drift=drift, burst_at=BURST_AT if burst else None)


def _ctrl_id(store: Store, name: str) -> int:
    with store.session() as s:
        found = s.scalar(select(DbObject.id).join(Target).where(Target.name == "SQL1", DbObject.name == name))
        assert found is not None
        return found


def _ctrl_ids(store: Store, target: str) -> set[int]:
    with store.session() as s:
        rows = s.scalars(
            select(DbObject.id).join(Target).where(Target.name == target, DbObject.name.like("ctrl%"))
        )
        return set(rows)


def test_unmoved_objects_one_by_one_widen_the_interval(store: Store) -> None:
    """Five unmoved fc files of the same server drift ±14 % from week to week: the verdict says the
    intervals allow for that; the move (11.8 -> 0.9 ms) is still plainly improved."""
    _setup(store, _with_controls(snapshots(after_read_ms=0.9)))
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "improved", v.reasons
    assert len(v.before["control_each"]) == 5 and set(v.before["control_objects"]) == _ctrl_ids(store, "SQL1")
    assert (
        "5 unmoved objects vary ±17 % from week to week on their own: the intervals allow for that"
        in v.reasons
    ), "\n".join(v.reasons)
    assert any(r.startswith("controls: 5 unmoved objects on fc weighted by their I/O") for r in v.reasons)
    assert "placebo in space: each control judged as if it had moved comes out -18 % to +20 %" in v.reasons
    iv = v.after["interval"]
    assert iv["high_pct"] - iv["low_pct"] > 5  # not the zero-width interval of perfectly steady days


def test_another_servers_quieter_array_is_no_control(store: Store) -> None:
    """SQL2's fc files got 47 % quieter after the change; SQL2 is another server (another array):
    its files are not controls of SQL1's move, which had none of its own."""
    _setup(store, snapshots(after_read_ms=0.9))
    with store.session() as s:
        other = add_target(s, name="SQL2", engine="sqlserver", source="live", connection_encrypted=None,
                           password_env=None, poll_interval_s=300, now=START)  # fmt: skip
        ingest_snapshots(
            s, other, _with_controls(snapshots(after_read_ms=0.9), server="SQL2", drift=(9 / 17,) * 3)
        )
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert _ctrl_ids(store, "SQL2") and v.before["control_objects"] == []
    assert any(r.startswith("no unmoved objects on fc to compare with") for r in v.reasons), v.reasons


def _policy_with_window(database: str) -> Policy:
    w = MaintenanceWindow(
        name="nightly backup", kind="backup", start=time(2, 0), end=time(4, 0), database=[database]
    )
    return POLICY.model_copy(update={"maintenance_windows": [w]})


@pytest.mark.parametrize(("database", "left_out"), [("Sales", True), ("Billing", False)])
def test_a_maintenance_window_leaves_out_only_the_objects_it_names(
    store: Store, database: str, left_out: bool
) -> None:
    _setup(store, with_controls(snapshots(after_read_ms=0.9)))
    run_verification(store, _policy_with_window(database), now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "improved", v.reasons
    hours = v.after["excluded_hours"]
    # 02:00-04:00 UTC, widened by an hour each side for the buckets, on both sides of the change
    assert (hours > 0) is left_out, hours
    assert any("hours of maintenance" in r for r in v.reasons) is left_out


def test_a_controls_backup_hour_is_left_out_of_the_controls(store: Store) -> None:
    _setup(store, _with_controls(snapshots(after_read_ms=0.9), burst=True))
    run_verification(store, POLICY, now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "improved", v.reasons
    hours = v.before["control_each"][str(_ctrl_id(store, "ctrl0"))]
    ctrl1 = v.before["control_each"][str(_ctrl_id(store, "ctrl1"))]
    burst_hour = next(t for t in ctrl1 if datetime.fromisoformat(t) == BURST_AT)
    assert burst_hour not in hours  # its own backup hour is gone ...
    assert len(hours) == len(ctrl1) - 1  # ... and only that one
    assert v.before["control_slots"][burst_hour][1] == pytest.approx(ctrl1[burst_hour][1] * 4, rel=0.01)
