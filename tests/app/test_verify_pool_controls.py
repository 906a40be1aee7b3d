"""#19 with pools: a move's controls are unmoved objects on its own array's source tier. A target
with too few borrows them from the other targets of its pool; a tier of the same name on another
array is never used, whatever it did."""

from __future__ import annotations

from datetime import timedelta

from advisors.verify import Candidate, pick_controls
from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.targets import add_target
from app.verify import run_verification
from policies.model import Policy, Pool
from tests.app.test_verify import END, POLICY, START, _setup, _verifications, snapshots
from tests.app.test_verify_controls import _ctrl_ids, _with_controls


def _two_arrays() -> Policy:
    """SQL1 and SQL3 share array A; SQL2 is on array B, with tiers of the same names."""
    tiers = list(POLICY.tiers)
    return POLICY.model_copy(update={"pools": [Pool(name="arrayA", servers=["SQL1", "SQL3"], tiers=tiers),
                                               Pool(name="arrayB", servers=["SQL2"], tiers=tiers)]})  # fmt: skip


def _add(store: Store, name: str, drift: tuple[float, ...]) -> None:
    with store.session() as s:
        target = add_target(s, name=name, engine="sqlserver", source="live", connection_encrypted=None,
                            password_env=None, poll_interval_s=300, now=START)  # fmt: skip
        ingest_snapshots(s, target, _with_controls(snapshots(after_read_ms=0.9), server=name, drift=drift))


def test_controls_come_from_the_same_pool_never_from_another_array(store: Store) -> None:
    """SQL1 has no unmoved fc files of its own. SQL2's fc (array B) got 47 % quieter after the
    change; SQL3's fc (array A, SQL1's array) stayed as it was: only SQL3's files are controls."""
    _setup(store, snapshots(after_read_ms=0.9))
    _add(store, "SQL2", (9 / 17,) * 3)
    _add(store, "SQL3", (1.0, 1.0, 1.0))
    run_verification(store, _two_arrays(), now=END + timedelta(hours=1))
    [v] = _verifications(store)
    assert v.status == "improved", v.reasons
    other_array, same_array = _ctrl_ids(store, "SQL2"), _ctrl_ids(store, "SQL3")
    assert len(other_array) == 3 and len(same_array) == 3
    assert set(v.before["control_objects"]) == same_array
    assert not other_array & set(v.before["control_objects"]) and not other_array & {
        int(c) for c in v.before["control_each"]
    }
    assert any(r.startswith("controls: 3 unmoved objects on fc weighted by their I/O") and "changed 0 %" in r
               for r in v.reasons), v.reasons  # fmt: skip


def test_pick_controls_own_target_first_then_the_pool_up_to_enough() -> None:
    cands = [
        Candidate(1, 10, "A", "fc"),  # the unit's target
        Candidate(2, 10, "B", "fc"),  # the unit's server, but on array B (a split server)
        Candidate(3, 10, "A", "flash"),  # another tier
        Candidate(4, 11, "A", "fc"),
        Candidate(5, 12, "A", "fc"),
        Candidate(6, 13, "B", "fc"),  # another array
        Candidate(7, 11, None, "fc"),  # two pools take it: no control
    ]

    def pick(enough: int, shared: bool = True, pool: str = "A") -> list[int]:
        return pick_controls(cands, target_id=10, pool=pool, tier="fc", enough=enough, shared=shared)

    assert pick(2) == [1, 4]
    assert pick(20) == [1, 4, 5]
    assert pick(20, shared=False) == [1]  # the implicit pool: another server is not the same array
    assert pick(1) == [1]
    assert pick(20, pool="B") == [2, 6]
